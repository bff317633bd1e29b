// The CUDA paged attention (kernels/cuda/attention.h). Its code run on the host (everywhere,
// CI included): against the double-precision reference (kernels/reference) over block
// sizes 1, 3, 7, 16 with shuffled non-contiguous block tables, prefixes ending mid-block,
// GQA ratios 1, 3, 8, head_dim 64, 80, 128 and 256, contexts of 1 to 700 positions (chunk
// boundaries at 256, 512) and batches mixing decode steps with prefill chunks; batch
// invariance bit for bit (a row alone or in company, split or whole shape, a prompt in one
// step or in chunks); bounded launches; refused arguments (the plan and its workspace
// bounds: tst_cuda_attention_plan). On a device (skipped without
// one): the device against the host run, and the same invariances on the device, bit for
// bit.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "cuda/attention.h"
#include "cuda/cuda_buffer.h"
#include "gpu/gpu_test.h"
#include "quant/fp16.h"
#include "reference/reference_ops.h"
#include "tst_cpu_helpers.h"

namespace g = hearth::gpu;
namespace ref = hearth::kernels::reference;
using g::AttentionShape;
using hearth::kernels::AttentionBatch;
using hearth::kernels::PagedKvLayer;
using hearth::test::random_floats;

namespace {

// Sequences whose whole context (len positions) is in a random paged cache, with a query
// vector for every position, so that any step over them can be formed: a step computes
// rows [a, b) of some sequences (kv_len b, q_len b - a).
struct Cache {
    int32_t block_size, n_kv, n_heads, head_dim, n_blocks = 0;
    std::vector<int32_t> len, table_start, tables;
    std::vector<uint16_t> k, v;
    std::vector<std::vector<float>> q;  // per sequence [len, n_heads, head_dim]

    Cache(std::mt19937& rng, int32_t bs, int32_t kv_heads, int32_t heads, int32_t D,
          const std::vector<int32_t>& lengths, float k_scale = 1.0f)
        : block_size(bs), n_kv(kv_heads), n_heads(heads), head_dim(D), len(lengths) {
        for (int32_t l : len) n_blocks += (l + bs - 1) / bs;
        n_blocks += 3;  // blocks nobody owns
        std::vector<int32_t> pool(static_cast<size_t>(n_blocks));
        for (int32_t i = 0; i < n_blocks; ++i) pool[static_cast<size_t>(i)] = i;
        std::shuffle(pool.begin(), pool.end(), rng);
        const size_t elems = static_cast<size_t>(n_blocks) * bs * kv_heads * D;
        for (float f : random_floats(rng, elems, -k_scale, k_scale))
            k.push_back(hearth::quant::f32_to_fp16(f));
        for (float f : random_floats(rng, elems)) v.push_back(hearth::quant::f32_to_fp16(f));
        size_t next = 0;
        for (int32_t l : len) {
            table_start.push_back(static_cast<int32_t>(tables.size()));
            for (int32_t b = 0; b < (l + bs - 1) / bs; ++b) tables.push_back(pool[next++]);
            q.push_back(random_floats(rng, static_cast<size_t>(l) * heads * D));
        }
    }
    PagedKvLayer layer() { return {k.data(), v.data(), n_blocks, block_size, n_kv, head_dim}; }
    size_t row_floats() const { return static_cast<size_t>(n_heads) * head_dim; }
    float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }
};

struct Part {
    int32_t seq, a, b;  // rows [a, b) of sequence seq
};

// The arrays of one step and its query rows, host side.
struct Step {
    std::vector<Part> parts;
    std::vector<int32_t> q_start, q_len, kv_len, bt_start;
    std::vector<float> q;
    int32_t rows = 0;
    int32_t window = 0;  // AttentionBatch::window, softcap
    float softcap = 0.0f;

