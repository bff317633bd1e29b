#include "core/remote_backend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QUrl>

#include <algorithm>

using namespace hearth;

namespace {

constexpr int kTransferTimeoutMs = 120'000;  // no byte for this long: the server is gone

const char* api_role(chat::Role r) {
    switch (r) {
        case chat::Role::System:
            return "system";
        case chat::Role::Assistant:
            return "assistant";
        case chat::Role::User:
            break;
    }
    return "user";
}

// The error message an OpenAI-shaped body carries, else the body itself (cut short).
QString server_message(const QByteArray& body) {
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QJsonValue e = o.value(QLatin1String("error"));
    if (e.isObject()) return e.toObject().value(QLatin1String("message")).toString();
    if (e.isString()) return e.toString();
    const QString text = QString::fromUtf8(body).simplified();
    return text.size() > 300 ? text.left(300) + QChar(0x2026) : text;
}

}  // namespace

RemoteBackend::RemoteBackend(QObject* parent) : ChatBackend(parent) {}

RemoteBackend::~RemoteBackend() {
    for (auto& [id, c] : calls_)
        if (c.reply) {
            c.reply->disconnect(this);
            c.reply->abort();
        }
}

QString RemoteBackend::api_root(const QString& base_url) {
    QString url = base_url.trimmed();
    if (url.isEmpty()) return url;
    if (!url.contains(QLatin1String("://"))) url.prepend(QLatin1String("http://"));
    while (url.endsWith(QLatin1Char('/'))) url.chop(1);
    if (!url.endsWith(QLatin1String("/v1"))) url += QLatin1String("/v1");
    return url;
}

void RemoteBackend::setBaseUrl(const QString& url) {
    if (url == base_url_) return;
    base_url_ = url;
    emit configChanged();
    emit readyChanged();
}

void RemoteBackend::setApiKey(const QString& key) {
    if (key == api_key_) return;
    api_key_ = key;
    emit configChanged();
}

void RemoteBackend::setModel(const QString& model) {
    if (model == model_) return;
    model_ = model;
    emit configChanged();
    emit readyChanged();
}

bool RemoteBackend::refreshing() const {
    return !models_reply_.isNull();
}

bool RemoteBackend::ready() const {
    const QUrl url(api_root(base_url_));
    return url.isValid() && !url.host().isEmpty() && !model_.isEmpty();
}

QString RemoteBackend::displayName() const {
    return model_.isEmpty() ? QString()
                            : model_ + QStringLiteral(" (") + QUrl(api_root(base_url_)).host() +
                                  QLatin1Char(')');
}

QNetworkRequest RemoteBackend::request_for(const QString& path) const {
    QNetworkRequest req(QUrl(api_root(base_url_) + path));
    req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    if (!api_key_.isEmpty()) req.setRawHeader("Authorization", "Bearer " + api_key_.toUtf8());
    req.setTransferTimeout(kTransferTimeoutMs);
    return req;
}

void RemoteBackend::refreshModels() {
    if (models_reply_) models_reply_->abort();
    if (QUrl(api_root(base_url_)).host().isEmpty()) {
        status_ = tr("Enter the server's address, e.g. http://localhost:8000/v1");
        emit modelsChanged();
        return;
    }
    QNetworkRequest req = request_for(QStringLiteral("/models"));
    req.setTransferTimeout(15'000);
    QNetworkReply* reply = net_.get(req);
    models_reply_ = reply;
    status_ = tr("Connecting…");
    emit modelsChanged();
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (reply != models_reply_) return;  // superseded
        models_reply_ = nullptr;
        const QByteArray body = reply->readAll();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply->error() != QNetworkReply::NoError && status == 0) {
            status_ = tr("Could not reach the server: %1").arg(reply->errorString());
        } else if (status >= 400) {
            status_ = tr("The server answered %1: %2").arg(status).arg(server_message(body));
        } else {
            QStringList ids;
            contexts_.clear();
            for (const QJsonValue& v :
                 QJsonDocument::fromJson(body).object().value(QLatin1String("data")).toArray()) {
                const QJsonObject m = v.toObject();
                const QString id = m.value(QLatin1String("id")).toString();
                ids << id;
                // vLLM says max_model_len; Hearth and llama-server say meta.n_ctx(_train).
                const QJsonObject meta = m.value(QLatin1String("meta")).toObject();
                int ctx = m.value(QLatin1String("max_model_len")).toInt();
                if (ctx <= 0) ctx = meta.value(QLatin1String("n_ctx")).toInt();
                if (ctx <= 0) ctx = meta.value(QLatin1String("n_ctx_train")).toInt();
                if (ctx > 0) contexts_[id] = ctx;
            }
            ids.removeAll(QString());
            models_ = ids;
            status_ = ids.isEmpty() ? tr("The server lists no models.")
                      : ids.size() == 1
                          ? tr("Connected: the server has 1 model.")
                          : tr("Connected: the server has %1 models.").arg(ids.size());
            if (!ids.isEmpty() && !ids.contains(model_)) setModel(ids.front());
        }
        emit modelsChanged();
    });
}

