#include "core/app_settings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QThread>

#include <algorithm>
#include <cmath>

#include "common/paths.h"

namespace {

// The defaults are the engine's own.
const hearth::SamplingParams kSampling{};
const hearth::EngineConfig kEngine{};

// A float default as the decimal a person typed (0.8f reads 0.8, not 0.800000011920929).
double nice(float v) {
    return std::round(static_cast<double>(v) * 1e6) / 1e6;
}
const double kTemperature = nice(kSampling.temperature);
const double kTopP = nice(kSampling.top_p);
const double kMinP = nice(kSampling.min_p);
const double kRepeatPenalty = AppSettings::kRepeatPenaltyDefault;
const double kFrequencyPenalty = nice(kSampling.frequency_penalty);
const double kPresencePenalty = nice(kSampling.presence_penalty);

namespace key {
constexpr auto temperature = "sampling/temperature";
constexpr auto top_k = "sampling/topK";
constexpr auto top_p = "sampling/topP";
constexpr auto min_p = "sampling/minP";
constexpr auto repeat_penalty = "sampling/repeatPenalty";
constexpr auto frequency_penalty = "sampling/frequencyPenalty";
constexpr auto presence_penalty = "sampling/presencePenalty";
constexpr auto max_reply_tokens = "sampling/maxReplyTokens";
constexpr auto kv_cache_mb = "engine/kvCacheMb";
constexpr auto kv_disk_mb = "engine/kvDiskMb";
constexpr auto kv_host_mb = "engine/kvHostMb";
constexpr auto pinned_share = "engine/pinnedShare";
constexpr auto threads = "engine/threads";
constexpr auto backend = "engine/backend";
constexpr auto last_model_path = "models/lastModelPath";
constexpr auto default_model_path = "models/defaultModelPath";
constexpr auto model_folders = "models/folders";
constexpr auto model_last_used = "models/lastUsed";  // a map: model path → time
constexpr auto theme = "appearance/theme";
constexpr auto catalog_updates = "catalog/updates";
constexpr auto speculate = "engine/speculate";
constexpr auto language = "appearance/language";
}  // namespace key

double clamp_real(double v, double lo, double hi, double fallback) {
    if (!std::isfinite(v)) return fallback;
    return std::clamp(v, lo, hi);
}

int clamp_kv(long long v) {
    if (v <= 0) return 0;
    return static_cast<int>(
        std::clamp<long long>(v, AppSettings::kKvCacheMbMin, AppSettings::kKvCacheMbMax));
}

QString valid_theme(const QString& v) {
    const QString t = v.trimmed().toLower();
    return t == QLatin1String("light") || t == QLatin1String("dark") ? t : QString();
}

// A language code as QLocale names them ("de", "pt_BR"); anything else: the system's.
QString valid_language(const QString& v) {
    const QString t = v.trimmed();
    if (t.isEmpty() || t.size() > 8) return QString();
    for (QChar c : t)
        if (!(c.isLetter() && c.unicode() < 128) && c != QLatin1Char('_')) return QString();
    return t;
}

QString valid_backend(const QString& v) {
    const QString b = v.trimmed().toLower();
    if (b == QLatin1String("cpu") || b == QLatin1String("cuda")) return b;
    return QStringLiteral("auto");
}

double read_real(QSettings& s, const char* k, double lo, double hi, double fallback) {
    bool ok = false;
    const double v = s.value(QLatin1String(k)).toDouble(&ok);
    return ok ? clamp_real(v, lo, hi, fallback) : fallback;
}

long long read_int(QSettings& s, const char* k, long long fallback) {
    bool ok = false;
    const long long v = s.value(QLatin1String(k)).toLongLong(&ok);
    return ok ? v : fallback;
}

// The settings of versions that did not name their organisation, moved to where they
// belong now (once: only into an empty store).
void adopt_legacy_settings(QSettings& now) {
    if (!now.allKeys().isEmpty()) return;
    QSettings legacy(QSettings::NativeFormat, QSettings::UserScope,
                     QStringLiteral("Unknown Organization"), QStringLiteral("Hearth"));
    const QStringList keys = legacy.allKeys();
    if (keys.isEmpty()) return;
    for (const QString& k : keys) now.setValue(k, legacy.value(k));
    now.sync();
    legacy.clear();
}

}  // namespace

