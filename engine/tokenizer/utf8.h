// UTF-8 and GPT-2 byte-level helpers shared by the tokenizers. Decoding follows
// llama.cpp's rules byte for byte (not the strict Unicode ones), because the golden
// outputs depend on how it treats malformed input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hearth::tok {

// Length of the UTF-8 sequence a lead byte announces, from its high nibble only
// (llama.cpp's unicode_len_utf8): 1 for ASCII and for stray continuation bytes.
size_t utf8_sequence_length(unsigned char lead);

// Appends the UTF-8 encoding of cp (cp <= 0x10FFFF; surrogates are encoded as their
// 3-byte form, as llama.cpp does).
void append_utf8(std::string& out, uint32_t cp);

// Text ready for the BPE pre-tokenizer.
struct SanitizedText {
    // The text as llama.cpp rebuilds it from code points: every byte that does not start
    // a sequence it accepts is replaced by U+FFFD, overlong forms are re-encoded short.
    std::string text;
    // The same bytes with each surrogate (which llama.cpp lets through) replaced by
    // U+FFFD (also 3 bytes), so that PCRE2 sees valid UTF-8 while byte offsets still
    // line up with `text`. Both are symbols for the regexes ([^\s\p{L}\p{N}]).
    std::string match;
};

// Decodes raw bytes like llama.cpp's unicode_cpts_from_utf8: accepts any well-formed
// bit pattern (including overlong forms and surrogates), turns every other lead byte
// into U+FFFD and resumes at the next byte. Code points above U+10FFFF, which make
// llama.cpp abort, are treated as invalid lead bytes instead.
SanitizedText sanitize_utf8(std::string_view raw);

// GPT-2's byte-level alphabet: bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for
// themselves; the other 68 bytes map, in ascending order, to U+0100, U+0101, ...
// Returns the UTF-8 form of the character standing for `byte`.
std::string_view byte_to_unicode(unsigned char byte);

// Inverse of byte_to_unicode for one code point: the byte, or -1 when cp is not part of
// the byte-level alphabet.
int unicode_to_byte(uint32_t cp);

// Decodes the next strictly valid UTF-8 character of s at *pos (advancing *pos), or
// returns -1 and advances by one byte.
int64_t next_code_point(std::string_view s, size_t* pos);

}  // namespace hearth::tok