Result<ChatBackend::Started> RemoteBackend::start(const TurnRequest& r) {
    if (!ready()) return make_error("Choose the remote server's model in Settings first.");
    if (r.turn.continue_reply)
        return make_error("A remote model cannot take up a reply again; regenerate it instead.");
    QJsonArray messages;
    for (const chat::Message& m : chat::turn_messages(r.turn))
        messages.append(
            QJsonObject{{"role", api_role(m.role)}, {"content", QString::fromStdString(m.text)}});
    const SamplingParams& sp = r.sampling;
    // The reply's room as a local model gets it: at most half the context, where known.
    int max_tokens = std::max(1, r.turn.max_tokens);
    if (const auto ctx = contexts_.find(model_); ctx != contexts_.end())
        max_tokens = chat::chat_reply_room(max_tokens, ctx->second);
    QJsonObject body{{"model", model_},
                     {"messages", messages},
                     {"stream", true},
                     {"stream_options", QJsonObject{{"include_usage", true}}},
                     {"max_tokens", max_tokens},
                     {"temperature", static_cast<double>(sp.temperature)},
                     {"top_p", static_cast<double>(sp.top_p)},
                     // A JSON number holds 53 bits exactly.
                     {"seed", static_cast<qint64>(sp.seed & ((uint64_t{1} << 53) - 1))}};
    // Reasoning on or off where the chat says (Qwen3 on vLLM, SGLang or Hearth); left out
    // otherwise, so that servers without the field never see it.
    if (r.turn.thinking)
        body.insert(QLatin1String("chat_template_kwargs"),
                    QJsonObject{{"enable_thinking", *r.turn.thinking}});
    // Replies that run to their length (tests, benchmarks): llama-server's and vLLM's
    // extension, which Hearth's server takes too.
    if (!r.stop_at_end_of_turn) body.insert(QLatin1String("ignore_eos"), true);
    if (!r.stop_strings.empty()) {
        QJsonArray stop;
        for (const std::string& text : r.stop_strings) stop.append(QString::fromStdString(text));
        body.insert(QLatin1String("stop"), stop);
    }
    if (sp.frequency_penalty != 0.0f)
        body.insert(QLatin1String("frequency_penalty"), static_cast<double>(sp.frequency_penalty));
    if (sp.presence_penalty != 0.0f)
        body.insert(QLatin1String("presence_penalty"), static_cast<double>(sp.presence_penalty));

    QNetworkRequest req = request_for(QStringLiteral("/chat/completions"));
    req.setRawHeader("Accept", "text/event-stream");
    const RequestId id = next_id_++;
    Call& call = calls_[id];
    call.clock.start();
    call.reply = net_.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(call.reply, &QNetworkReply::readyRead, this, [this, id] { on_ready_read(id); });
    // Queued: the end is reported from the event loop, never from inside a cancel() or an
    // event handler (the view model may be iterating its replies then).
    connect(
        call.reply, &QNetworkReply::finished, this, [this, id] { on_finished(id); },
        Qt::QueuedConnection);
    return Started{id, 0};
}

void RemoteBackend::cancel(RequestId id) {
    auto it = calls_.find(id);
    if (it == calls_.end() || !it->second.reply) return;
    it->second.cancelled = true;
    // Aborted from the event loop; finished() follows, which ends the reply as stopped.
    QMetaObject::invokeMethod(
        it->second.reply,
        [reply = it->second.reply] {
            if (reply) reply->abort();
        },
        Qt::QueuedConnection);
}

void RemoteBackend::on_ready_read(RequestId id) {
    auto it = calls_.find(id);
    if (it == calls_.end() || !it->second.reply || it->second.cancelled) return;
    Call& c = it->second;
    const int status = c.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    c.buffer += c.reply->readAll();
    if (status >= 400) return;  // the error body is read whole at the end
    // Server-sent events: "data: ..." lines, an event ends with a blank line.
    for (;;) {
        qsizetype end = c.buffer.indexOf("\n\n");
        const qsizetype crlf = c.buffer.indexOf("\r\n\r\n");
        qsizetype skip = 2;
        if (crlf >= 0 && (end < 0 || crlf < end)) {
            end = crlf;
            skip = 4;
        }
        if (end < 0) break;
        const QByteArray event = c.buffer.left(end);
        c.buffer.remove(0, end + skip);
        QByteArray data;
        for (const QByteArray& line : event.split('\n')) {
            const QByteArray l = line.endsWith('\r') ? line.chopped(1) : line;
            if (l.startsWith("data:")) {
                if (!data.isEmpty()) data += '\n';
                data += l.mid(5).trimmed();
            }
        }
        if (!data.isEmpty()) on_data(id, c, data);
        if (c.cancelled) return;  // stopped by a handler of the event just sent
    }
}

