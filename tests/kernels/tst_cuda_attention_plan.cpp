// The CUDA paged attention's launch plan (kernels/cuda/attention.h), host arithmetic only:
// partials per row, the items and workspace of each shape, the geometries, and the VRAM
// plan's workspace bound against random batches within its limits.
#include <QTest>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda/attention.h"

namespace g = hearth::gpu;
using g::AttentionShape;
using hearth::kernels::AttentionBatch;

class TstCudaAttentionPlan : public QObject {
    Q_OBJECT

  private slots:
    // The VRAM plan's bound holds every batch within its limits: steps of ≤ max_rows rows
    // over ≤ max_seqs sequences, none past max_context positions (random batches, every
    // shape the plan may choose).
    void workspaceBound() {
        std::mt19937 rng(4242);
        for (int trial = 0; trial < 400; ++trial) {
            const int32_t max_rows = 1 + static_cast<int32_t>(rng() % 300);
            const int32_t max_seqs = 1 + static_cast<int32_t>(rng() % 40);
            const int32_t max_context = 1 + static_cast<int32_t>(rng() % 3000);
            std::vector<int32_t> q_len, kv_len;
            int32_t rows = 0;
            while (static_cast<int32_t>(q_len.size()) < max_seqs && rows < max_rows) {
                const int32_t kv =
                    1 + static_cast<int32_t>(rng() % static_cast<uint32_t>(max_context));
                const int32_t room = std::min(kv, max_rows - rows);
                const int32_t q = rng() % 2 ? 1 + static_cast<int32_t>(rng() % std::min(4, room))
                                            : 1 + static_cast<int32_t>(rng() % room);
                q_len.push_back(q);
                kv_len.push_back(kv);
                rows += q;
            }
            AttentionBatch b;
            b.n_seqs = static_cast<int32_t>(q_len.size());
            b.host_q_len = q_len.data();
            b.host_kv_len = kv_len.data();
            const std::size_t bound =
                g::attention_workspace_bound(max_rows, max_seqs, max_context, 32, 128);
            QVERIFY2(g::attention_workspace_bytes(b, 32, 128) <= bound,
                     qPrintable(QString("trial %1: %2 > %3")
                                    .arg(trial)
                                    .arg(g::attention_workspace_bytes(b, 32, 128))
                                    .arg(bound)));
        }
        QCOMPARE(g::attention_workspace_bound(0, 4, 100, 32, 128), std::size_t{0});
        // 64 decode rows of a full 8k context: 64 × 32 chunks × 32 heads × 130 floats.
        QCOMPARE(g::attention_workspace_bound(2048, 16, 8192, 32, 128),
                 std::size_t{64} * 32 * 32 * 130 * 4);
    }

