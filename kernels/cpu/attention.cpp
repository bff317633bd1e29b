#include "cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "cpu/attention_fns.h"
#include "cpu/scalar_math.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

static inline int n_lanes(const AttnTile& t) {
    return t.single ? 32 : 8;
}
static inline int32_t visible(const AttnTile& t, int m) {
    const int32_t n = t.qpos[m] + 1 - t.c0;
    return n < 0 ? 0 : (n < t.c1 - t.c0 ? n : t.c1 - t.c0);
}
static inline int32_t round_up8(int32_t n) {
    return HEARTH_ROUND_UP8(n);
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Query vectors per tile (query positions × the heads of one KV group). A tile converts
// its K and V rows from fp16 once for all its queries, so more vectors amortise that
// better: on the default model's shape a 512-token prefill's attention took 1.92 ms per
// layer with 24, 1.69 with 48 and 1.55 with 96 (hearth-kernel-bench --attention, AVX-512).
// Fewer are taken when the batch would otherwise not keep the pool busy, and when a
// tile's scores (vectors × context floats, kept between the passes) would pass
// kTileScoreBytes.
constexpr int kMaxTileVectors = 96;
constexpr int kMinTileVectors = 24;
constexpr std::size_t kTileScoreBytes = std::size_t{2} << 20;
// Decode splits a context into ranges of at least this many positions.
constexpr int32_t kMinSplit = 256;

float round_fp16(float x) {
    return quant::fp16_to_f32(quant::f32_to_fp16(x));
}

const uint16_t* kv_row(const AttnTile& t, const uint16_t* base, int32_t p) {
    return base +
           (static_cast<std::size_t>(t.table[p / t.block_size]) * t.block_size + p % t.block_size) *
               t.row_stride +
           t.head_offset;
}

void scores_scalar(const AttnTile& t) {
    const int M = t.M, D = t.D;
    for (int i = 0; i < M; ++i)
        for (int d = 0; d < D; ++d) t.qh[i * D + d] = round_fp16(t.q[i][d]);
    int32_t n_vis = 0;
    for (int i = 0; i < M; ++i) {
        const int32_t v = visible(t, i);
        std::fill(t.s + i * t.s_stride + v, t.s + i * t.s_stride + round_up8(v), kNegInf);
        n_vis = std::max(n_vis, v);
    }
    const int d32 = D & ~31;  // single: the elements in ggml_vec_dot_f16's 32 lanes
    std::vector<float> kf(static_cast<std::size_t>(D));
    for (int32_t p = t.c0; p < t.c0 + n_vis; ++p) {
        const uint16_t* kr = kv_row(t, t.k, p);
        for (int d = 0; d < D; ++d) kf[static_cast<std::size_t>(d)] = quant::fp16_to_f32(kr[d]);
        for (int i = 0; i < M; ++i) {
            if (p > t.qpos[i]) continue;
            const float* qi = t.qh + i * D;
            float dot;
            if (t.single) {
                float lane[32] = {};
                for (int d = 0; d < d32; ++d)
                    lane[d & 31] += qi[d] * kf[static_cast<std::size_t>(d)];
                double sum = reduce32(lane, 1);
                for (int d = d32; d < D; ++d)
                    sum += static_cast<double>(qi[d] * kf[static_cast<std::size_t>(d)]);
                dot = static_cast<float>(sum);
            } else {
                float lane[8] = {};
                for (int d = 0; d < D; ++d) lane[d & 7] += qi[d] * kf[static_cast<std::size_t>(d)];
                dot = reduce8(lane, 1);
            }
            t.s[i * t.s_stride + (p - t.c0)] = dot * t.scale;
        }
    }
}

double exp_sum_scalar(float* s, int n, float max, double sum) {
    for (int j0 = 0; j0 < n; j0 += 8) {
        for (int j = j0; j < j0 + 8; ++j) s[j] = expv(s[j] - max);
        sum += static_cast<double>(reduce8(s + j0, 1));
    }
    return sum;
}

void normalise_scalar(float* s, int n, float inv) {
    for (int j = 0; j < n; ++j) s[j] = round_fp16(s[j] * inv);
}

void pv_scalar(const AttnTile& t) {
    const int M = t.M, D = t.D;
    std::vector<float> vf(static_cast<std::size_t>(D));
    for (int32_t p = t.c0; p < t.c1; ++p) {
        const uint16_t* vr = kv_row(t, t.v, p);
        for (int d = 0; d < D; ++d) vf[static_cast<std::size_t>(d)] = quant::fp16_to_f32(vr[d]);
        for (int i = 0; i < M; ++i) {
            if (p - t.c0 >= visible(t, i)) continue;
            const float pj = t.s[i * t.s_stride + (p - t.c0)];
            if (pj == 0.0f) continue;  // adding 0 · v changes no lane
            const int nl = n_lanes(t);
            float* lane = t.lanes + static_cast<std::size_t>(i) * nl * D + (p & (nl - 1));
            for (int d = 0; d < D; ++d)
                lane[static_cast<std::size_t>(d) * nl] += pj * vf[static_cast<std::size_t>(d)];
        }
    }
}

float max_scalar(const float* s, int n) {
    float mx = kNegInf;
    for (int j = 0; j < n; ++j) mx = std::max(mx, s[j]);
    return mx;
}

const AttnFns kScalarFns{scores_scalar, exp_sum_scalar, normalise_scalar, max_scalar, pv_scalar};

// The softmax of one query's scores, s [round_up8(n)] (the whole context in one range).
void softmax_row(const AttnFns& f, float* s, int32_t n) {
    const int32_t n8 = round_up8(n);
    const float mx = f.max(s, n8);
    const double sum = f.exp_sum(s, n8, mx, 0.0);
    f.normalise(s, n8, static_cast<float>(1.0 / sum));
}

}  // namespace

