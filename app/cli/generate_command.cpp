// hearth-cli generate: one completion, streamed to stdout, or one JSON object (--json)
// with the generated ids, the text and the statistics.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

#include "chat/turn_planner.h"
#include "cli/chat_prompt.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/sampling_options.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

std::vector<OptionSpec> generate_options() {
    std::vector<OptionSpec> o = {
        {"prompt", true, "prompt text (raw unless --chat)"},
        {"prompt-ids", true, "prompt as a JSON array of token ids"},
        {"chat", false, "format --prompt as a user message with the model's chat template"},
        {"system", true, "system prompt for --chat"},
        {"no-think", false, kNoThinkHelp},
        {"max-tokens", true, "most tokens to generate (default 256)"},
        {"stop", true, "stop string (the text ends before it)"},
        {"ignore-eos", false, "do not stop at end-of-generation tokens (benchmarks)"},
        {"json", false, "print one JSON object with ids, text and statistics"},
        {"help", false, "show this help"},
    };
    for (auto& v : {engine_options(), sampling_options()}) o.insert(o.end(), v.begin(), v.end());
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

int run_generate(const CommandArgs& argv) {
    const auto options = generate_options();
    auto args = Args::parse(argv, options);
    if (!args) return fail(2, args.message());
    const bool has_prompt = args->value("prompt").has_value(),
               has_ids = args->value("prompt-ids").has_value();
    if (args->flag("help") || has_prompt == has_ids || !args->positionals().empty()) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli generate (--prompt TEXT | --prompt-ids JSON) [options]\n%s",
                     usage_of(options).c_str());
        return args->flag("help") ? 0 : 2;
    }
    if (args->flag("chat") && !has_prompt) return fail(2, "--chat needs --prompt");
    if (args->flag("no-think") && !args->flag("chat")) return fail(2, "--no-think needs --chat");
    auto sampling = parse_sampling(*args);
    if (!sampling) return fail(2, sampling.message());
    auto max_tokens = args->integer("max-tokens", 256, 1, 1 << 20);
    if (!max_tokens) return fail(2, max_tokens.message());

    auto engine = start_engine(*args);
    if (!engine) return fail(1, engine.message());
    const Tokenizer& tokenizer = (*engine)->tokenizer();
    const auto context = static_cast<int32_t>((*engine)->model_config().context_length);
    sched::Request req;
    if (has_ids) {
        auto ids = parse_ids(*args->value("prompt-ids"));
        if (!ids) return fail(2, ids.message());
        req.prompt = std::move(ids).value();
    } else if (args->flag("chat")) {
        auto ids = chat_prompt((*engine)->file(), tokenizer, args->value("system").value_or(""),
                               *args->value("prompt"), context, !args->flag("no-think"));
        if (!ids) return fail(1, ids.message());
        req.prompt = std::move(ids).value();
    } else {
        auto planned = chat::plan_text(tokenizer, context, *args->value("prompt"), false,
                                       static_cast<int32_t>(*max_tokens));
        if (!planned) return fail(1, planned.message());
        req.prompt = std::move(planned->prompt);
    }
    req.sampling = *sampling;
    req.max_tokens = static_cast<int32_t>(*max_tokens);
    req.stop_at_end_of_generation = !args->flag("ignore-eos");
    if (auto stop = args->value("stop")) req.stop_strings.push_back(*stop);
    const auto n_prompt = static_cast<qint64>(req.prompt.size());

    const bool json = args->flag("json");
    auto handle = (*engine)->submit(std::move(req));
    const sched::Event last = follow(**engine, *handle, [json](const std::string& text) {
        if (json) return;
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    });
    if (last.kind == sched::EventKind::Error) return fail(1, last.error);
    const int code = last.stop == StopReason::Cancelled ? 130 : 0;
    if (!json) {
        std::fputc('\n', stdout);
        const sched::RequestStats& s = last.stats;
        const double prefill_ms = s.ttft_ms - s.queue_ms;
        std::fprintf(
            stderr,
            "[%d prompt tokens (%d from cache), prefill %.1f tok/s, TTFT %.0f ms, %d tokens at "
            "%.1f tok/s, %s]\n",
            s.prompt_tokens, s.prompt_tokens_cached,
            prefill_ms > 0 ? s.prompt_tokens_computed * 1000.0 / prefill_ms : 0.0, s.ttft_ms,
            s.generated_tokens, s.decode_tokens_per_s(), stop_reason_name(last.stop));
        if (s.draft_tokens > 0)
            std::fprintf(stderr, "[speculative decoding: %d of %d drafted tokens kept]\n",
                         s.draft_accepted, s.draft_tokens);
        return code;
    }
    QJsonObject out;
    QJsonArray ids;
    for (int32_t t : last.tokens) ids.append(t);
    out["prompt_ids_count"] = n_prompt;
    out["tokens"] = ids;
    out["text"] = QString::fromStdString(last.text);
    out["stats"] = request_stats_json(last.stats, last.stop);
    out["backend"] = QString::fromStdString((*engine)->backend_name());
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
    return code;
}

}  // namespace hearth::cli
