#include "cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "cpu/attention_fns.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Query vectors per tile: enough to amortise loading each K/V row (about 24), split as
// query positions × the heads of one KV group.
constexpr int kTileVectors = 24;
// Decode splits a context into ranges of at least this many positions.
constexpr int32_t kMinSplit = 256;

}  // namespace

void attend_scalar(const AttnTile& t) {
    const int M = t.M, D = t.D;
    float* kf = t.scratch;            // [chunk][D]
    float* vf = kf + kAttnChunk * D;  // [chunk][D]
    float* S = vf + kAttnChunk * D;   // [M][chunk]
    for (int i = 0; i < M; ++i) {
        std::fill(t.acc + i * D, t.acc + (i + 1) * D, 0.0f);
        t.m[i] = kNegInf;
        t.l[i] = 0.0f;
    }
    for (int32_t p0 = t.c0; p0 < t.c1; p0 += kAttnChunk) {
        const int n = std::min<int32_t>(kAttnChunk, t.c1 - p0);
        for (int j = 0; j < n; ++j) {
            const int32_t p = p0 + j;
            const std::size_t row =
                (static_cast<std::size_t>(t.table[p / t.block_size]) * t.block_size +
                 p % t.block_size) *
                    t.row_stride +
                t.head_offset;
            for (int d = 0; d < D; ++d) {
                kf[j * D + d] = quant::fp16_to_f32(t.k[row + d]);
                vf[j * D + d] = quant::fp16_to_f32(t.v[row + d]);
            }
        }
        for (int i = 0; i < M; ++i) {
            const float* qi = t.q[i];
            float* s = S + i * kAttnChunk;
            float mx = kNegInf;
            for (int j = 0; j < n; ++j) {
                if (p0 + j > t.qpos[i]) {
                    s[j] = kNegInf;
                    continue;
                }
                float a[4] = {};
                int d = 0;
                for (; d + 4 <= D; d += 4)
                    for (int u = 0; u < 4; ++u) a[u] += qi[d + u] * kf[j * D + d + u];
                for (; d < D; ++d) a[0] += qi[d] * kf[j * D + d];
                s[j] = ((a[0] + a[1]) + (a[2] + a[3])) * t.scale;
                mx = std::max(mx, s[j]);
            }
            if (mx == kNegInf) continue;  // nothing visible to this query in the chunk
            const float m_new = std::max(t.m[i], mx);
            const float alpha = std::exp(t.m[i] - m_new);  // 0 on the first visible chunk
            float sum = 0.0f;
            for (int j = 0; j < n; ++j) {
                s[j] = std::exp(s[j] - m_new);
                sum += s[j];
            }
            t.l[i] = t.l[i] * alpha + sum;
            t.m[i] = m_new;
            float* acc = t.acc + i * D;
            for (int d = 0; d < D; ++d) acc[d] *= alpha;
            for (int j = 0; j < n; ++j) {
                if (s[j] == 0.0f) continue;
                for (int d = 0; d < D; ++d) acc[d] += s[j] * vf[j * D + d];
            }
        }
    }
}

struct Attention::ThreadScratch {
    AlignedBuffer floats;  // kernel scratch, then acc / m / l of a directly written tile
    std::vector<const float*> q;
    std::vector<int32_t> qpos;
};

Attention::Attention() = default;
Attention::~Attention() = default;