const AttnFns& attn_fns_scalar() {
    return kScalarFns;
}

float reduce8(const float* l, std::size_t stride) {
    const float w0 = l[0] + l[4 * stride], w1 = l[stride] + l[5 * stride];
    const float w2 = l[2 * stride] + l[6 * stride], w3 = l[3 * stride] + l[7 * stride];
    return (w0 + w2) + (w1 + w3);
}

float reduce32(const float* l, std::size_t stride) {
    float x[8];
    for (std::size_t i = 0; i < 8; ++i)
        x[i] =
            (l[i * stride] + l[(i + 16) * stride]) + (l[(i + 8) * stride] + l[(i + 24) * stride]);
    const float t0 = x[0] + x[4], t1 = x[1] + x[5], t2 = x[2] + x[6], t3 = x[3] + x[7];
    return (t0 + t1) + (t2 + t3);
}

void reduce_lanes(const float* lanes, int n_lanes, int D, float* out) {
    for (int d = 0; d < D; ++d) {
        const float* l = lanes + static_cast<std::size_t>(d) * n_lanes;
        out[d] = n_lanes == 32 ? reduce32(l, 1) : reduce8(l, 1);
    }
}

// The kernels of a SIMD level; the AVX ones need head_dim % 8 == 0.
static const AttnFns& attn_fns_for(SimdLevel level, int D) {
    if (D % 8 != 0) return attn_fns_scalar();
#ifdef HEARTH_HAVE_AVX512_KERNELS
    if (level == SimdLevel::Avx512) return attn_fns_avx512();
#endif
#ifdef HEARTH_HAVE_AVX2_KERNELS
    if (uses_avx2(level)) return attn_fns_avx2();
#endif
    (void)level;
    return attn_fns_scalar();
}

