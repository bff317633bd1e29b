// The sampler chain and the streaming text filter, against properties that follow from
// their definitions (seeded determinism, what each filter may keep, UTF-8 and stop
// string boundaries), with fixed seeds.
#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <span>

#include "generation/text_stream.h"
#include "sampling/sampler.h"

using namespace hearth;

namespace {

std::vector<float> random_logits(uint32_t seed, size_t n) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 3.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Temperature 1, no filters: every token drawn with its softmax probability.
SamplingParams unfiltered(uint64_t seed) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

// A history of length i (contents unused with the penalties off): the draw for position i.
std::span<const int32_t> at(size_t i) {
    static const std::vector<int32_t> zeros(20000, 0);
    return std::span(zeros).first(i);
}

// Ids sorted by logit, best first.
std::vector<int32_t> ranking(const std::vector<float>& logits) {
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
        return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)];
    });
    return ids;
}

}  // namespace

class TestSampling : public QObject {
    Q_OBJECT

  private slots:
    void greedyIsArgmaxLowestIdOnTies() {
        Sampler s(SamplingParams::greedy());
        const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
        QCOMPARE(*s.sample(logits, {}), 1);
        QCOMPARE(argmax(logits), 1);
    }

    void invalidLogitsAreErrorsNotSamples() {
        Sampler s(SamplingParams{});
        std::vector<float> logits = random_logits(1, 50);
        logits[7] = NAN;
        auto r = s.sample(logits, {});
        QVERIFY(!r);
        QVERIFY(r.message().find("NaN") != std::string::npos);
        logits[7] = INFINITY;
        QVERIFY(!s.sample(logits, {}));
        // -inf is a mask, not an error.
        logits[7] = -INFINITY;
        QVERIFY(s.sample(logits, {}));
        QVERIFY(!s.sample({}, {}));
    }

    void sameSeedSameTokens() {
        SamplingParams p = unfiltered(1234);
        const auto logits = random_logits(2, 300);
        Sampler a(p), b(p);
        std::vector<int32_t> ta, tb;
        for (size_t i = 0; i < 200; ++i) {
            ta.push_back(*a.sample(logits, at(i)));
            tb.push_back(*b.sample(logits, at(i)));
        }
        QCOMPARE(ta, tb);
        p.seed = 1235;
        Sampler c(p);
        std::vector<int32_t> tc;
        for (size_t i = 0; i < 200; ++i) tc.push_back(*c.sample(logits, at(i)));
        QVERIFY(ta != tc);
    }

    // The draw at a position depends on (seed, position) only: positions sampled in any
    // order, again, or by another sampler give the same tokens (what speculative decoding
    // needs to reproduce plain decoding), and neighbouring positions are not correlated.
    void drawsDependOnSeedAndPositionOnly() {
        SamplingParams p = unfiltered(77);
        const auto logits = random_logits(4, 64);
        Sampler forward(p), backward(p);
        std::vector<int32_t> ta(300), tb(300);
        for (size_t i = 0; i < ta.size(); ++i) ta[i] = *forward.sample(logits, at(i));
        for (size_t i = tb.size(); i-- > 0;) tb[i] = *backward.sample(logits, at(i));
        QCOMPARE(ta, tb);
        for (size_t i = 0; i < ta.size(); i += 37) QCOMPARE(*forward.sample(logits, at(i)), ta[i]);
        // Uncorrelated: with two equally likely tokens, equal neighbours about half the time.
        const std::vector<float> coin = {0.0f, 0.0f};
        Sampler c(p);
        int same = 0, ones = 0;
        int32_t prev = *c.sample(coin, at(0));
        for (size_t i = 1; i < 4001; ++i) {
            const int32_t t = *c.sample(coin, at(i));
            same += t == prev;
            ones += t;
            prev = t;
        }
        QVERIFY2(std::abs(same - 2000) < 150, qPrintable(QString::number(same)));
        QVERIFY2(std::abs(ones - 2000) < 150, qPrintable(QString::number(ones)));
    }

