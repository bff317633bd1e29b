// libFuzzer target: the GGUF reader on untrusted bytes, and what is built from a file that
// parses (the tokenizer's vocabulary, the chat template's family). Nothing may crash, hang
// or read out of bounds; a bad file is an error value.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chat/chat_template.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                                 reinterpret_cast<const std::byte*>(data) + size);
    auto file = hearth::gguf::GgufFile::parse(std::move(bytes));
    if (!file) return 0;
    auto tokenizer = hearth::Tokenizer::from_gguf(**file);
    (void)hearth::chat::ChatTemplate::from_gguf(**file);
    if (tokenizer) {
        const auto ids = (*tokenizer)->encode("Hello, world! <|im_start|>", true);
        (void)(*tokenizer)->decode(ids, true);
    }
    return 0;
}