void RemoteBackend::on_data(RequestId id, Call& c, const QByteArray& data) {
    if (data == "[DONE]") return;
    const QJsonObject o = QJsonDocument::fromJson(data).object();
    if (o.isEmpty()) return;
    if (o.contains(QLatin1String("error"))) {
        c.error = server_message(data);
        return;
    }
    const QJsonObject usage = o.value(QLatin1String("usage")).toObject();
    if (!usage.isEmpty()) {
        c.usage = true;
        c.stats.prompt_tokens = usage.value(QLatin1String("prompt_tokens")).toInt();
        c.stats.generated_tokens = usage.value(QLatin1String("completion_tokens")).toInt();
        c.stats.prompt_tokens_cached = usage.value(QLatin1String("prompt_tokens_details"))
                                           .toObject()
                                           .value(QLatin1String("cached_tokens"))
                                           .toInt();
        c.stats.prompt_tokens_computed = c.stats.prompt_tokens - c.stats.prompt_tokens_cached;
    }
    for (const QJsonValue& v : o.value(QLatin1String("choices")).toArray()) {
        const QJsonObject choice = v.toObject();
        // Streamed chunks carry a delta; a server that ignored "stream" sends a message.
        QJsonObject part = choice.value(QLatin1String("delta")).toObject();
        if (part.isEmpty()) part = choice.value(QLatin1String("message")).toObject();
        const QString piece = part.value(QLatin1String("content")).toString();
        if (!piece.isEmpty()) {
            const double now = static_cast<double>(c.clock.nsecsElapsed()) / 1e6;
            if (c.first_ms < 0) c.first_ms = now;
            c.last_ms = now;
            ++c.pieces;
            const std::string text = piece.toStdString();
            c.text += text;
            sched::Event e;
            e.kind = sched::EventKind::Token;
            e.request = id;
            e.text = text;
            emit requestEvent(e);
        }
        const QString finish = choice.value(QLatin1String("finish_reason")).toString();
        if (!finish.isEmpty())
            c.stop = finish == QLatin1String("length") ? StopReason::MaxTokens
                                                       : StopReason::EndOfGeneration;
    }
}

void RemoteBackend::on_finished(RequestId id) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    Call c = std::move(it->second);
    calls_.erase(it);
    if (!c.reply) return;
    c.reply->deleteLater();
    const int status = c.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (!c.cancelled && status < 400) {
        c.buffer += c.reply->readAll();
        if (!c.buffer.trimmed().isEmpty()) {  // a last event without its blank line, or JSON
            const QByteArray rest = c.buffer.trimmed();
            on_data(id, c, rest.startsWith("data:") ? rest.mid(5).trimmed() : rest);
        }
    }
    sched::Event e;
    e.request = id;
    if (c.cancelled) {
        e.kind = sched::EventKind::Finished;
        e.stop = StopReason::Cancelled;
    } else if (status >= 400) {
        e.kind = sched::EventKind::Error;
        e.error = tr("The server answered %1: %2")
                      .arg(status)
                      .arg(server_message(c.buffer + c.reply->readAll()))
                      .toStdString();
    } else if (c.reply->error() != QNetworkReply::NoError) {
        e.kind = sched::EventKind::Error;
        e.error = tr("The connection to %1 failed: %2")
                      .arg(c.reply->url().host(), c.reply->errorString())
                      .toStdString();
    } else if (!c.error.isEmpty()) {
        e.kind = sched::EventKind::Error;
        e.error = tr("The server failed: %1").arg(c.error).toStdString();
    } else {
        e.kind = sched::EventKind::Finished;
        e.stop = c.stop.value_or(StopReason::EndOfGeneration);
    }
    e.text = c.text;
    if (!c.usage) c.stats.generated_tokens = c.pieces;
    if (c.first_ms >= 0) {
        c.stats.ttft_ms = c.first_ms;
        c.stats.decode_ms = c.last_ms - c.first_ms;
    }
    e.stats = c.stats;
    emit requestEvent(e);
}
