#include "model_inspector.h"

#include <QFileInfo>
#include <QUrl>
#include <QVariantMap>
#include <QtConcurrent/QtConcurrentRun>

#include "chat/chat_template.h"
#include "common/log.h"
#include "common/paths.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "tokenizer/tokenizer.h"

namespace hearth {

// Everything loaded for a model; immutable once built, shared with QML calls.
class LoadedModelInfo {
public:
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<Tokenizer> tokenizer;
    QVariantMap facts;
    QString error;
};

namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

std::shared_ptr<const LoadedModelInfo> load_model(const QString& path) {
    auto info = std::make_shared<LoadedModelInfo>();
    auto file = gguf::GgufFile::open(path.toStdString());
    if (!file) {
        info->error = QString::fromStdString(file.message());
        return info;
    }
    info->file = std::move(file).value();
    const gguf::GgufFile& f = *info->file;
    QVariantMap& m = info->facts;
    m["fileName"] = QFileInfo(path).fileName();
    m["fileSize"] = static_cast<qint64>(f.file_size());
    m["name"] = qs(f.get_string("general.name").value_or(""));
    m["architecture"] = qs(f.get_string("general.architecture").value_or("unknown"));
    qint64 params = 0;
    std::map<std::string, qint64> bytes_by_type;
    for (const auto& t : f.tensors()) {
        params += t.n_elements();
        bytes_by_type[std::string(quant::type_name(static_cast<uint32_t>(t.type)))] += static_cast<qint64>(t.nbytes);
    }
    m["parameters"] = params;
    // The quantisation is the type holding most of the bytes (norms are small F32).
    std::string main_type;
    qint64 most = -1;
    for (const auto& [type, bytes] : bytes_by_type)
        if (bytes > most) most = bytes, main_type = type;
    m["quantization"] = QString::fromStdString(main_type);
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
    auto tokenizer = Tokenizer::from_gguf(f);
    if (tokenizer) {
        info->tokenizer = std::move(tokenizer).value();
        m["tokenizer"] = QString("%1, %2 tokens, pre-tokenizer %3")
                             .arg(info->tokenizer->kind() == TokenizerKind::Bpe ? "byte-level BPE" : "SentencePiece")
                             .arg(info->tokenizer->vocab_size())
                             .arg(qs(info->tokenizer->pre_tokenizer()));
    } else {
        m["tokenizer"] = QString::fromStdString("unusable: " + tokenizer.message());
    }
    m["templateFamily"] = qs(chat::family_name(
        chat::choose_family(f.get_string("tokenizer.chat_template"))));
    m["fingerprint"] = QString::fromStdString(f.fingerprint()).left(16);
    return info;
}

}  // namespace
}  // namespace hearth

ModelInspector::ModelInspector(QObject* parent) : QObject(parent) {
    connect(&watcher_, &QFutureWatcher<std::shared_ptr<const hearth::LoadedModelInfo>>::finished,
            this, &ModelInspector::finish_load);
}

ModelInspector::~ModelInspector() { watcher_.waitForFinished(); }

QString ModelInspector::defaultModelPath() const {
    return QString::fromStdString(hearth::paths::default_model_path());
}

void ModelInspector::load(const QString& pathOrUrl) {
    const QUrl url(pathOrUrl);
    model_path_ = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
    if (watcher_.isRunning()) watcher_.waitForFinished();
    status_ = QStringLiteral("loading");
    error_.clear();
    emit changed();
    hearth::log::get("app")->info("loading model {}", model_path_.toStdString());
    watcher_.setFuture(QtConcurrent::run(hearth::load_model, model_path_));
}

void ModelInspector::finish_load() {
    loaded_ = watcher_.result();
    if (!loaded_->error.isEmpty()) {
        status_ = QStringLiteral("error");
        error_ = loaded_->error;
        facts_.clear();
        hearth::log::get("app")->warn("cannot load model: {}", error_.toStdString());
    } else {
        status_ = QStringLiteral("ready");
        facts_ = loaded_->facts;
    }
    emit changed();
}

QVariantList ModelInspector::tokenize(const QString& text, bool parseSpecial) const {
    QVariantList out;
    if (!loaded_ || !loaded_->tokenizer) return out;
    const hearth::Tokenizer& t = *loaded_->tokenizer;
    const QByteArray utf8 = text.toUtf8();
    for (hearth::TokenId id : t.encode(std::string_view(utf8.constData(), static_cast<size_t>(utf8.size())), parseSpecial)) {
        QVariantMap m;
        m["id"] = id;
        m["piece"] = QString::fromStdString(t.token_to_piece(id, true));
        m["special"] = t.token_attr(id) == hearth::TokenAttr::Control;
        out.append(m);
    }
    return out;
}