struct Attention::ThreadScratch {
    AlignedBuffer floats;  // s, qh and lanes of the tile being run
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
    const int32_t window = batch.window;
    int32_t max_range = 0;
    int32_t max_q = 0;
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        max_range = std::max(max_range, batch.kv_len[s]);
        max_q = std::max(max_q, batch.q_len[s]);
    }
    // The longest context range a tile can have (it sizes the tiles' scores); a sliding
    // window bounds it (below): its queries, the window and the rounding of its start.
    if (window > 0) max_range = std::min(max_range, max_q + window + kAttnChunk);
    const auto tiles_of = [&](int tq) {
        int64_t n = 0;
        for (int32_t s = 0; s < batch.n_seqs; ++s)
            n += int64_t{n_kv} * ((batch.q_len[s] + tq - 1) / tq);
        return n;
    };
    const int64_t target = 4 * int64_t{pool.size()};
    const auto score_room = static_cast<int>(std::min<std::size_t>(
        kMaxTileVectors,
        kTileScoreBytes / (sizeof(float) * static_cast<std::size_t>(round_up8(max_range) + 8))));
    int tq = std::max(1, std::max(score_room, kMinTileVectors) / group);  // positions per tile
    while (tq > 1 && (tq + 1) / 2 * group >= kMinTileVectors && tiles_of(tq) < target)
        tq = (tq + 1) / 2;
    const int m_max = tq * group;
    const AttnFns& f = attn_fns_for(level, D);

    // Tiles. The last query blocks of a sequence see the most context, so they go first:
    // the dynamic task order then finishes with the small ones. A split tile keeps its
    // scores / probabilities (slot_s floats from s_at) and lanes in shared memory between
    // the passes; an unsplit one runs start to end in its thread's scratch.
    const int64_t base = tiles_of(tq);
    const auto max_splits = static_cast<int32_t>(base >= target ? 1 : (target + base - 1) / base);
    items_.clear();
    merges_.clear();
    int32_t slots = 0;
    std::size_t shared_s = 0;
    int32_t max_unsplit_ctx = 0;
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        const int32_t ql = batch.q_len[s];
        const int32_t first_pos = batch.kv_len[s] - ql;
        for (int32_t i0 = (ql - 1) / tq * tq; i0 >= 0; i0 -= tq) {
            const int32_t nq = std::min(tq, ql - i0);
            const int32_t ctx = first_pos + i0 + nq;  // last query's position + 1
            // A sliding window: the range starts where the tile's first query's window
            // does (rounded down to a split boundary); what lies before is masked for every
            // query of the tile, and skipping it changes no sum (its probabilities are 0).
            const int32_t start =
                window > 0 ? std::max(0, first_pos + i0 - window + 1) / kAttnChunk * kAttnChunk : 0;
            const int32_t span = ctx - start;
            const int32_t splits = std::clamp((span + kMinSplit - 1) / kMinSplit, 1, max_splits);
            const int32_t chunk =
                ((span + splits - 1) / splits + kAttnChunk - 1) / kAttnChunk * kAttnChunk;
            for (int32_t g = 0; g < n_kv; ++g) {
                if (splits == 1 || chunk >= span) {
                    items_.push_back({s, g, i0, nq, start, ctx, -1, 0});
                    max_unsplit_ctx = std::max(max_unsplit_ctx, span);
                    continue;
                }
                merges_.push_back({static_cast<int32_t>(items_.size()), 0});
                for (int32_t c0 = start; c0 < ctx; c0 += chunk) {
                    const int32_t c1 = std::min(ctx, c0 + chunk);
                    items_.push_back({s, g, i0, nq, c0, c1, slots++, shared_s});
                    shared_s += static_cast<std::size_t>(nq * group) * round_up8(c1 - c0);
                    ++merges_.back().count;
                }
            }
        }
    }

    // A one-token step of a sequence takes llama.cpp's vec_dot order (attention_fns.h:
    // llama.cpp runs a single sequence's decode step as a one-token batch). Decided per
    // sequence, not per batch, so that a sequence's results do not depend on what else
    // the scheduler batched with it.
    const auto is_single = [&](int32_t s) { return !batch.batch_invariant && batch.q_len[s] == 1; };
    bool any_single = false;
    for (int32_t s = 0; s < batch.n_seqs; ++s) any_single = any_single || is_single(s);
    const int lane_max = any_single ? 32 : 8;
    const auto lanes_of = [&](const Item& it) { return is_single(it.seq) ? 32 : 8; };

    // Shared memory of the split tiles: per slot the maxima [m_max] and the lanes
    // [m_max][D][lane_max], then the scores of all slots.
    const std::size_t lanes_floats = static_cast<std::size_t>(m_max) * lane_max * D;
    const std::size_t slot_floats = static_cast<std::size_t>(m_max) + lanes_floats;
    float* shared =
        partials_.get_as<float>(static_cast<std::size_t>(slots) * slot_floats + shared_s);
    float* shared_scores = shared + static_cast<std::size_t>(slots) * slot_floats;
    if (thread_scratch_.size() < static_cast<std::size_t>(pool.size()))
        thread_scratch_.resize(pool.size());
    const std::size_t s_stride = static_cast<std::size_t>(round_up8(max_unsplit_ctx));
    // qh [m_max][D], then vf [kAttnVChunk][D].
    const std::size_t qh_floats = static_cast<std::size_t>(m_max + kAttnVChunk) * D;
    for (auto& ts : thread_scratch_) {
        if (!ts) ts = std::make_unique<ThreadScratch>();
        ts->floats.get((static_cast<std::size_t>(m_max) * s_stride + qh_floats + lanes_floats) *
                       sizeof(float));
        ts->q.resize(static_cast<std::size_t>(m_max));
        ts->qpos.resize(static_cast<std::size_t>(m_max));
    }

    const std::size_t row_stride = static_cast<std::size_t>(n_kv) * D;
    // The tile of item idx, with its queries gathered into thread's scratch.
    const auto make_tile = [&](const Item& it, ThreadScratch& ts) {
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
        AttnTile t;
        t.q = ts.q.data();
        t.qpos = ts.qpos.data();
        t.M = it.nq * group;
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
        t.qh = fl + static_cast<std::size_t>(m_max) * s_stride;
        t.vf = t.qh + static_cast<std::size_t>(m_max) * D;
        t.single = is_single(it.seq);
        if (it.partial < 0) {
            t.s = fl;
            t.s_stride = s_stride;
            t.lanes = t.qh + qh_floats;
        } else {
            t.s = shared_scores + it.s_offset;
            t.s_stride = static_cast<std::size_t>(round_up8(it.c1 - it.c0));
            t.lanes = shared + static_cast<std::size_t>(it.partial) * slot_floats + m_max;
        }
        return t;
    };
    const auto out_row = [&](const Item& it, int i) {
        const int qi = i / group, h = it.kv_head * group + i % group;
        return out +
               (static_cast<std::size_t>(batch.q_start[it.seq] + it.i0 + qi) * n_heads + h) * D;
    };

    // Positions of item it's range that its query i sees (AttnTile::visible).
    const auto item_visible = [&](const Item& it, int i) {
        const int32_t qpos = batch.kv_len[it.seq] - batch.q_len[it.seq] + it.i0 + i / group;
        return std::clamp(qpos + 1 - it.c0, 0, it.c1 - it.c0);
    };

    // Soft-capped scores (before the mask, as llama.cpp), then a sliding window's mask:
    // −inf for the positions of the tile's range that lie before query i's window, as
    // llama.cpp's mask makes them (the softmax then gives them 0).
    const float cap = batch.softcap, inv_cap = cap > 0.0f ? 1.0f / cap : 0.0f;
    const auto cap_and_mask = [&](const AttnTile& t) {
        if (cap > 0.0f) {
            for (int i = 0; i < t.M; ++i) {
                float* s = t.s + static_cast<std::size_t>(i) * t.s_stride;
                for (int32_t j = 0, v = visible(t, i); j < v; ++j)
                    s[j] = std::tanh(s[j] * inv_cap) * cap;
            }
        }
        if (window <= 0) return;
        for (int i = 0; i < t.M; ++i) {
            const int32_t masked = std::min(t.qpos[i] - window + 1 - t.c0, visible(t, i));
            float* s = t.s + static_cast<std::size_t>(i) * t.s_stride;
            for (int32_t j = 0; j < masked; ++j) s[j] = kNegInf;
        }
    };

    // (1) Unsplit tiles from start to end; the scores and maxima of split ones.
    pool.run(static_cast<int64_t>(items_.size()), [&](int64_t idx, int thread) {
        const Item& it = items_[static_cast<std::size_t>(idx)];
        const AttnTile t = make_tile(it, *thread_scratch_[static_cast<std::size_t>(thread)]);
        f.scores(t);
        cap_and_mask(t);
        if (it.partial >= 0) {
            float* mx = shared + static_cast<std::size_t>(it.partial) * slot_floats;
            for (int i = 0; i < t.M; ++i) {
                const float* s = t.s + static_cast<std::size_t>(i) * t.s_stride;
                mx[i] = f.max(s, round_up8(visible(t, i)));
            }
            return;
        }
        for (int i = 0; i < t.M; ++i)
            softmax_row(f, t.s + static_cast<std::size_t>(i) * t.s_stride, visible(t, i));
        const int lane_count = lanes_of(it);
        const std::size_t per_query = static_cast<std::size_t>(lane_count) * D;
        std::fill(t.lanes, t.lanes + t.M * per_query, 0.0f);
        f.pv(t);
        for (int i = 0; i < t.M; ++i)
            reduce_lanes(t.lanes + i * per_query, lane_count, D, out_row(it, i));
    });
    if (merges_.empty()) return;

    // (2) Per split tile: the softmax across its splits, in position order as one row;
    // then P · V, the splits in order into one set of lanes, as llama.cpp's single pass
    // over the context accumulates them (summing per-split lanes would round differently).
    pool.run(static_cast<int64_t>(merges_.size()), [&](int64_t mi, int thread) {
        const Merge& mg = merges_[static_cast<std::size_t>(mi)];
        const int M = items_[static_cast<std::size_t>(mg.first)].nq * group;
        for (int i = 0; i < M; ++i) {
            float mx = kNegInf;
            for (int32_t k = 0; k < mg.count; ++k) {
                const Item& it = items_[static_cast<std::size_t>(mg.first + k)];
                mx = std::max(mx, shared[static_cast<std::size_t>(it.partial) * slot_floats + i]);
            }
            double sum = 0.0;
            for (int32_t k = 0; k < mg.count; ++k) {
                const Item& it = items_[static_cast<std::size_t>(mg.first + k)];
                const int32_t n8 = round_up8(it.c1 - it.c0), v8 = round_up8(item_visible(it, i));
                sum = f.exp_sum(shared_scores + it.s_offset + static_cast<std::size_t>(i) * n8, v8,
                                mx, sum);
            }
            const auto inv = static_cast<float>(1.0 / sum);
            for (int32_t k = 0; k < mg.count; ++k) {
                const Item& it = items_[static_cast<std::size_t>(mg.first + k)];
                const int32_t n8 = round_up8(it.c1 - it.c0), v8 = round_up8(item_visible(it, i));
                f.normalise(shared_scores + it.s_offset + static_cast<std::size_t>(i) * n8, v8,
                            inv);
            }
        }
        ThreadScratch& ts = *thread_scratch_[static_cast<std::size_t>(thread)];
        float* lanes = nullptr;
        for (int32_t k = 0; k < mg.count; ++k) {
            const Item& it = items_[static_cast<std::size_t>(mg.first + k)];
            const AttnTile t = make_tile(it, ts);
            if (k == 0) {
                lanes = t.lanes;
                std::fill(lanes, lanes + static_cast<std::size_t>(t.M) * lanes_of(it) * D, 0.0f);
            }
            AttnTile tk = t;
            tk.lanes = lanes;
            f.pv(tk);
        }
        const Item& first = items_[static_cast<std::size_t>(mg.first)];
        const int lane_count = lanes_of(first);
        const std::size_t per_query = static_cast<std::size_t>(lane_count) * D;
        for (int i = 0; i < first.nq * group; ++i)
            reduce_lanes(lanes + i * per_query, lane_count, D, out_row(first, i));
    });
}

}  // namespace hearth::kernels::cpu
