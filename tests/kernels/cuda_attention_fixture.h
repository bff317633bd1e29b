// What the CUDA attention suites share (tst_cuda_attention on the host,
// tst_cuda_attention_device on a device): random paged caches with a query vector for
// every position, steps formed over them, runs through the host twin and the device, and
// rows compared bit for bit by (sequence, position).
#pragma once

#include <QtTest>

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
#include "tst_cpu_helpers.h"

namespace g = hearth::gpu;
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

std::vector<float> run_host(Cache& c, const Step& st, AttentionShape shape,
                            int32_t smem_per_sm = g::attention_detail::kSmemPerSmFloor) {
    const AttentionBatch b = st.batch(c.tables.data());
    std::vector<float> ws(g::attention_workspace_bytes(b, c.n_heads, c.head_dim, shape) / 4 + 1);
    std::vector<float> out(static_cast<size_t>(st.rows) * c.row_floats(), std::nanf(""));
    if (!g::attention_on_host(st.q.data(), c.layer(), b, c.n_heads, c.scale(), out.data(),
                              ws.data(), ws.size() * 4, shape, smem_per_sm))
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

inline std::vector<float> run_device(const Cache& c, DeviceCache& dc, const Step& st,
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