void Attention::run(ThreadPool& pool, SimdLevel level, const float* q, const PagedKvLayer& cache,
                    const AttentionBatch& batch, int32_t n_heads, float scale, float* out) {
    const int D = cache.head_dim;
    const int n_kv = cache.n_kv_heads;
    if (batch.n_seqs <= 0 || D <= 0 || n_kv <= 0) return;
    const int group = n_heads / n_kv;
    const int tq = std::max(1, kTileVectors / group);  // query positions per tile
    const int m_max = tq * group;
#ifdef HEARTH_HAVE_AVX2_KERNELS
    const AttnFn attend = level == SimdLevel::Avx2 && D % 8 == 0 ? attend_avx2 : attend_scalar;
#else
    (void)level;
    const AttnFn attend = attend_scalar;
#endif

    // Tiles. The last query blocks of a sequence see the most context, so they go first:
    // the dynamic task order then finishes with the small ones.
    int64_t base = 0;
    for (int32_t s = 0; s < batch.n_seqs; ++s)
        base += int64_t{n_kv} * ((batch.q_len[s] + tq - 1) / tq);
    const int64_t target = 4 * int64_t{pool.size()};
    const auto max_splits = static_cast<int32_t>(base >= target ? 1 : (target + base - 1) / base);
    items_.clear();
    merges_.clear();
    int32_t slots = 0;
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        const int32_t ql = batch.q_len[s];
        const int32_t first_pos = batch.kv_len[s] - ql;
        for (int32_t i0 = (ql - 1) / tq * tq; i0 >= 0; i0 -= tq) {
            const int32_t nq = std::min(tq, ql - i0);
            const int32_t ctx = first_pos + i0 + nq;  // last query's position + 1
            const int32_t splits = std::clamp((ctx + kMinSplit - 1) / kMinSplit, 1, max_splits);
            const int32_t chunk =
                ((ctx + splits - 1) / splits + kAttnChunk - 1) / kAttnChunk * kAttnChunk;
            for (int32_t g = 0; g < n_kv; ++g) {
                if (splits == 1) {
                    items_.push_back({s, g, i0, nq, 0, ctx, -1});
                    continue;
                }
                merges_.push_back({static_cast<int32_t>(items_.size()), 0});
                for (int32_t c0 = 0; c0 < ctx; c0 += chunk) {
                    items_.push_back({s, g, i0, nq, c0, std::min(ctx, c0 + chunk), slots++});
                    ++merges_.back().count;
                }
            }
        }
    }

    const std::size_t vec = static_cast<std::size_t>(D) + 2;  // acc[D], m, l
    float* partials = partials_.get_as<float>(static_cast<std::size_t>(slots) * m_max * vec);
    if (thread_scratch_.size() < static_cast<std::size_t>(pool.size()))
        thread_scratch_.resize(pool.size());
    const std::size_t kernel_floats = (attn_scratch_floats(m_max, D) + 15) & ~std::size_t{15};
    for (auto& ts : thread_scratch_) {
        if (!ts) ts = std::make_unique<ThreadScratch>();
        ts->floats.get((kernel_floats + static_cast<std::size_t>(m_max) * vec) * sizeof(float));
        ts->q.resize(static_cast<std::size_t>(m_max));
        ts->qpos.resize(static_cast<std::size_t>(m_max));
    }

    const std::size_t row_stride = static_cast<std::size_t>(n_kv) * D;
    pool.run(static_cast<int64_t>(items_.size()), [&](int64_t idx, int thread) {
        const Item& it = items_[static_cast<std::size_t>(idx)];
        ThreadScratch& ts = *thread_scratch_[static_cast<std::size_t>(thread)];
        const int M = it.nq * group;
        const int32_t first_pos = batch.kv_len[it.seq] - batch.q_len[it.seq];
        const int32_t tok0 = batch.q_start[it.seq] + it.i0;
        for (int qi = 0; qi < it.nq; ++qi) {
            for (int hh = 0; hh < group; ++hh) {
                const int h = it.kv_head * group + hh;
                ts.q[static_cast<std::size_t>(qi * group + hh)] =
                    q + (static_cast<std::size_t>(tok0 + qi) * n_heads + h) * D;
                ts.qpos[static_cast<std::size_t>(qi * group + hh)] = first_pos + it.i0 + qi;
            }
        }
        float* fl = static_cast<float*>(ts.floats.get(0));
        float* res = it.partial >= 0 ? partials + static_cast<std::size_t>(it.partial) * m_max * vec
                                     : fl + kernel_floats;
        AttnTile t;
        t.q = ts.q.data();
        t.qpos = ts.qpos.data();
        t.M = M;
        t.D = D;
        t.scale = scale;
        t.k = cache.k;
        t.v = cache.v;
        t.table = batch.block_tables + batch.block_table_start[it.seq];
        t.block_size = cache.block_size;
        t.row_stride = row_stride;
        t.head_offset = static_cast<std::size_t>(it.kv_head) * D;
        t.c0 = it.c0;
        t.c1 = it.c1;
        t.scratch = fl;
        t.acc = res;
        t.m = res + static_cast<std::size_t>(M) * D;
        t.l = t.m + M;
        attend(t);
        if (it.partial >= 0) return;
        for (int i = 0; i < M; ++i) {
            const int qi = i / group, h = it.kv_head * group + i % group;
            float* o = out + (static_cast<std::size_t>(tok0 + qi) * n_heads + h) * D;
            const float inv = 1.0f / t.l[i];
            for (int d = 0; d < D; ++d) o[d] = t.acc[i * D + d] * inv;
        }
    });

    // Merge the context splits of each tile: out = Σ_k e^(m_k − M) acc_k / Σ_k e^(m_k − M) l_k.
    pool.run(static_cast<int64_t>(merges_.size()), [&](int64_t mi, int) {
        const Merge& mg = merges_[static_cast<std::size_t>(mi)];
        const Item& it = items_[static_cast<std::size_t>(mg.first)];
        const int M = it.nq * group;
        const int32_t tok0 = batch.q_start[it.seq] + it.i0;
        for (int i = 0; i < M; ++i) {
            const int qi = i / group, h = it.kv_head * group + i % group;
            float* o = out + (static_cast<std::size_t>(tok0 + qi) * n_heads + h) * D;
            float mx = kNegInf;
            for (int32_t k = 0; k < mg.count; ++k) {
                const float* r =
                    partials + static_cast<std::size_t>(items_[mg.first + k].partial) * m_max * vec;
                mx = std::max(mx, r[static_cast<std::size_t>(M) * D + i]);
            }
            float l = 0.0f;
            std::fill(o, o + D, 0.0f);
            for (int32_t k = 0; k < mg.count; ++k) {
                const float* r =
                    partials + static_cast<std::size_t>(items_[mg.first + k].partial) * m_max * vec;
                const float mk = r[static_cast<std::size_t>(M) * D + i];
                if (mk == kNegInf) continue;
                const float w = std::exp(mk - mx);
                l += w * r[static_cast<std::size_t>(M) * D + M + i];
                for (int d = 0; d < D; ++d) o[d] += w * r[i * D + d];
            }
            const float inv = 1.0f / l;
            for (int d = 0; d < D; ++d) o[d] *= inv;
        }
    });
}

}  // namespace hearth::kernels::cpu
