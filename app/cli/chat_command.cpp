// hearth-cli chat: an interactive multi-turn chat in the terminal. Replies stream as
// they are generated; Ctrl+C stops a reply at once ("[stopped]"; nothing more of it is
// printed) and a second Ctrl+C quits; /quit or end of input ends the session; /reset
// starts over with the same system prompt. A chat that outgrows the context goes on as
// --overflow says (chat/turn_planner.h): its oldest turns leave in steps and the kept
// history is computed again (drop) or moved (shift), or the chat asks which, once.
#include <QJsonDocument>

#include <cstdio>
#include <cstdlib>
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
        {"overflow", true,
         "when the chat outgrows the context: drop (default: the oldest turns leave in steps, "
         "the rest is computed again), shift (the rest's KV is moved, not computed; not "
         "bit-identical) or ask"},
        {"keep", true, "after a drop, the share of the context the chat keeps (default 0.5)"},
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
    auto policy = chat::parse_context_policy(args->value("overflow").value_or("drop"));
    if (!policy || *policy == chat::ContextPolicy::Fail)
        return fail(2, "--overflow expects drop, shift or ask");
    double keep = chat::kDefaultKeep;
    if (auto k = args->value("keep")) {
        char* end = nullptr;
        keep = std::strtod(k->c_str(), &end);
        if (end == k->c_str() || *end != '\0' || !(keep >= 0.1 && keep <= 1.0))
            return fail(2, "--keep expects a share between 0.1 and 1, got '" + *k + "'");
    }
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
        turn.policy = *policy;
        turn.keep = keep;
        auto planned = chat::plan_turn(builder, context, turn);
        if (!planned && planned.error().code == chat::kContextFull) {
            // Asked once: the answer holds for the rest of the session.
            std::fprintf(stderr,
                         "hearth-cli: %s\n[d]rop them (computed again), [s]hift (moved, not "
                         "computed), or anything else to stop: ",
                         planned.message().c_str());
            std::string answer;
            std::getline(std::cin, answer);
            if (answer == "d" || answer == "s") {
                *policy =
                    answer == "d" ? chat::ContextPolicy::DropInSteps : chat::ContextPolicy::Shift;
                turn.policy = *policy;
                planned = chat::plan_turn(builder, context, turn);
            }
        }
        if (!planned) {
            std::fprintf(stderr, "hearth-cli: %s\n", planned.message().c_str());
            messages.pop_back();
            continue;
        }
        if (planned->dropped_now > 0)
            std::fprintf(stderr,
                         "[%zu more of the oldest messages left the context: %zu are out]\n",
                         planned->dropped_now, planned->dropped);
        sched::Request req;
        req.conversation = conversation;
        req.prompt = std::move(planned->prompt);
        req.lineage = planned->lineage;
        req.shift = std::move(planned->shift);
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
            QJsonObject stats = request_stats_json(s, last.stop);
            stats["messages_dropped"] = static_cast<qint64>(planned->dropped);
            stats["messages_dropped_now"] = static_cast<qint64>(planned->dropped_now);
            std::fputs(QJsonDocument(stats).toJson(QJsonDocument::Compact).append('\n').constData(),
                       stderr);
        } else {
            const std::string shifted =
                s.prompt_tokens_shifted > 0
                    ? ", " + std::to_string(s.prompt_tokens_shifted) + " moved by a context shift"
                    : "";
            std::fprintf(
                stderr, "\n[%d prompt tokens, %d from cache%s, TTFT %.0f ms, %.1f tok/s%s]\n",
                s.prompt_tokens, s.prompt_tokens_cached, shifted.c_str(), s.ttft_ms,
                s.decode_tokens_per_s(), last.stop == StopReason::Cancelled ? ", stopped" : "");
        }
        messages.push_back({chat::Role::Assistant, last.text, last.tokens});
        params.seed += 1;  // a different draw each turn, still reproducible from --seed
    }
    std::fputc('\n', stdout);
    return 0;
}

}  // namespace hearth::cli