    Step(const Cache& c, std::vector<Part> ps) : parts(std::move(ps)) {
        for (const Part& p : parts) {
            q_start.push_back(rows);
            q_len.push_back(p.b - p.a);
            kv_len.push_back(p.b);
            bt_start.push_back(c.table_start[static_cast<size_t>(p.seq)]);
            const auto& sq = c.q[static_cast<size_t>(p.seq)];
            q.insert(q.end(), sq.begin() + static_cast<ptrdiff_t>(p.a * c.row_floats()),
                     sq.begin() + static_cast<ptrdiff_t>(p.b * c.row_floats()));
            rows += p.b - p.a;
        }
    }
    // The batch over device copies of the arrays (or these host arrays when null).
    AttentionBatch batch(const int32_t* tables, const int32_t* d_q_start = nullptr,
                         const int32_t* d_q_len = nullptr, const int32_t* d_kv_len = nullptr,
                         const int32_t* d_bt_start = nullptr) const {
        AttentionBatch b;
        b.n_seqs = static_cast<int32_t>(parts.size());
        b.q_start = d_q_start ? d_q_start : q_start.data();
        b.q_len = d_q_len ? d_q_len : q_len.data();
        b.kv_len = d_kv_len ? d_kv_len : kv_len.data();
        b.block_table_start = d_bt_start ? d_bt_start : bt_start.data();
        b.block_tables = tables;
        for (size_t s = 0; s < parts.size(); ++s) {
            b.max_q_len = std::max(b.max_q_len, q_len[s]);
            b.max_kv_len = std::max(b.max_kv_len, kv_len[s]);
        }
        b.host_q_start = q_start.data();
        b.host_q_len = q_len.data();
        b.host_kv_len = kv_len.data();
        b.batch_invariant = true;
        b.window = window;
        b.softcap = softcap;
        return b;
    }
};

// Output rows by (sequence, position).
using Rows = std::map<std::pair<int32_t, int32_t>, std::vector<float>>;

Rows by_position(const Cache& c, const Step& st, const std::vector<float>& out) {
    Rows rows;
    size_t r = 0;
    for (const Part& p : st.parts)
        for (int32_t pos = p.a; pos < p.b; ++pos, ++r)
            rows[{p.seq, pos}] =
                std::vector<float>(out.begin() + static_cast<ptrdiff_t>(r * c.row_floats()),
                                   out.begin() + static_cast<ptrdiff_t>((r + 1) * c.row_floats()));
    return rows;
}

std::vector<float> run_host(Cache& c, const Step& st, AttentionShape shape) {
    const AttentionBatch b = st.batch(c.tables.data());
    std::vector<float> ws(g::attention_workspace_bytes(b, c.n_heads, c.head_dim, shape) / 4 + 1);
    std::vector<float> out(static_cast<size_t>(st.rows) * c.row_floats(), std::nanf(""));
    if (!g::attention_on_host(st.q.data(), c.layer(), b, c.n_heads, c.scale(), out.data(),
                              ws.data(), ws.size() * 4, shape))
        qFatal("attention_on_host refused a valid call");
    return out;
}

// Every row of `got` at a position `want` has equals that row bit for bit (rows of other
// sequences in company are not compared); at least one row is compared.
bool same_rows(const Rows& want, const Rows& got, QString* why) {
    int compared = 0;
    for (const auto& [key, row] : got) {
        const auto it = want.find(key);
        if (it == want.end()) continue;
        ++compared;
        if (std::memcmp(it->second.data(), row.data(), row.size() * sizeof(float)) != 0) {
            *why = QString("sequence %1 position %2 differs").arg(key.first).arg(key.second);
            return false;
        }
    }
    *why = "no row compared";
    return compared > 0;
}

// A batch mixing decode steps, a prefill chunk over a cached prefix (ending mid-block), a
// fresh prompt and short steps, over contexts across the chunk boundaries.
std::vector<Part> mixed_parts() {
    return {{0, 0, 1},  {1, 254, 255}, {2, 255, 256}, {3, 256, 257}, {4, 690, 700},
            {5, 0, 37}, {6, 517, 520}, {7, 300, 305}, {8, 698, 700}, {9, 250, 262}};
}
const std::vector<int32_t> kMixedLengths = {1, 255, 256, 257, 700, 37, 520, 305, 700, 262};

// More sequences than a block has threads (the block-to-sequence scan takes two rounds),
// short and long steps at random, one sequence with no query rows this step.
struct Many {
    std::vector<int32_t> lengths;
    std::vector<Part> parts;
    explicit Many(std::mt19937& rng) {
        std::uniform_int_distribution<int32_t> len(1, 600), pick(0, 4);
        const int32_t q_lens[] = {1, 2, 4, 5, 9};
        for (int32_t s = 0; s < 150; ++s) {
            const int32_t l = len(rng);
            const int32_t q = s == 77 ? 0 : std::min(l, q_lens[pick(rng)]);
            lengths.push_back(l);
            parts.push_back({s, l - q, l});
        }
    }
};

