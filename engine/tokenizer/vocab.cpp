#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <span>

#include "common/log.h"
#include "gguf/gguf_file.h"
#include "tokenizer/utf8.h"

namespace hearth::tok {
namespace {

constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kTokenType = "tokenizer.ggml.token_type";
constexpr std::string_view kScores = "tokenizer.ggml.scores";

// Token texts llama.cpp recognises as end-of-turn when tokenizer.ggml.eot_token_id is
// absent, in order of preference (llama.cpp takes whichever its hash map yields first).
constexpr std::array<std::string_view, 11> kEotTexts = {
    "<|eot_id|>",        "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>",   "<EOT>",      "_<EOT>",  "[EOT]",         "<｜end▁of▁sentence｜>",
    "<end_of_utterance>"};

// Every token with one of these texts ends generation (llama.cpp's list).
constexpr std::array<std::string_view, 22> kEogTexts = {"<|eot_id|>",
                                                        "<|im_end|>",
                                                        "<|end|>",
                                                        "<|return|>",
                                                        "<|call|>",
                                                        "<|flush|>",
                                                        "<|calls|>",
                                                        "<end_of_turn>",
                                                        "<|endoftext|>",
                                                        "</s>",
                                                        "<|eom_id|>",
                                                        "<EOT>",
                                                        "_<EOT>",
                                                        "[EOT]",
                                                        "[EOS]",
                                                        "<|end_of_text|>",
                                                        "<end_of_utterance>",
                                                        "<eos>",
                                                        "<turn|>",
                                                        "<|tool_response>",
                                                        "<｜end▁of▁sentence｜>",
                                                        "[e~["};

// Fill-in-the-middle tokens: llama.cpp marks them control, and pad/repo/file-separator
// also end generation (a FIM model emits them when it is done).
struct FimKind {
    std::string_view key;
    bool ends_generation;
    std::vector<std::string_view> texts;
};
const std::vector<FimKind>& fim_kinds() {
    static const std::vector<FimKind> kinds = {
        {"tokenizer.ggml.fim_pre_token_id",
         false,
         {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
          "<|code_prefix|>", "<|prefix|>"}},
        {"tokenizer.ggml.fim_suf_token_id",
         false,
         {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
          "<|code_suffix|>", "<|suffix|>"}},
        {"tokenizer.ggml.fim_mid_token_id",
         false,
         {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
          "<|code_middle|>", "<|middle|>"}},
        {"tokenizer.ggml.fim_pad_token_id",
         true,
         {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
        {"tokenizer.ggml.fim_rep_token_id",
         true,
         {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
        {"tokenizer.ggml.fim_sep_token_id", true, {"<|file_sep|>"}},
    };
    return kinds;
}

TokenAttr attr_from_type(int32_t type) {
    if (type >= 1 && type <= 6) return static_cast<TokenAttr>(type);
    return TokenAttr::Undefined;
}

// An optional token id key: absent is fine, anything but an in-range integer is not.
// Out-of-range ids are errors only when `strict` (ids the app relies on); others are
// dropped with a warning, as llama.cpp does.
Result<void> read_token_id(const gguf::GgufFile& file, std::string_view key, const Vocab& v,
                           bool strict, TokenId& id) {
    const gguf::Value* value = file.find(key);
    if (!value) {
        if (id >= 0 && !v.valid(id)) id = -1;  // a built-in default the vocab cannot hold
        return {};
    }
    const std::optional<int64_t> raw =
        value->type() == gguf::ValueType::Bool ? std::nullopt : value->as_int<int64_t>();
    if (!raw) return make_error(std::string(key) + " is not an integer");
    if (*raw < 0 || *raw >= static_cast<int64_t>(v.texts.size())) {
        const std::string msg = std::string(key) + " = " + std::to_string(*raw) +
                                " is outside the vocabulary (" + std::to_string(v.texts.size()) +
                                " tokens)";
        if (strict) return make_error(msg);
        hearth::log::get("tokenizer")->warn("{}; ignoring it", msg);
        id = -1;
        return {};
    }
    id = static_cast<TokenId>(*raw);
    return {};
}

Result<void> read_flag(const gguf::GgufFile& file, std::string_view key, bool& flag) {
    const gguf::Value* value = file.find(key);
    if (!value) return {};
    const std::optional<bool> b = value->as_bool();
    if (!b) return make_error(std::string(key) + " is not a bool");
    flag = *b;
    return {};
}

// The first token (in list order) whose text is one of `texts`, or -1.
TokenId first_with_text(const Vocab& v, std::span<const std::string_view> texts) {
    for (const std::string_view t : texts)
        if (const TokenId id = v.find(t); id >= 0) return id;
    return -1;
}

void make_control(Vocab& v, TokenId id) {
    if (id < 0 || v.attrs[id] == TokenAttr::Control) return;
    // llama.cpp: "control-looking token ... was not control-type; ... will be overridden"
    hearth::log::get("tokenizer")
        ->debug("token {} '{}' looks like a control token; treating it as one", id, v.texts[id]);
    v.attrs[id] = TokenAttr::Control;
}

Result<void> detect_end_of_generation(const gguf::GgufFile& file, Vocab& v) {
    if (v.eot < 0) {
        v.eot = first_with_text(v, kEotTexts);
        make_control(v, v.eot);
    }
    std::vector<TokenId> eog;
    for (const FimKind& fim : fim_kinds()) {
        TokenId id = -1;
        if (auto r = read_token_id(file, fim.key, v, false, id); !r) return r;
        if (id < 0) {
            id = first_with_text(v, fim.texts);
            make_control(v, id);
        }
        if (fim.ends_generation && id >= 0) eog.push_back(id);
    }
    for (const std::string_view text : kEogTexts) {
        // Duplicated texts: llama.cpp only sees the id its map holds, the last one.
        if (const TokenId id = v.find(text); id >= 0) {
            eog.push_back(id);
            make_control(v, id);
        }
    }
    for (const TokenId id : {v.eos, v.eot, v.eom})
        if (id >= 0) eog.push_back(id);
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    v.eog = std::move(eog);
    return {};
}

// "<0x0A>" -> 0x0A, or -1.
int parse_byte_token(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
    int value = 0;
    for (const char c : text.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9')
            value |= c - '0';
        else if (c >= 'A' && c <= 'F')
            value |= c - 'A' + 10;
        else if (c >= 'a' && c <= 'f')
            value |= c - 'a' + 10;
        else
            return -1;
    }
    return value;
}

// A normal byte-level token's bytes. Characters outside the byte alphabet (which a
// well-formed vocabulary never has) are kept as they are, like Hugging Face's ByteLevel
// decoder; llama.cpp writes "[UNK_BYTE_...]" markers there instead.
std::string byte_level_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t start = pos;
        const int64_t cp = next_code_point(text, &pos);
        const int byte = cp < 0 ? -1 : unicode_to_byte(static_cast<uint32_t>(cp));
        if (byte >= 0)
            out.push_back(static_cast<char>(byte));
        else
            out.append(text.substr(start, pos - start));
    }
    return out;
}

std::string spm_unescape(std::string_view text) {
    static constexpr std::string_view kSpace = "▁";  // U+2581 ▁
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (text.substr(i, kSpace.size()) == kSpace) {
            out.push_back(' ');
            i += kSpace.size();
        } else {
            out.push_back(text[i++]);
        }
    }
    return out;
}

std::string make_piece(const Vocab& v, TokenId id) {
    const std::string& text = v.texts[id];
    switch (v.attrs[id]) {
        case TokenAttr::Control:
        case TokenAttr::Unknown:
        case TokenAttr::UserDefined:
            return text;
        case TokenAttr::Normal:
            return v.kind == TokenizerKind::Bpe ? byte_level_decode(text) : spm_unescape(text);
        case TokenAttr::Byte: {
            const int byte = parse_byte_token(text);
            return byte < 0 ? text : std::string(1, static_cast<char>(byte));
        }
        case TokenAttr::Unused:
        case TokenAttr::Undefined:
            break;
    }
    return {};
}

Result<void> read_tokens(const gguf::GgufFile& file, Vocab& v) {
    const auto array = file.get_array(kTokens);
    if (!array) {
        return make_error(file.find(kTokens) ? std::string(kTokens) + " is not an array"
                                             : std::string(kTokens) + " is missing");
    }
    auto strings = array->strings();
    if (!strings) return make_error(std::string(kTokens) + " is not an array of strings");
    if (strings->empty()) return make_error(std::string(kTokens) + " is empty");
    if (strings->size() > static_cast<size_t>(std::numeric_limits<TokenId>::max()))
        return make_error(std::string(kTokens) + " has too many tokens");
    const size_t n = strings->size();
    v.texts.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // Texts are kept whole, NUL bytes included; llama.cpp reads them as C strings and
        // cuts them at the first NUL (no real vocabulary has one inside a token).
        if ((*strings)[i].empty()) {
            // llama.cpp renames empty tokens so that every text maps to an id.
            hearth::log::get("tokenizer")->warn("{}[{}] is empty", kTokens, i);
            v.texts.push_back("[EMPTY_" + std::to_string(i) + "]");
        } else {
            v.texts.emplace_back((*strings)[i]);
        }
    }
    v.ids.reserve(n);
    for (size_t i = 0; i < n; ++i) v.ids[v.texts[i]] = static_cast<TokenId>(i);

    v.attrs.assign(n, TokenAttr::Normal);
    if (file.find(kTokenType)) {
        const auto types_array = file.get_array(kTokenType);
        auto types = types_array ? types_array->i32s() : std::nullopt;
        if (!types) return make_error(std::string(kTokenType) + " is not an array of integers");
        if (types->size() != n)
            return make_error(std::string(kTokenType) + " has " + std::to_string(types->size()) +
                              " entries for " + std::to_string(n) + " tokens");
        for (size_t i = 0; i < n; ++i) v.attrs[i] = attr_from_type((*types)[i]);
    }

    v.scores.assign(n, 0.0f);
    if (file.find(kScores)) {
        const auto scores_array = file.get_array(kScores);
        auto scores = scores_array ? scores_array->f32s() : std::nullopt;
        if (!scores) return make_error(std::string(kScores) + " is not an array of numbers");
        if (scores->size() != n)
            return make_error(std::string(kScores) + " has " + std::to_string(scores->size()) +
                              " entries for " + std::to_string(n) + " tokens");
        v.scores = std::move(*scores);
    } else if (v.kind == TokenizerKind::SentencePiece) {
        // SentencePiece merges are driven by the scores; without them output is garbage.
        return make_error(std::string(kScores) + " is missing (needed by SentencePiece)");
    }
    return {};
}

// llama.cpp's rule by model name (llama_vocab::impl::load): when general.name contains
// "phi-3" or "phi3" (case-insensitive), every special token except <unk>, <s> and
// <|endoftext|> swallows the whitespace that follows it in the text, </s> too. So
// "<|user|>\nHi" is <|user|> ▁Hi there. Only the name decides: files named otherwise
// ("Phi 3 Mini 4k Instruct") keep the whitespace, in llama.cpp and here.
void apply_phi3_rstrip(const gguf::GgufFile& file, Vocab& v) {
    const std::optional<std::string_view> name = file.get_string("general.name");
    if (!name) return;
    std::string lower(*name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
    if (lower.find("phi-3") == std::string::npos && lower.find("phi3") == std::string::npos) return;
    v.rstrip.assign(v.texts.size(), false);
    for (const TokenId id : v.specials) v.rstrip[static_cast<size_t>(id)] = true;
    const auto set = [&](std::string_view text, bool value) {
        if (const TokenId id = v.find(text); id >= 0) v.rstrip[static_cast<size_t>(id)] = value;
    };
    set("</s>", true);
    for (const std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, false);
}

}  // namespace

Result<void> load_vocab(const gguf::GgufFile& file, Vocab& v) {
    if (auto r = read_tokens(file, v); !r) return r;

    const bool spm = v.kind == TokenizerKind::SentencePiece;
    // llama.cpp's defaults when the keys are absent: Llama-2 ids for SentencePiece.
    v.bos = spm ? 1 : -1;
    v.eos = spm ? 2 : -1;
    v.unk = spm ? 0 : -1;
    if (spm) {
        v.add_bos = true;
        v.add_space_prefix = true;
    }
    struct IdKey {
        std::string_view key;
        TokenId* id;
        bool strict;
    };
    const IdKey id_keys[] = {
        {"tokenizer.ggml.bos_token_id", &v.bos, true},
        {"tokenizer.ggml.eos_token_id", &v.eos, true},
        {"tokenizer.ggml.eot_token_id", &v.eot, true},
        {"tokenizer.ggml.eom_token_id", &v.eom, true},
        {"tokenizer.ggml.unknown_token_id", &v.unk, true},
        // Some converters write a padding id one past the vocabulary; nothing uses it.
        {"tokenizer.ggml.padding_token_id", &v.pad, false},
    };
    for (const IdKey& k : id_keys)
        if (auto r = read_token_id(file, k.key, v, k.strict, *k.id); !r) return r;
    const bool add_bos_default = v.add_bos;
    if (auto r = read_flag(file, "tokenizer.ggml.add_bos_token", v.add_bos); !r) return r;
    if (auto r = read_flag(file, "tokenizer.ggml.add_space_prefix", v.add_space_prefix); !r)
        return r;
    if (v.add_bos && v.bos < 0) {
        if (v.add_bos != add_bos_default || file.find("tokenizer.ggml.add_bos_token"))
            return make_error("tokenizer.ggml.add_bos_token is true but there is no BOS token");
        v.add_bos = false;  // only a family default asked for it
    }

    if (auto r = detect_end_of_generation(file, v); !r) return r;

    for (TokenId id = 0; id < static_cast<TokenId>(v.texts.size()); ++id) {
        const TokenAttr a = v.attrs[id];
        if (a == TokenAttr::Control || a == TokenAttr::UserDefined || a == TokenAttr::Unknown)
            v.specials.push_back(id);
    }
    // Longest first; ids break ties so the order is the same on every platform.
    std::stable_sort(v.specials.begin(), v.specials.end(),
                     [&](TokenId a, TokenId b) { return v.texts[a].size() > v.texts[b].size(); });

    apply_phi3_rstrip(file, v);

    v.pieces.reserve(v.texts.size());
    for (TokenId id = 0; id < static_cast<TokenId>(v.texts.size()); ++id)
        v.pieces.push_back(make_piece(v, id));
    return {};
}

}  // namespace hearth::tok
