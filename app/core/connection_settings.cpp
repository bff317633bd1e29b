#include "core/connection_settings.h"

#include <QFile>
#include <QSettings>

#include <algorithm>

namespace {
namespace key {
constexpr auto remote_enabled = "remote/enabled";
constexpr auto remote_url = "remote/url";
constexpr auto remote_key = "remote/apiKey";
constexpr auto hf_token = "huggingFace/token";
constexpr auto remote_model = "remote/model";
constexpr auto server_enabled = "server/enabled";
constexpr auto server_port = "server/port";
constexpr auto server_network = "server/network";
constexpr auto server_key = "server/apiKey";
constexpr auto server_origins = "server/corsOrigins";
}  // namespace key
}  // namespace

ConnectionSettings::ConnectionSettings(QObject* parent)
    : QObject(parent),
      settings_(std::make_unique<QSettings>(QSettings::NativeFormat, QSettings::UserScope,
                                            QStringLiteral("Hearth"), QStringLiteral("Hearth"))) {
    load();
}

ConnectionSettings::ConnectionSettings(const QString& ini_path, QObject* parent)
    : QObject(parent), settings_(std::make_unique<QSettings>(ini_path, QSettings::IniFormat)) {
    load();
}

ConnectionSettings::~ConnectionSettings() {
    settings_->sync();
}

void ConnectionSettings::load() {
    QSettings& s = *settings_;
    remote_enabled_ = s.value(QLatin1String(key::remote_enabled), false).toBool();
    remote_url_ = s.value(QLatin1String(key::remote_url)).toString();
    remote_key_ = s.value(QLatin1String(key::remote_key)).toString();
    hf_token_ = s.value(QLatin1String(key::hf_token)).toString();
    remote_model_ = s.value(QLatin1String(key::remote_model)).toString();
    server_enabled_ = s.value(QLatin1String(key::server_enabled), false).toBool();
    server_port_ =
        std::clamp(s.value(QLatin1String(key::server_port), kDefaultServerPort).toInt(), 1, 65535);
    server_network_ = s.value(QLatin1String(key::server_network), false).toBool();
    server_key_ = s.value(QLatin1String(key::server_key)).toString();
    server_origins_ = s.value(QLatin1String(key::server_origins)).toString();
}

QString ConnectionSettings::keyStorageNote() const {
    if (settings_->format() == QSettings::NativeFormat &&
        !settings_->fileName().contains(QLatin1Char('/')))
        return tr("API keys are kept in your settings in the registry (%1), readable by your "
                  "account only.")
            .arg(settings_->fileName());
    return tr("API keys are kept in plain text in your settings file (%1), readable by you "
              "only. Hearth does not use a desktop keyring.")
        .arg(settings_->fileName());
}

template <typename T>
void ConnectionSettings::store(T& member, const T& value, const char* k, bool secret) {
    if (member == value) return;
    member = value;
    settings_->setValue(QLatin1String(k), member);
    if (secret || !remote_key_.isEmpty() || !server_key_.isEmpty() || !hf_token_.isEmpty()) {
        // The file holds a key: written at once, and readable by its owner only (again
        // after every write, whatever the writer does with the file's mode).
        settings_->sync();
        if (QFile::exists(settings_->fileName()))
            QFile::setPermissions(settings_->fileName(),
                                  QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }
    emit changed();
}

void ConnectionSettings::setRemoteEnabled(bool v) {
    store(remote_enabled_, v, key::remote_enabled);
}
void ConnectionSettings::setRemoteUrl(const QString& v) {
    store(remote_url_, v.trimmed(), key::remote_url);
}
void ConnectionSettings::setRemoteKey(const QString& v) {
    store(remote_key_, v.trimmed(), key::remote_key, true);
}
void ConnectionSettings::setHuggingFaceToken(const QString& v) {
    store(hf_token_, v.trimmed(), key::hf_token, true);
}
void ConnectionSettings::setRemoteModel(const QString& v) {
    store(remote_model_, v, key::remote_model);
}
void ConnectionSettings::setServerEnabled(bool v) {
    store(server_enabled_, v, key::server_enabled);
}
void ConnectionSettings::setServerPort(int v) {
    store(server_port_, std::clamp(v, 1, 65535), key::server_port);
}
void ConnectionSettings::setServerNetwork(bool v) {
    store(server_network_, v, key::server_network);
}
void ConnectionSettings::setServerKey(const QString& v) {
    store(server_key_, v.trimmed(), key::server_key, true);
}
void ConnectionSettings::setServerOrigins(const QString& v) {
    store(server_origins_, v.trimmed(), key::server_origins);
}
