// Paged attention and the KV append of the CPU backend, over random non-contiguous block
// tables (shuffled block ids), block sizes 1, 3, 7, 16, 32, batches mixing prefill with a
// cached prefix (q_len > 1, prefix ending mid-block), fresh prompts and decode steps
// (q_len = 1, alone and in a batch), GQA ratios 1 and 3, every SIMD level and 1, 2, 3
// threads. Seeds are fixed and printed.
//
// The backend reproduces llama.cpp's default attention (kernels/cpu/attention_fns.h): Q
// and the softmax probabilities rounded to fp16, float accumulation in a fixed lane
// order. So:
//  * every SIMD level and thread count (which changes the context splits) gives the
//    same bits;
//  * against the llama.cpp-convention reference below (the same fp16 roundings, all
//    else in double), ≤ 1.5e-4 absolute per element, or 2e-3 for scores of several
//    hundred: outputs are convex combinations of V rows in [-1, 1]; the float scores
//    and exponentials (~1e-7 relative) flip a probability p's fp16 rounding now and
//    then, which moves an output by up to 2^-11 · p (float error alone is ~1e-6), and
//    with large scores that is often the one dominant position;
//  * against the naive float reference (kernels/reference), ≤ 2e-3 (or 5e-2 for large
//    scores): the fp16 roundings themselves, while any masking, paging or softmax
//    mistake moves outputs by ≳ 1e-2 on the ordinary cases.
// kv_append: exact (round to nearest even in both).
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "cpu/cpu_backend.h"
#include "cpu_backends.h"
#include "reference/reference_ops.h"
#include "tst_cpu_helpers.h"

using hearth::kernels::AttentionBatch;
using hearth::kernels::CpuBackend;
using hearth::kernels::PagedKvLayer;
using hearth::kernels::cpu::SimdLevel;
namespace ref = hearth::kernels::reference;
namespace cpu = hearth::kernels::cpu;
using namespace hearth::test;

namespace {

constexpr uint32_t kSeed = 4242;

struct SeqSpec {
    int32_t prefix;  // cached context before this step
    int32_t q_len;   // new tokens this step
};

// A batch over a random paged cache: caches filled with random fp16, every sequence's
// blocks drawn without replacement from a shuffled pool.
struct Case {
    int32_t block_size, n_kv, head_dim, n_blocks;
    std::vector<uint16_t> k, v;
    std::vector<int32_t> q_start, q_len, kv_len, bt_start, tables;
    std::vector<float> q;
    int32_t n_tokens = 0;
    AttentionBatch batch;
    PagedKvLayer cache;

    Case(std::mt19937& rng, int32_t bs, int32_t kv_heads, int32_t D, int32_t n_heads,
         const std::vector<SeqSpec>& seqs, float k_scale)
        : block_size(bs), n_kv(kv_heads), head_dim(D) {
        int32_t need = 0;
        for (const SeqSpec& s : seqs) need += (s.prefix + s.q_len + bs - 1) / bs;
        n_blocks = need + 5;  // spare blocks that belong to nobody
        std::vector<int32_t> pool(static_cast<std::size_t>(n_blocks));
        for (int32_t i = 0; i < n_blocks; ++i) pool[static_cast<std::size_t>(i)] = i;
        std::shuffle(pool.begin(), pool.end(), rng);
        const std::size_t cache_elems = static_cast<std::size_t>(n_blocks) * bs * kv_heads * D;
        const std::vector<float> kf = random_floats(rng, cache_elems, -k_scale, k_scale);
        const std::vector<float> vf = random_floats(rng, cache_elems);
        for (float f : kf) k.push_back(hearth::quant::f32_to_fp16(f));
        for (float f : vf) v.push_back(hearth::quant::f32_to_fp16(f));
        std::size_t next = 0;
        for (const SeqSpec& s : seqs) {
            q_start.push_back(n_tokens);
            q_len.push_back(s.q_len);
            kv_len.push_back(s.prefix + s.q_len);
            bt_start.push_back(static_cast<int32_t>(tables.size()));
            for (int32_t b = 0; b < (s.prefix + s.q_len + bs - 1) / bs; ++b)
                tables.push_back(pool[next++]);
            n_tokens += s.q_len;
        }
        q = random_floats(rng, static_cast<std::size_t>(n_tokens) * n_heads * D);
        batch.n_seqs = static_cast<int32_t>(seqs.size());
        batch.q_start = q_start.data();
        batch.q_len = q_len.data();
        batch.kv_len = kv_len.data();
        batch.block_table_start = bt_start.data();
        batch.block_tables = tables.data();
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            batch.max_q_len = std::max(batch.max_q_len, q_len[s]);
            batch.max_kv_len = std::max(batch.max_kv_len, kv_len[s]);
        }
        cache.k = k.data();
        cache.v = v.data();
        cache.n_blocks = n_blocks;
        cache.block_size = bs;
        cache.n_kv_heads = kv_heads;
        cache.head_dim = D;
    }
};

}  // namespace

