#include "core/hub_search.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QUrlQuery>

#include <algorithm>

#include "common/log.h"
#include "core/download_http.h"
#include "fit_estimate.h"
#include "memory_probe.h"
#include "models/scan_util.h"

namespace {

constexpr int kResultLimit = 40;
constexpr int kTimeoutMs = 30000;

QString file_name_of(const QString& path) {
    return path.section(QLatin1Char('/'), -1);
}

}  // namespace

HubSearch::HubSearch(QObject* parent) : QObject(parent), nam_(new QNetworkAccessManager(this)) {
    nam_->setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
}

HubSearch::~HubSearch() {
    cancel();
}

void HubSearch::setBaseUrl(const QString& url) {
    QString clean = url.trimmed();
    while (clean.endsWith(QLatin1Char('/'))) clean.chop(1);
    if (clean.isEmpty() || clean == base_url_) return;
    base_url_ = clean;
    emit baseUrlChanged();
}

void HubSearch::setToken(const QString& token) {
    if (token.trimmed() == token_) return;
    token_ = token.trimmed();
    emit tokenChanged();
}

void HubSearch::setReadBandwidth(double bytes_per_s) {
    if (bytes_per_s == read_bandwidth_) return;
    read_bandwidth_ = bytes_per_s;
    add_fit(files_);
    emit filesChanged();
}

QString HubSearch::quant_of(const QString& file_name) {
    QString stem = file_name;
    if (stem.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) stem.chop(5);
    if (const auto split = hearth::models::split_name(file_name)) stem = split->prefix;
    static const QRegularExpression re(
        QStringLiteral(R"([-._]((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|BF16|F32|MXFP4)$)"),
        QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(stem);
    return m.hasMatch() ? m.captured(1).toUpper() : QString();
}

QUrl HubSearch::next_page(const QByteArray& link_header, const QUrl& page) {
    // <https://…?cursor=…>; rel="next", <…>; rel="prev"
    static const QRegularExpression link(QStringLiteral(R"(<([^>]*)>\s*((?:;[^,<]*)*))"));
    static const QRegularExpression next(QStringLiteral(R"(;\s*rel\s*=\s*"?([^";]*))"));
    auto it = link.globalMatch(QString::fromLatin1(link_header));
    while (it.hasNext()) {
        const auto m = it.next();
        auto rels = next.globalMatch(m.captured(2));
        while (rels.hasNext())
            if (rels.next().captured(1).split(QLatin1Char(' ')).contains(QLatin1String("next")))
                return page.resolved(QUrl(m.captured(1)));
    }
    return {};
}

QVariantList HubSearch::parse_results(const QByteArray& json) {
    QVariantList out;
    for (const QJsonValue& v : QJsonDocument::fromJson(json).array()) {
        const QJsonObject o = v.toObject();
        const QString id = o.value(QStringLiteral("id")).toString();
        if (id.isEmpty()) continue;
        const QJsonValue gated = o.value(QStringLiteral("gated"));
        out << QVariantMap{{"id", id},
                           {"downloads", o.value(QStringLiteral("downloads")).toInteger()},
                           {"likes", o.value(QStringLiteral("likes")).toInteger()},
                           // false, or "auto"/"manual": the terms must be accepted first
                           {"gated", gated.isString() || gated.toBool()},
                           {"lastModified", o.value(QStringLiteral("lastModified")).toString()}};
    }
    return out;
}

QVariantList HubSearch::parse_files(const QByteArray& json, QString* error) {
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    if (!doc.isArray()) {
        if (error) *error = tr("Hugging Face answered with something that is not a file list");
        return {};
    }
    struct Entry {
        QString path;
        qint64 size = 0;
        QString sha256;
        int parts = 1;
        int seen = 0;
        QMap<int, QPair<QString, QString>> files;  // a split model's parts: path, SHA-256
    };
    QList<Entry> entries;
    QHash<QString, int> splits;  // folder + prefix + count → index in entries
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("type")).toString() != QLatin1String("file")) continue;
        const QString path = o.value(QStringLiteral("path")).toString();
        const QString name = file_name_of(path);
        if (hearth::models::is_auxiliary(name)) continue;
        const qint64 size = o.value(QStringLiteral("size")).toInteger();
        const QString sha =
            o.value(QStringLiteral("lfs")).toObject().value(QStringLiteral("oid")).toString();
        if (const auto s = hearth::models::split_name(name); s && s->count > 1) {
            const QString key = path.section(QLatin1Char('/'), 0, -2) + QLatin1Char('/') +
                                s->prefix + QLatin1Char('#') + QString::number(s->count);
            auto it = splits.find(key);
            if (it == splits.end()) {
                it = splits.insert(key, static_cast<int>(entries.size()));
                entries << Entry{{}, 0, {}, s->count, 0, {}};
            }
            Entry& e = entries[*it];
            e.size += size;
            ++e.seen;
            e.files.insert(s->index, {path, sha});
            if (s->index == 1) e.path = path;
            continue;
        }
        entries << Entry{path, size, sha, 1, 1, {{1, {path, sha}}}};
    }
    QVariantList out;
    for (const Entry& e : entries) {
        if (e.path.isEmpty()) continue;  // a split model without its first part
        const QString name = file_name_of(e.path);
        QVariantList files;  // every file to download, the first first
        for (const auto& [path, sha] : e.files)
            files << QVariantMap{{"path", path}, {"sha256", sha}};
        out << QVariantMap{{"path", e.path},
                           {"files", files},
                           {"name", name},
                           {"size", e.size},
                           {"sha256", e.parts == 1 ? e.sha256 : QString()},
                           {"quant", quant_of(name)},
                           {"parts", e.parts},
                           {"complete", e.seen == e.parts}};
    }
    std::sort(out.begin(), out.end(), [](const QVariant& a, const QVariant& b) {
        return a.toMap().value("size").toLongLong() < b.toMap().value("size").toLongLong();
    });
    return out;
}

