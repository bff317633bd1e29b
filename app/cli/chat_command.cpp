// hearth-cli chat: an interactive multi-turn chat in the terminal. Replies stream as
// they are generated; Ctrl+C stops a reply at once ("[stopped]"; nothing more of it is
// printed) and a second Ctrl+C quits; /quit or end of input ends the session; /reset
// starts over with the same system prompt.
#include <QJsonDocument>

#include <cstdio>
#include <iostream>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "cli/cancel_signal.h"
#include "cli/chat_prompt.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/sampling_options.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_name.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

std::vector<OptionSpec> chat_options() {
    std::vector<OptionSpec> o = {
        {"system", true, "system prompt (persona) for the conversation"},
        {"no-think", false, kNoThinkHelp},
        {"max-tokens", true, "most tokens per reply (default 512)"},
        {"json", false, "after each reply, print its statistics as one JSON line on stderr"},
        {"help", false, "show this help"},
    };
    for (auto& v : {engine_options(), sampling_options()}) o.insert(o.end(), v.begin(), v.end());
    return o;
}

}  // namespace

int run_chat(const CommandArgs& argv) {
    const auto options = chat_options();
    auto args = Args::parse(argv, options);
    if (!args) return fail(2, args.message());
    if (args->flag("help") || !args->positionals().empty()) {
        std::fprintf(args->flag("help") ? stdout : stderr, "usage: hearth-cli chat [options]\n%s",
                     usage_of(options).c_str());
        return args->flag("help") ? 0 : 2;
    }
    auto sampling = parse_sampling(*args);
    if (!sampling) return fail(2, sampling.message());
    auto max_tokens = args->integer("max-tokens", 512, 1, 1 << 20);
    if (!max_tokens) return fail(2, max_tokens.message());
    auto started = start_engine(*args);
    if (!started) return fail(1, started.message());
    Engine& engine = **started;

    chat::ChatTemplate chat_template = chat::ChatTemplate::from_gguf(engine.file());
    chat_template.set_thinking(!args->flag("no-think"));
    chat::PromptBuilder builder(engine.tokenizer(), std::move(chat_template));
    std::vector<chat::Message> messages;
    const std::string system = args->value("system").value_or("");
    auto reset = [&] {
        messages.clear();
        if (!system.empty()) messages.push_back({chat::Role::System, system, std::nullopt});
    };
    reset();
    std::atomic<bool>& cancel = cancel_on_interrupt();
    const auto context = static_cast<int32_t>(engine.model_config().context_length);
    // One conversation id per /reset: the engine keeps each one's KV between turns.
    kv::SeqId conversation = 1;
    std::fprintf(stderr,
                 "Chatting with %s (%s template). /reset starts over, /quit or Ctrl+D ends.\n",
                 readable_model_name(engine.file(), engine.config().model_path).c_str(),
                 std::string(chat::family_name(builder.chat_template().family())).c_str());
    SamplingParams params = *sampling;
    for (;;) {
        std::fputs("\n> ", stdout);
        std::fflush(stdout);
        std::string line;
        if (!std::getline(std::cin, line) || line == "/quit") break;
        if (line == "/reset") {
            reset();
            ++conversation;
            continue;
        }
        if (line.empty()) continue;
        messages.push_back(
            {chat::Role::User, line, builder.encode_content(chat::Role::User, line)});
        // Leave room for the reply; the oldest turns fall out of a long conversation.
        chat::TurnInput turn;
        turn.messages = messages;
        turn.max_tokens = static_cast<int32_t>(*max_tokens);
        auto planned = chat::plan_turn(builder, context, turn);
        if (!planned) {
            std::fprintf(stderr, "hearth-cli: %s\n", planned.message().c_str());
            messages.pop_back();
            continue;
        }
        if (planned->dropped > 0)
            std::fprintf(stderr,
                         "[the %zu oldest messages no longer fit the context and were left out]\n",
                         planned->dropped);
        sched::Request req;
        req.conversation = conversation;
        req.prompt = std::move(planned->prompt);
        req.sampling = params;
        req.max_tokens = planned->max_tokens;
        cancel.store(false);
        auto handle = engine.submit(std::move(req));
        const sched::Event last = follow(
            engine, *handle,
            [](const std::string& text) {
                std::fwrite(text.data(), 1, text.size(), stdout);
                std::fflush(stdout);
            },
            [] {
                // Ctrl+C: the reply ends here on screen, whatever was still on its way.
                std::fputs("\n[stopped]", stdout);
                std::fflush(stdout);
            });
        if (last.kind == sched::EventKind::Error) {
            std::fprintf(stderr, "\nhearth-cli: %s\n", last.error.c_str());
            messages.pop_back();
            continue;
        }
        const sched::RequestStats& s = last.stats;
        if (args->flag("json")) {
            std::fputc('\n', stdout);
            const QJsonObject stats = request_stats_json(s, last.stop);
            std::fputs(QJsonDocument(stats).toJson(QJsonDocument::Compact).append('\n').constData(),
                       stderr);
        } else {
            std::fprintf(
                stderr, "\n[%d prompt tokens, %d from cache, TTFT %.0f ms, %.1f tok/s%s]\n",
                s.prompt_tokens, s.prompt_tokens_cached, s.ttft_ms, s.decode_tokens_per_s(),
                last.stop == StopReason::Cancelled ? ", stopped" : "");
        }
        messages.push_back({chat::Role::Assistant, last.text, last.tokens});
        params.seed += 1;  // a different draw each turn, still reproducible from --seed
    }
    std::fputc('\n', stdout);
    return 0;
}

}  // namespace hearth::cli
