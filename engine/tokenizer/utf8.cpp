#include "tokenizer/utf8.h"

#include <array>

namespace hearth::tok {
namespace {

constexpr uint32_t kReplacement = 0xFFFD;

bool is_continuation(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

// llama.cpp's unicode_cpt_from_utf8: the lead byte's high bits give the length, the
// following bytes must be continuation bytes; nothing else is checked. Returns the
// code point and sets *len, or returns -1 for a byte that starts no accepted sequence.
int64_t decode_llama(std::string_view s, size_t pos, size_t* len) {
    const auto b = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]); };
    const size_t left = s.size() - pos;
    const unsigned char c0 = b(0);
    if (c0 < 0x80) {
        *len = 1;
        return c0;
    }
    if ((c0 & 0x40) == 0) return -1;  // stray continuation byte
    if ((c0 & 0x20) == 0) {
        if (left < 2 || !is_continuation(b(1))) return -1;
        *len = 2;
        return ((c0 & 0x1F) << 6) | (b(1) & 0x3F);
    }
    if ((c0 & 0x10) == 0) {
        if (left < 3 || !is_continuation(b(1)) || !is_continuation(b(2))) return -1;
        *len = 3;
        return ((c0 & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    }
    if ((c0 & 0x08) == 0) {
        if (left < 4 || !is_continuation(b(1)) || !is_continuation(b(2)) || !is_continuation(b(3)))
            return -1;
        const int64_t cp = (static_cast<int64_t>(c0 & 0x07) << 18) | ((b(1) & 0x3F) << 12) |
                           ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
        if (cp > 0x10FFFF) return -1;  // llama.cpp throws from its encoder here
        *len = 4;
        return cp;
    }
    return -1;
}

std::array<std::string, 256> make_byte_table() {
    std::array<std::string, 256> table;
    uint32_t next_extra = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
        const bool self = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                          (byte >= 0xAE && byte <= 0xFF);
        append_utf8(table[static_cast<size_t>(byte)],
                    self ? static_cast<uint32_t>(byte) : next_extra++);
    }
    return table;
}

std::array<int16_t, 0x144> make_reverse_table() {
    std::array<int16_t, 0x144> table;
    table.fill(-1);
    uint32_t next_extra = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
        const bool self = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                          (byte >= 0xAE && byte <= 0xFF);
        table[self ? static_cast<size_t>(byte) : next_extra++] = static_cast<int16_t>(byte);
    }
    return table;
}

}  // namespace

size_t utf8_sequence_length(unsigned char lead) {
    static constexpr size_t kLookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLookup[lead >> 4];
}

void append_utf8(std::string& out, uint32_t cp) {
    const auto put = [&](uint32_t v) { out.push_back(static_cast<char>(v)); };
    if (cp < 0x80) {
        put(cp);
    } else if (cp < 0x800) {
        put(0xC0 | (cp >> 6));
        put(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        put(0xE0 | (cp >> 12));
        put(0x80 | ((cp >> 6) & 0x3F));
        put(0x80 | (cp & 0x3F));
    } else {
        put(0xF0 | (cp >> 18));
        put(0x80 | ((cp >> 12) & 0x3F));
        put(0x80 | ((cp >> 6) & 0x3F));
        put(0x80 | (cp & 0x3F));
    }
}

SanitizedText sanitize_utf8(std::string_view raw) {
    SanitizedText out;
    out.text.reserve(raw.size());
    out.match.reserve(raw.size());
    size_t pos = 0;
    while (pos < raw.size()) {
        size_t len = 1;
        const int64_t decoded = decode_llama(raw, pos, &len);
        const uint32_t cp = decoded < 0 ? kReplacement : static_cast<uint32_t>(decoded);
        pos += decoded < 0 ? 1 : len;
        append_utf8(out.text, cp);
        append_utf8(out.match, cp >= 0xD800 && cp <= 0xDFFF ? kReplacement : cp);
    }
    return out;
}

std::string_view byte_to_unicode(unsigned char byte) {
    static const std::array<std::string, 256> table = make_byte_table();
    return table[byte];
}

int unicode_to_byte(uint32_t cp) {
    static const std::array<int16_t, 0x144> table = make_reverse_table();
    return cp < table.size() ? table[cp] : -1;
}

int64_t next_code_point(std::string_view s, size_t* pos) {
    const size_t start = *pos;
    const auto c0 = static_cast<unsigned char>(s[start]);
    const size_t len = utf8_sequence_length(c0);
    *pos = start + 1;
    if (len == 1) return c0 < 0x80 ? c0 : -1;
    if (start + len > s.size()) return -1;
    uint32_t cp = c0 & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; ++i) {
        const auto c = static_cast<unsigned char>(s[start + i]);
        if (!is_continuation(c)) return -1;
        cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    *pos = start + len;
    return cp;
}

}  // namespace hearth::tok