    void filtersKeepOnlyWhatTheyMay() {
        const auto logits = random_logits(3, 500);
        const auto order = ranking(logits);
        // Softmax probabilities at temperature 1, for the p-based filters.
        std::vector<double> prob(logits.size());
        double sum = 0;
        for (size_t i = 0; i < logits.size(); ++i)
            sum += prob[i] = std::exp(double(logits[i]) - logits[size_t(order[0])]);
        for (double& q : prob) q /= sum;

        SamplingParams p;
        p.temperature = 1.5f;
        p.top_p = 1.0f;
        p.min_p = 0.0f;
        p.top_k = 5;
        p.seed = 9;
        Sampler topk(p);
        const std::set<int32_t> top5(order.begin(), order.begin() + 5);
        std::set<int32_t> seen;
        for (size_t i = 0; i < 2000; ++i) seen.insert(*topk.sample(logits, at(i)));
        for (int32_t id : seen) QVERIFY2(top5.count(id), "top-k sampled outside the k best");
        QCOMPARE(seen.size(), size_t{5});  // at temperature 1.5 all five appear in 2000 draws

        p.top_k = 0;
        p.min_p = 0.2f;
        Sampler minp(p);
        for (size_t i = 0; i < 2000; ++i) {
            const int32_t id = *minp.sample(logits, at(i));
            QVERIFY(prob[size_t(id)] >= 0.2 * prob[size_t(order[0])] - 1e-12);
        }

        p.min_p = 0.0f;
        p.top_p = 0.5f;
        Sampler topp(p);
        // The nucleus: the fewest best tokens whose probability reaches 0.5.
        std::set<int32_t> nucleus;
        double cumulative = 0;
        for (int32_t id : order) {
            nucleus.insert(id);
            cumulative += prob[size_t(id)];
            if (cumulative >= 0.5) break;
        }
        for (size_t i = 0; i < 2000; ++i) QVERIFY(nucleus.count(*topp.sample(logits, at(i))));
    }

    void temperatureFollowsTheDistribution() {
        // Two tokens with logits 0 and ln 3 at temperature 1: p = 1/4, 3/4.
        SamplingParams p = unfiltered(5);
        Sampler s(p);
        const std::vector<float> logits = {0.0f, std::log(3.0f)};
        int ones = 0;
        const int n = 20000;
        for (size_t i = 0; i < size_t{n}; ++i) ones += *s.sample(logits, at(i)) == 1;
        // 4.5 standard deviations of a binomial(20000, 0.75) is about 275.
        QVERIFY2(std::abs(ones - 15000) < 275, qPrintable(QString::number(ones)));
    }

    void penaltiesFollowLlamaCppsRule() {
        SamplingParams p = SamplingParams::greedy();
        p.repeat_penalty = 2.0f;
        Sampler s(p);
        // Token 0 (logit 3) is in the history: 3 / 2 = 1.5 < 2 (token 1) → token 1 wins.
        QCOMPARE(*s.sample(std::vector<float>{3.0f, 2.0f, -5.0f}, std::vector<int32_t>{0}), 1);
        // A negative logit is multiplied: -1 · 2 = -2 < -1.5.
        QCOMPARE(*s.sample(std::vector<float>{-1.0f, -1.5f}, std::vector<int32_t>{0}), 1);
        SamplingParams f = SamplingParams::greedy();
        f.frequency_penalty = 0.6f;
        f.presence_penalty = 0.5f;
        Sampler fs(f);
        // Token 0 appears twice: 3 - 2·0.6 - 0.5 = 1.3 < 1.5.
        QCOMPARE(*fs.sample(std::vector<float>{3.0f, 1.5f}, std::vector<int32_t>{0, 0}), 1);
        // Outside the window the penalty does not apply.
        f.penalty_last_n = 1;
        Sampler window(f);
        QCOMPARE(*window.sample(std::vector<float>{3.0f, 1.5f}, std::vector<int32_t>{0, 1}), 0);
    }