class TestCpuAttention : public QObject {
    Q_OBJECT

    CpuBackends backends_;

    CpuBackend& backend(int threads, SimdLevel level) { return backends_.get(threads, level); }
    static std::vector<SimdLevel> levels() { return CpuBackends::levels(); }

    void check(Case& c, int32_t n_heads, float scale, const QString& what, bool large = false) {
        const std::size_t n = c.q.size();
        std::vector<float> naive(n);
        ref::attention(c.q.data(), c.cache, c.batch, n_heads, scale, naive.data());
        const std::vector<double> want = llama_reference(c, n_heads, scale);
        std::vector<float> first;
        for (SimdLevel level : levels()) {
            for (int threads : {1, 2, 3}) {
                CpuBackend& b = backend(threads, level);
                std::vector<float> out(n, std::nanf(""));
                b.attention(c.q.data(), c.cache, c.batch, n_heads, scale, out.data());
                const QString where = what + ", " + QString::fromStdString(b.name());
                double e = 0.0;
                for (std::size_t i = 0; i < n; ++i) e = std::max(e, std::fabs(out[i] - want[i]));
                HEARTH_CHECK(e <= (large ? 2e-3 : 1.5e-4),
                             (where + QString(": max error %1 vs llama.cpp's rounding").arg(e)));
                const double en = max_abs_diff(out.data(), naive.data(), n);
                HEARTH_CHECK(en <= (large ? 5e-2 : 2e-3),
                             (where + QString(": max error %1 vs the float reference").arg(en)));
                if (first.empty()) {
                    first = out;
                } else {
                    HEARTH_CHECK(std::memcmp(first.data(), out.data(), n * sizeof(float)) == 0,
                                 (where + ": differs from the scalar single-thread result"));
                }
            }
        }
    }

    // llama.cpp's non-flash attention with its fp16 roundings (Q, and the normalised
    // probabilities before P · V), everything else exact in double.
    static std::vector<double> llama_reference(const Case& c, int32_t n_heads, float scale) {
        using hearth::quant::f32_to_fp16;
        using hearth::quant::fp16_to_f32;
        const int32_t D = c.head_dim, group = n_heads / c.n_kv;
        std::vector<double> out(c.q.size());
        const auto row = [&](const std::vector<uint16_t>& kv, int32_t seq, int32_t p, int32_t g) {
            const int32_t blk = c.tables[static_cast<std::size_t>(
                c.bt_start[static_cast<std::size_t>(seq)] + p / c.block_size)];
            return kv.data() +
                   ((static_cast<std::size_t>(blk) * c.block_size + p % c.block_size) * c.n_kv +
                    g) *
                       D;
        };
        for (int32_t s = 0; s < c.batch.n_seqs; ++s) {
            const int32_t ql = c.q_len[static_cast<std::size_t>(s)],
                          kl = c.kv_len[static_cast<std::size_t>(s)];
            for (int32_t i = 0; i < ql; ++i) {
                const int32_t tok = c.q_start[static_cast<std::size_t>(s)] + i, pos = kl - ql + i;
                for (int32_t h = 0; h < n_heads; ++h) {
                    const float* q = c.q.data() + (static_cast<std::size_t>(tok) * n_heads + h) * D;
                    std::vector<double> sc(static_cast<std::size_t>(pos + 1));
                    double mx = -1e300;
                    // A sliding window masks the positions before lo (probability 0).
                    const int32_t lo =
                        c.batch.window > 0 ? std::max(0, pos - c.batch.window + 1) : 0;
                    for (int32_t p = 0; p <= pos; ++p) {
                        if (p < lo) {
                            sc[static_cast<std::size_t>(p)] = -HUGE_VAL;
                            continue;
                        }
                        const uint16_t* k = row(c.k, s, p, h / group);
                        double dot = 0.0;
                        for (int32_t d = 0; d < D; ++d)
                            dot += static_cast<double>(fp16_to_f32(f32_to_fp16(q[d]))) *
                                   fp16_to_f32(k[d]);
                        double score = dot * scale;
                        if (c.batch.softcap > 0.0f)
                            score = std::tanh(score / c.batch.softcap) * c.batch.softcap;
                        sc[static_cast<std::size_t>(p)] = score;
                        mx = std::max(mx, sc[static_cast<std::size_t>(p)]);
                    }
                    double sum = 0.0;
                    for (double& v : sc) sum += (v = std::exp(v - mx));
                    double* o = out.data() + (static_cast<std::size_t>(tok) * n_heads + h) * D;
                    for (int32_t p = 0; p <= pos; ++p) {
                        const double ph = fp16_to_f32(
                            f32_to_fp16(static_cast<float>(sc[static_cast<std::size_t>(p)] / sum)));
                        const uint16_t* v = row(c.v, s, p, h / group);
                        for (int32_t d = 0; d < D; ++d) o[d] += ph * fp16_to_f32(v[d]);
                    }
                }
            }
        }
        return out;
    }

