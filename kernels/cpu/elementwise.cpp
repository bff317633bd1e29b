#include "cpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/scalar_math.h"
#include "quant/dequant.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

// Below this many elements an op runs on the calling thread: waking the pool costs
// about as much as the op.
constexpr int64_t kParallelElems = 1 << 15;
constexpr int64_t kChunkElems = 1 << 14;

// As ggml's rms_norm: the squares in float, summed in double, the mean rounded to float,
// scale = 1 / sqrtf(mean + eps) in float. The sum runs in eight interleaved partial sums
// combined in the order of the AVX2 kernel's lanes, so both paths give the same bits
// (and ggml's sequential double sum rounds to the same float mean but for rare ties).
void rms_norm_scalar(const float* x, const float* w, int64_t rows, int64_t n, float eps,
                     float* out) {
    const int64_t n8 = n & ~int64_t{7};
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        double part[8] = {};
        for (int64_t i = 0; i < n8; ++i) part[i & 7] += static_cast<double>(xr[i] * xr[i]);
        double ss = ((part[0] + part[4]) + (part[2] + part[6])) +
                    ((part[1] + part[5]) + (part[3] + part[7]));
        for (int64_t i = n8; i < n; ++i) ss += static_cast<double>(xr[i] * xr[i]);
        const auto mean = static_cast<float>(ss / static_cast<double>(n));
        const float scale = 1.0f / std::sqrt(mean + eps);
        for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * w[i];
    }
}

// ggml's SiLU (with its exponential, scalar_math.h), then the product.
void swiglu_scalar(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + expv(0.0f - gate[i])) * up[i];
}

void add_scalar(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void to_fp16_scalar(const float* x, int64_t n, uint16_t* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = quant::f32_to_fp16(x[i]);
}

void geglu_scalar(const float* table, const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        out[i] = g <= -10.0f ? 0.0f : g >= 10.0f ? g * up[i] : table[quant::f32_to_fp16(g)] * up[i];
    }
}

const ElementwiseFns kScalar{rms_norm_scalar, swiglu_scalar, add_scalar, to_fp16_scalar,
                             geglu_scalar};

// Runs fn(begin, end) over [0, n) in chunks (of whole `unit`s) on the pool when n is large.
template <typename F>
void split(ThreadPool& pool, int64_t n, int64_t unit, F&& fn) {
    if (n * unit < kParallelElems || pool.size() == 1) {
        fn(int64_t{0}, n);
        return;
    }
    const int64_t per = std::max<int64_t>(1, kChunkElems / unit);
    const int64_t tasks = (n + per - 1) / per;
    pool.run(tasks, [&](int64_t t, int) { fn(t * per, std::min(n, (t + 1) * per)); });
}

}  // namespace

const ElementwiseFns& elementwise_fns(SimdLevel level) {
#ifdef HEARTH_HAVE_AVX2_KERNELS
    if (uses_avx2(level)) return elementwise_fns_avx2();
#else
    (void)level;
#endif
    return kScalar;
}

const float* RopeTable::get(const int32_t* positions, int32_t n_tokens, const RopeParams& p) {
    const int half = p.n_rot / 2;
    const bool same =
        valid_ && positions_.size() == static_cast<size_t>(n_tokens) &&
        std::equal(positions_.begin(), positions_.end(), positions) && params_.n_rot == p.n_rot &&
        params_.freq_base == p.freq_base && params_.freq_scale == p.freq_scale &&
        params_.attn_factor == p.attn_factor && (p.freq_factors == nullptr) == factors_.empty() &&
        (p.freq_factors == nullptr || std::equal(factors_.begin(), factors_.end(), p.freq_factors));
    if (same) return table_.data();
    positions_.assign(positions, positions + n_tokens);
    factors_.clear();
    if (p.freq_factors) factors_.assign(p.freq_factors, p.freq_factors + half);
    params_ = p;
    params_.freq_factors = nullptr;
    valid_ = true;
    // θ(t, i) = freq_scale · pos_t · base^(−2i / n_rot) / ff[i], computed as ggml's rope
    // cache does (float, the power by repeated multiplication, cosf / sinf), because the
    // rotated Q and K then round to the same fp16 values as llama.cpp's.
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    table_.resize(static_cast<size_t>(n_tokens) * static_cast<size_t>(half) * 2);
    for (int32_t t = 0; t < n_tokens; ++t) {
        float theta = static_cast<float>(positions[t]);
        float* row = table_.data() + static_cast<size_t>(t) * static_cast<size_t>(half) * 2;
        for (int i = 0; i < half; ++i) {
            const float th = p.freq_scale * (p.freq_factors ? theta / p.freq_factors[i] : theta);
            // ggml's rope_yarn: cosf(θ)·mscale (a product that is exact when it is 1).
            row[2 * i] = std::cos(th) * p.attn_factor;
            row[2 * i + 1] = std::sin(th) * p.attn_factor;
            theta *= theta_scale;
        }
    }
    return table_.data();
}

void rope(ThreadPool& pool, RopeTable& table, float* x, const int32_t* positions, int32_t n_tokens,
          int32_t n_heads, int32_t head_dim, const RopeParams& params) {
    const int half = params.n_rot / 2;
    if (half <= 0 || n_tokens <= 0) return;
    const float* cs = table.get(positions, n_tokens, params);
    split(pool, n_tokens, int64_t{n_heads} * head_dim, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const float* c = cs + t * half * 2;  // [half][cos, sin]
            for (int32_t h = 0; h < n_heads; ++h) {
                float* v = x + (t * n_heads + h) * head_dim;
                // The FMAs that GCC contracts ggml's rotate_pairs into (checked bit for bit
                // against llama.cpp's rotated Q): a·cos − (b·sin), a·sin + (b·cos).
                const auto rotate = [c](float& a, float& b, int i) {
                    const float a0 = a, b0 = b;
                    a = fma_exact(a0, c[2 * i], -(b0 * c[2 * i + 1]));
                    b = fma_exact(a0, c[2 * i + 1], b0 * c[2 * i]);
                };
                if (params.neox) {
                    for (int i = 0; i < half; ++i) rotate(v[i], v[i + half], i);
                } else {
                    for (int i = 0; i < half; ++i) rotate(v[2 * i], v[2 * i + 1], i);
                }
            }
        }
    });
}

