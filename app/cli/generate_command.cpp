// hearth-cli generate: one completion, streamed to stdout, or one JSON object (--json)
// with the generated ids, the text and the statistics.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

#include "cli/cancel_signal.h"
#include "cli/chat_prompt.h"
#include "cli/commands.h"
#include "cli/model_loading.h"
#include "cli/sampling_options.h"
#include "generation/generator.h"

namespace hearth::cli {
namespace {

std::vector<OptionSpec> generate_options() {
    std::vector<OptionSpec> o = {
        {"prompt", true, "prompt text (raw unless --chat)"},
        {"prompt-ids", true, "prompt as a JSON array of token ids"},
        {"chat", false, "format --prompt as a user message with the model's chat template"},
        {"system", true, "system prompt for --chat"},
        {"max-tokens", true, "most tokens to generate (default 256)"},
        {"stop", true, "stop string (the text ends before it)"},
        {"ignore-eos", false, "do not stop at end-of-generation tokens (benchmarks)"},
        {"json", false, "print one JSON object with ids, text and statistics"},
        {"help", false, "show this help"},
    };
    for (auto& v : {model_options(), sampling_options()}) o.insert(o.end(), v.begin(), v.end());
    return o;
}

Result<std::vector<int32_t>> parse_ids(const std::string& json) {
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &err);
    if (err.error != QJsonParseError::NoError || !doc.isArray())
        return make_error("--prompt-ids expects a JSON array of integers");
    std::vector<int32_t> ids;
    for (const auto& v : doc.array()) {
        if (!v.isDouble() || v.toDouble() != static_cast<double>(v.toInt()))
            return make_error("--prompt-ids expects a JSON array of integers");
        ids.push_back(v.toInt());
    }
    return ids;
}

}  // namespace

QJsonObject generation_stats_json(const GenerationResult& r) {
    QJsonObject s;
    s["prompt_tokens"] = r.prompt_tokens;
    s["generated_tokens"] = static_cast<qint64>(r.tokens.size());
    s["prefill_ms"] = r.prefill_ms;
    s["prefill_tokens_per_s"] = r.prefill_tokens_per_s();
    s["ttft_ms"] = r.ttft_ms;
    s["decode_ms"] = r.decode_ms;
    s["decode_tokens_per_s"] = r.decode_tokens_per_s();
    s["stop_reason"] = stop_reason_name(r.stop);
    return s;
}

int run_generate(const CommandArgs& argv) {
    const auto options = generate_options();
    auto args = Args::parse(argv, options);
    if (!args) return fail(2, args.message());
    const bool has_prompt = args->value("prompt").has_value(), has_ids = args->value("prompt-ids").has_value();
    if (args->flag("help") || has_prompt == has_ids || !args->positionals().empty()) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli generate (--prompt TEXT | --prompt-ids JSON) [options]\n%s",
                     usage_of(options).c_str());
        return args->flag("help") ? 0 : 2;
    }
    if (args->flag("chat") && !has_prompt) return fail(2, "--chat needs --prompt");
    auto sampling = parse_sampling(*args);
    if (!sampling) return fail(2, sampling.message());
    auto max_tokens = args->integer("max-tokens", 256, 1, 1 << 20);
    if (!max_tokens) return fail(2, max_tokens.message());

    auto loaded = load_model(*args);
    if (!loaded) return fail(1, loaded.message());
    GenerationRequest req;
    if (has_ids) {
        auto ids = parse_ids(*args->value("prompt-ids"));
        if (!ids) return fail(2, ids.message());
        req.prompt = std::move(ids).value();
    } else if (args->flag("chat")) {
        auto ids = chat_prompt(*loaded, args->value("system").value_or(""), *args->value("prompt"));
        if (!ids) return fail(1, ids.message());
        req.prompt = std::move(ids).value();
    } else {
        req.prompt = loaded->tokenizer->encode(*args->value("prompt"), false);
        if (loaded->tokenizer->add_bos() && loaded->tokenizer->bos() >= 0)
            req.prompt.insert(req.prompt.begin(), loaded->tokenizer->bos());
    }
    req.sampling = *sampling;
    req.max_tokens = static_cast<int32_t>(*max_tokens);
    req.stop_at_end_of_generation = !args->flag("ignore-eos");
    if (auto stop = args->value("stop")) req.stop_strings.push_back(*stop);

    const bool json = args->flag("json");
    Generator gen(*loaded->model, *loaded->tokenizer);
    auto result = gen.generate(
        req,
        [json](int32_t, const std::string& text) {
            if (json) return;
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
        },
        &cancel_on_interrupt());
    if (!result) return fail(1, result.message());
    if (!json) {
        std::fputc('\n', stdout);
        const GenerationResult& r = *result;
        std::fprintf(stderr, "[%d prompt tokens, prefill %.1f tok/s, TTFT %.0f ms, %zu tokens at %.1f tok/s, %s]\n",
                     r.prompt_tokens, r.prefill_tokens_per_s(), r.ttft_ms, r.tokens.size(), r.decode_tokens_per_s(),
                     stop_reason_name(r.stop));
        return r.stop == StopReason::Cancelled ? 130 : 0;
    }
    QJsonObject out;
    QJsonArray ids;
    for (int32_t t : result->tokens) ids.append(t);
    out["prompt_ids_count"] = static_cast<qint64>(req.prompt.size());
    out["tokens"] = ids;
    out["text"] = QString::fromStdString(result->text);
    out["stats"] = generation_stats_json(*result);
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
    return result->stop == StopReason::Cancelled ? 130 : 0;
}

}  // namespace hearth::cli
