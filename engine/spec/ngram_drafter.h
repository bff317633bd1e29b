// Drafting from text already there (prompt lookup): the sequence's last n tokens are
// looked up among its earlier text (the persona's prefix and documents, the conversation,
// the reply so far), and the tokens that followed their most recent earlier occurrence
// are the draft. Longest match first: n from n_max down to n_min, so that a long shared
// context (a line of code being copied with one name changed, a quoted passage) wins
// over a short one that happens to recur.
//
// The index holds, for each n, every n-gram's latest end position; it grows with the
// sequence (O(n_max - n_min + 1) hashes per token) and is rebuilt when the sequence is
// not an extension of what it saw.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "spec/drafter.h"

namespace hearth::spec {

struct NgramOptions {
    int32_t n_min = 2;  // shortest suffix looked up
    int32_t n_max = 8;  // longest
};

class NgramDrafter final : public Drafter {
  public:
    explicit NgramDrafter(NgramOptions options = {});
    void propose(std::span<const int32_t> tokens, int32_t max_tokens,
                 std::vector<int32_t>& out) override;

    // The length of the suffix the last proposal matched (0: none).
    int32_t last_match() const { return last_match_; }

  private:
    // Indexes the n-grams that end before tokens.size() (not the current suffix itself).
    void index(std::span<const int32_t> tokens);
    static uint64_t hash(std::span<const int32_t> gram);

    NgramOptions options_;
    std::vector<int32_t> seen_;  // the tokens indexed so far
    // [n - n_min]: n-gram hash → end position (exclusive) of its latest occurrence.
    std::vector<std::unordered_map<uint64_t, int32_t>> latest_;
    int32_t last_match_ = 0;
};

}  // namespace hearth::spec
