// Splits text at special tokens before anything else sees it.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace hearth::tok {

// A run of plain text (token < 0) or one special token.
struct Fragment {
    TokenId token = -1;
    std::string_view text;  // the plain text; empty for a token
};

// llama.cpp's tokenizer_st_partition: the special tokens are taken one at a time, longest
// first, and each splits every remaining plain-text run at all its (non-overlapping,
// leftmost-first) occurrences. So a longer token wins over a shorter one even when the
// shorter one occurs earlier and overlaps it. Control and unknown tokens take part only
// when parse_special; user-defined ones always do. A token that strips right
// (Vocab::rstrip) also takes the whitespace after it.
std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text,
                                           bool parse_special);

}  // namespace hearth::tok