AppSettings::AppSettings(QObject* parent)
    : QObject(parent),
      settings_(std::make_unique<QSettings>(QSettings::NativeFormat, QSettings::UserScope,
                                            QStringLiteral("Hearth"), QStringLiteral("Hearth"))) {
    adopt_legacy_settings(*settings_);
    load();
}

AppSettings::AppSettings(const QString& ini_path, QObject* parent)
    : QObject(parent), settings_(std::make_unique<QSettings>(ini_path, QSettings::IniFormat)) {
    load();
}

AppSettings::~AppSettings() {
    settings_->sync();
}

void AppSettings::load() {
    QSettings& s = *settings_;
    temperature_ = read_real(s, key::temperature, kTemperatureMin, kTemperatureMax, kTemperature);
    top_k_ = static_cast<int>(
        std::clamp<long long>(read_int(s, key::top_k, kSampling.top_k), kTopKMin, kTopKMax));
    top_p_ = read_real(s, key::top_p, kTopPMin, kTopPMax, kTopP);
    min_p_ = read_real(s, key::min_p, kMinPMin, kMinPMax, kMinP);
    repeat_penalty_ =
        read_real(s, key::repeat_penalty, kRepeatPenaltyMin, kRepeatPenaltyMax, kRepeatPenalty);
    frequency_penalty_ = read_real(s, key::frequency_penalty, kFrequencyPenaltyMin,
                                   kFrequencyPenaltyMax, kFrequencyPenalty);
    presence_penalty_ = read_real(s, key::presence_penalty, kPresencePenaltyMin,
                                  kPresencePenaltyMax, kPresencePenalty);
    max_reply_tokens_ = static_cast<int>(
        std::clamp<long long>(read_int(s, key::max_reply_tokens, kMaxReplyTokensDefault),
                              kMaxReplyTokensMin, kMaxReplyTokensMax));
    kv_cache_mb_ = clamp_kv(read_int(s, key::kv_cache_mb, static_cast<long long>(kEngine.kv_mb)));
    kv_disk_mb_ = static_cast<int>(std::clamp<long long>(
        read_int(s, key::kv_disk_mb, static_cast<long long>(kEngine.kv_disk_mb)), 0, kKvDiskMbMax));
    kv_host_mb_ = static_cast<int>(std::clamp<long long>(
        read_int(s, key::kv_host_mb, static_cast<long long>(kEngine.kv_host_mb)), 0, kKvDiskMbMax));
    pinned_share_ =
        read_real(s, key::pinned_share, kPinnedShareMin, kPinnedShareMax, kEngine.max_pinned_share);
    threads_ = static_cast<int>(
        std::clamp<long long>(read_int(s, key::threads, kEngine.n_threads), 0, kThreadsMax));
    backend_ =
        valid_backend(s.value(QLatin1String(key::backend), QStringLiteral("auto")).toString());
    last_model_path_ = s.value(QLatin1String(key::last_model_path)).toString();
    default_model_path_ = s.value(QLatin1String(key::default_model_path)).toString();
    model_folders_ = s.value(QLatin1String(key::model_folders)).toStringList();
    theme_ = valid_theme(s.value(QLatin1String(key::theme)).toString());
    language_ = valid_language(s.value(QLatin1String(key::language)).toString());
    catalog_updates_ = s.value(QLatin1String(key::catalog_updates), true).toBool();
    speculate_ = s.value(QLatin1String(key::speculate), true).toBool();
    load_model_context();
}

QString AppSettings::model_key(const char* name, const QString& model_path) const {
    const QString file = QFileInfo(model_path).fileName();
    return QStringLiteral("models/") + (file.isEmpty() ? QStringLiteral("none") : file) +
           QLatin1Char('/') + QLatin1String(name);
}

