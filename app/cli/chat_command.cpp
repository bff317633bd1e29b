// hearth-cli chat: an interactive multi-turn chat in the terminal. Replies stream as
// they are generated; Ctrl+C stops a reply (a second Ctrl+C quits); /quit or end of input
// ends the session; /reset starts over with the same system prompt.
#include <cstdio>
#include <iostream>

#include "chat/prompt_builder.h"
#include "cli/cancel_signal.h"
#include "cli/commands.h"
#include "cli/model_loading.h"
#include "cli/sampling_options.h"
#include "generation/generator.h"

namespace hearth::cli {
namespace {

std::vector<OptionSpec> chat_options() {
    std::vector<OptionSpec> o = {
        {"system", true, "system prompt (persona) for the conversation"},
        {"max-tokens", true, "most tokens per reply (default 512)"},
        {"help", false, "show this help"},
    };
    for (auto& v : {model_options(), sampling_options()}) o.insert(o.end(), v.begin(), v.end());
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
    auto loaded = load_model(*args);
    if (!loaded) return fail(1, loaded.message());

    chat::PromptBuilder builder(*loaded->tokenizer, chat::ChatTemplate::from_gguf(*loaded->file));
    std::vector<chat::Message> messages;
    const std::string system = args->value("system").value_or("");
    auto reset = [&] {
        messages.clear();
        if (!system.empty()) messages.push_back({chat::Role::System, system, std::nullopt});
    };
    reset();
    Generator gen(*loaded->model, *loaded->tokenizer);
    std::atomic<bool>& cancel = cancel_on_interrupt();
    const size_t context = static_cast<size_t>(loaded->model->config().context_length);
    std::fprintf(stderr, "Chatting with %s (%s template). /reset starts over, /quit or Ctrl+D ends.\n",
                 loaded->file->get_string("general.name").value_or("the model").data(),
                 std::string(chat::family_name(builder.chat_template().family())).c_str());
    SamplingParams params = *sampling;
    for (;;) {
        std::fputs("\n> ", stdout);
        std::fflush(stdout);
        std::string line;
        if (!std::getline(std::cin, line) || line == "/quit") break;
        if (line == "/reset") {
            reset();
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({chat::Role::User, line, builder.encode_content(chat::Role::User, line)});
        // Leave room for the reply; the oldest turns fall out of a long conversation.
        const size_t reply_room = std::min(static_cast<size_t>(*max_tokens), context / 2);
        auto prompt = builder.fit_to_context(messages, context - reply_room);
        if (!prompt) {
            std::fprintf(stderr, "hearth-cli: %s\n", prompt.message().c_str());
            messages.pop_back();
            continue;
        }
        if (prompt->dropped > 0)
            std::fprintf(stderr, "[the %zu oldest messages no longer fit the context and were left out]\n",
                         prompt->dropped);
        GenerationRequest req;
        req.prompt = prompt->ids;
        req.sampling = params;
        req.max_tokens = static_cast<int32_t>(reply_room);
        cancel.store(false);
        auto result = gen.generate(
            req,
            [](int32_t, const std::string& text) {
                std::fwrite(text.data(), 1, text.size(), stdout);
                std::fflush(stdout);
            },
            &cancel);
        if (!result) {
            std::fprintf(stderr, "\nhearth-cli: %s\n", result.message().c_str());
            messages.pop_back();
            continue;
        }
        std::fprintf(stderr, "\n[%d prompt tokens, TTFT %.0f ms, %.1f tok/s%s]\n", result->prompt_tokens,
                     result->ttft_ms, result->decode_tokens_per_s(),
                     result->stop == StopReason::Cancelled ? ", stopped" : "");
        messages.push_back({chat::Role::Assistant, result->text, result->tokens});
        params.seed += 1;  // a different draw each turn, still reproducible from --seed
    }
    std::fputc('\n', stdout);
    return 0;
}

}  // namespace hearth::cli
