// LocalApiServer: the "Local API server" switch of Settings. Serves the model the app has
// loaded over the OpenAI-compatible API (app/server/api_server.h), sharing its engine and
// KV cache: the app's chats and other programs' requests are batched together and share
// cached prefixes. It follows the settings (on/off, port, network, key, origins) and the
// loaded model (requests get 503 while none is loaded; a switched model is served from
// its first request on). A chat request may name a persona as its model
// ("persona:NAME"): it gets the persona's prefix, instructions and documents, as the app's
// chats of the persona do (api_server.h's PersonaSource).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QPointer>
#include <QString>

#include <map>
#include <memory>
#include <mutex>

#include "core/connection_settings.h"
#include "core/engine_bridge.h"
#include "core/persona_list_model.h"

namespace hearth::server {
class ApiServer;
struct ServedModel;
}  // namespace hearth::server

class LocalApiServer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConnectionSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY settingsChanged)
    Q_PROPERTY(PersonaListModel* personas READ personas WRITE setPersonas NOTIFY settingsChanged)
    Q_PROPERTY(bool running READ running NOTIFY stateChanged)
    Q_PROPERTY(QString url READ url NOTIFY stateChanged)      // while running
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)  // why it is not running
    Q_PROPERTY(QString modelId READ modelId NOTIFY stateChanged)

  public:
    explicit LocalApiServer(QObject* parent = nullptr);
    ~LocalApiServer() override;

    ConnectionSettings* settings() const { return settings_; }
    void setSettings(ConnectionSettings* settings);
    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);
    PersonaListModel* personas() const { return personas_; }
    void setPersonas(PersonaListModel* personas);
    bool running() const { return server_ != nullptr; }
    QString url() const { return url_; }
    QString error() const { return error_; }
    QString modelId() const;

  signals:
    void settingsChanged();
    void stateChanged();

  private:
    void apply();         // starts, restarts or stops as the settings say
    void update_model();  // the bridge's model now (or none)
    std::shared_ptr<const hearth::server::ServedModel> served() const;
    void update_personas();  // the personas' names and prefixes, for the server's threads

    QPointer<ConnectionSettings> settings_;
    QPointer<EngineBridge> bridge_;
    std::unique_ptr<hearth::server::ApiServer> server_;
    QString url_, error_, applied_;  // applied_: the settings the server runs with
    mutable std::mutex model_mutex_;
    std::shared_ptr<const hearth::server::ServedModel> model_;
    QPointer<PersonaListModel> personas_;
    std::map<std::string, std::string> prefixes_;  // persona name -> prefix (model_mutex_)
};