int AppSettings::read_context_length(QSettings& s, const QString& key) {
    bool ok = false;
    const long long length = s.value(key).toLongLong(&ok);
    return ok && length > 0 ? static_cast<int>(std::clamp<long long>(length, kContextLengthMin,
                                                                     kContextLengthMax))
                            : 0;
}

int AppSettings::contextLengthFor(const QString& model_path) const {
    return read_context_length(*settings_, model_key("contextLength", model_path));
}

void AppSettings::load_model_context() {
    QSettings& s = *settings_;
    bool ok = false;
    context_length_ = read_context_length(s, model_key("contextLength"));
    context_overflow_ = QString::fromLatin1(hearth::chat::context_policy_name(
        hearth::chat::parse_context_policy(s.value(model_key("overflow")).toString().toStdString())
            .value_or(hearth::chat::ContextPolicy::DropInSteps)));
    if (context_overflow_ == QLatin1String("fail")) context_overflow_ = QStringLiteral("drop");
    const double keep = s.value(model_key("keep")).toDouble(&ok);
    context_keep_ =
        ok ? clamp_real(keep, kContextKeepMin, kContextKeepMax, hearth::chat::kDefaultKeep)
           : hearth::chat::kDefaultKeep;
}

hearth::chat::ContextPolicy AppSettings::overflowPolicy() const {
    return hearth::chat::parse_context_policy(context_overflow_.toStdString())
        .value_or(hearth::chat::ContextPolicy::DropInSteps);
}

void AppSettings::setContextLength(int v) {
    const int c = v <= 0 ? 0 : std::clamp(v, kContextLengthMin, kContextLengthMax);
    if (c == context_length_) return;
    context_length_ = c;
    settings_->setValue(model_key("contextLength"), c);
    emit contextSettingsChanged();
    emit settingsChanged();
}

void AppSettings::setContextOverflow(const QString& v) {
    auto p = hearth::chat::parse_context_policy(v.trimmed().toLower().toStdString());
    if (!p || *p == hearth::chat::ContextPolicy::Fail) p = hearth::chat::ContextPolicy::DropInSteps;
    const QString c = QString::fromLatin1(hearth::chat::context_policy_name(*p));
    if (c == context_overflow_) return;
    context_overflow_ = c;
    settings_->setValue(model_key("overflow"), c);
    emit contextSettingsChanged();
    emit settingsChanged();
}

void AppSettings::setContextKeep(double v) {
    const double c = clamp_real(v, kContextKeepMin, kContextKeepMax, hearth::chat::kDefaultKeep);
    if (c == context_keep_) return;
    context_keep_ = c;
    settings_->setValue(model_key("keep"), c);
    emit contextSettingsChanged();
    emit settingsChanged();
}

QString AppSettings::fileName() const {
    return settings_->fileName();
}

int AppSettings::maxThreads() const {
    return std::max(1, QThread::idealThreadCount());
}

QString AppSettings::backendNote() const {
    if (backend_ == QLatin1String("cuda"))
        return QStringLiteral(
            "Runs on the first NVIDIA GPU that holds the model, or fails to load if there is "
            "none. The CUDA backend is new and not yet verified on a GPU.");
    if (backend_ == QLatin1String("cpu")) return QStringLiteral("Inference runs on the CPU.");
    return QStringLiteral(
        "The CPU until the CUDA backend has been verified on a GPU; the "
        "Model page says which device runs the model, and why.");
}

// Stores a changed value and announces it.
#define HEARTH_SETTING_SET(member, k, value, signal)     \
    do {                                                 \
        if ((member) == (value)) return;                 \
        (member) = (value);                              \
        settings_->setValue(QLatin1String(k), (member)); \
        emit signal();                                   \
        emit settingsChanged();                          \
    } while (false)

void AppSettings::setTemperature(double v) {
    const double c = clamp_real(v, kTemperatureMin, kTemperatureMax, kTemperature);
    HEARTH_SETTING_SET(temperature_, key::temperature, c, temperatureChanged);
}

void AppSettings::setTopK(int v) {
    const int c = std::clamp(v, kTopKMin, kTopKMax);
    HEARTH_SETTING_SET(top_k_, key::top_k, c, topKChanged);
}

