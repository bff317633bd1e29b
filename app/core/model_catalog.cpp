#include "core/model_catalog.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>

#include "common/log.h"
#include "common/paths.h"
#include "core/fit_text.h"
#include "fit_estimate.h"
#include "memory_probe.h"
#include "model/architectures.h"

namespace {

constexpr const char* kFormat = "hearth.catalog";
constexpr int kVersion = 1;
constexpr int kMaxModels = 500;
constexpr int kMaxFiles = 64;
constexpr int kTimeoutMs = 30000;
constexpr const char* kBuiltIn = ":/catalog/catalog.json";

QByteArray read_file(const QString& path, qint64 limit) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > limit) return {};
    return f.readAll();
}

// A field that must be a string of at most max characters (empty allowed or not).
bool text_field(const QJsonObject& o, const char* key, int max, bool required, QString* out) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() && !required) return true;
    if (!v.isString()) return false;
    *out = v.toString();
    return out->size() <= max && (!required || !out->trimmed().isEmpty());
}

bool positive_int(const QJsonValue& v, qint64 max, qint64* out) {
    if (!v.isDouble()) return false;
    const double d = v.toDouble();
    if (d < 1 || d > static_cast<double>(max) || d != static_cast<double>(static_cast<qint64>(d)))
        return false;
    *out = static_cast<qint64>(d);
    return true;
}

QStringList strings(const QJsonValue& v) {
    QStringList out;
    for (const QJsonValue& s : v.toArray())
        if (s.isString()) out << s.toString();
    return out;
}

std::optional<QVariantMap> parse_file(const QJsonObject& o, QString* error) {
    // A path inside the repository: plain names, no way out of it.
    static const QRegularExpression name_re(
        QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._+-]*(/[A-Za-z0-9_][A-Za-z0-9._+-]*)*$"));
    QString name, quant;
    qint64 size = 0;
    if (!text_field(o, "name", 200, true, &name) || !name_re.match(name).hasMatch() ||
        name.contains(QLatin1String("..")) ||
        !name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) {
        *error = QStringLiteral("a file name that is not a .gguf path in the repository");
        return std::nullopt;
    }
    if (!text_field(o, "quant", 32, false, &quant) ||
        !positive_int(o.value(QLatin1String("size_bytes")), qint64{1} << 50, &size)) {
        *error = QStringLiteral("%1: a missing or malformed quant or size_bytes").arg(name);
        return std::nullopt;
    }
    return QVariantMap{{"name", name}, {"quant", quant}, {"size", size}};
}

