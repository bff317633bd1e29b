// ConnectionSettings: the user's network settings, kept beside AppSettings in the same
// settings storage: a remote OpenAI-compatible endpoint to chat with instead of the local
// engine, and the local API server that lets other programs use the local model.
//
// API keys are kept in the settings file (Linux: ~/.config/Hearth/Hearth.conf), which is
// made readable by its owner only whenever a key is saved; keyStorageNote says so in
// Settings. (On Windows the settings live in the user's registry hive.) No desktop secret
// store is used: it is not there on every desktop, nor under CI.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QString>

#include <memory>

class QSettings;

class ConnectionSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(bool remoteEnabled READ remoteEnabled WRITE setRemoteEnabled NOTIFY changed)
    Q_PROPERTY(QString remoteUrl READ remoteUrl WRITE setRemoteUrl NOTIFY changed)
    Q_PROPERTY(QString remoteKey READ remoteKey WRITE setRemoteKey NOTIFY changed)
    Q_PROPERTY(QString remoteModel READ remoteModel WRITE setRemoteModel NOTIFY changed)
    Q_PROPERTY(bool serverEnabled READ serverEnabled WRITE setServerEnabled NOTIFY changed)
    Q_PROPERTY(int serverPort READ serverPort WRITE setServerPort NOTIFY changed)
    // Listen on every network interface (other machines), not only this one; needs a key.
    Q_PROPERTY(bool serverNetwork READ serverNetwork WRITE setServerNetwork NOTIFY changed)
    Q_PROPERTY(QString serverKey READ serverKey WRITE setServerKey NOTIFY changed)
    // Web origins allowed to call the server from a browser, comma-separated.
    Q_PROPERTY(QString serverOrigins READ serverOrigins WRITE setServerOrigins NOTIFY changed)
    // A Hugging Face access token, for gated repositories (kept as the API keys are).
    Q_PROPERTY(
        QString huggingFaceToken READ huggingFaceToken WRITE setHuggingFaceToken NOTIFY changed)
    Q_PROPERTY(QString keyStorageNote READ keyStorageNote CONSTANT)

  public:
    static constexpr int kDefaultServerPort = 8080;

    explicit ConnectionSettings(QObject* parent = nullptr);
    explicit ConnectionSettings(const QString& ini_path, QObject* parent = nullptr);
    ~ConnectionSettings() override;

    bool remoteEnabled() const { return remote_enabled_; }
    QString remoteUrl() const { return remote_url_; }
    QString remoteKey() const { return remote_key_; }
    QString huggingFaceToken() const { return hf_token_; }
    QString remoteModel() const { return remote_model_; }
    bool serverEnabled() const { return server_enabled_; }
    int serverPort() const { return server_port_; }
    bool serverNetwork() const { return server_network_; }
    QString serverKey() const { return server_key_; }
    QString serverOrigins() const { return server_origins_; }
    QString keyStorageNote() const;

    void setRemoteEnabled(bool v);
    void setRemoteUrl(const QString& v);
    void setRemoteKey(const QString& v);
    void setRemoteModel(const QString& v);
    void setServerEnabled(bool v);
    void setServerPort(int v);  // clamped to 1..65535
    void setServerNetwork(bool v);
    void setServerKey(const QString& v);
    void setServerOrigins(const QString& v);
    void setHuggingFaceToken(const QString& v);

  signals:
    void changed();

  private:
    void load();
    template <typename T>
    void store(T& member, const T& value, const char* key, bool secret = false);

    std::unique_ptr<QSettings> settings_;
    bool remote_enabled_ = false;
    QString remote_url_, remote_key_, remote_model_;
    QString hf_token_;
    bool server_enabled_ = false;
    int server_port_ = kDefaultServerPort;
    bool server_network_ = false;
    QString server_key_, server_origins_;
};
