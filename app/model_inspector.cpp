#include "model_inspector.h"

#include <QFileInfo>
#include <QVariantMap>
#include <QtConcurrent/QtConcurrentRun>

#include "chat/chat_template.h"
#include "common/log.h"
#include "common/paths.h"
#include "core/engine_bridge.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_name.h"
#include "tokenizer/tokenizer.h"

namespace hearth {

// What a file that failed to load is, read on its own.
class LoadedModelInfo {
  public:
    QVariantMap facts;
    QString error;
};

namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// The facts the Model page shows, from the file and (when it could be built) its tokenizer.
QVariantMap facts_of(const gguf::GgufFile& f, const Tokenizer* tokenizer,
                     const std::string& tokenizer_error, const QString& path) {
    QVariantMap m;
    m["fileName"] = QFileInfo(path).fileName();
    m["fileSize"] = static_cast<qint64>(f.file_size());
    m["name"] = qs(readable_model_name(f, path.toStdString()));
    m["architecture"] = qs(f.get_string("general.architecture").value_or("unknown"));
    qint64 params = 0;
    for (const auto& t : f.tensors()) params += t.n_elements();
    m["parameters"] = params;
    m["quantization"] = qs(quantisation_label(f));
    if (auto config = ModelConfig::from_gguf(f)) {
        m["contextLength"] = static_cast<qint64>(config->context_length);
        m["layers"] = static_cast<qint64>(config->n_layer);
        m["embedding"] = static_cast<qint64>(config->n_embd);
        m["heads"] = QString("%1 (KV %2)").arg(config->n_head).arg(config->n_head_kv);
        m["supported"] = true;
    } else {
        m["supported"] = false;
        m["unsupportedReason"] = QString::fromStdString(config.message());
    }
    if (tokenizer) {
        m["tokenizer"] =
            QString("%1, %2 tokens, pre-tokenizer %3")
                .arg(tokenizer->kind() == TokenizerKind::Bpe ? "byte-level BPE" : "SentencePiece")
                .arg(tokenizer->vocab_size())
                .arg(qs(tokenizer->pre_tokenizer()));
    } else {
        m["tokenizer"] = QString::fromStdString("unusable: " + tokenizer_error);
    }
    const chat::ChatTemplate tmpl = chat::ChatTemplate::from_gguf(f);
    m["templateFamily"] = qs(chat::family_name(tmpl.family()));
    // The tokenizer panel's first text: a user turn in the model's own format, so that its
    // turn markers show as the single tokens they are (BOS left out: it is not text).
    const chat::MessageLayout user = tmpl.layout(chat::Role::User, {});
    m["sampleText"] = qs(user.open + user.lead + "Hello, Hearth! 你好 👋" + user.end_of_turn);
    m["fingerprint"] = QString::fromStdString(f.fingerprint()).left(16);
    return m;
}

std::shared_ptr<const LoadedModelInfo> inspect_file(const QString& path) {
    auto info = std::make_shared<LoadedModelInfo>();
    auto file = gguf::GgufFile::open(path.toStdString());
    if (!file) {
        info->error = QString::fromStdString(file.message());
        return info;
    }
    auto tokenizer = Tokenizer::from_gguf(**file);
    info->facts = facts_of(**file, tokenizer ? tokenizer->get() : nullptr,
                           tokenizer ? "" : tokenizer.message(), path);
    return info;
}

}  // namespace
}  // namespace hearth

ModelInspector::ModelInspector(QObject* parent) : QObject(parent) {
    connect(&watcher_, &QFutureWatcherBase::finished, this, &ModelInspector::finish_inspection);
}

ModelInspector::~ModelInspector() {
    watcher_.waitForFinished();
}

QString ModelInspector::defaultModelPath() const {
    return QString::fromStdString(hearth::paths::default_model_path());
}

void ModelInspector::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    if (bridge_) {
        connect(bridge_, &EngineBridge::modelChanged, this, &ModelInspector::follow_bridge);
        connect(bridge_, &EngineBridge::loadingChanged, this, &ModelInspector::follow_bridge);
        connect(bridge_, &EngineBridge::loadFinished, this, [this](bool ok) {
            if (!ok) inspect_failed(bridge_->requestedPath());
        });
    }
    follow_bridge();
}

void ModelInspector::follow_bridge() {
    if (watcher_.isRunning()) return;  // a failed file is being read: its result follows
    const hearth::Engine* engine = bridge_ ? bridge_->engine() : nullptr;
    if (bridge_ && bridge_->loading()) {
        status_ = QStringLiteral("loading");
    } else if (engine) {
        model_path_ = bridge_->modelPath();
        facts_ = hearth::facts_of(engine->file(), &engine->tokenizer(), "", model_path_);
        status_ = QStringLiteral("ready");
        error_.clear();
    } else if (status_ != QLatin1String("error")) {
        status_ = QStringLiteral("empty");
        facts_.clear();
    }
    emit changed();
}

void ModelInspector::inspect_failed(const QString& path) {
    if (path.isEmpty() || watcher_.isRunning()) return;
    model_path_ = path;
    status_ = QStringLiteral("loading");
    emit changed();
    watcher_.setFuture(QtConcurrent::run(hearth::inspect_file, path));
}

void ModelInspector::finish_inspection() {
    const auto info = watcher_.result();
    // The bridge's error says why it did not load; the facts say what the file is.
    error_ = bridge_ && !bridge_->errorString().isEmpty() ? bridge_->errorString() : info->error;
    facts_ = info->facts;
    status_ = QStringLiteral("error");
    hearth::log::get("app")->warn("cannot open model {}: {}", model_path_.toStdString(),
                                  error_.toStdString());
    emit changed();
}

QString ModelInspector::readable_piece(std::string_view bytes) {
    QString out;
    size_t i = 0;
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
    while (i < bytes.size()) {
        const unsigned char b = byte(i);
        size_t len = b < 0x80           ? 1
                     : (b >> 5) == 0x6  ? 2
                     : (b >> 4) == 0xE  ? 3
                     : (b >> 3) == 0x1E ? 4
                                        : 0;
        bool ok = len > 0 && i + len <= bytes.size();
        for (size_t k = 1; ok && k < len; ++k) ok = (byte(i + k) & 0xC0) == 0x80;
        if (ok) {
            const QString ch = QString::fromUtf8(bytes.data() + i, static_cast<qsizetype>(len));
            ok = !ch.contains(QChar::ReplacementCharacter);  // overlong forms, surrogates
            if (ok) out += ch;
        }
        if (!ok) {
            out += QStringLiteral("<0x%1>").arg(
                QString::number(b, 16).toUpper().rightJustified(2, u'0'));
            len = 1;
        }
        i += len;
    }
    return out;
}

QVariantList ModelInspector::tokenize(const QString& text, bool parseSpecial) const {
    QVariantList out;
    const hearth::Tokenizer* t = bridge_ ? bridge_->tokenizer() : nullptr;
    if (!t) return out;
    const QByteArray utf8 = text.toUtf8();
    for (hearth::TokenId id : t->encode(
             std::string_view(utf8.constData(), static_cast<size_t>(utf8.size())), parseSpecial)) {
        QVariantMap m;
        m["id"] = id;
        m["piece"] = readable_piece(t->token_to_piece(id, true));
        m["special"] = t->token_attr(id) == hearth::TokenAttr::Control;
        out.append(m);
    }
    return out;
}