    // A sliding window: a row's partials are the chunks of its window, for the planner and
    // the kernels' shared arithmetic (against loops over positions), and a local layer's
    // decode row at 20k positions launches its window's chunks, not the context's.
    void slidingWindowChunks() {
        namespace k = hearth::kernels;
        for (int32_t window : {1, 5, 255, 256, 257, 1000, 1024, 4096})
            for (int32_t first : {0, 1, 255, 256, 257, 700, 1023, 5000}) {
                int32_t most = 0;
                for (int32_t i : {0, 1, 2, 255, 256, 600}) {
                    int64_t want = 0;
                    for (int32_t x = first; x < first + i; ++x) {
                        const int32_t lo = std::max(0, x - window + 1) / 256;
                        want += x / 256 - lo + 1;
                        QCOMPARE(k::chunks_seen(x, window), x / 256 - lo + 1);
                        most = std::max(most, x / 256 - lo + 1);
                    }
                    QCOMPARE(k::partials_before(first, i, window), want);
                }
                QVERIFY(most <= k::window_chunk_bound(window));
            }
        QCOMPARE(k::window_chunk_bound(1), 1);
        QCOMPARE(k::window_chunk_bound(256), 2);   // positions 255..510
        QCOMPARE(k::window_chunk_bound(1024), 5);  // 255..1278
        QCOMPARE(k::chunks_seen(1278, 1024), 5);
        QCOMPARE(k::layer_chunk_bound(64, 1024), 5);  // a local layer under a graph's bound
        QCOMPARE(k::layer_chunk_bound(4, 1024), 4);
        QCOMPARE(k::layer_chunk_bound(64, 0), 64);   // a global layer
        QCOMPARE(k::layer_chunk_bound(0, 1024), 0);  // no graph: sized exactly

        // Gemma 3 4B's local layers (window 1024, 8 heads over 4 KV heads, head_dim 256):
        // one decode row at position 19999 and one at 700.
        const std::vector<int32_t> q_len = {1, 1}, kv_len = {20000, 701};
        AttentionBatch b;
        b.n_seqs = 2;
        b.host_q_len = q_len.data();
        b.host_kv_len = kv_len.data();
        g::AttentionPlan global, local;
        QVERIFY(g::plan_attention(b, 8, 4, 256, AttentionShape::Planned, &global));
        QCOMPARE(global.partials, int64_t{79 + 3});
        b.window = 1024;
        QVERIFY(g::plan_attention(b, 8, 4, 256, AttentionShape::Planned, &local));
        QCOMPARE(local.partials, int64_t{5 + 3});  // chunks 74..78 (18976..19999), 0..2
        QCOMPARE(local.split_items, int64_t{8 * 4});
        QCOMPARE(g::attention_workspace_bytes(b, 8, 256), std::size_t{8} * 8 * 258 * 4);
        // A step graph's bound: the window's, whatever the context.
        b.chunk_bound = k::window_chunk_bound(1024);
        QVERIFY(g::plan_attention(b, 8, 4, 256, AttentionShape::Planned, &local));
        QCOMPARE(local.partials, int64_t{2 * 5});
        b.chunk_bound = 4;  // below the first row's 5 chunks
        QVERIFY(!g::plan_attention(b, 8, 4, 256, AttentionShape::Planned, &local));
    }

