// A small, real tokenizer for the chat tests, so every family can be tested without
// model files: 256 byte tokens, a few multi-byte words (so that where text is split
// into pieces changes the ids, as in a real vocabulary), and control tokens that are
// split out of the text by the real tokenizer's special-token splitter (only when
// parse_special is set). Plain text is tokenized greedily, longest word first.
// With space_prefix it behaves like a SentencePiece vocabulary with add_space_prefix in
// llama.cpp: a space is put before every text fragment at the start of the input or
// right after a control token.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace hearth::test {

class TestTokenizer : public Tokenizer {
  public:
    struct Options {
        std::vector<std::string> control;  // control token texts
        std::string bos;                   // text of the BOS token (one of control), or ""
        std::string eos;                   // text of the EOS token (one of control), or ""
        std::vector<std::string> end_of_generation;  // texts (of control tokens)
        bool add_bos = false;
        bool space_prefix = false;
    };

    explicit TestTokenizer(const Options& options);

    // Every control token text that any supported chat family uses.
    static std::vector<std::string> all_family_controls();

    // Id of a token by its text, or -1.
    TokenId id_of(std::string_view text) const { return find_token(text); }

  protected:
    void encode_text(std::string_view text, bool follows_special,
                     std::vector<TokenId>& out) const override;

  private:
    TestTokenizer(TokenizerKind kind, std::unique_ptr<tok::Vocab> vocab);

    TokenId first_word_;
    TokenId first_control_;
};

}  // namespace hearth::test