std::optional<QVariantMap> parse_model(const QJsonObject& o, QString* error) {
    static const QRegularExpression id_re(QStringLiteral("^[a-z0-9][a-z0-9._-]{0,63}$"));
    static const QRegularExpression repo_re(
        QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"));
    QString id, name, family, arch, repo, base, license, description, recommended, caveat;
    if (!text_field(o, "id", 64, true, &id) || !id_re.match(id).hasMatch()) {
        *error = QStringLiteral("a model without a valid id");
        return std::nullopt;
    }
    const auto bad = [&](const QString& what) {
        *error = QStringLiteral("%1: %2").arg(id, what);
        return std::nullopt;
    };
    if (!text_field(o, "name", 100, true, &name)) return bad(QStringLiteral("no name"));
    if (!text_field(o, "architecture", 32, true, &arch))
        return bad(QStringLiteral("no architecture"));
    if (!text_field(o, "repo", 200, true, &repo) || !repo_re.match(repo).hasMatch() ||
        repo.contains(QLatin1String("..")))
        return bad(QStringLiteral("a repository that is not owner/name"));
    if (!text_field(o, "family", 100, false, &family) ||
        !text_field(o, "base_repo", 200, false, &base) ||
        !text_field(o, "license", 100, false, &license) ||
        !text_field(o, "description", 400, false, &description) ||
        !text_field(o, "recommended", 32, false, &recommended) ||
        !text_field(o, "caveat", 400, false, &caveat))
        return bad(QStringLiteral("a text field that is not text, or too long"));
    qint64 context = 0;
    if (o.contains(QLatin1String("context_length")) &&
        !positive_int(o.value(QLatin1String("context_length")), qint64{1} << 24, &context))
        return bad(QStringLiteral("a malformed context_length"));
    const double params = o.value(QLatin1String("parameters_b")).toDouble(0);
    if (params < 0 || params > 10000) return bad(QStringLiteral("a malformed parameters_b"));

    QVariantList files;
    const QJsonArray raw_files = o.value(QLatin1String("files")).toArray();
    if (raw_files.size() > kMaxFiles) return bad(QStringLiteral("too many files"));
    for (const QJsonValue& f : raw_files) {
        QString why;
        auto file = parse_file(f.toObject(), &why);
        if (!file) return bad(why);
        file->insert(QStringLiteral("recommended"), file->value("quant").toString() == recommended);
        files << *file;
    }

    // The KV cache's shape (optional: without it the fit counts the weights alone).
    QVariantMap shape;
    if (o.contains(QLatin1String("shape"))) {
        const QJsonObject s = o.value(QLatin1String("shape")).toObject();
        qint64 layers = 0, kv_heads = 0, head_dim = 0, vocab = 0;
        if (!positive_int(s.value(QLatin1String("layers")), 1024, &layers) ||
            !positive_int(s.value(QLatin1String("kv_heads")), 1024, &kv_heads) ||
            !positive_int(s.value(QLatin1String("head_dim")), 4096, &head_dim) ||
            (s.contains(QLatin1String("vocab")) &&
             !positive_int(s.value(QLatin1String("vocab")), qint64{1} << 24, &vocab)))
            return bad(QStringLiteral("a malformed shape"));
        shape = {
            {"layers", layers}, {"kvHeads", kv_heads}, {"headDim", head_dim}, {"vocab", vocab}};
    }

    return QVariantMap{{"id", id},
                       {"name", name},
                       {"family", family},
                       {"architecture", arch},
                       {"parametersB", params},
                       {"repo", repo},
                       {"baseRepo", base},
                       {"license", license},
                       {"contextLength", context},
                       {"description", description},
                       {"caveat", caveat},
                       {"thinking", o.value(QLatin1String("thinking")).toBool(false)},
                       {"recommended", recommended},
                       {"sources", strings(o.value(QLatin1String("sources")))},
                       {"unchecked", strings(o.value(QLatin1String("unchecked")))},
                       {"shape", shape},
                       {"files", files}};
}

}  // namespace

ModelCatalog::ModelCatalog(QObject* parent)
    : QObject(parent),
      nam_(new QNetworkAccessManager(this)),
      cache_dir_(QString::fromStdString(hearth::paths::data_dir())) {
    nam_->setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
    load();
}

ModelCatalog::~ModelCatalog() {
    if (reply_) reply_->abort();
}

std::optional<ModelCatalog::Parsed> ModelCatalog::parse(const QByteArray& json, QString* error) {
    const auto fail = [&](const QString& why) {
        if (error) *error = why;
        return std::nullopt;
    };
    if (json.size() > kMaxBytes) return fail(QStringLiteral("larger than 2 MiB"));
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return fail(
            QStringLiteral("not JSON (%1 at byte %2)").arg(pe.errorString()).arg(pe.offset));
    const QJsonObject root = doc.object();
    if (root.value(QLatin1String("format")).toString() != QLatin1String(kFormat))
        return fail(QStringLiteral("not a Hearth model catalog"));
    const int version = root.value(QLatin1String("version")).toInt(0);
    if (version > kVersion)
        return fail(QStringLiteral("made for a newer Hearth (format version %1)").arg(version));
    if (version < 1) return fail(QStringLiteral("no format version"));
    Parsed out;
    out.updated = root.value(QLatin1String("updated")).toString();
    static const QRegularExpression date_re(QStringLiteral("^\\d{4}-\\d{2}-\\d{2}$"));
    if (!date_re.match(out.updated).hasMatch())
        return fail(QStringLiteral("no date (\"updated\": YYYY-MM-DD)"));
    const QJsonArray models = root.value(QLatin1String("models")).toArray();
    if (models.isEmpty()) return fail(QStringLiteral("no models"));
    if (models.size() > kMaxModels) return fail(QStringLiteral("too many models"));
    QSet<QString> ids;
    for (const QJsonValue& m : models) {
        QString why;
        auto model = parse_model(m.toObject(), &why);
        if (!model) return fail(why);
        const QString id = model->value("id").toString();
        if (ids.contains(id)) return fail(QStringLiteral("%1 is listed twice").arg(id));
        ids.insert(id);
        out.models << *model;
    }
    return out;
}

