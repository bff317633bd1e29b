// Splits text into the pieces BPE merges run on, with the per-model regex sequences of
// llama.cpp (src/llama-vocab.cpp, llm_tokenizer_bpe). Each regex is applied in turn to
// every piece the previous one produced; matches and the text between them both become
// pieces, and a match never crosses a piece boundary (lookahead included).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hearth::tok {

// How a `tokenizer.ggml.pre` name behaves in llama.cpp.
struct PreTokenizerSpec {
    std::string_view name;  // canonical family name: "smollm", "llama3", ...
    std::vector<std::string_view> regexes;
    bool clean_spaces = true;    // detokenizer removes " ," style spaces
    bool ignore_merges = false;  // a piece that is a whole token is emitted as is
    bool add_bos = false;        // default for tokenizer.ggml.add_bos_token
};

// The spec for a tokenizer.ggml.pre value ("" when the key is absent), or nullptr for a
// name llama.cpp does not know.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre);
// llama.cpp's "default" sequence, used when the key is absent.
const PreTokenizerSpec& default_pre_tokenizer();

// Rewrites \s and \S to llama.cpp's exact whitespace set (PCRE2's \s also matches
// U+180E; llama.cpp's does not). Exposed for tests.
std::string expand_whitespace_classes(std::string_view pattern);

// Byte range [begin, end) of one piece.
struct Piece {
    size_t begin;
    size_t end;
};

class PreTokenizer {
  public:
    // Compiles every regex of spec once (UTF + UCP, JIT where available).
    static Result<PreTokenizer> create(const PreTokenizerSpec& spec);

    PreTokenizer(PreTokenizer&&) noexcept;
    PreTokenizer& operator=(PreTokenizer&&) noexcept;
    ~PreTokenizer();

    // Splits valid UTF-8 text into pieces covering it completely, in order. Safe to call
    // from several threads at once (match data is per call). Invalid UTF-8 is never
    // matched by a regex; it stays inside the pieces between matches.
    std::vector<Piece> split(std::string_view text) const;

  private:
    struct Code;
    PreTokenizer() = default;
    std::vector<std::unique_ptr<Code>> codes_;
};

}  // namespace hearth::tok
