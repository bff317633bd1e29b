// Small vocabularies written with GgufWriter, for tests that need no model file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace hearth::test {

// GPT-2's byte-level alphabet, written out from its definition (independently of the
// tokenizer's own table): printable Latin-1 bytes stand for themselves, the other 68
// take U+0100.. in ascending byte order.
inline std::string byte_char(unsigned char byte) {
    uint32_t cp = byte;
    const auto self = [](int b) {
        return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    if (!self(byte)) {
        cp = 0x100;
        for (int b = 0; b < byte; ++b)
            if (!self(b)) ++cp;
    }
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

// The byte-level form of a UTF-8 string ("a b" -> "aĠb").
inline std::string byte_level(const std::string& s) {
    std::string out;
    for (const char c : s) out += byte_char(static_cast<unsigned char>(c));
    return out;
}

struct SyntheticVocab {
    std::optional<std::string> model = "gpt2";
    std::optional<std::string> pre = "gpt-2";
    std::vector<std::string> tokens;
    std::vector<int32_t> types;  // written when non-empty
    std::vector<float> scores;   // written when non-empty
    std::optional<std::vector<std::string>> merges;
    std::vector<std::pair<std::string, uint32_t>> ids;  // e.g. {"tokenizer.ggml.eos_token_id", 2}
    std::vector<std::pair<std::string, bool>> flags;
    std::vector<std::pair<std::string, std::string>> strings;  // extra string keys

    // Adds the merge "a b" (next rank) and, when missing, its result as a token.
    void add_merge(const std::string& a, const std::string& b) {
        if (!merges) merges.emplace();
        merges->push_back(a + " " + b);
        if (find(a + b) < 0) add(a + b);
    }

    int32_t find(const std::string& text) const {
        for (size_t i = 0; i < tokens.size(); ++i)
            if (tokens[i] == text) return static_cast<int32_t>(i);
        return -1;
    }

    // Appends a token, returning its id.
    int32_t add(const std::string& text, int32_t type = 1, float score = 0.0f) {
        tokens.push_back(text);
        types.push_back(type);
        scores.push_back(score);
        return static_cast<int32_t>(tokens.size() - 1);
    }

    std::vector<std::byte> bytes() const {
        gguf::GgufWriter w;
        w.add_string("general.architecture", "llama");
        if (model) w.add_string("tokenizer.ggml.model", *model);
        if (pre) w.add_string("tokenizer.ggml.pre", *pre);
        if (!tokens.empty()) w.add_strings("tokenizer.ggml.tokens", tokens);
        if (!types.empty()) w.add_i32s("tokenizer.ggml.token_type", types);
        if (!scores.empty()) w.add_f32s("tokenizer.ggml.scores", scores);
        if (merges) w.add_strings("tokenizer.ggml.merges", *merges);
        for (const auto& [key, v] : ids) w.add_u32(key, v);
        for (const auto& [key, v] : flags) w.add_bool(key, v);
        for (const auto& [key, v] : strings) w.add_string(key, v);
        return w.bytes();
    }

    Result<std::unique_ptr<Tokenizer>> load() const {
        const std::vector<std::byte> b = bytes();
        auto file = gguf::GgufFile::parse(b);
        if (!file) return file.error();
        return Tokenizer::from_gguf(**file);  // the tokenizer copies what it needs
    }
};

}  // namespace hearth::test
