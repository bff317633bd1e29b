// SentencePiece-style vocabularies (tokenizer.ggml.model = "llama": Llama 2, Mistral):
// spaces become U+2581, characters merge by token score, and characters the vocabulary
// lacks fall back to <0xNN> byte tokens.
#pragma once

#include <memory>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace hearth::tok {

class SpmTokenizer final : public Tokenizer {
  public:
    static Result<std::unique_ptr<Tokenizer>> create(const gguf::GgufFile& file);

  protected:
    void encode_text(std::string_view text, bool follows_special,
                     std::vector<TokenId>& out) const override;

  private:
    explicit SpmTokenizer(std::unique_ptr<Vocab> vocab);
    // Appends the byte-fallback token for one byte (or the unknown token).
    void push_byte(unsigned char byte, std::vector<TokenId>& out) const;

    TokenId byte_tokens_[256];  // -1 where the vocabulary has no token for the byte
};

}  // namespace hearth::tok
