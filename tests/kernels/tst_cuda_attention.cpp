// The CUDA paged attention (kernels/cuda/attention.h), its code run on the host
// (everywhere, CI included): against the double-precision reference (kernels/reference)
// over block sizes 1, 3, 7, 16 with shuffled non-contiguous block tables, prefixes ending
// mid-block, GQA ratios 1, 3, 8, head_dim 64, 80, 128 and 256, contexts of 1 to 700
// positions (chunk boundaries at 256, 512) and batches mixing decode steps with prefill
// chunks; batch invariance bit for bit (a row alone or in company, split or whole shape, a
// prompt in one step or in chunks, the tiles of devices with more or less shared memory);
// bounded launches; refused arguments (the plan and its workspace bounds:
// tst_cuda_attention_plan; the device: tst_cuda_attention_device).
#include <QTest>

#include "cuda_attention_fixture.h"
#include "reference/reference_ops.h"

namespace ref = hearth::kernels::reference;

class TstCudaAttention : public QObject {
    Q_OBJECT

    // Host run against the reference: |got - want| ≤ 1e-5 · max(1, |want|).
    void check_reference(Cache& c, const Step& st, const QString& what) {
        const AttentionBatch b = st.batch(c.tables.data());
        std::vector<float> want(static_cast<size_t>(st.rows) * c.row_floats());
        ref::attention(st.q.data(), c.layer(), b, c.n_heads, c.scale(), want.data());
        for (AttentionShape shape :
             {AttentionShape::Planned, AttentionShape::AllSplit, AttentionShape::AllWhole}) {
            const std::vector<float> got = run_host(c, st, shape);
            double worst = 0.0;
            for (size_t i = 0; i < got.size(); ++i) {
                const double e =
                    std::fabs(double{got[i]} - want[i]) / std::max(1.0, std::fabs(double{want[i]}));
                if (!(e <= worst)) worst = e;  // NaN sticks
            }
            HEARTH_CHECK(worst <= 1e-5, QString("%1, shape %2: error %3")
                                            .arg(what)
                                            .arg(static_cast<int>(shape))
                                            .arg(worst));
        }
    }

  private slots:
    void hostMatchesTheReference() {
        std::mt19937 rng(7001);
        struct Config {
            int32_t block_size, n_kv, n_heads, head_dim;
            float k_scale;
        };
        const Config configs[] = {
            {1, 2, 2, 64, 1.0f}, {3, 2, 6, 128, 1.0f}, {7, 1, 8, 64, 4.0f},  {16, 2, 16, 128, 1.0f},
            {7, 3, 9, 80, 1.0f}, {3, 1, 3, 256, 2.0f}, {16, 1, 20, 64, 1.0f}};
        for (const Config& cf : configs) {
            Cache c(rng, cf.block_size, cf.n_kv, cf.n_heads, cf.head_dim, kMixedLengths,
                    cf.k_scale);
            check_reference(c, Step(c, mixed_parts()),
                            QString("block %1, %2/%3 heads, head_dim %4")
                                .arg(cf.block_size)
                                .arg(cf.n_heads)
                                .arg(cf.n_kv)
                                .arg(cf.head_dim));
        }
        const Many many(rng);
        Cache c(rng, 5, 2, 4, 64, many.lengths, 2.0f);
        check_reference(c, Step(c, many.parts), "150 sequences");

        // Sliding windows (shorter than a chunk, across chunk edges, longer than any
        // context) and soft-capped scores (Gemma), alone and together.
        Cache g(rng, 7, 2, 8, 64, kMixedLengths, 4.0f);
        for (auto [window, cap] :
             {std::pair{1, 0.0f}, std::pair{5, 0.0f}, std::pair{300, 0.0f}, std::pair{1000, 0.0f},
              std::pair{0, 2.0f}, std::pair{37, 3.0f}}) {
            Step st(g, mixed_parts());
            st.window = window;
            st.softcap = cap;
            check_reference(g, st, QString("window %1, soft-cap %2").arg(window).arg(cap));
        }
    }