// Sequence 4's 700-position prompt in steps of 1 to 296 rows, some in company, crossing
// the 256-position chunk edges: each step's parts (sequence, first row, end row).
std::vector<std::vector<Part>> prompt_pieces() {
    return {{{4, 0, 1}},     {{4, 1, 4}, {0, 0, 1}},         {{4, 4, 254}},   {{4, 254, 259}},
            {{4, 259, 260}}, {{1, 200, 255}, {4, 260, 556}}, {{4, 556, 699}}, {{4, 699, 700}}};
}

}  // namespace

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
        for (int32_t D : {128, 64}) {
            Cache c(rng, 7, 2, 8, D, kMixedLengths, 2.0f);
            const Step mixed(c, mixed_parts());
            const Rows all = by_position(c, mixed, run_host(c, mixed, AttentionShape::Planned));
            QString why;
            // The shapes agree.
            for (AttentionShape shape : {AttentionShape::AllSplit, AttentionShape::AllWhole})
                QVERIFY2(same_rows(all, by_position(c, mixed, run_host(c, mixed, shape)), &why),
                         qPrintable(QString("shape %1: ").arg(static_cast<int>(shape)) + why));
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

    void deviceMatchesTheHost();
    void deviceIsBatchInvariant();
    void deviceShapesTheSuitesMissed();
};

namespace {

using hearth::test::on_device;

// A Cache's K, V and block tables on the device.
struct DeviceCache {
    g::DeviceBuffer<uint16_t> k, v;
    g::DeviceBuffer<int32_t> tables;
    PagedKvLayer layer;
    explicit DeviceCache(const Cache& c)
        : k(on_device(c.k)), v(on_device(c.v)), tables(on_device(c.tables)) {
        layer = {k.data(), v.data(), c.n_blocks, c.block_size, c.n_kv, c.head_dim};
    }
};

std::vector<float> run_device(const Cache& c, DeviceCache& dc, const Step& st,
                              AttentionShape shape) {
    auto q_start = on_device(st.q_start), q_len = on_device(st.q_len),
         kv_len = on_device(st.kv_len), bt_start = on_device(st.bt_start);
    const AttentionBatch b =
        st.batch(dc.tables.data(), q_start.data(), q_len.data(), kv_len.data(), bt_start.data());
    const size_t bytes = g::attention_workspace_bytes(b, c.n_heads, c.head_dim, shape);
    auto q = on_device(st.q);
    std::vector<float> out(static_cast<size_t>(st.rows) * c.row_floats(), std::nanf(""));
    auto d_out = on_device(out);
    auto ws = on_device(std::vector<float>(bytes / 4 + 1, std::nanf("")));
    if (g::attention_cuda(q.data(), dc.layer, b, c.n_heads, c.scale(), d_out.data(), ws.data(),
                          ws.bytes(), nullptr, shape) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(out.data(), d_out.data(), out.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess)
        qFatal("device attention failed");
    return out;
}

}  // namespace

// The device against the host run: the same operations in the same order but for the
// device's expf (a few ulps), so within 4e-6 (V rows are in [-1, 1]).
void TstCudaAttention::deviceMatchesTheHost() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7004);
    struct Config {
        int32_t block_size, n_kv, n_heads, head_dim;
    };
    for (const Config& cf : {Config{16, 8, 32, 128}, Config{7, 2, 6, 64}, Config{3, 1, 8, 80},
                             Config{16, 2, 16, 256}, Config{1, 4, 4, 128}}) {
        Cache c(rng, cf.block_size, cf.n_kv, cf.n_heads, cf.head_dim, kMixedLengths, 2.0f);
        DeviceCache dc(c);
        const Step st(c, mixed_parts());
        const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
        const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
        for (size_t i = 0; i < got.size(); ++i)
            HEARTH_CHECK(std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
                         QString("head_dim %1, %2 heads: element %3: %4 vs %5")
                             .arg(cf.head_dim)
                             .arg(cf.n_heads)
                             .arg(i)
                             .arg(got[i])
                             .arg(want[i]));
    }
    const Many many(rng);
    Cache c(rng, 5, 2, 4, 64, many.lengths, 2.0f);
    DeviceCache dc(c);
    const Step st(c, many.parts);
    const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
    const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
    for (size_t i = 0; i < got.size(); ++i)
        HEARTH_CHECK(
            std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
            QString("150 sequences: element %1: %2 vs %3").arg(i).arg(got[i]).arg(want[i]));
}

