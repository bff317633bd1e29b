#include "tokenizer/bpe.h"

#include <algorithm>
#include <functional>

#include "common/log.h"
#include "gguf/gguf_file.h"
#include "tokenizer/utf8.h"

namespace hearth::tok {
namespace {

constexpr std::string_view kMerges = "tokenizer.ggml.merges";

struct Symbol {
    TokenId id;      // -1: a character the vocabulary lacks; -2: merged away
    uint32_t begin;  // byte range in the piece
    uint32_t end;
    int32_t prev;
    int32_t next;
};

struct Candidate {
    int32_t rank;
    int32_t left;  // symbol indices
    int32_t right;
    TokenId left_id;  // ids when queued; a changed id means the pair is stale
    TokenId right_id;
    TokenId result;
    // Lowest rank first, then leftmost, like llama.cpp's llm_bigram_bpe comparator.
    bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : left > o.left;
    }
};

constexpr size_t kKeepScratch = 1 << 16;  // symbols a pooled scratch keeps at most
constexpr size_t kPooledScratches = 8;    // idle scratches kept (threads encoding at once)

}  // namespace

struct BpeTokenizer::Scratch {
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
    std::string word;
};

BpeTokenizer::~BpeTokenizer() = default;

std::unique_ptr<BpeTokenizer::Scratch> BpeTokenizer::take_scratch() const {
    {
        const std::lock_guard lock(scratch_mutex_);
        if (!scratch_pool_.empty()) {
            std::unique_ptr<Scratch> s = std::move(scratch_pool_.back());
            scratch_pool_.pop_back();
            return s;
        }
    }
    return std::make_unique<Scratch>();
}

void BpeTokenizer::return_scratch(std::unique_ptr<Scratch> s) const {
    // A huge piece (a pasted blob without spaces) must not keep its memory.
    if (s->symbols.capacity() > kKeepScratch) {
        s->symbols = {};
        s->heap = {};
    }
    const std::lock_guard lock(scratch_mutex_);
    if (scratch_pool_.size() < kPooledScratches) scratch_pool_.push_back(std::move(s));
}

BpeTokenizer::MergeTable::MergeTable(size_t count) {
    size_t size = 16;
    while (size < count * 2) size *= 2;  // load factor <= 0.5
    slots_.resize(size);
    mask_ = size - 1;
}

void BpeTokenizer::MergeTable::insert(TokenId left, TokenId right, int32_t rank, TokenId result) {
    const uint64_t key = pair_key(left, right);
    for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
        Entry& e = slots_[i];
        if (e.key == key) return;
        if (e.key == kEmpty) {
            e = {key, rank, result};
            return;
        }
    }
}

BpeTokenizer::BpeTokenizer(std::unique_ptr<Vocab> vocab, PreTokenizer pre, MergeTable merges)
    : Tokenizer(TokenizerKind::Bpe, std::move(vocab)),
      pre_(std::move(pre)),
      merges_(std::move(merges)) {
    for (int b = 0; b < 256; ++b)
        byte_ids_[static_cast<size_t>(b)] =
            this->vocab().find(byte_to_unicode(static_cast<unsigned char>(b)));
}

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::create(const gguf::GgufFile& file) {
    auto vocab = std::make_unique<Vocab>();
    vocab->kind = TokenizerKind::Bpe;

    const gguf::Value* pre_value = file.find("tokenizer.ggml.pre");
    std::string_view pre_name;
    if (pre_value) {
        const auto s = pre_value->as_string();
        if (!s) return make_error("tokenizer.ggml.pre is not a string");
        pre_name = *s;
    }
    const PreTokenizerSpec* spec = find_pre_tokenizer(pre_name);
    if (!spec) {
        // llama.cpp refuses such files; the default split is close enough to be usable.
        hearth::log::get("tokenizer")
            ->warn(
                "unknown pre-tokenizer '{}' (tokenizer.ggml.pre); using 'default', so "
                "tokenization may differ from the model's own",
                pre_name);
        spec = &default_pre_tokenizer();
    }
    vocab->pre_name = spec->name;
    vocab->clean_spaces = spec->clean_spaces;
    vocab->ignore_merges = spec->ignore_merges;
    vocab->add_bos = spec->add_bos;
    if (auto r = load_vocab(file, *vocab); !r) return r.error();

    auto pre = PreTokenizer::create(*spec);
    if (!pre) return pre.error();

    const auto array = file.get_array(kMerges);
    if (!array) {
        return make_error(file.find(kMerges) ? std::string(kMerges) + " is not an array"
                                             : std::string(kMerges) + " is missing");
    }
    const auto merges = array->strings();
    if (!merges) return make_error(std::string(kMerges) + " is not an array of strings");
    MergeTable table(merges->size());
    for (size_t i = 0; i < merges->size(); ++i) {
        const std::string_view m = (*merges)[i];
        const auto where = [&] {
            return std::string(kMerges) + "[" + std::to_string(i) + "] '" + std::string(m) + "'";
        };
        // llama.cpp splits at the first space after the first byte.
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
        if (space == std::string_view::npos) return make_error(where() + " is not 'a b'");
        const std::string_view a = m.substr(0, space);
        const std::string_view b = m.substr(space + 1);
        const TokenId left = vocab->find(a);
        const TokenId right = vocab->find(b);
        const TokenId result = vocab->find(std::string(a) + std::string(b));
        if (left < 0 || right < 0 || result < 0) {
            const std::string missing = left < 0    ? std::string(a)
                                        : right < 0 ? std::string(b)
                                                    : std::string(a) + std::string(b);
            return make_error(where() + " names '" + missing +
                              "', which is not in tokenizer.ggml.tokens");
        }
        table.insert(left, right, static_cast<int32_t>(i), result);
    }
    return std::unique_ptr<Tokenizer>(
        new BpeTokenizer(std::move(vocab), std::move(*pre), std::move(table)));
}