    void hostIsBatchInvariant() {
        std::mt19937 rng(7002);
        {
            // With a sliding window the shapes still agree bit for bit: whole items skip the
            // chunks before their first row's window (and fold the masked positions of the
            // later rows as nothing), split rows skip the chunks before their own.
            Cache c(rng, 7, 2, 8, 64, kMixedLengths, 2.0f);
            Step win(c, mixed_parts());
            win.window = 100;
            win.softcap = 3.0f;
            const Rows all = by_position(c, win, run_host(c, win, AttentionShape::Planned));
            QString why;
            for (AttentionShape shape : {AttentionShape::AllSplit, AttentionShape::AllWhole})
                QVERIFY2(
                    same_rows(all, by_position(c, win, run_host(c, win, shape)), &why),
                    qPrintable(QString("window, shape %1: ").arg(static_cast<int>(shape)) + why));
        }
        {
            // GQA 16 at head_dim 128: two slices of 8 heads an item on a 100 KiB device,
            // one of 16 on 228 KiB (and 64 KiB): the same bits.
            Cache c(rng, 7, 1, 16, 128, kMixedLengths, 2.0f);
            const Step mixed(c, mixed_parts());
            const Rows all =
                by_position(c, mixed, run_host(c, mixed, AttentionShape::Planned, 228 * 1024));
            QString why;
            for (int32_t smem : {64 * 1024, 100 * 1024})
                QVERIFY2(same_rows(all,
                                   by_position(c, mixed,
                                               run_host(c, mixed, AttentionShape::Planned, smem)),
                                   &why),
                         qPrintable(QString("GQA 16, %1 KiB: ").arg(smem / 1024) + why));
        }
        for (int32_t D : {128, 64}) {
            Cache c(rng, 7, 2, 8, D, kMixedLengths, 2.0f);
            const Step mixed(c, mixed_parts());
            const Rows all = by_position(c, mixed, run_host(c, mixed, AttentionShape::Planned));
            QString why;
            // The shapes agree.
            for (AttentionShape shape : {AttentionShape::AllSplit, AttentionShape::AllWhole})
                QVERIFY2(same_rows(all, by_position(c, mixed, run_host(c, mixed, shape)), &why),
                         qPrintable(QString("shape %1: ").arg(static_cast<int>(shape)) + why));
            // Devices with more or less shared memory per SM (40 KiB: none such, but its
            // budget leaves a whole item 2 rows instead of 4): other tiles, the same bits.
            for (int32_t smem : {40 * 1024, 100 * 1024, 164 * 1024, 228 * 1024})
                QVERIFY2(
                    same_rows(
                        all,
                        by_position(c, mixed, run_host(c, mixed, AttentionShape::Planned, smem)),
                        &why),
                    qPrintable(QString("%1 KiB of shared memory per SM: ").arg(smem / 1024) + why));
            // Each sequence alone.
            for (const Part& p : mixed_parts()) {
                const Step alone(c, {p});
                QVERIFY2(
                    same_rows(all,
                              by_position(c, alone, run_host(c, alone, AttentionShape::Planned)),
                              &why),
                    qPrintable("alone: " + why));
            }
            // Sequence 4's 700 positions as one prompt, and in steps of 1 to 296 rows, some
            // in company; rows of the one-step prompt against the pieces.
            const Step whole(c, {{4, 0, 700}});
            const Rows one = by_position(c, whole, run_host(c, whole, AttentionShape::Planned));
            for (const auto& ps : prompt_pieces()) {
                const Step st(c, ps);
                QVERIFY2(
                    same_rows(one, by_position(c, st, run_host(c, st, AttentionShape::Planned)),
                              &why),
                    qPrintable("chunked prompt: " + why));
            }
        }
    }

    // A launch sized for a chunk bound (step graphs): the bound's items and workspace, the
    // blocks past the real items do nothing, and the rows are the exact launch's bits;
    // a bound a row exceeds, or a sequence that does not split, is refused.
    void boundedLaunches() {
        std::mt19937 rng(17);
        Cache c(rng, 16, 2, 8, 64, {700, 40, 300});
        const Step st(c, {{0, 699, 700}, {1, 39, 40}, {2, 296, 300}});  // 3, 1 and 2 chunks
        const std::vector<float> exact = run_host(c, st, AttentionShape::Planned);
        for (int32_t bound : {3, 4, 64}) {
            AttentionBatch b = st.batch(c.tables.data());
            b.chunk_bound = bound;
            g::AttentionPlan p;
            QVERIFY(
                g::plan_attention(b, c.n_heads, c.n_kv, c.head_dim, AttentionShape::Planned, &p));
            QCOMPARE(p.split_rows, int64_t{6});
            QCOMPARE(p.partials, int64_t{6} * bound);
            QCOMPARE(p.split_items, p.partials * c.n_kv);
            const size_t ws_bytes = g::attention_workspace_bytes(b, c.n_heads, c.head_dim);
            QCOMPARE(ws_bytes, p.workspace_bytes);
            std::vector<float> ws(ws_bytes / 4), out(exact.size(), std::nanf(""));
            QVERIFY(g::attention_on_host(st.q.data(), c.layer(), b, c.n_heads, c.scale(),
                                         out.data(), ws.data(), ws.size() * 4));
            QVERIFY2(std::memcmp(out.data(), exact.data(), exact.size() * 4) == 0,
                     qPrintable(QString("bound %1: other bits").arg(bound)));
        }
        // A 300-position window: the rows see 2, 1 and 2 chunks; a local layer's bound is
        // the window's (3), or below it, whatever the context.
        Step win = st;
        win.window = 300;
        const std::vector<float> exact_win = run_host(c, win, AttentionShape::Planned);
        for (int32_t bound : {2, hearth::kernels::window_chunk_bound(300)}) {
            AttentionBatch b = win.batch(c.tables.data());
            b.chunk_bound = bound;
            g::AttentionPlan p;
            QVERIFY(
                g::plan_attention(b, c.n_heads, c.n_kv, c.head_dim, AttentionShape::Planned, &p));
            QCOMPARE(p.partials, int64_t{6} * bound);
            std::vector<float> ws(p.workspace_bytes / 4), out(exact_win.size(), std::nanf(""));
            QVERIFY(g::attention_on_host(win.q.data(), c.layer(), b, c.n_heads, c.scale(),
                                         out.data(), ws.data(), ws.size() * 4));
            QVERIFY2(std::memcmp(out.data(), exact_win.data(), exact_win.size() * 4) == 0,
                     qPrintable(QString("window, bound %1: other bits").arg(bound)));
        }
        AttentionBatch b = st.batch(c.tables.data());
        g::AttentionPlan p;
        b.chunk_bound = 2;  // the first row sees 3 chunks
        QVERIFY(!g::plan_attention(b, c.n_heads, c.n_kv, c.head_dim, AttentionShape::Planned, &p));
        b.chunk_bound = 4;
        QVERIFY(!g::plan_attention(b, c.n_heads, c.n_kv, c.head_dim, AttentionShape::AllWhole, &p));
    }

