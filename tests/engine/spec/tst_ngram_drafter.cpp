// The n-gram drafter (engine/spec/ngram_drafter.h) against a brute-force reference on
// random token streams (the longest suffix of n_max..n_min tokens that occurred before,
// its most recent occurrence, and what followed it), on constructed texts, as the
// sequence grows step by step and when it is replaced.
#include <QTest>

#include <random>

#include "spec/ngram_drafter.h"

using namespace hearth;
using spec::NgramDrafter;
using spec::NgramOptions;

namespace {

// What the drafter must propose: for n from n_max down to n_min, the latest earlier end e
// (e < size) with tokens[e - n, e) equal to the last n tokens; the tokens from e on.
std::vector<int32_t> brute_force(const std::vector<int32_t>& t, NgramOptions o, int32_t max) {
    const auto size = static_cast<int32_t>(t.size());
    for (int32_t n = std::min(o.n_max, size - 1); n >= o.n_min; --n) {
        for (int32_t e = size - 1; e >= n; --e) {
            if (!std::equal(t.begin() + (e - n), t.begin() + e, t.end() - n)) continue;
            const int32_t take = std::min(max, size - e);
            return {t.begin() + e, t.begin() + e + take};
        }
    }
    return {};
}

}  // namespace

class TestNgramDrafter : public QObject {
    Q_OBJECT

  private slots:
    void constructedTexts() {
        NgramDrafter d;
        std::vector<int32_t> out;
        // "A B C D X A B C": the suffix A B C was followed by D X A B C.
        const std::vector<int32_t> copy = {1, 2, 3, 4, 9, 1, 2, 3};
        d.propose(copy, 4, out);
        QCOMPARE(out, (std::vector<int32_t>{4, 9, 1, 2}));
        QCOMPARE(d.last_match(), 3);
        d.propose(copy, 2, out);
        QCOMPARE(out, (std::vector<int32_t>{4, 9}));
        d.propose(copy, 0, out);
        QVERIFY(out.empty());

        // Longest match first: "7 8" occurs twice, the longer "5 7 8" once (earlier).
        NgramDrafter longest;
        const std::vector<int32_t> t = {5, 7, 8, 1, 6, 7, 8, 2, 5, 7, 8};
        longest.propose(t, 3, out);
        QCOMPARE(out, (std::vector<int32_t>{1, 6, 7}));
        QCOMPARE(longest.last_match(), 3);

        // The most recent occurrence among equals.
        NgramDrafter recent;
        const std::vector<int32_t> r = {4, 5, 1, 9, 4, 5, 2, 9, 4, 5};
        recent.propose(r, 1, out);
        QCOMPARE(out, (std::vector<int32_t>{2}));

        // A repeating pattern: the continuation runs into the present.
        NgramDrafter loop;
        loop.propose(std::vector<int32_t>{3, 4, 3, 4}, 5, out);
        QCOMPARE(out, (std::vector<int32_t>{3, 4}));

        // Nothing repeats: no draft; too short for n_min: no draft.
        NgramDrafter none;
        none.propose(std::vector<int32_t>{1, 2, 3, 4, 5}, 4, out);
        QVERIFY(out.empty());
        QCOMPARE(none.last_match(), 0);
        none.propose(std::vector<int32_t>{1}, 4, out);
        QVERIFY(out.empty());
    }

    // Random streams over a small vocabulary (many repeats, many collisions of short
    // n-grams), grown a few tokens at a time as a conversation is, sometimes replaced by
    // another stream: every proposal equals the brute force's.
    void matchesBruteForce() {
        std::mt19937 rng(20261207);
        int proposals = 0, drafted = 0;
        for (int trial = 0; trial < 60; ++trial) {
            NgramOptions o;
            o.n_min = 1 + trial % 3;
            o.n_max = o.n_min + trial % 5;
            NgramDrafter d(o);
            std::uniform_int_distribution<int32_t> token(0, 2 + trial % 6);
            std::vector<int32_t> t;
            std::vector<int32_t> out;
            for (int step = 0; step < 80; ++step) {
                if (step == 50 && trial % 2 == 0) {  // a new turn that edits earlier text
                    t.resize(t.size() / 2);
                    t.push_back(token(rng) + 100);
                }
                const int grow = 1 + static_cast<int>(rng() % 4);
                for (int i = 0; i < grow; ++i) t.push_back(token(rng));
                const auto max = static_cast<int32_t>(rng() % 9);
                d.propose(t, max, out);
                QCOMPARE(out, brute_force(t, o, max));
                ++proposals;
                drafted += static_cast<int>(out.size());
            }
        }
        QVERIFY(drafted > proposals);  // the streams repeat enough to draft most steps
    }
};

QTEST_GUILESS_MAIN(TestNgramDrafter)
#include "tst_ngram_drafter.moc"