// On the device, bit for bit: the shapes agree, a row alone equals the row in company, and a
// prompt in one step equals it in chunks (decode steps included).
void TstCudaAttention::deviceIsBatchInvariant() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7005);
    for (int32_t D : {128, 64, 256}) {
        Cache c(rng, 16, 8, 32, D, kMixedLengths, 2.0f);
        DeviceCache dc(c);
        const Step mixed(c, mixed_parts());
        const Rows all = by_position(c, mixed, run_device(c, dc, mixed, AttentionShape::Planned));
        QString why;
        for (AttentionShape shape : {AttentionShape::AllSplit, AttentionShape::AllWhole})
            QVERIFY2(
                same_rows(all, by_position(c, mixed, run_device(c, dc, mixed, shape)), &why),
                qPrintable(QString("head_dim %1, shape %2: ").arg(D).arg(static_cast<int>(shape)) +
                           why));
        for (const Part& p : mixed_parts()) {
            const Step alone(c, {p});
            QVERIFY2(
                same_rows(all,
                          by_position(c, alone, run_device(c, dc, alone, AttentionShape::Planned)),
                          &why),
                qPrintable(QString("head_dim %1 alone: ").arg(D) + why));
        }
        const Step whole(c, {{4, 0, 700}});
        const Rows one = by_position(c, whole, run_device(c, dc, whole, AttentionShape::Planned));
        for (const auto& ps : prompt_pieces()) {
            const Step st(c, ps);
            QVERIFY2(
                same_rows(one, by_position(c, st, run_device(c, dc, st, AttentionShape::Planned)),
                          &why),
                qPrintable(QString("head_dim %1 chunked prompt: ").arg(D) + why));
        }
    }
}

QTEST_GUILESS_MAIN(TstCudaAttention)
#include "tst_cuda_attention.moc"

// Shapes the other device tests miss, device against host: head_dim 96 with GQA 7 and 256
// with GQA 16, contexts one either side of chunk edges, 256 decode sequences in one step,
// and a 1,024 window over a 20k context (decode rows and a prefill chunk).
void TstCudaAttention::deviceShapesTheSuitesMissed() {
    HEARTH_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7006);
    const auto check = [](Cache& c, DeviceCache& dc, const Step& st, const QString& what) {
        const std::vector<float> want = run_host(c, st, AttentionShape::Planned);
        const std::vector<float> got = run_device(c, dc, st, AttentionShape::Planned);
        for (size_t i = 0; i < got.size(); ++i)
            HEARTH_CHECK(
                std::fabs(got[i] - want[i]) <= 4e-6f * std::max(1.0f, std::fabs(want[i])),
                QString("%1: element %2: %3 vs %4").arg(what).arg(i).arg(got[i]).arg(want[i]));
    };
    const std::vector<int32_t> edges = {255, 256, 257, 511, 512, 513, 1023, 1025};
    struct Config {
        int32_t n_kv, n_heads, head_dim;
    };
    for (const Config& cf : {Config{2, 14, 96}, Config{1, 16, 256}, Config{4, 28, 128}}) {
        Cache c(rng, 16, cf.n_kv, cf.n_heads, cf.head_dim, edges, 2.0f);
        DeviceCache dc(c);
        std::vector<Part> decode, prefill;
        for (int32_t s = 0; s < static_cast<int32_t>(edges.size()); ++s) {
            const int32_t len = edges[static_cast<size_t>(s)];
            decode.push_back({s, len - 1, len});
            prefill.push_back({s, len - 37, len});
        }
        const QString what =
            QString("head_dim %1, %2 / %3 heads").arg(cf.head_dim).arg(cf.n_heads).arg(cf.n_kv);
        check(c, dc, Step(c, decode), what + ", decode at chunk edges");
        check(c, dc, Step(c, prefill), what + ", prefill chunks at chunk edges");
    }
    {
        std::vector<int32_t> lengths(256);
        for (int32_t& l : lengths) l = 1 + static_cast<int32_t>(rng() % 2000);
        Cache c(rng, 16, 2, 8, 64, lengths, 2.0f);
        DeviceCache dc(c);
        std::vector<Part> decode;
        for (int32_t s = 0; s < 256; ++s)
            decode.push_back(
                {s, lengths[static_cast<size_t>(s)] - 1, lengths[static_cast<size_t>(s)]});
        check(c, dc, Step(c, decode), "256 decode sequences");
    }
    {
        Cache c(rng, 16, 1, 4, 256, {20000}, 2.0f);
        DeviceCache dc(c);
        for (const std::vector<Part>& parts :
             {std::vector<Part>{{0, 19999, 20000}}, std::vector<Part>{{0, 19000, 19100}}}) {
            Step st(c, parts);
            st.window = 1024;
            check(c, dc, st,
                  QString("window 1024 over 20000, rows %1..%2").arg(parts[0].a).arg(parts[0].b));
        }
    }
}
