// Text ↔ token ids for the vocabularies found in GGUF files: byte-level BPE
// (tokenizer.ggml.model = "gpt2") with per-model pre-tokenizers, and SentencePiece
// style (tokenizer.ggml.model = "llama"). Matches llama.cpp's tokenizer exactly on the
// project's golden corpus (tests/data/tokenizer).
//
// A Tokenizer is immutable after from_gguf(): every const member is safe to call from
// several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hearth::gguf {
class GgufFile;
}

namespace hearth {

namespace tok {
struct Vocab;
}

using TokenId = int32_t;

// tokenizer.ggml.token_type values. Undefined covers 0 and any value outside 1..6, which
// llama.cpp treats as a token that renders as nothing and is never split out.
enum class TokenAttr : uint8_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class TokenizerKind { Bpe, SentencePiece };

class Tokenizer {
  public:
    // Reads the vocabulary from the file's tokenizer.ggml.* metadata. Errors name the
    // missing or inconsistent key. The result does not refer to `file` afterwards.
    static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::GgufFile& file);

    virtual ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // Encodes text. Special tokens (control and user-defined) are split out first,
    // longest first; control tokens are recognised only when parse_special is true
    // (user-defined ones always, as llama.cpp does). In vocabularies llama.cpp treats as
    // Phi-3's (general.name contains "phi3" or "phi-3") a special token other than <unk>,
    // <s> and <|endoftext|> also takes the whitespace after it: "<|user|>\nHi" encodes as
    // <|user|> ▁Hi. No BOS is added here.
    // Invalid UTF-8 never crashes: as in llama.cpp, each bad byte becomes U+FFFD for
    // BPE vocabularies and byte-fallback tokens for SentencePiece ones.
    std::vector<TokenId> encode(std::string_view text, bool parse_special) const;

    // Concatenated pieces of ids as UTF-8 bytes (may be an incomplete UTF-8 sequence if
    // ids ends mid-character), like llama_detokenize(remove_special = false): with
    // add_space_prefix (SentencePiece's default) the first piece loses one leading space,
    // and the gpt-2, llama3 and default families get llama.cpp's space clean-up
    // (" ," → ","). Control tokens are rendered only when render_special. Out-of-range
    // ids contribute nothing.
    std::string decode(std::span<const TokenId> ids, bool render_special) const;

    // The bytes one token contributes to decoded text (no clean-up, no prefix removal;
    // what a streaming UI appends per generated token). Empty for out-of-range ids.
    std::string token_to_piece(TokenId id, bool render_special) const;

    TokenizerKind kind() const { return kind_; }
    // Canonical pre-tokenizer family: "smollm", "llama3", "qwen2", "gpt-2" or "default"
    // (BPE); "spm" for SentencePiece vocabularies.
    std::string_view pre_tokenizer() const;

    int32_t vocab_size() const;
    // The token's text as stored in the vocabulary (byte-level or ▁-escaped form); an
    // empty string for out-of-range ids.
    const std::string& token_text(TokenId id) const;
    TokenAttr token_attr(TokenId id) const;  // Undefined for out-of-range ids
    // Id of the token whose text is exactly `text`, or -1 (the last one on duplicates,
    // as in llama.cpp).
    TokenId find_token(std::string_view text) const;

    TokenId bos() const;  // -1 when the vocabulary has none
    TokenId eos() const;
    TokenId eot() const;
    TokenId unknown() const;
    TokenId padding() const;
    bool add_bos() const;           // the model wants BOS at the start of a prompt
    bool add_space_prefix() const;  // SentencePiece: a space is prepended to text
    // End-of-generation: eos, eot, eom and the well-known end-of-turn control tokens.
    bool is_end_of_generation(TokenId id) const;
    const std::vector<TokenId>& end_of_generation_tokens() const;  // sorted

  protected:
    Tokenizer(TokenizerKind kind, std::unique_ptr<tok::Vocab> vocab);

    // Encodes one run of plain text (no special tokens in it), appending to out.
    // follows_special: the run starts the text or follows a special token.
    virtual void encode_text(std::string_view text, bool follows_special,
                             std::vector<TokenId>& out) const = 0;

    const tok::Vocab& vocab() const { return *vocab_; }

  private:
    TokenizerKind kind_;
    std::unique_ptr<const tok::Vocab> vocab_;
};

}  // namespace hearth