  private slots:
    void initTestCase() { qInfo("seed %u", kSeed); }

    void attention_data() {
        QTest::addColumn<int>("block_size");
        QTest::addColumn<int>("gqa");
        QTest::addColumn<int>("head_dim");
        for (int bs : {1, 3, 7, 16, 32})
            for (int gqa : {1, 3})
                QTest::newRow(qPrintable(QString("bs %1 gqa %2").arg(bs).arg(gqa)))
                    << bs << gqa << 64;
        QTest::newRow("head_dim 128") << 16 << 3 << 128;
        QTest::newRow("head_dim 80") << 7 << 3 << 80;
        QTest::newRow("head_dim 32") << 16 << 2 << 32;
        QTest::newRow("head_dim 16") << 16 << 2 << 16;
        QTest::newRow("head_dim 20 (scalar kernel)") << 3 << 1 << 20;
    }

    void attention() {
        QFETCH(int, block_size);
        QFETCH(int, gqa);
        QFETCH(int, head_dim);
        std::mt19937 rng(kSeed + static_cast<uint32_t>(block_size * 10 + gqa + head_dim));
        const int32_t n_kv = gqa == 1 ? 2 : 3;
        const int32_t n_heads = n_kv * gqa;
        // Prefill from nothing, prefill over a cached prefix ending mid-block, decode
        // steps at short and long contexts (the long one splits the context range).
        const std::vector<SeqSpec> mixed = {{0, 7}, {37, 1}, {100, 13}, {5, 1}, {0, 1}, {61, 40}};
        Case c(rng, block_size, n_kv, head_dim, n_heads, mixed, 1.0f);
        check(c, n_heads, 1.0f / std::sqrt(static_cast<float>(head_dim)), "mixed batch");
        const std::vector<SeqSpec> decode = {{1500, 1}};
        Case d(rng, block_size, n_kv, head_dim, n_heads, decode, 1.0f);
        check(d, n_heads, 1.0f / std::sqrt(static_cast<float>(head_dim)), "long decode");
        const std::vector<SeqSpec> short_decode = {{40, 1}};  // one token, unsplit
        Case sd(rng, block_size, n_kv, head_dim, n_heads, short_decode, 1.0f);
        check(sd, n_heads, 1.0f / std::sqrt(static_cast<float>(head_dim)), "short decode");
        const std::vector<SeqSpec> prefill = {{0, 150}, {300, 70}};
        Case p(rng, block_size, n_kv, head_dim, n_heads, prefill, 1.0f);
        check(p, n_heads, 1.0f / std::sqrt(static_cast<float>(head_dim)), "long prefill");
    }