void BpeTokenizer::encode_text(std::string_view text, bool /*follows_special*/,
                               std::vector<TokenId>& out) const {
    // llama.cpp works on code points: malformed bytes become U+FFFD before splitting.
    const SanitizedText clean = sanitize_utf8(text);
    const std::string_view bytes = clean.text;
    std::unique_ptr<Scratch> s = take_scratch();
    for (const Piece& piece : pre_.split(clean.match))
        encode_word(bytes.substr(piece.begin, piece.end - piece.begin), out, *s);
    return_scratch(std::move(s));
}

void BpeTokenizer::encode_word(std::string_view piece, std::vector<TokenId>& out,
                               Scratch& s) const {
    const Vocab& v = vocab();
    if (v.ignore_merges) {
        // llama3: a piece that is a whole token is taken as is, merges or not.
        s.word.clear();
        for (const char c : piece) s.word += byte_to_unicode(static_cast<unsigned char>(c));
        if (const TokenId id = v.find(s.word); id >= 0) {
            out.push_back(id);
            return;
        }
    }

    // Each byte is one character of the byte-level alphabet, hence one initial symbol.
    std::vector<Symbol>& symbols = s.symbols;
    symbols.clear();
    for (uint32_t i = 0; i < piece.size(); ++i) {
        const auto index = static_cast<int32_t>(i);
        symbols.push_back(
            {byte_ids_[static_cast<unsigned char>(piece[i])], i, i + 1, index - 1, index + 1});
    }
    if (symbols.empty()) return;
    symbols.back().next = -1;

    std::vector<Candidate>& heap = s.heap;  // min-heap on (rank, left)
    heap.clear();
    const auto try_pair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const TokenId a = symbols[left].id;
        const TokenId b = symbols[right].id;
        if (a < 0 || b < 0) return;
        const MergeTable::Entry* m = merges_.find(a, b);
        if (!m) return;
        heap.push_back({m->rank, left, right, a, b, m->result});
        std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) try_pair(i, i + 1);

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
        const Candidate c = heap.back();
        heap.pop_back();
        Symbol& left = symbols[c.left];
        // Stale when either side was merged since (its id changed or it is gone).
        if (left.id != c.left_id || left.next != c.right || symbols[c.right].id != c.right_id)
            continue;
        Symbol& right = symbols[c.right];
        left.id = c.result;
        left.end = right.end;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        right.id = -2;
        right.next = -1;
        try_pair(left.prev, c.left);
        try_pair(c.left, left.next);
    }

    for (int32_t i = 0; i >= 0; i = symbols[i].next) {
        const Symbol& sym = symbols[i];
        if (sym.id >= 0) {
            out.push_back(sym.id);
            continue;
        }
        // A byte whose byte-level character is missing from the vocabulary (an unmerged
        // symbol is always a single byte): llama.cpp looks each byte of the character's
        // UTF-8 form up as a one-byte token and skips those it cannot find.
        for (const char c : byte_to_unicode(static_cast<unsigned char>(piece[sym.begin])))
            if (const TokenId id = v.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
}

}  // namespace hearth::tok