    void invalidCallsAreRefused() {
        std::mt19937 rng(7003);
        Cache c(rng, 4, 2, 4, 64, {9, 3});
        const Step st(c, {{0, 5, 9}, {1, 2, 3}});
        const AttentionBatch good = st.batch(c.tables.data());
        const size_t need = g::attention_workspace_bytes(good, 4, 64);
        QVERIFY(need > 0);
        std::vector<float> ws(need / 4), out(static_cast<size_t>(st.rows) * c.row_floats());
        const float* q = st.q.data();
        const PagedKvLayer layer = c.layer();
        const auto refused = [&](const PagedKvLayer& l, const AttentionBatch& b, int32_t heads,
                                 const float* qq, float* o, float* w, size_t bytes) {
            return !g::attention_on_host(qq, l, b, heads, 0.125f, o, w, bytes) &&
                   g::attention_cuda(qq, l, b, heads, 0.125f, o, w, bytes, nullptr) ==
                       cudaErrorInvalidValue;
        };
        QVERIFY(g::attention_on_host(q, layer, good, 4, 0.125f, out.data(), ws.data(), need));
        QVERIFY(refused(layer, good, 4, q, out.data(), ws.data(), need - 1));  // too small
        QVERIFY(refused(layer, good, 4, q, out.data(), nullptr, need));
        QVERIFY(refused(layer, good, 4, nullptr, out.data(), ws.data(), need));
        QVERIFY(refused(layer, good, 4, q, nullptr, ws.data(), need));
        QVERIFY(refused(layer, good, 3, q, out.data(), ws.data(), need));  // not a multiple
        QVERIFY(refused(layer, good, 0, q, out.data(), ws.data(), need));
        for (int32_t D : {0, 3, 258}) {
            PagedKvLayer l = layer;
            l.head_dim = D;
            QVERIFY2(refused(l, good, 4, q, out.data(), ws.data(), need << 3),
                     qPrintable(QString("head_dim %1").arg(D)));
        }
        PagedKvLayer l = layer;
        l.k = nullptr;
        QVERIFY(refused(l, good, 4, q, out.data(), ws.data(), need));
        l = layer;
        l.v = reinterpret_cast<uint16_t*>(reinterpret_cast<char*>(layer.v) + 2);  // misaligned
        QVERIFY(refused(l, good, 4, q, out.data(), ws.data(), need));
        l = layer;
        l.n_kv_heads = 0;
        QVERIFY(refused(l, good, 4, q, out.data(), ws.data(), need));
        l = layer;
        l.block_size = 0;
        QVERIFY(refused(l, good, 4, q, out.data(), ws.data(), need));
        AttentionBatch b = good;
        b.block_tables = nullptr;
        QVERIFY(refused(layer, b, 4, q, out.data(), ws.data(), need));
        b = good;
        b.host_q_len = nullptr;
        QVERIFY(refused(layer, b, 4, q, out.data(), ws.data(), need));
        const std::vector<int32_t> bad_kv = {3, 1};  // kv_len < q_len
        b = good;
        b.host_kv_len = bad_kv.data();
        QVERIFY(refused(layer, b, 4, q, out.data(), ws.data(), need));
        // No rows: a no-op, whatever the pointers.
        AttentionBatch none;
        QVERIFY(g::attention_on_host(nullptr, layer, none, 4, 0.125f, nullptr, nullptr, 0));
        QCOMPARE(g::attention_cuda(nullptr, layer, none, 4, 0.125f, nullptr, nullptr, 0, nullptr),
                 cudaSuccess);
    }
};

QTEST_GUILESS_MAIN(TstCudaAttention)
#include "tst_cuda_attention.moc"
