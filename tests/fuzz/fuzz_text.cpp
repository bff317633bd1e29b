// libFuzzer target: text a person types, through the default model's tokenizer (encode
// with and without special tokens, decode of arbitrary ids), the chat template family
// detection (the input as a Jinja template's text) and the prompt builder (the input cut
// into a conversation). Needs the default model ($HEARTH_MODEL or the data folder's).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "common/paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace {

struct Model {
    std::unique_ptr<hearth::gguf::GgufFile> file;
    std::unique_ptr<hearth::Tokenizer> tokenizer;
};

const Model& model() {
    static const Model m = [] {
        const std::string path = hearth::paths::default_model_path();
        auto file = hearth::gguf::GgufFile::open(path);
        if (!file) {
            std::fprintf(stderr, "fuzz_text: no default model at %s (scripts/fetch-model)\n",
                         path.c_str());
            std::abort();
        }
        auto tok = hearth::Tokenizer::from_gguf(**file);
        if (!tok) std::abort();
        return Model{std::move(file).value(), std::move(tok).value()};
    }();
    return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace hearth;
    const Model& m = model();
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // Tokenizer: encode both ways; decode what came out and arbitrary ids.
    const auto plain = m.tokenizer->encode(text, false);
    const auto special = m.tokenizer->encode(text, true);
    (void)m.tokenizer->decode(plain, false);
    (void)m.tokenizer->decode(special, true);
    std::vector<TokenId> ids;
    for (size_t i = 0; i + 4 <= size && ids.size() < 64; i += 4) {
        int32_t v;
        __builtin_memcpy(&v, data + i, 4);
        ids.push_back(v);  // out-of-range ids included: decode must refuse them safely
    }
    (void)m.tokenizer->decode(ids, true);

    // Template detection on the input as a template's text.
    const auto detected = chat::ChatTemplate::from_template_text(text);

    // The prompt builder and the turn planner on a conversation cut from the input at
    // NUL bytes (roles cycling system, user, assistant), in the detected family's format.
    std::vector<chat::Message> messages;
    size_t start = 0;
    for (size_t i = 0; i <= size && messages.size() < 16; ++i) {
        if (i < size && data[i] != 0) continue;
        const auto role = static_cast<chat::Role>(messages.size() % 3);
        messages.push_back({role, std::string(text.substr(start, i - start)), std::nullopt});
        start = i + 1;
    }
    const chat::PromptBuilder builder(*m.tokenizer, detected);
    (void)builder.build(messages);
    chat::TurnInput turn;
    turn.messages = messages;
    turn.max_tokens = 64;
    (void)chat::plan_turn(builder, 512, turn);
    turn.policy = chat::ContextPolicy::Fail;
    (void)chat::plan_turn(builder, 512, turn);
    return 0;
}