void HubSearch::add_fit(QVariantList& files) const {
    auto memory = hearth::system_memory();
    hearth::MachineFacts machine;
    if (memory) {
        machine.ram_total = memory->total;
        machine.ram_available = memory->available;
    }
    machine.read_bytes_per_s = read_bandwidth_;
    for (QVariant& v : files) {
        QVariantMap f = v.toMap();
        const auto size = static_cast<std::uint64_t>(f.value("size").toLongLong());
        QString fit, text;
        if (!f.value("complete").toBool()) {
            fit = QStringLiteral("unsupported");
            text = tr("Split into %1 files, but the repository does not hold them all")
                       .arg(f.value("parts").toInt());
        } else if (machine.ram_available > 0) {
            // Before the header is read only the weights are known: the KV cache comes on
            // top, and the list of models on this computer says how much once it is here.
            hearth::ModelNeeds needs;
            needs.weight_bytes = needs.decode_bytes = size;
            const hearth::FitEstimate e = hearth::estimate_fit(needs, 1, 0, machine);
            const QString total = hearth::download::human_size(static_cast<qint64>(e.total_bytes));
            const QString free =
                hearth::download::human_size(static_cast<qint64>(machine.ram_available));
            switch (e.verdict) {
                case hearth::FitVerdict::Fits:
                    fit = QStringLiteral("fits");
                    text =
                        e.tokens_per_s > 0 && e.tokens_per_s < 1000
                            ? tr("Fits in memory; about %1 tokens/s on the CPU (plus its KV cache)")
                                  .arg(e.tokens_per_s >= 10
                                           ? QString::number(qRound(e.tokens_per_s))
                                           : QString::number(e.tokens_per_s, 'f', 1))
                            : tr("Fits in memory (plus its KV cache)");
                    break;
                case hearth::FitVerdict::Tight:
                    fit = QStringLiteral("tight");
                    text = tr("Would take most of the free memory (%1 of %2): may be slow")
                               .arg(total, free);
                    break;
                case hearth::FitVerdict::TooBig:
                    fit = QStringLiteral("too-big");
                    text = tr("Too big for this computer: needs %1, %2 is free").arg(total, free);
                    break;
            }
        }
        f.insert(QStringLiteral("fit"), fit);
        f.insert(QStringLiteral("fitText"), text);
        v = f;
    }
}

void HubSearch::search(const QString& text, const QString& sort) {
    QUrl url(base_url_ + QStringLiteral("/api/models"));
    QUrlQuery q;
    if (!text.trimmed().isEmpty()) q.addQueryItem(QStringLiteral("search"), text.trimmed());
    q.addQueryItem(QStringLiteral("filter"), QStringLiteral("gguf"));
    q.addQueryItem(QStringLiteral("sort"), sort == QLatin1String("trending")
                                               ? QStringLiteral("trendingScore")
                                               : QStringLiteral("downloads"));
    q.addQueryItem(QStringLiteral("direction"), QStringLiteral("-1"));
    q.addQueryItem(QStringLiteral("limit"), QString::number(kResultLimit));
    for (const char* field : {"downloads", "likes", "gated", "lastModified"})
        q.addQueryItem(QStringLiteral("expand"), QLatin1String(field));
    url.setQuery(q);
    send(url, Kind::Search);
}