QString ModelCatalog::cachePath() const {
    return QDir(cache_dir_).filePath(QStringLiteral("catalog.json"));
}

void ModelCatalog::load() {
    QString error;
    auto built_in = parse(read_file(QLatin1String(kBuiltIn), kMaxBytes), &error);
    if (!built_in) {
        hearth::log::get("catalog")->error("the built-in catalog is unusable: {}",
                                           error.toStdString());
        built_in = Parsed{};
    }
    source_ = *built_in;
    from_update_ = false;
    if (QFileInfo::exists(cachePath())) {
        auto kept = parse(read_file(cachePath(), kMaxBytes), &error);
        if (!kept) {
            hearth::log::get("catalog")->warn("ignoring the kept catalog {}: {}",
                                              cachePath().toStdString(), error.toStdString());
        } else if (kept->updated > source_.updated) {
            source_ = *kept;
            from_update_ = true;
        }
    }
    updated_ = source_.updated;
    rebuild();
}

void ModelCatalog::rebuild() {
    hearth::MachineFacts machine;
    if (auto memory = hearth::system_memory()) {
        machine.ram_total = memory->total;
        machine.ram_available = memory->available;
    }
    machine.read_bytes_per_s = read_bandwidth_;
    models_.clear();
    for (const QVariant& v : source_.models) {
        QVariantMap m = v.toMap();
        const bool supported =
            hearth::is_supported_architecture(m.value("architecture").toString().toStdString());
        m.insert(QStringLiteral("supported"), supported);
        const QVariantMap shape = m.value("shape").toMap();
        QVariantList files;
        for (const QVariant& fv : m.value("files").toList()) {
            QVariantMap f = fv.toMap();
            QUrl url(hub_url_ + QLatin1Char('/') + m.value("repo").toString() +
                     QStringLiteral("/resolve/main/"));
            url.setPath(url.path() + f.value("name").toString());
            f.insert(QStringLiteral("url"), url);
            QVariantMap fit;
            if (!supported) {
                fit = {{"fit", QStringLiteral("unsupported")},
                       {"text", tr("Hearth cannot run %1 models yet")
                                    .arg(m.value("architecture").toString())}};
            } else if (machine.ram_available > 0) {
                hearth::ModelNeeds needs;
                needs.weight_bytes = needs.decode_bytes =
                    static_cast<std::uint64_t>(f.value("size").toLongLong());
                needs.context_length = m.value("contextLength").toLongLong();
                needs.n_layer = shape.value("layers").toInt();
                needs.n_head_kv = shape.value("kvHeads").toInt();
                needs.head_dim = shape.value("headDim").toInt();
                needs.activation_bytes =
                    static_cast<std::uint64_t>(shape.value("vocab").toLongLong()) *
                    hearth::kTokenizerBytesPerToken;
                const auto e = hearth::estimate_fit(
                    needs, context_, static_cast<std::size_t>(kv_cache_mb_), machine);
                fit = hearth::app::fit_map(e, machine);
                if (shape.isEmpty())
                    fit.insert(QStringLiteral("text"),
                               fit.value("text").toString() + tr(" (plus its KV cache)"));
            }
            f.insert(QStringLiteral("fit"), fit.value("fit").toString());
            f.insert(QStringLiteral("fitText"), fit.value("text").toString());
            f.insert(QStringLiteral("fitDetail"), fit.value("detail").toString());
            f.insert(QStringLiteral("tokensPerSecond"), fit.value("tokensPerSecond").toDouble());
            files << f;
        }
        m.insert(QStringLiteral("files"), files);
        models_ << m;
    }
    emit modelsChanged();
}

void ModelCatalog::setHubUrl(const QString& url) {
    QString clean = url.trimmed();
    while (clean.endsWith(QLatin1Char('/'))) clean.chop(1);
    if (clean.isEmpty() || clean == hub_url_) return;
    hub_url_ = clean;
    rebuild();
}