void AppSettings::setTopP(double v) {
    const double c = clamp_real(v, kTopPMin, kTopPMax, kTopP);
    HEARTH_SETTING_SET(top_p_, key::top_p, c, topPChanged);
}

void AppSettings::setMinP(double v) {
    const double c = clamp_real(v, kMinPMin, kMinPMax, kMinP);
    HEARTH_SETTING_SET(min_p_, key::min_p, c, minPChanged);
}

void AppSettings::setRepeatPenalty(double v) {
    const double c = clamp_real(v, kRepeatPenaltyMin, kRepeatPenaltyMax, kRepeatPenalty);
    HEARTH_SETTING_SET(repeat_penalty_, key::repeat_penalty, c, repeatPenaltyChanged);
}

void AppSettings::setFrequencyPenalty(double v) {
    const double c = clamp_real(v, kFrequencyPenaltyMin, kFrequencyPenaltyMax, kFrequencyPenalty);
    HEARTH_SETTING_SET(frequency_penalty_, key::frequency_penalty, c, frequencyPenaltyChanged);
}

void AppSettings::setPresencePenalty(double v) {
    const double c = clamp_real(v, kPresencePenaltyMin, kPresencePenaltyMax, kPresencePenalty);
    HEARTH_SETTING_SET(presence_penalty_, key::presence_penalty, c, presencePenaltyChanged);
}

void AppSettings::setMaxReplyTokens(int v) {
    const int c = std::clamp(v, kMaxReplyTokensMin, kMaxReplyTokensMax);
    HEARTH_SETTING_SET(max_reply_tokens_, key::max_reply_tokens, c, maxReplyTokensChanged);
}

void AppSettings::setKvCacheMb(int v) {
    const int c = clamp_kv(v);
    HEARTH_SETTING_SET(kv_cache_mb_, key::kv_cache_mb, c, kvCacheMbChanged);
}

void AppSettings::setKvDiskMb(int v) {
    const int c = std::clamp(v, 0, kKvDiskMbMax);
    HEARTH_SETTING_SET(kv_disk_mb_, key::kv_disk_mb, c, kvDiskMbChanged);
}

void AppSettings::setKvHostMb(int v) {
    const int c = std::clamp(v, 0, kKvDiskMbMax);
    HEARTH_SETTING_SET(kv_host_mb_, key::kv_host_mb, c, kvHostMbChanged);
}

QString AppSettings::kvDiskDir() const {
    return QString::fromStdString(hearth::paths::kv_cache_dir());
}

void AppSettings::setPinnedShare(double v) {
    const double c = clamp_real(v, kPinnedShareMin, kPinnedShareMax, kEngine.max_pinned_share);
    HEARTH_SETTING_SET(pinned_share_, key::pinned_share, c, pinnedShareChanged);
}

void AppSettings::setThreads(int v) {
    const int c = std::clamp(v, 0, kThreadsMax);
    HEARTH_SETTING_SET(threads_, key::threads, c, threadsChanged);
}

void AppSettings::setBackend(const QString& v) {
    const QString c = valid_backend(v);
    HEARTH_SETTING_SET(backend_, key::backend, c, backendChanged);
}

void AppSettings::setLastModelPath(const QString& v) {
    if (v == last_model_path_) return;
    HEARTH_SETTING_SET(last_model_path_, key::last_model_path, v, lastModelPathChanged);
    load_model_context();  // the new model's own
    emit contextSettingsChanged();
    emit modelDefaultsChanged();
}

void AppSettings::setDefaultModelPath(const QString& v) {
    HEARTH_SETTING_SET(default_model_path_, key::default_model_path, v, defaultModelPathChanged);
}

void AppSettings::setModelFolders(const QStringList& v) {
    QStringList clean;
    for (const QString& folder : v) {
        const QString c =
            folder.trimmed().isEmpty() ? QString() : QDir::cleanPath(folder.trimmed());
        if (!c.isEmpty() && !clean.contains(c)) clean << c;
    }
    HEARTH_SETTING_SET(model_folders_, key::model_folders, clean, modelFoldersChanged);
}