void HubSearch::listFiles(const QString& repo) {
    static const QRegularExpression valid(QStringLiteral(R"(^[A-Za-z0-9][\w.-]*/[\w.-]+$)"));
    if (!valid.match(repo).hasMatch() || repo.contains(QLatin1String(".."))) {
        set_error(tr("%1 is not a repository name (owner/name)").arg(repo));
        return;
    }
    pending_repo_ = repo;
    tree_ = QJsonArray();
    tree_pages_ = 0;
    QUrl url(base_url_ + QStringLiteral("/api/models/") + repo + QStringLiteral("/tree/main"));
    url.setQuery(QStringLiteral("recursive=true"));
    send(url, Kind::Files);
}

QUrl HubSearch::downloadUrl(const QString& path) const {
    if (repo_.isEmpty() || path.isEmpty()) return {};
    return QUrl(base_url_ + QLatin1Char('/') + repo_ + QStringLiteral("/resolve/main/") +
                QString::fromLatin1(QUrl::toPercentEncoding(path, "/")));
}

void HubSearch::cancel() {
    if (!reply_) return;
    QNetworkReply* r = reply_;
    reply_ = nullptr;
    r->disconnect(this);
    r->abort();
    r->deleteLater();
    emit busyChanged();
}

void HubSearch::send(const QUrl& url, Kind kind) {
    cancel();
    set_error({});
    kind_ = kind;
    QNetworkRequest request(url);
    request.setTransferTimeout(kTimeoutMs);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("Hearth"));
    if (!token_.isEmpty()) request.setRawHeader("Authorization", "Bearer " + token_.toUtf8());
    reply_ = nam_->get(request);
    connect(reply_, &QNetworkReply::finished, this, &HubSearch::on_finished);
    emit busyChanged();
}

void HubSearch::on_finished() {
    QNetworkReply* r = reply_;
    if (!r) return;
    reply_ = nullptr;
    r->deleteLater();
    emit busyChanged();
    const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = r->readAll();
    const QString host = QUrl(base_url_).host();
    if (status == 0 || (r->error() != QNetworkReply::NoError && status < 400)) {
        set_error(tr("Cannot reach Hugging Face (%1): %2. Check the network connection or the "
                     "system's proxy settings; the models on this computer work without it.")
                      .arg(host, r->errorString()));
        return;
    }
    if (status == 401 || status == 403) {
        set_error(kind_ == Kind::Files
                      ? tr("%1 is gated or private: accept its terms on huggingface.co, then add "
                           "an access token in Settings (HTTP %2)")
                            .arg(pending_repo_)
                            .arg(status)
                      : tr("Hugging Face refused the search (HTTP %1): check the access token in "
                           "Settings")
                            .arg(status));
        return;
    }
    if (status == 404) {
        set_error(tr("There is no repository %1 on Hugging Face").arg(pending_repo_));
        return;
    }
    if (status == 429) {
        set_error(tr("Hugging Face asks to slow down (too many requests); try again in a minute"));
        return;
    }
    if (status >= 400) {
        set_error(tr("Hugging Face could not answer (HTTP %1); try again later").arg(status));
        return;
    }
    if (kind_ == Kind::Search) {
        if (!QJsonDocument::fromJson(body).isArray()) {
            set_error(tr("Hugging Face answered with something that is not a model list"));
            return;
        }
        results_ = parse_results(body);
        emit resultsChanged();
        return;
    }
    // One page of the repository's files; the next, if the Hub says there is one.
    const QJsonDocument page = QJsonDocument::fromJson(body);
    if (page.isArray()) {
        for (const QJsonValue& v : page.array()) tree_.append(v);
        const QUrl next = next_page(r->rawHeader("Link"), r->url());
        const QUrl base(base_url_);
        if (next.isValid() && ++tree_pages_ < kMaxTreePages) {
            // The token goes to the Hub only.
            if (next.scheme() != base.scheme() || next.host() != base.host() ||
                next.port() != base.port()) {
                set_error(tr("Hugging Face named another site (%1) for the rest of %2's files")
                              .arg(next.host(), pending_repo_));
                return;
            }
            send(next, Kind::Files);
            return;
        }
        if (next.isValid())
            hearth::log::get("app")->warn("{}: more than {} pages of files; the rest not listed",
                                          pending_repo_.toStdString(), kMaxTreePages);
    }
    QString error;
    QVariantList files =
        page.isArray() ? parse_files(QJsonDocument(tree_).toJson(QJsonDocument::Compact), &error)
                       : parse_files(body, &error);
    if (!error.isEmpty()) {
        set_error(error);
        return;
    }
    add_fit(files);
    repo_ = pending_repo_;
    files_ = files;
    hearth::log::get("app")->info("{}: {} GGUF models", repo_.toStdString(), files_.size());
    emit filesChanged();
}

void HubSearch::set_error(const QString& e) {
    if (e == error_) return;
    error_ = e;
    emit errorStringChanged();
}
