// The vocabulary shared by both tokenizer kinds, read from tokenizer.ggml.* metadata
// with llama.cpp's defaults and fix-ups (llama_vocab::impl::load).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "tokenizer/tokenizer.h"

namespace hearth::gguf {
class GgufFile;
}

namespace hearth::tok {

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

struct Vocab {
    TokenizerKind kind = TokenizerKind::Bpe;
    std::string pre_name;  // canonical pre-tokenizer family (or "spm")

    std::vector<std::string> texts;
    std::vector<TokenAttr> attrs;
    std::vector<float> scores;  // 0 where the file has none
    TokenMap ids;               // text -> id; the last id wins on duplicate texts

    TokenId bos = -1;
    TokenId eos = -1;
    TokenId eot = -1;
    TokenId eom = -1;
    TokenId unk = -1;
    TokenId pad = -1;
    bool add_bos = false;
    bool add_space_prefix = false;
    bool clean_spaces = false;
    bool ignore_merges = false;

    std::vector<TokenId> eog;       // sorted
    std::vector<TokenId> specials;  // control/user-defined/unknown, longest text first
    // Specials that swallow the whitespace after them when split out of a text (llama.cpp's
    // LLAMA_TOKEN_ATTR_RSTRIP); empty when none does.
    std::vector<bool> rstrip;
    std::vector<std::string> pieces;  // token_to_piece(id, render_special = true)

    bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < texts.size(); }
    bool strips_right(TokenId id) const {
        return !rstrip.empty() && rstrip[static_cast<size_t>(id)];
    }
    TokenId find(std::string_view text) const {
        const auto it = ids.find(text);
        return it == ids.end() ? -1 : it->second;
    }
};

// Reads tokens, token types, scores, special ids and flags; applies llama.cpp's
// end-of-generation detection and control-token fix-ups; builds the special-token list
// and the piece cache. kind and the BPE pre-tokenizer flags (pre_name, clean_spaces,
// ignore_merges, add_bos default) must be set in `vocab` beforehand.
Result<void> load_vocab(const gguf::GgufFile& file, Vocab& vocab);

}  // namespace hearth::tok