    // The item kernel's shared memory per device: for the head shapes of common models
    // (and GQA 16 at head_dim 256), decode and prefill launches stay within the budget, so
    // the blocks resident per SM are at least 2 on sm_75 and 4 on sm_80 and later (the
    // kernel's __launch_bounds__ hold registers to 4 blocks; threads allow 8 or more).
    // Before, 42,584 bytes of static shared memory allowed 1 block on sm_75 and 2 on
    // sm_86/89/120.
    void sharedMemoryAllowsTheOccupancy() {
        namespace d = g::attention_detail;
        struct Device {
            const char* arch;
            int32_t smem_per_sm, reserved, blocks;
        };
        const Device devices[] = {{"sm_75", 64 * 1024, 0, 2},     {"sm_80", 164 * 1024, 1024, 4},
                                  {"sm_86", 100 * 1024, 1024, 4}, {"sm_89", 100 * 1024, 1024, 4},
                                  {"sm_90", 228 * 1024, 1024, 4}, {"sm_120", 100 * 1024, 1024, 4}};
        struct Heads {
            const char* model;
            int32_t n_heads, n_kv, head_dim;
        };
        const Heads shapes[] = {
            {"Llama 3.2 1B", 32, 8, 64}, {"Llama 3.2 3B", 24, 8, 128}, {"Llama 3.1 8B", 32, 8, 128},
            {"Qwen2.5 7B", 28, 4, 128},  {"Qwen2.5 0.5B", 14, 2, 64},  {"Gemma 3 4B", 8, 4, 256},
            {"Gemma 3 12B", 16, 8, 256}, {"Phi-3 mini", 32, 32, 96},   {"SmolLM2 135M", 9, 3, 64},
            {"GQA 16, 256", 16, 1, 256}, {"GQA 16, 128", 16, 1, 128},  {"GQA 7, 96", 14, 2, 96}};
        const std::vector<int32_t> decode_q(8, 1),
            decode_kv = {1, 300, 700, 2000, 9, 256, 257, 4096};
        const std::vector<int32_t> mixed_q = {1, 512, 1, 3}, mixed_kv = {900, 1536, 20, 3000};
        for (const Device& dev : devices) {
            const int32_t budget = g::attention_smem_budget(dev.smem_per_sm);
            for (const Heads& h : shapes)
                for (int which = 0; which < 2; ++which) {
                    const std::vector<int32_t>& q = which == 0 ? decode_q : mixed_q;
                    const std::vector<int32_t>& kv = which == 0 ? decode_kv : mixed_kv;
                    AttentionBatch b;
                    b.n_seqs = static_cast<int32_t>(q.size());
                    b.host_q_len = q.data();
                    b.host_kv_len = kv.data();
                    g::AttentionPlan p;
                    QVERIFY(g::plan_attention(b, h.n_heads, h.n_kv, h.head_dim,
                                              AttentionShape::Planned, &p, dev.smem_per_sm));
                    const d::Geometry& geo = p.geometry;
                    const QString what =
                        QString("%1, %2, %3: %4 bytes, %5 vectors, %6 positions")
                            .arg(dev.arch, h.model, which == 0 ? "decode" : "prefill")
                            .arg(geo.smem_bytes)
                            .arg(geo.vecs)
                            .arg(geo.positions_per_tile);
                    QVERIFY2(geo.smem_bytes <= budget, qPrintable(what));
                    QCOMPARE(geo.smem_bytes, d::smem_layout(geo).bytes);
                    const int32_t resident =
                        dev.smem_per_sm / (geo.smem_bytes + d::kStaticSmem + dev.reserved);
                    QVERIFY2(resident >= dev.blocks, qPrintable(what));
                    QVERIFY2(geo.positions_per_tile >= d::kMinTilePositions, qPrintable(what));
                    // Decode stages only its heads; prefill keeps at least one row per item.
                    QCOMPARE(geo.vecs, which == 0 ? geo.heads_per_item
                                                  : geo.heads_per_item * geo.rows_per_tile);
                }
        }
        // Tight budgets take fewer vectors an item (a whole item's rows, then its heads)
        // rather than a sub-tile below 8 positions; the smallest device keeps Llama 3.1
        // 8B's 4 rows of 4 heads, and GQA 16 at head_dim 128 takes its heads in two
        // slices on sm_86.
        AttentionBatch b;
        const std::vector<int32_t> q = {64}, kv = {64};
        b.n_seqs = 1;
        b.host_q_len = q.data();
        b.host_kv_len = kv.data();
        g::AttentionPlan p;
        QVERIFY(g::plan_attention(b, 32, 8, 128, AttentionShape::Planned, &p, 64 * 1024));
        QCOMPARE(p.geometry.rows_per_tile, 4);
        QVERIFY(g::plan_attention(b, 32, 8, 128, AttentionShape::Planned, &p, 40 * 1024));
        QCOMPARE(p.geometry.rows_per_tile, 2);
        QVERIFY(g::plan_attention(b, 16, 1, 128, AttentionShape::Planned, &p, 100 * 1024));
        QCOMPARE(p.geometry.head_slices, 2);
        QVERIFY(g::plan_attention(b, 16, 1, 128, AttentionShape::Planned, &p, 228 * 1024));
        QCOMPARE(p.geometry.head_slices, 1);
        QVERIFY(!g::plan_attention(b, 32, 8, 128, AttentionShape::Planned, &p, 0));
    }

