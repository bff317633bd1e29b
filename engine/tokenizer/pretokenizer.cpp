#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <utility>

namespace hearth::tok {
namespace {

// The regexes, verbatim from llama.cpp's llm_tokenizer_bpe (tokenizer.json originals
// with the case-insensitive group spelled out, which PCRE2 would accept either way).
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kDigit = R"(\p{N})";

// llama.cpp's sets. The smollm family isolates every digit first, so " 42" becomes
// " ", "4", "2": the space cannot join the number in the second pass.
PreTokenizerSpec smollm(std::string_view name, bool clean) {
    return {name, {kDigit, kGpt2}, clean, false, false};
}
PreTokenizerSpec gpt2(std::string_view name, bool clean) {
    return {name, {kGpt2}, clean, false, false};
}
PreTokenizerSpec llama3(std::string_view name, bool ignore_merges, bool add_bos) {
    return {name, {kLlama3}, true, ignore_merges, add_bos};
}
PreTokenizerSpec qwen2(std::string_view name, bool clean) {
    return {name, {kQwen2}, clean, false, false};
}

struct NamedSpec {
    std::string_view pre;  // tokenizer.ggml.pre value
    PreTokenizerSpec spec;
};

// The names whose behaviour is fully one of the families above (same regexes; the flags
// as llama.cpp's llama_vocab::impl::load sets them). Others fall back to "default".
const std::vector<NamedSpec>& table() {
    static const std::vector<NamedSpec> specs = {
        {"smollm", smollm("smollm", false)},
        {"command-r", smollm("smollm", false)},
        {"starcoder", smollm("smollm", true)},
        {"refact", smollm("smollm", true)},
        {"codeshell", smollm("smollm", true)},
        {"exaone", smollm("smollm", true)},
        {"minerva-7b", smollm("smollm", true)},
        {"gpt-2", gpt2("gpt-2", true)},
        {"phi-2", gpt2("gpt-2", true)},
        {"mpt", gpt2("gpt-2", true)},
        {"olmo", gpt2("gpt-2", true)},
        {"jais", gpt2("gpt-2", true)},
        {"exaone4", gpt2("gpt-2", true)},
        {"gigachat", gpt2("gpt-2", true)},
        {"trillion", gpt2("gpt-2", false)},
        {"llama3", llama3("llama3", true, true)},
        {"llama-v3", llama3("llama3", true, true)},
        {"llama-bpe", llama3("llama3", true, true)},
        {"falcon3", llama3("llama3", true, true)},
        {"pixtral", llama3("llama3", true, true)},
        {"dbrx", llama3("llama3", false, false)},
        {"smaug-bpe", llama3("llama3", false, false)},
        {"qwen2", qwen2("qwen2", false)},
        {"deepseek-r1-qwen", qwen2("qwen2", false)},
        {"stablelm2", qwen2("qwen2", true)},
        {"megrez", qwen2("qwen2", true)},
        {"default", default_pre_tokenizer()},
        {"", default_pre_tokenizer()},
    };
    return specs;
}

// llama.cpp's \s (unicode_set_whitespace): like PCRE2's UCP \s without U+180E.
constexpr std::string_view kWhitespace =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

}  // namespace

const PreTokenizerSpec& default_pre_tokenizer() {
    // Punctuation runs first, then GPT-2, then number runs, then ASCII digit triples.
    static const PreTokenizerSpec spec{
        "default",
        {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"},
        true,
        false,
        false};
    return spec;
}

const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre) {
    for (const NamedSpec& named : table())
        if (named.pre == pre) return &named.spec;
    return nullptr;
}

std::string expand_whitespace_classes(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() * 2);
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[++i];
            if (e == 's') {
                out += in_class ? std::string(kWhitespace) : "[" + std::string(kWhitespace) + "]";
            } else if (e == 'S' && !in_class) {
                out += "[^" + std::string(kWhitespace) + "]";
            } else {
                out += c;
                out += e;
            }
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = true;
        } else if (c == ']' && in_class) {
            in_class = false;
        }
        out += c;
    }
    return out;
}

struct PreTokenizer::Code {
    pcre2_code* code = nullptr;
    ~Code() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

Result<PreTokenizer> PreTokenizer::create(const PreTokenizerSpec& spec) {
    PreTokenizer pt;
    for (const std::string_view regex : spec.regexes) {
        const std::string pattern = expand_whitespace_classes(regex);
        int error = 0;
        PCRE2_SIZE error_offset = 0;
        // MATCH_INVALID_UTF: the subject is not validated up front and invalid sequences
        // simply never match, so no input can make matching fail or misbehave.
        auto code = std::make_unique<Code>();
        code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                                   &error_offset, nullptr);
        if (!code->code) {
            std::array<PCRE2_UCHAR, 256> message{};
            pcre2_get_error_message(error, message.data(), message.size());
            return make_error("pre-tokenizer '" + std::string(spec.name) + "': regex " +
                              std::string(regex) + " does not compile at offset " +
                              std::to_string(error_offset) + ": " +
                              reinterpret_cast<const char*>(message.data()));
        }
        // Without JIT (unsupported platform) pcre2_match interprets; same results.
        pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE);
        pt.codes_.push_back(std::move(code));
    }
    return pt;
}

std::vector<Piece> PreTokenizer::split(std::string_view text) const {
    std::vector<Piece> pieces;
    if (text.empty()) return pieces;
    pieces.push_back({0, text.size()});
    const auto* subject_base = reinterpret_cast<PCRE2_SPTR>(text.data());

    std::vector<Piece> next;
    for (const auto& code : codes_) {
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(code->code, nullptr);
        if (!md) break;  // out of memory: keep the coarser split rather than fail
        next.clear();
        next.reserve(pieces.size() * 2);
        for (const Piece& piece : pieces) {
            // The piece is the whole subject, so lookahead cannot see past its end.
            const PCRE2_SPTR subject = subject_base + piece.begin;
            const size_t length = piece.end - piece.begin;
            size_t offset = 0;
            size_t last = 0;
            uint32_t options = 0;
            while (offset < length) {
                int rc = pcre2_match(code->code, subject, length, offset, options, md, nullptr);
                if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
                    // Deep backtracking on a huge run: the interpreter keeps its frames
                    // on the heap, so retry there.
                    options = PCRE2_NO_JIT;
                    continue;
                }
                if (rc < 0) break;  // no further match (or a resource limit): rest is a gap
                const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
                const size_t begin = ov[0];
                const size_t end = ov[1];
                if (end <= begin) {
                    // None of the patterns can match empty; guard against a loop anyway.
                    offset = begin + 1;
                    while (offset < length && (subject[offset] & 0xC0) == 0x80) ++offset;
                    continue;
                }
                if (begin > last) next.push_back({piece.begin + last, piece.begin + begin});
                next.push_back({piece.begin + begin, piece.begin + end});
                last = offset = end;
            }
            if (last < length) next.push_back({piece.begin + last, piece.end});
        }
        pcre2_match_data_free(md);
        pieces.swap(next);
    }
    return pieces;
}

}  // namespace hearth::tok
