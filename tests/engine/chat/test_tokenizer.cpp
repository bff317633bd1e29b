#include "test_tokenizer.h"

#include <algorithm>
#include <stdexcept>

namespace hearth::test {

namespace {

// Multi-byte "merges": words the chat formats and the tests use a lot, so a piece
// boundary inside one of them gives different ids than tokenizing the whole text.
const std::vector<std::string>& words() {
    static const std::vector<std::string> w = {
        "\n\n", "  ",    " [",   "INST", "/INST", "user", "model", "system", "assistant",
        "SYS",  "Hello", " the", " you", "ing",   " is",  "<|",    "|>",     "<<",
        ">>",   " a",    "im",   "end",  "start", "turn", "of",    " and",
    };
    return w;
}

// piece: the bytes the token stands for. SentencePiece vocabularies store spaces as
// U+2581 in the token text, as real ones do.
TokenId add(tok::Vocab& v, const std::string& piece, TokenAttr attr, bool escape_spaces) {
    const auto id = static_cast<TokenId>(v.texts.size());
    std::string text;
    for (char c : piece) text += c == ' ' && escape_spaces ? "\xE2\x96\x81" : std::string(1, c);
    v.ids[text] = id;
    v.pieces.push_back(piece);
    v.texts.push_back(std::move(text));
    v.attrs.push_back(attr);
    v.scores.push_back(0.0f);
    return id;
}

constexpr TokenId kFirstWord = 256;  // after the byte tokens

std::unique_ptr<tok::Vocab> build_vocab(const TestTokenizer::Options& o) {
    auto vocab = std::make_unique<tok::Vocab>();
    tok::Vocab& v = *vocab;
    v.kind = o.space_prefix ? TokenizerKind::SentencePiece : TokenizerKind::Bpe;
    v.pre_name = o.space_prefix ? "spm" : "default";
    const bool spm = o.space_prefix;
    for (int byte = 0; byte < 256; ++byte)
        add(v, std::string(1, static_cast<char>(byte)), TokenAttr::Byte, spm);
    for (const std::string& w : words()) add(v, w, TokenAttr::Normal, spm);
    const auto first_control = static_cast<TokenId>(v.texts.size());
    for (const std::string& c : o.control)
        v.specials.push_back(add(v, c, TokenAttr::Control, false));
    std::stable_sort(v.specials.begin(), v.specials.end(), [&v](TokenId x, TokenId y) {
        return v.texts[static_cast<size_t>(x)].size() > v.texts[static_cast<size_t>(y)].size();
    });
    const auto control = [&](const std::string& text) {
        const TokenId id = v.find(text);
        if (id < first_control) throw std::invalid_argument("not a control token: " + text);
        return id;
    };
    if (!o.bos.empty()) v.bos = control(o.bos);
    if (!o.eos.empty()) v.eos = control(o.eos);
    for (const std::string& t : o.end_of_generation) v.eog.push_back(control(t));
    std::sort(v.eog.begin(), v.eog.end());
    v.eog.erase(std::unique(v.eog.begin(), v.eog.end()), v.eog.end());
    v.add_bos = o.add_bos;
    v.add_space_prefix = o.space_prefix;
    return vocab;
}

}  // namespace

TestTokenizer::TestTokenizer(const Options& options)
    : TestTokenizer(options.space_prefix ? TokenizerKind::SentencePiece : TokenizerKind::Bpe,
                    build_vocab(options)) {}

TestTokenizer::TestTokenizer(TokenizerKind kind, std::unique_ptr<tok::Vocab> vocab)
    : Tokenizer(kind, std::move(vocab)),
      first_word_(kFirstWord),
      first_control_(kFirstWord + static_cast<TokenId>(words().size())) {}

std::vector<std::string> TestTokenizer::all_family_controls() {
    return {"<|im_start|>",
            "<|im_end|>",
            "<|im_sep|>",
            "<|endoftext|>",
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
            "<bos>",
            "<eos>",
            "<start_of_turn>",
            "<end_of_turn>",
            "<|system|>",
            "<|user|>",
            "<|assistant|>",
            "<|end|>",
            "<s>",
            "</s>",
            "[INST]",
            "[/INST]",
            "[SYSTEM_PROMPT]",
            "[/SYSTEM_PROMPT]"};
}

void TestTokenizer::encode_text(std::string_view raw, bool follows_special,
                                std::vector<TokenId>& out) const {
    // As llama.cpp's SentencePiece path: a space before text at the start or after a
    // special token.
    std::string text = add_space_prefix() && follows_special ? " " : "";
    text += raw;
    const std::string_view t = text;
    for (size_t at = 0; at < t.size();) {
        TokenId best = static_cast<unsigned char>(t[at]);
        size_t best_len = 1;
        for (TokenId w = first_word_; w < first_control_; ++w) {
            const std::string& s = vocab().pieces[static_cast<size_t>(w)];
            if (s.size() > best_len && t.substr(at, s.size()) == s) {
                best = w;
                best_len = s.size();
            }
        }
        out.push_back(best);
        at += best_len;
    }
}

}  // namespace hearth::test