    // sample_top (the few best values of a row, as a GPU backend gives them) picks the
    // same tokens with the same random draws as sample (the whole row), whatever the
    // settings it claims to support: greedy or top-k, penalties on or off, ties, masks.
    void sampleTopEqualsSampleOnTheRow() {
        std::mt19937 rng(17);
        std::uniform_real_distribution<float> value(-8.0f, 8.0f);
        std::uniform_int_distribution<int32_t> token(0, 299);
        int compared = 0, needed_row = 0;
        for (int trial = 0; trial < 400; ++trial) {
            SamplingParams p;
            p.seed = static_cast<uint64_t>(trial);
            p.temperature = trial % 5 == 0 ? 0.0f : 0.3f + 0.1f * static_cast<float>(trial % 9);
            p.top_k = std::array<int32_t, 5>{1, 5, 40, 64, 0}[static_cast<size_t>(trial % 5)];
            p.top_p = trial % 3 == 0 ? 1.0f : 0.9f;
            p.min_p = trial % 4 == 0 ? 0.0f : 0.05f;
            if (trial % 2 == 0) {
                p.repeat_penalty = 1.3f;
                p.frequency_penalty = trial % 4 == 0 ? 0.5f : 0.0f;
                p.presence_penalty = trial % 8 == 0 ? 0.7f : 0.0f;
                p.penalty_last_n = 16;
            }
            std::vector<float> row(300);
            for (float& v : row) v = value(rng);
            for (size_t i = 0; i < row.size(); i += 7) row[i] = std::round(row[i]);  // ties
            for (size_t i = 3; i < row.size(); i += 50) row[i] = -INFINITY;          // masks
            std::vector<int32_t> history(24);
            for (int32_t& t : history) t = token(rng);

            Sampler whole(p), top(p);
            const int32_t k = top.top_needed(history);
            if (k == 0) {  // top_k off, or too many with the penalised: the whole row
                ++needed_row;
                const auto n_penalised = static_cast<int32_t>(top.penalised_tokens(history).size());
                QVERIFY(p.temperature > 0.0f &&
                        (p.top_k == 0 || p.top_k + n_penalised > Sampler::kMaxTopCandidates));
                continue;
            }
            // The k best of the row, as Backend::top_k orders them.
            std::vector<int32_t> order(row.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
            std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
                return row[a] > row[b] || (row[a] == row[b] && a < b);
            });
            std::vector<int32_t> ids;
            std::vector<float> values;
            for (int32_t i = 0; i < k; ++i) {
                const bool finite = row[order[i]] != -INFINITY;
                ids.push_back(finite ? order[i] : -1);
                values.push_back(finite ? row[order[i]] : -INFINITY);
            }
            std::vector<float> penalised;
            for (int32_t id : top.penalised_tokens(history)) penalised.push_back(row[id]);
            for (int step = 0; step < 3; ++step) {  // the same draws at the same position
                auto a = whole.sample(row, history);
                auto b = top.sample_top(ids, values, penalised, history);
                QVERIFY(a && b);
                QCOMPARE(*b, *a);
                ++compared;
            }
        }
        QVERIFY(compared > 600);
        QVERIFY(needed_row > 0);
    }

    void textStreamHoldsPartialUtf8() {
        TextStream t;
        const std::string euro = "\xE2\x82\xAC";  // €, split across three tokens
        QCOMPARE(t.push("a" + euro.substr(0, 1)), std::string("a"));
        QCOMPARE(t.push(euro.substr(1, 1)), std::string());
        QCOMPARE(t.push(euro.substr(2, 1)), euro);
        QCOMPARE(t.text(), "a" + euro);
        // A truncated character at the end becomes U+FFFD.
        QCOMPARE(t.push("\xF0\x9F"), std::string());
        QCOMPARE(t.flush(), std::string("\xEF\xBF\xBD"));
    }

    void textStreamStopsBeforeStopStrings() {
        TextStream t({"</answer>", "STOP"});
        std::string shown;
        for (const char* piece : {"The result", " is 4", "</", "ans", "wer> trailing"})
            shown += t.push(piece);
        QVERIFY(t.stopped());
        QCOMPARE(shown, std::string("The result is 4"));
        QCOMPARE(t.push("more"), std::string());

        // A held-back prefix that turns out not to be a stop string is released.
        TextStream u({"STOP"});
        QCOMPARE(u.push("ST"), std::string());
        QCOMPARE(u.push("AR"), std::string("STAR"));
        QVERIFY(!u.stopped());
        QCOMPARE(u.push("S"), std::string());  // could begin "STOP": held back
        QCOMPARE(u.flush(), std::string("S"));
        QCOMPARE(u.text(), std::string("STARS"));
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "tst_sampling.moc"
