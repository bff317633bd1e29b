// Which steps run as step graphs, and under which key (model/step_graph.h).
#include <QTest>

#include <vector>

#include "model/llama_model.h"
#include "model/step_graph.h"

using namespace hearth;

class TstStepGraph : public QObject {
    Q_OBJECT

    const std::vector<int32_t> one_ = {7}, two_ = {7, 8}, table_ = {0, 1, 2}, pick_ = {3};

    SequenceStep decode(int32_t pos) const { return {one_, pos, table_, true, {}}; }

  private slots:
    void decodeStepsHaveAKey() {
        const std::vector<SequenceStep> steps = {decode(0), decode(40)};
        const auto key = step_graph_key(steps, 8);
        QVERIFY(key);
        QCOMPARE(key->n_seqs, 2);
        QCOMPARE(key->top_k, 8);
        QCOMPARE(key->chunk_bound, 1);
    }

    // The bound: the smallest power of two at least the chunks the furthest row sees
    // (a row at position p sees p / 256 + 1 chunks of 256 positions).
    void boundIsAPowerOfTwoOfChunks() {
        const std::vector<std::pair<int32_t, int32_t>> cases = {
            {0, 1},   {255, 1}, {256, 2},  {511, 2},  {512, 4},
            {767, 4}, {768, 4}, {1023, 4}, {1024, 8}, {131071, 512}};
        for (const auto& [pos, bound] : cases) {
            const std::vector<SequenceStep> steps = {decode(3), decode(pos)};
            const auto key = step_graph_key(steps, 1);
            QVERIFY(key);
            QVERIFY2(key->chunk_bound == bound, qPrintable(QString("position %1: bound %2, want %3")
                                                               .arg(pos)
                                                               .arg(key->chunk_bound)
                                                               .arg(bound)));
        }
    }

    // Equal shapes share a key; anything a graph freezes makes another.
    void keysCompareByEveryField() {
        const std::vector<SequenceStep> a = {decode(10)}, b = {decode(200)}, c = {decode(300)};
        QVERIFY(*step_graph_key(a, 4) == *step_graph_key(b, 4));
        QVERIFY(*step_graph_key(a, 4) != *step_graph_key(c, 4));
        QVERIFY(*step_graph_key(a, 4) != *step_graph_key(a, 5));
        const std::vector<SequenceStep> aa = {decode(10), decode(10)};
        QVERIFY(*step_graph_key(a, 4) != *step_graph_key(aa, 4));
    }

    void otherStepsRunOpByOp() {
        QVERIFY(!step_graph_key({}, 8));
        const std::vector<SequenceStep> decode_only = {decode(5)};
        QVERIFY(!step_graph_key(decode_only, 0));  // whole logit rows
        const std::vector<SequenceStep> prefill = {decode(5), {two_, 0, table_, true, {}}};
        QVERIFY(!step_graph_key(prefill, 8));
        const std::vector<SequenceStep> no_logits = {{one_, 5, table_, false, {}}};
        QVERIFY(!step_graph_key(no_logits, 8));
    }

    // The penalties' picked tokens: padded to a power of two over all rows.
    void picksArePaddedToAPowerOfTwo() {
        const std::vector<int32_t> three = {1, 2, 3};
        const std::vector<SequenceStep> none = {decode(5)};
        QCOMPARE(step_graph_key(none, 8)->picks, 0);
        const std::vector<SequenceStep> one = {{one_, 5, table_, true, pick_}};
        QCOMPARE(step_graph_key(one, 8)->picks, 1);
        const std::vector<SequenceStep> four = {{one_, 5, table_, true, pick_},
                                                {one_, 9, table_, true, three}};
        QCOMPARE(step_graph_key(four, 8)->picks, 4);
        const std::vector<SequenceStep> five = {{one_, 5, table_, true, three},
                                                {one_, 9, table_, true, three}};
        QCOMPARE(step_graph_key(five, 8)->picks, 8);
    }
};

QTEST_APPLESS_MAIN(TstStepGraph)
#include "tst_step_graph.moc"