void ModelCatalog::setUpdateUrl(const QString& url) {
    const QString clean =
        url.trimmed().isEmpty() ? QLatin1String(kDefaultUpdateUrl) : url.trimmed();
    if (clean == update_url_) return;
    update_url_ = clean;
    emit updateUrlChanged();
}

void ModelCatalog::setUpdatesEnabled(bool on) {
    if (on == updates_enabled_) return;
    updates_enabled_ = on;
    emit updatesEnabledChanged();
}

void ModelCatalog::setCacheDir(const QString& dir) {
    if (dir.isEmpty() || QDir::cleanPath(dir) == cache_dir_) return;
    cache_dir_ = QDir::cleanPath(dir);
    load();
}

void ModelCatalog::setReadBandwidth(double bytes_per_s) {
    if (bytes_per_s == read_bandwidth_) return;
    read_bandwidth_ = bytes_per_s;
    rebuild();
}

void ModelCatalog::setContext(int tokens) {
    if (tokens == context_ || tokens < 0) return;
    context_ = tokens;
    rebuild();
}

void ModelCatalog::setKvCacheMb(int mb) {
    if (mb == kv_cache_mb_ || mb < 0) return;
    kv_cache_mb_ = mb;
    rebuild();
}

void ModelCatalog::set_status(const QString& s) {
    if (s == status_) return;
    status_ = s;
    emit statusChanged();
}

void ModelCatalog::checkIfDue() {
    if (!updates_enabled_ || checked_this_run_ || checking()) return;
    const QFileInfo kept(cachePath());
    if (kept.exists() &&
        kept.lastModified().secsTo(QDateTime::currentDateTime()) < kCheckIntervalHours * 3600)
        return;
    checkForUpdate();
}

void ModelCatalog::checkForUpdate() {
    if (checking()) return;
    checked_this_run_ = true;
    QNetworkRequest request{QUrl(update_url_)};
    request.setTransferTimeout(kTimeoutMs);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("Hearth"));
    reply_ = nam_->get(request);
    connect(reply_, &QNetworkReply::downloadProgress, this, [this](qint64 received, qint64) {
        if (received > kMaxBytes && reply_) reply_->abort();  // on_finished says why
    });
    connect(reply_, &QNetworkReply::finished, this, &ModelCatalog::on_finished);
    emit checkingChanged();
    set_status(tr("Checking for a newer list…"));
}

void ModelCatalog::on_finished() {
    QNetworkReply* r = reply_;
    if (!r) return;
    reply_ = nullptr;
    r->deleteLater();
    emit checkingChanged();
    const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = r->readAll();
    const QString where = QUrl(update_url_).host();
    if (r->bytesAvailable() > 0 || body.size() > kMaxBytes ||
        (r->error() == QNetworkReply::OperationCanceledError && status == 200)) {
        set_status(tr("The list at %1 is larger than 2 MiB and was not used").arg(where));
        return;
    }
    if (status == 0 || (r->error() != QNetworkReply::NoError && status < 400)) {
        set_status(tr("Cannot reach %1 (%2); the list built into Hearth is shown")
                       .arg(where, r->errorString()));
        return;
    }
    if (status >= 400) {
        set_status(
            tr("%1 answered HTTP %2; the list built into Hearth is shown").arg(where).arg(status));
        return;
    }
    QString error;
    const auto parsed = parse(body, &error);
    if (!parsed) {
        set_status(tr("The list from %1 is not valid (%2) and was not used").arg(where, error));
        return;
    }
    // Kept even when not newer: its time is when the list was last checked.
    QSaveFile out(cachePath());
    if (!QDir().mkpath(cache_dir_) || !out.open(QIODevice::WriteOnly) ||
        out.write(body) != body.size() || !out.commit()) {
        set_status(tr("Cannot keep the newer list in %1: %2")
                       .arg(QDir::toNativeSeparators(cache_dir_), out.errorString()));
        return;
    }
    const QString before = updated_;
    load();
    set_status(updated_ > before ? tr("Updated to the list of %1").arg(updated_)
                                 : tr("The list is up to date (%1)").arg(updated_));
}
