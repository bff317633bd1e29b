// Deterministic, varied chat text for the search benchmark: a Zipf-distributed vocabulary
// (real common English words at the head, generated words in the long tail, as in real
// text), sentences of varied length, punctuation, occasional code and numbers. Uses its own
// PRNG and arithmetic so the same seed gives the same text on every platform.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace hearth::store::bench {

class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

  private:
    std::uint64_t state_;
};

class TextGenerator {
  public:
    explicit TextGenerator(std::uint64_t seed, int vocabulary = 30000) : rng_(seed) {
        static const char* const kCommon[] = {
            "the",      "of",      "and",    "to",      "a",       "in",       "is",
            "you",      "that",    "it",     "for",     "on",      "with",     "as",
            "are",      "this",    "be",     "at",      "or",      "have",     "from",
            "not",      "by",      "but",    "what",    "can",     "an",       "your",
            "if",       "all",     "will",   "we",      "there",   "more",     "one",
            "so",       "about",   "which",  "when",    "use",     "how",      "do",
            "some",     "like",    "time",   "make",    "than",    "first",    "been",
            "its",      "who",     "now",    "people",  "my",      "made",     "over",
            "did",      "down",    "only",   "way",     "find",    "may",      "water",
            "long",     "little",  "very",   "after",   "words",   "called",   "just",
            "where",    "most",    "know",   "model",   "data",    "file",     "code",
            "function", "value",   "error",  "memory",  "example", "using",    "question",
            "answer",   "because", "should", "would",   "could",   "python",   "string",
            "list",     "number",  "system", "problem", "help",    "thanks",   "please",
            "explain",  "simple",  "recipe", "garden",  "travel",  "history",  "music",
            "weather",  "coffee",  "book",   "write",   "story",   "email",    "meeting",
            "project",  "budget",  "review", "design",  "server",  "database", "query",
            "token",    "cache",   "thread", "window",  "button",  "color",    "image",
            "video",    "network"};
        for (const char* w : kCommon) words_.emplace_back(w);
        // The long tail: pronounceable words from syllables, all distinct.
        static const char* const kOnset[] = {"b", "c", "d", "f", "g", "k",  "l",  "m",  "n",  "p",
                                             "r", "s", "t", "v", "z", "br", "ch", "st", "tr", "pl"};
        static const char* const kVowel[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou"};
        static const char* const kCoda[] = {"", "n", "r", "s", "t", "l", "m", "x", "nd", "st"};
        SplitMix64 names(seed ^ 0x5eedULL);
        std::vector<std::string> seen;
        while (static_cast<int>(words_.size()) < vocabulary) {
            std::string w;
            for (int s = 0, n = 2 + names.below(3); s < n; ++s)
                w += std::string(kOnset[names.below(20)]) + kVowel[names.below(8)] +
                     kCoda[names.below(10)];
            words_.push_back(std::move(w));
        }
        std::sort(words_.begin() + static_cast<std::ptrdiff_t>(std::size(kCommon)), words_.end());
        words_.erase(std::unique(words_.begin(), words_.end()), words_.end());
        // Shuffle the tail so rank does not follow alphabetical order.
        for (std::size_t i = words_.size() - 1; i > std::size(kCommon); --i)
            std::swap(words_[i],
                      words_[std::size(kCommon) + names.next() % (i - std::size(kCommon) + 1)]);
        // Zipf (s = 1.07) cumulative weights by rank.
        double total = 0;
        cdf_.reserve(words_.size());
        for (std::size_t r = 1; r <= words_.size(); ++r) {
            total += 1.0 / std::pow(static_cast<double>(r), 1.07);
            cdf_.push_back(total);
        }
        for (double& c : cdf_) c /= total;
    }

    const std::vector<std::string>& ranked_words() const { return words_; }
    SplitMix64& rng() { return rng_; }

    const std::string& word() {
        const double u = rng_.unit();
        const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
        return words_[static_cast<std::size_t>(std::min<std::ptrdiff_t>(
            it - cdf_.begin(), static_cast<std::ptrdiff_t>(words_.size()) - 1))];
    }

    std::string sentence(int min_words, int max_words) {
        std::string s;
        const int n = min_words + rng_.below(max_words - min_words + 1);
        for (int i = 0; i < n; ++i) {
            std::string w = word();
            if (i == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
            s += w;
            if (i + 1 < n) s += rng_.below(12) == 0 ? ", " : " ";
        }
        static const char* const kEnd[] = {".", ".", ".", "?", "!", ":"};
        return s + kEnd[rng_.below(6)];
    }

    // A chat message: users write a sentence or three, assistants write paragraphs,
    // sometimes lists, numbers or a code block.
    std::string message(bool assistant) {
        std::string out;
        const int sentences = assistant ? 2 + rng_.below(14) : 1 + rng_.below(3);
        for (int i = 0; i < sentences; ++i) {
            if (assistant && rng_.below(9) == 0) out += "\n\n";
            if (assistant && rng_.below(15) == 0) out += "\n- ";
            out += sentence(3, assistant ? 24 : 16);
            if (rng_.below(20) == 0) out += " (" + std::to_string(rng_.below(10000)) + ")";
            out += ' ';
        }
        if (assistant && rng_.below(12) == 0)
            out += "\n```python\ndef " + word() + "(" + word() + "):\n    return " + word() +
                   " * " + std::to_string(rng_.below(100)) + "\n```\n";
        return out;
    }

  private:
    SplitMix64 rng_;
    std::vector<std::string> words_;
    std::vector<double> cdf_;
};

}  // namespace hearth::store::bench