    void planning() {
        constexpr int32_t kSm90 = 228 * 1024;  // shared memory per SM: the largest tiles
        // partials_before against a loop.
        for (int32_t first : {0, 1, 255, 256, 257, 700, 1023})
            for (int32_t i : {0, 1, 2, 255, 256, 600}) {
                int64_t want = 0;
                for (int32_t x = first; x < first + i; ++x) want += x / 256 + 1;
                QCOMPARE(g::attention_detail::partials_before(first, i), want);
            }
        const std::vector<int32_t> q_len = {1, 1, 4, 5, 37}, kv_len = {1, 700, 260, 5, 600};
        AttentionBatch b;
        b.n_seqs = 5;
        b.host_q_len = q_len.data();
        b.host_kv_len = kv_len.data();
        g::AttentionPlan p;
        QVERIFY(g::plan_attention(b, 32, 8, 128, AttentionShape::Planned, &p, kSm90));
        QCOMPARE(p.geometry.group, 4);
        QCOMPARE(p.geometry.heads_per_item, 4);
        QCOMPARE(p.geometry.head_slices, 1);
        QCOMPARE(p.geometry.rows_per_tile, 4);
        QCOMPARE(p.geometry.positions_per_tile, 64);
        QCOMPARE(p.split_rows, int64_t{6});
        QCOMPARE(p.partials, int64_t{1 + 3 + 8});  // 1 chunk, 3 chunks, 4 rows × 2 chunks
        QCOMPARE(p.split_items, int64_t{12 * 8});  // per partial, per KV head
        QCOMPARE(p.whole_rows, int64_t{42});
        QCOMPARE(p.whole_items, int64_t{(2 + 10) * 8});  // tiles of 4 rows, per KV head
        QCOMPARE(p.workspace_bytes, size_t{12 * 32 * 130 * 4});
        QCOMPARE(g::attention_workspace_bytes(b, 32, 128), p.workspace_bytes);
        QCOMPARE(g::attention_workspace_bytes(b, 32, 128, AttentionShape::AllWhole), size_t{0});
        // All split: + 5 rows of one chunk, + 37 rows (positions 563..599) of 3 chunks.
        QVERIFY(g::plan_attention(b, 32, 8, 128, AttentionShape::AllSplit, &p, kSm90));
        QCOMPARE(p.partials, int64_t{12 + 5 + 111});
        QCOMPARE(p.whole_items, int64_t{0});
        QCOMPARE(g::attention_workspace_bytes(b, 32, 128, AttentionShape::AllSplit),
                 size_t{128 * 32 * 130 * 4});
        // Geometries: two dims a thread (head_dim 256), two thread groups (64), a group
        // of 20 heads in two slices, an odd head_dim's sub-tile.
        QVERIFY(g::plan_attention(b, 8, 1, 256, AttentionShape::Planned, &p, kSm90));
        QCOMPARE(p.geometry.dims_per_thread, 2);
        QCOMPARE(p.geometry.max_vecs, 8);
        QCOMPARE(p.geometry.rows_per_tile, 1);
        QCOMPARE(p.geometry.positions_per_tile, 32);
        QVERIFY(g::plan_attention(b, 20, 1, 64, AttentionShape::Planned, &p, kSm90));
        QCOMPARE(p.geometry.thread_groups, 2);
        QCOMPARE(p.geometry.head_slices, 2);
        QCOMPARE(p.geometry.heads_per_item, 10);
        QCOMPARE(p.split_items, int64_t{12 * 2});
        QVERIFY(g::plan_attention(b, 4, 4, 80, AttentionShape::Planned, &p, kSm90));
        QCOMPARE(p.geometry.rows_per_tile, 16);
        QCOMPARE(p.geometry.positions_per_tile, 100);  // 4096 / 40 words, whole warp rounds
        QCOMPARE(p.whole_items, int64_t{(1 + 3) * 4});
        // Nothing to do.
        AttentionBatch empty;
        QVERIFY(g::plan_attention(empty, 4, 4, 64, AttentionShape::Planned, &p));
        QCOMPARE(p.split_items + p.whole_items, int64_t{0});
        QCOMPARE(g::attention_workspace_bytes(empty, 4, 64), size_t{0});
    }
};

QTEST_GUILESS_MAIN(TstCudaAttentionPlan)
#include "tst_cuda_attention_plan.moc"
