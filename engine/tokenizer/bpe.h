// Byte-level BPE (tokenizer.ggml.model = "gpt2"): pre-tokenizer regexes split the text,
// each piece is mapped to GPT-2's byte alphabet and merged by rank.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace hearth::tok {

class BpeTokenizer final : public Tokenizer {
  public:
    // Reads tokenizer.ggml.pre and .merges, then the common vocabulary.
    static Result<std::unique_ptr<Tokenizer>> create(const gguf::GgufFile& file);
    ~BpeTokenizer() override;

  protected:
    void encode_text(std::string_view text, bool follows_special,
                     std::vector<TokenId>& out) const override;

  private:
    // (left id, right id) -> (rank, merged id) in one flat open-addressing table: merge
    // lookups are the hot loop of BPE, where std::unordered_map's node-per-entry layout
    // costs a cache miss per probe.
    class MergeTable {
      public:
        struct Entry {
            uint64_t key = kEmpty;
            int32_t rank = 0;
            TokenId result = 0;
        };
        static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are below 2^31

        explicit MergeTable(size_t count);
        // Keeps the first rank of a pair, like llama.cpp's emplace.
        void insert(TokenId left, TokenId right, int32_t rank, TokenId result);
        const Entry* find(TokenId left, TokenId right) const {
            const uint64_t key = pair_key(left, right);
            for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
                const Entry& e = slots_[i];
                if (e.key == key) return &e;
                if (e.key == kEmpty) return nullptr;
            }
        }

      private:
        static uint64_t pair_key(TokenId left, TokenId right) {
            return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
                   static_cast<uint32_t>(right);
        }
        static uint64_t mix(uint64_t k) {  // murmur3's finaliser
            k ^= k >> 33;
            k *= 0xFF51AFD7ED558CCDull;
            k ^= k >> 33;
            k *= 0xC4CEB9FE1A85EC53ull;
            return k ^ (k >> 33);
        }
        std::vector<Entry> slots_;
        size_t mask_ = 0;
    };

    BpeTokenizer(std::unique_ptr<Vocab> vocab, PreTokenizer pre, MergeTable merges);

    // Working memory of one encode_text call, reused by later calls so that encoding
    // allocates nothing once warm. Kept in a pool on the tokenizer rather than per thread:
    // a thread_local with a destructor crashed at thread exit in the MinGW build (its
    // TLS storage is freed before thread_local destructors run), and the server's
    // connection threads come and go.
    struct Scratch;
    std::unique_ptr<Scratch> take_scratch() const;
    void return_scratch(std::unique_ptr<Scratch> s) const;

    // Merges one piece (raw bytes of sanitized text) and appends its tokens.
    void encode_word(std::string_view piece, std::vector<TokenId>& out, Scratch& s) const;

    PreTokenizer pre_;
    MergeTable merges_;
    std::array<TokenId, 256> byte_ids_;  // token of each byte's byte-level character, or -1
    mutable std::mutex scratch_mutex_;
    mutable std::vector<std::unique_ptr<Scratch>> scratch_pool_;  // idle, at most a few
};

}  // namespace hearth::tok