QString AppSettings::modelToOpen() const {
    if (!default_model_path_.isEmpty() && QFileInfo(default_model_path_).isFile())
        return default_model_path_;
    return last_model_path_;
}

QDateTime AppSettings::modelLastUsed(const QString& model_path) const {
    return settings_->value(QLatin1String(key::model_last_used))
        .toMap()
        .value(model_path)
        .toDateTime();
}

void AppSettings::noteModelUsed(const QString& model_path) {
    if (model_path.isEmpty()) return;
    QVariantMap used = settings_->value(QLatin1String(key::model_last_used)).toMap();
    used.insert(model_path, QDateTime::currentDateTimeUtc());
    // Files gone for good would pile up: keep the 200 most recent.
    while (used.size() > 200) {
        auto oldest = used.begin();
        for (auto it = used.begin(); it != used.end(); ++it)
            if (it.value().toDateTime() < oldest.value().toDateTime()) oldest = it;
        used.erase(oldest);
    }
    settings_->setValue(QLatin1String(key::model_last_used), used);
    emit settingsChanged();
}

void AppSettings::setTheme(const QString& v) {
    const QString c = valid_theme(v);
    HEARTH_SETTING_SET(theme_, key::theme, c, themeChanged);
}

void AppSettings::setLanguage(const QString& v) {
    const QString c = valid_language(v);
    HEARTH_SETTING_SET(language_, key::language, c, languageChanged);
}

void AppSettings::setCatalogUpdates(bool on) {
    HEARTH_SETTING_SET(catalog_updates_, key::catalog_updates, on, catalogUpdatesChanged);
}

void AppSettings::setSpeculate(bool on) {
    HEARTH_SETTING_SET(speculate_, key::speculate, on, speculateChanged);
}

#undef HEARTH_SETTING_SET

void AppSettings::resetSampling() {
    setTemperature(kTemperature);
    setTopK(kSampling.top_k);
    setTopP(kTopP);
    setMinP(kMinP);
    setRepeatPenalty(kRepeatPenalty);
    setFrequencyPenalty(kFrequencyPenalty);
    setPresencePenalty(kPresencePenalty);
    setMaxReplyTokens(kMaxReplyTokensDefault);
}

void AppSettings::resetEngine() {
    setKvCacheMb(static_cast<int>(kEngine.kv_mb));
    setKvDiskMb(static_cast<int>(kEngine.kv_disk_mb));
    setKvHostMb(static_cast<int>(kEngine.kv_host_mb));
    setPinnedShare(kEngine.max_pinned_share);
    setThreads(kEngine.n_threads);
    setBackend(QStringLiteral("auto"));
    setSpeculate(true);
}

void AppSettings::sync() {
    settings_->sync();
}

hearth::SamplingParams AppSettings::samplingParams() const {
    hearth::SamplingParams p;
    p.temperature = static_cast<float>(temperature_);
    p.top_k = top_k_;
    p.top_p = static_cast<float>(top_p_);
    p.min_p = static_cast<float>(min_p_);
    p.repeat_penalty = static_cast<float>(repeat_penalty_);
    p.frequency_penalty = static_cast<float>(frequency_penalty_);
    p.presence_penalty = static_cast<float>(presence_penalty_);
    return p;
}

hearth::EngineConfig AppSettings::engineConfig() const {
    hearth::EngineConfig c;
    c.model_path = last_model_path_.toStdString();
    c.n_threads = threads_;
    c.kv_mb = static_cast<std::size_t>(kv_cache_mb_);
    c.kv_disk_mb = static_cast<std::size_t>(kv_disk_mb_);
    c.kv_host_mb = static_cast<std::size_t>(kv_host_mb_);
    c.kv_disk_dir = hearth::paths::kv_cache_dir();
    c.kernel_choice_file = hearth::paths::kernel_choice_file();
    c.max_pinned_share = pinned_share_;
    c.device = backend_.toStdString();  // "auto", "cpu" or "cuda" (valid_backend)
    c.context_length = context_length_;
    return c;
}
