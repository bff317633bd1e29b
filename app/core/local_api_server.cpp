#include "core/local_api_server.h"

#include <QFileInfo>

#include "chat/prompt_builder.h"
#include "common/log.h"
#include "server/api_server.h"

using namespace hearth;

LocalApiServer::LocalApiServer(QObject* parent) : QObject(parent) {}

LocalApiServer::~LocalApiServer() {
    if (server_) server_->stop();
}

void LocalApiServer::setSettings(ConnectionSettings* settings) {
    if (settings == settings_) return;
    if (settings_) settings_->disconnect(this);
    settings_ = settings;
    if (settings_) connect(settings_, &ConnectionSettings::changed, this, &LocalApiServer::apply);
    emit settingsChanged();
    apply();
}

void LocalApiServer::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    if (bridge_) {
        connect(bridge_, &EngineBridge::modelChanged, this, &LocalApiServer::update_model);
        // Let go of the old engine before the bridge retires it.
        connect(bridge_, &EngineBridge::aboutToUnload, this, [this] {
            std::lock_guard lock(model_mutex_);
            model_.reset();
        });
    }
    emit settingsChanged();
    update_model();
}

void LocalApiServer::setPersonas(PersonaListModel* personas) {
    if (personas == personas_) return;
    if (personas_) personas_->disconnect(this);
    personas_ = personas;
    if (personas_)
        connect(personas_, &PersonaListModel::loaded, this, &LocalApiServer::update_personas);
    emit settingsChanged();
    update_personas();
}

void LocalApiServer::update_personas() {
    std::map<std::string, std::string> prefixes;
    if (personas_)
        for (const auto& [name, prefix] : personas_->prefixes())
            prefixes[name.toStdString()] = prefix.toStdString();
    std::lock_guard lock(model_mutex_);
    prefixes_ = std::move(prefixes);
}

QString LocalApiServer::modelId() const {
    std::lock_guard lock(model_mutex_);
    return model_ ? QString::fromStdString(model_->id) : QString();
}

std::shared_ptr<const server::ServedModel> LocalApiServer::served() const {
    std::lock_guard lock(model_mutex_);
    return model_;
}

void LocalApiServer::update_model() {
    std::shared_ptr<const server::ServedModel> m;
    if (bridge_ && bridge_->loaded() && bridge_->engine() && bridge_->promptBuilder()) {
        auto s = std::make_shared<server::ServedModel>();
        s->engine = bridge_->engine();
        s->builder = bridge_->promptBuilder();
        s->id = QFileInfo(bridge_->modelPath()).completeBaseName().toStdString();
        s->context_length = bridge_->contextLength();
        s->keep_alive = bridge_->keepAlive();
        m = std::move(s);
    }
    {
        std::lock_guard lock(model_mutex_);
        model_ = std::move(m);
    }
    emit stateChanged();
}

void LocalApiServer::apply() {
    const bool want = settings_ && settings_->serverEnabled();
    server::ServerConfig c;
    if (want) {
        c.host = settings_->serverNetwork() ? "0.0.0.0" : "127.0.0.1";
        c.port = settings_->serverPort();
        c.api_key = settings_->serverKey().toStdString();
        for (const QString& o :
             settings_->serverOrigins().split(QLatin1Char(','), Qt::SkipEmptyParts))
            c.cors_origins.push_back(o.trimmed().toStdString());
    }
    const QString wanted = want ? QStringLiteral("%1:%2 %3 %4")
                                      .arg(QString::fromStdString(c.host))
                                      .arg(c.port)
                                      .arg(settings_->serverKey(), settings_->serverOrigins())
                                : QString();
    if (wanted == applied_) return;  // the same settings: running, off, or failed as before
    applied_ = wanted;
    if (server_) {
        server_->stop();
        server_.reset();
    }
    url_.clear();
    error_.clear();
    if (want) {
        server::PersonaSource personas;
        personas.find = [this](const std::string& name) -> std::optional<std::string> {
            std::lock_guard lock(model_mutex_);
            const auto it = prefixes_.find(name);
            return it == prefixes_.end() ? std::nullopt : std::optional(it->second);
        };
        personas.names = [this] {
            std::lock_guard lock(model_mutex_);
            std::vector<std::string> names;
            for (const auto& entry : prefixes_) names.push_back(entry.first);
            return names;
        };
        auto started = server::ApiServer::start(
            c, [this] { return served(); }, std::move(personas));
        if (started) {
            server_ = std::move(started).value();
            url_ = QString::fromStdString(server_->url());
            log::get("app")->info("local API server on {}", url_.toStdString());
        } else {
            error_ = QString::fromStdString(started.message());
            log::get("app")->warn("local API server: {}", started.message());
        }
    }
    emit stateChanged();
}