void rms_norm(ThreadPool& pool, const ElementwiseFns& f, const float* x, const float* w,
              int32_t rows, int32_t n, float eps, float* out) {
    split(pool, rows, n, [&](int64_t r0, int64_t r1) {
        f.rms_norm(x + r0 * n, w, r1 - r0, n, eps, out + r0 * n);
    });
}

void swiglu(ThreadPool& pool, const ElementwiseFns& f, const float* gate, const float* up,
            int64_t n, float* out) {
    split(pool, n, 1,
          [&](int64_t i0, int64_t i1) { f.swiglu(gate + i0, up + i0, i1 - i0, out + i0); });
}

void add(ThreadPool& pool, const ElementwiseFns& f, float* x, const float* y, int64_t n) {
    split(pool, n, 1, [&](int64_t i0, int64_t i1) { f.add(x + i0, y + i0, i1 - i0); });
}

void scale(ThreadPool& pool, float* x, int64_t n, float s) {
    split(pool, n, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) x[i] *= s;
    });
}

void softcap(ThreadPool& pool, float* x, int64_t n, float cap) {
    const float inv = 1.0f / cap;
    split(pool, n, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) x[i] = std::tanh(x[i] * inv) * cap;
    });
}

// ggml's GELU table: for every fp16 value h, fp16(gelu(h)) with gelu in float,
// 0.5·x·(1 + tanhf(√(2/π)·x·(1 + 0.044715·x²))), kept as floats.
static const float* gelu_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(1 << 16);
        for (uint32_t i = 0; i < (1u << 16); ++i) {
            const float x = quant::fp16_to_f32(static_cast<uint16_t>(i));
            const float g = 0.5f * x *
                            (1.0f + std::tanh(0.79788456080286535587989211986876f * x *
                                              (1.0f + 0.044715f * x * x)));
            t[i] = quant::fp16_to_f32(quant::f32_to_fp16(g));
        }
        return t;
    }();
    return table.data();
}

void geglu(ThreadPool& pool, const ElementwiseFns& f, const float* gate, const float* up, int64_t n,
           float* out) {
    const float* table = gelu_table();
    split(pool, n, 1,
          [&](int64_t i0, int64_t i1) { f.geglu(table, gate + i0, up + i0, i1 - i0, out + i0); });
}

void embed(ThreadPool& pool, const WeightView& table, const int32_t* ids, int32_t n, float* out) {
    const int64_t cols = table.cols;
    split(pool, n, cols, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            float* o = out + t * cols;
            const int32_t id = ids[t];
            if (id < 0 || id >= table.rows ||
                !quant::dequantize(table.type,
                                   table.data + static_cast<size_t>(id) * table.row_bytes, o, cols))
                std::fill(o, o + cols, 0.0f);
        }
    });
}

void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n, float* out) {
    for (int32_t i = 0; i < count; ++i)
        std::memcpy(out + static_cast<size_t>(i) * n, x + static_cast<size_t>(rows[i]) * n,
                    sizeof(float) * n);
}

void top_k_rows(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids,
                float* values, int32_t* invalid) {
    // `a` ranks before `b`: a larger value, or the same value and a lower id.
    const auto before = [](float av, int32_t ai, float bv, int32_t bi) {
        return av > bv || (av == bv && ai < bi);
    };
    for (int32_t r = 0; r < rows; ++r) {
        const float* x = logits + static_cast<size_t>(r) * static_cast<size_t>(n);
        int32_t* out_ids = ids + static_cast<size_t>(r) * static_cast<size_t>(k);
        float* out_values = values + static_cast<size_t>(r) * static_cast<size_t>(k);
        int32_t kept = 0;
        invalid[r] = -1;
        for (int32_t i = 0; i < n; ++i) {
            const float v = x[i];
            if (std::isnan(v) || v == INFINITY) {
                if (invalid[r] < 0) invalid[r] = i;
                continue;
            }
            if (v == -INFINITY) continue;
            // Most values lose to the k-th kept one: one comparison each.
            if (kept == k && !before(v, i, out_values[k - 1], out_ids[k - 1])) continue;
            int32_t j = kept < k ? kept++ : k - 1;
            while (j > 0 && before(v, i, out_values[j - 1], out_ids[j - 1])) {
                out_values[j] = out_values[j - 1];
                out_ids[j] = out_ids[j - 1];
                --j;
            }
            out_values[j] = v;
            out_ids[j] = i;
        }
        for (int32_t j = kept; j < k; ++j) {
            out_ids[j] = -1;
            out_values[j] = -INFINITY;
        }
    }
}

void kv_append(const ElementwiseFns& f, const PagedKvLayer& cache, const float* k, const float* v,
               const int32_t* slots, int32_t n_tokens) {
    const auto row = static_cast<size_t>(cache.n_kv_heads) * static_cast<size_t>(cache.head_dim);
    for (int32_t t = 0; t < n_tokens; ++t) {
        const auto slot = static_cast<size_t>(slots[t]);
        f.to_fp16(k + t * row, static_cast<int64_t>(row), cache.k + slot * row);
        f.to_fp16(v + t * row, static_cast<int64_t>(row), cache.v + slot * row);
    }
}

}  // namespace hearth::kernels::cpu
