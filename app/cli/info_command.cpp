// hearth-cli info MODEL: what a GGUF file holds, as JSON.
// hearth-cli info --devices: the devices the engine can run on, and what auto would take.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <map>

#include "chat/chat_template.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "device.h"
#include "engine.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_name.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

const std::vector<OptionSpec> kInfoOptions = {
    {"json", false, "JSON output (the default for a model; with --devices, instead of text)"},
    {"devices", false, "list the CUDA devices (memory, compute capability) and what auto takes"},
    {"tensors", false, "also list every tensor with its type and shape"},
    {"metadata", false, "also list every metadata key with its value (arrays abbreviated)"},
    {"help", false, "show this help"},
};

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QJsonObject hyperparameters(const ModelConfig& c) {
    QJsonObject h;
    h["context_length"] = static_cast<qint64>(c.context_length);
    h["embedding_length"] = static_cast<qint64>(c.n_embd);
    h["block_count"] = static_cast<qint64>(c.n_layer);
    h["feed_forward_length"] = static_cast<qint64>(c.n_ff);
    h["head_count"] = static_cast<qint64>(c.n_head);
    h["head_count_kv"] = static_cast<qint64>(c.n_head_kv);
    h["head_dim"] = static_cast<qint64>(c.head_dim);
    h["vocab_size"] = static_cast<qint64>(c.n_vocab);
    h["rope_dimension_count"] = static_cast<qint64>(c.n_rot);
    h["rope_freq_base"] = static_cast<double>(c.rope_freq_base);
    h["rope_style"] = c.rope_style == RopeStyle::Neox ? "neox" : "normal";
    if (!c.rope_scaling_type.empty()) {
        h["rope_scaling_type"] = qs(c.rope_scaling_type);
        h["rope_scaling_factor"] = static_cast<double>(c.rope_scaling_factor);
    }
    h["rms_norm_eps"] = static_cast<double>(c.rms_eps);
    h["tied_embeddings"] = c.tied_embeddings;
    return h;
}

int run_devices(bool json) {
    const GpuInventory gpus = list_gpus();
    // What auto would choose for a small model (the model's own needs are checked when
    // an engine starts): this build's answer, or the reason it runs on the CPU.
    auto choice = choose_device(DeviceRequest{}, gpus, 0, engine_cuda_support());
    if (json) {
        QJsonObject out;
        out["cuda_built"] = gpus.cuda_built;
        if (!gpus.problem.empty()) out["problem"] = QString::fromStdString(gpus.problem);
        QJsonArray list;
        for (const GpuDevice& g : gpus.devices) {
            QJsonObject d;
            d["device"] = QStringLiteral("cuda:%1").arg(g.index);
            d["name"] = QString::fromStdString(g.name);
            d["compute_capability"] = QStringLiteral("%1.%2").arg(g.cc_major).arg(g.cc_minor);
            d["total_bytes"] = static_cast<qint64>(g.total_bytes);
            d["free_bytes"] = static_cast<qint64>(g.free_bytes);
            d["usable"] = g.problem.empty() && g.runs_our_kernels;
            if (!g.problem.empty()) d["problem"] = QString::fromStdString(g.problem);
            list.append(d);
        }
        out["devices"] = list;
        QJsonObject automatic;
        automatic["device"] = QString::fromStdString(choice->description);
        if (!choice->cpu_reason.empty())
            automatic["cpu_reason"] = QString::fromStdString(choice->cpu_reason);
        out["auto"] = automatic;
        std::printf("%s", QJsonDocument(out).toJson(QJsonDocument::Indented).constData());
        return 0;
    }
    std::printf("CUDA in this build: %s\n", gpus.cuda_built ? "yes" : "no");
    if (!gpus.problem.empty()) std::printf("no CUDA device: %s\n", gpus.problem.c_str());
    for (const GpuDevice& g : gpus.devices)
        std::printf("cuda:%d  %s  %s%s%s\n", g.index, g.name.c_str(), describe_gpu(g).c_str(),
                    g.problem.empty() ? "" : "  unusable: ", g.problem.c_str());
    std::printf("auto: %s%s%s\n", choice->description.c_str(),
                choice->cpu_reason.empty() ? "" : ", because ", choice->cpu_reason.c_str());
    return 0;
}

}  // namespace

