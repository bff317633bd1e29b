#include "tokenizer/spm.h"

#include <queue>

#include "tokenizer/utf8.h"

namespace hearth::tok {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 ▁

struct Symbol {
    size_t begin;  // byte range in the escaped text
    size_t end;    // begin == end: merged into its left neighbour
    int32_t prev;
    int32_t next;
};

struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    size_t size;  // bytes of the pair when queued; a different sum means it is stale
    // Highest score first, then leftmost (llama.cpp's llm_bigram_spm comparator).
    bool operator<(const Candidate& o) const {
        return score != o.score ? score < o.score : left > o.left;
    }
};

}  // namespace

SpmTokenizer::SpmTokenizer(std::unique_ptr<Vocab> vocab)
    : Tokenizer(TokenizerKind::SentencePiece, std::move(vocab)) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
        const std::string name = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
        TokenId id = this->vocab().find(name);
        // llama.cpp's byte_to_token falls back to the byte itself as a token.
        if (id < 0) id = this->vocab().find(std::string(1, static_cast<char>(b)));
        byte_tokens_[b] = id;
    }
}

Result<std::unique_ptr<Tokenizer>> SpmTokenizer::create(const gguf::GgufFile& file) {
    auto vocab = std::make_unique<Vocab>();
    vocab->kind = TokenizerKind::SentencePiece;
    vocab->pre_name = "spm";
    vocab->clean_spaces = false;
    if (auto r = load_vocab(file, *vocab); !r) return r.error();
    return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(vocab)));
}

void SpmTokenizer::push_byte(unsigned char byte, std::vector<TokenId>& out) const {
    // llama.cpp throws here (no byte token at all); the unknown token is the sane stand-in.
    const TokenId id = byte_tokens_[byte] >= 0 ? byte_tokens_[byte] : vocab().unk;
    if (id >= 0) out.push_back(id);
}

void SpmTokenizer::encode_text(std::string_view text, bool follows_special,
                               std::vector<TokenId>& out) const {
    const Vocab& v = vocab();
    // A space goes in front of the first run and of every run after a special token.
    std::string escaped;
    escaped.reserve(text.size() + 8);
    if (v.add_space_prefix && follows_special) escaped += kSpaceMark;
    for (const char c : text) {
        if (c == ' ')
            escaped += kSpaceMark;
        else
            escaped += c;
    }

    // One symbol per character, its length read from the lead byte alone and not
    // validated (as llama.cpp does), so malformed input still splits into byte ranges.
    std::vector<Symbol> symbols;
    symbols.reserve(escaped.size());
    for (size_t pos = 0; pos < escaped.size();) {
        const size_t len = std::min(utf8_sequence_length(static_cast<unsigned char>(escaped[pos])),
                                    escaped.size() - pos);
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({pos, pos + len, index - 1, index + 1});
        pos += len;
    }
    if (symbols.empty()) return;
    symbols.back().next = -1;

    const std::string_view s = escaped;
    std::priority_queue<Candidate> queue;
    const auto try_pair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const size_t begin = symbols[left].begin;
        const size_t size = symbols[right].end - begin;
        const TokenId id = v.find(s.substr(begin, size));
        if (id < 0) return;
        queue.push({v.scores[id], left, right, size});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) try_pair(i, i + 1);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[c.left];
        Symbol& right = symbols[c.right];
        const size_t left_size = left.end - left.begin;
        const size_t right_size = right.end - right.begin;
        if (left_size == 0 || right_size == 0 || left_size + right_size != c.size) continue;
        left.end = right.end;
        right.end = right.begin;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        try_pair(left.prev, c.left);
        try_pair(c.left, left.next);
    }

    // Every merged symbol is a token (a pair is queued only if it is one), so only
    // single characters can be missing; they become byte tokens. llama.cpp's rev_merge
    // re-segmentation therefore never applies.
    for (int32_t i = 0; i >= 0; i = symbols[i].next) {
        const std::string_view piece =
            s.substr(symbols[i].begin, symbols[i].end - symbols[i].begin);
        if (const TokenId id = v.find(piece); id >= 0) {
            out.push_back(id);
            continue;
        }
        for (const char c : piece) push_byte(static_cast<unsigned char>(c), out);
    }
}

}  // namespace hearth::tok