    // Sliding-window attention (Gemma's local layers): against both references, every
    // SIMD level and thread count the same bits, in batches mixing prefill over a cached
    // prefix, fresh prompts and long decode steps (which split the context); and a window
    // that covers the whole context gives the bits of no window.
    void attention_window_data() {
        QTest::addColumn<int>("block_size");
        QTest::addColumn<int>("gqa");
        QTest::addColumn<int>("window");
        for (int window : {1, 5, 37, 300})
            for (auto [bs, gqa] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{16, 4}})
                QTest::newRow(
                    qPrintable(QString("window %1 bs %2 gqa %3").arg(window).arg(bs).arg(gqa)))
                    << bs << gqa << window;
    }
    void attention_window() {
        QFETCH(int, block_size);
        QFETCH(int, gqa);
        QFETCH(int, window);
        std::mt19937 rng(kSeed + static_cast<uint32_t>(window * 100 + block_size * 10 + gqa));
        const int32_t n_kv = 2, n_heads = n_kv * gqa, D = 64;
        const float scale = 0.125f;
        const std::vector<SeqSpec> mixed = {{0, 50}, {37, 1},  {100, 13},
                                            {5, 1},  {700, 1}, {61, 40}};
        Case c(rng, block_size, n_kv, D, n_heads, mixed, 1.0f);
        c.batch.window = window;
        check(c, n_heads, scale, QString("window %1").arg(window));
        const std::vector<SeqSpec> decode = {{1500, 1}};
        Case d(rng, block_size, n_kv, D, n_heads, decode, 1.0f);
        d.batch.window = window;
        check(d, n_heads, scale, QString("window %1, long decode").arg(window));

        // Soft-capped scores (Gemma 2), large scores so that the cap bends them, with the
        // window.
        Case sc(rng, block_size, n_kv, D, n_heads, mixed, 8.0f);
        sc.batch.window = window;
        sc.batch.softcap = 2.0f;
        check(sc, n_heads, 1.0f, QString("window %1, soft-cap 2").arg(window), true);

        // A window past the longest context: the bits of no window.
        Case w(rng, block_size, n_kv, D, n_heads, mixed, 1.0f);
        std::vector<float> none(w.q.size()), wide(w.q.size());
        CpuBackend& b = backend(2, levels().back());
        b.attention(w.q.data(), w.cache, w.batch, n_heads, scale, none.data());
        w.batch.window = 800;
        b.attention(w.q.data(), w.cache, w.batch, n_heads, scale, wide.data());
        QVERIFY(std::memcmp(none.data(), wide.data(), none.size() * sizeof(float)) == 0);
    }

    // Scores of several hundred: a softmax without max subtraction overflows float.
    void attention_large_scores() {
        std::mt19937 rng(kSeed + 1);
        const std::vector<SeqSpec> seqs = {{290, 5}, {700, 1}};
        Case c(rng, 16, 3, 64, 9, seqs, 40.0f);
        check(c, 9, 1.0f, "large scores", true);
    }

    void kv_append() {
        std::mt19937 rng(kSeed + 2);
        const int32_t bs = 7, n_kv = 3, D = 64, n_blocks = 6, n_tokens = 9;
        const std::size_t row = static_cast<std::size_t>(n_kv) * D;
        const std::size_t elems = static_cast<std::size_t>(n_blocks) * bs * row;
        std::vector<float> k =
            random_floats(rng, n_tokens * row, -70000.0f, 70000.0f);  // incl. overflow to inf
        const std::vector<float> v =
            random_floats(rng, n_tokens * row, -1e-6f, 1e-6f);  // subnormal halves
        k[0] = 0.5f + 1.0f / 4096.0f;                           // a tie: rounds to even
        std::vector<int32_t> slot_ids(n_tokens);
        std::vector<int32_t> all(static_cast<std::size_t>(n_blocks * bs));
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
        std::shuffle(all.begin(), all.end(), rng);
        std::copy(all.begin(), all.begin() + n_tokens, slot_ids.begin());
        std::vector<uint16_t> want_k(elems, 0x7e01), want_v(elems, 0x7e01);
        PagedKvLayer rc{want_k.data(), want_v.data(), n_blocks, bs, n_kv, D};
        ref::kv_append(rc, k.data(), v.data(), slot_ids.data(), n_tokens);
        for (SimdLevel level : levels()) {
            std::vector<uint16_t> ck(elems, 0x7e01),
                cv(elems, 0x7e01);  // untouched slots keep the sentinel
            PagedKvLayer cc{ck.data(), cv.data(), n_blocks, bs, n_kv, D};
            backend(2, level).kv_append(cc, k.data(), v.data(), slot_ids.data(), n_tokens);
            QVERIFY(ck == want_k);
            QVERIFY(cv == want_v);
        }
    }
};

QTEST_GUILESS_MAIN(TestCpuAttention)
#include "tst_cpu_attention.moc"