int run_info(const CommandArgs& argv) {
    auto args = Args::parse(argv, kInfoOptions);
    if (!args) return fail(2, args.message());
    if (args->flag("devices") && args->positionals().empty() && !args->flag("help"))
        return run_devices(args->flag("json"));
    if (args->flag("help") || args->positionals().size() != 1) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli info MODEL.gguf [options]\n"
                     "       hearth-cli info --devices [--json]\n%s",
                     usage_of(kInfoOptions).c_str());
        return args->flag("help") ? 0 : 2;
    }
    const std::string& path = args->positionals()[0];
    auto file = gguf::GgufFile::open(path);
    if (!file) return fail(1, file.message());
    const gguf::GgufFile& f = **file;

    QJsonObject out;
    out["path"] = QString::fromStdString(path);
    out["file_size"] = static_cast<qint64>(f.file_size());
    out["gguf_version"] = static_cast<int>(f.version());
    out["fingerprint"] = QString::fromStdString(f.fingerprint());
    out["architecture"] = qs(f.get_string("general.architecture").value_or(""));
    if (auto name = f.get_string("general.name")) out["name"] = qs(*name);
    out["display_name"] = QString::fromStdString(readable_model_name(f, path));

    auto config = ModelConfig::from_gguf(f);
    if (config) {
        out["supported"] = true;
        out["hyperparameters"] = hyperparameters(*config);
    } else {
        out["supported"] = false;
        out["unsupported_reason"] = QString::fromStdString(config.message());
    }

    std::map<std::string, int> type_counts;
    qint64 parameters = 0;
    for (const auto& t : f.tensors()) {
        ++type_counts[std::string(quant::type_name(static_cast<uint32_t>(t.type)))];
        parameters += t.n_elements();
    }
    QJsonObject types;
    for (const auto& [name, count] : type_counts) types[QString::fromStdString(name)] = count;
    out["tensor_count"] = static_cast<qint64>(f.tensors().size());
    out["tensor_types"] = types;
    out["parameters"] = parameters;
    if (const auto* embd = f.find_tensor("token_embd.weight"))
        out["embedding_type"] = qs(quant::type_name(static_cast<uint32_t>(embd->type)));

    QJsonObject tok;
    tok["model"] = qs(f.get_string("tokenizer.ggml.model").value_or(""));
    if (auto tokenizer = Tokenizer::from_gguf(f)) {
        const Tokenizer& t = **tokenizer;
        tok["kind"] = t.kind() == TokenizerKind::Bpe ? "bpe" : "sentencepiece";
        tok["pre_tokenizer"] = qs(t.pre_tokenizer());
        tok["vocab_size"] = t.vocab_size();
        tok["bos_token_id"] = t.bos();
        tok["eos_token_id"] = t.eos();
        tok["add_bos"] = t.add_bos();
        QJsonArray eog;
        for (TokenId id : t.end_of_generation_tokens()) eog.append(id);
        tok["end_of_generation_ids"] = eog;
    } else {
        tok["error"] = QString::fromStdString(tokenizer.message());
    }
    out["tokenizer"] = tok;

    QJsonObject chat;
    const auto template_text = f.get_string("tokenizer.chat_template");
    chat["has_template"] = template_text.has_value();
    chat["family"] = qs(chat::family_name(chat::ChatTemplate::from_gguf(f).family()));
    out["chat_template"] = chat;

    if (args->flag("tensors")) {
        QJsonArray tensors;
        for (const auto& t : f.tensors()) {
            QJsonObject o;
            o["name"] = QString::fromStdString(t.name);
            o["type"] = qs(quant::type_name(static_cast<uint32_t>(t.type)));
            QJsonArray shape;
            for (int d = 0; d < t.n_dims; ++d)
                shape.append(static_cast<qint64>(t.ne[static_cast<size_t>(d)]));
            o["shape"] = shape;
            o["bytes"] = static_cast<qint64>(t.nbytes);
            tensors.append(o);
        }
        out["tensors"] = tensors;
    }
    if (args->flag("metadata")) {
        QJsonObject meta;
        for (const auto& e : f.metadata())
            meta[qs(e.key)] = QString::fromStdString(e.value.to_string());
        out["metadata"] = meta;
    }
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Indented).constData(), stdout);
    return 0;
}

int fail(int code, const std::string& message) {
    std::fprintf(stderr, "hearth-cli: %s\n", message.c_str());
    return code;
}

}  // namespace hearth::cli
