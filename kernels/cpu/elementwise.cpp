#include "cpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/dequant.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

// Below this many elements an op runs on the calling thread: waking the pool costs
// about as much as the op.
constexpr int64_t kParallelElems = 1 << 15;
constexpr int64_t kChunkElems = 1 << 14;

void rms_norm_scalar(const float* x, const float* w, int64_t rows, int64_t n, float eps,
                     float* out) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        double ss = 0.0;
        for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
        const auto scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
        for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * w[i];
    }
}

void swiglu_scalar(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void add_scalar(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void to_fp16_scalar(const float* x, int64_t n, uint16_t* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = quant::f32_to_fp16(x[i]);
}

const ElementwiseFns kScalar{rms_norm_scalar, swiglu_scalar, add_scalar, to_fp16_scalar};

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
    if (level == SimdLevel::Avx2) return elementwise_fns_avx2();
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
        (p.freq_factors == nullptr) == factors_.empty() &&
        (p.freq_factors == nullptr || std::equal(factors_.begin(), factors_.end(), p.freq_factors));
    if (same) return table_.data();
    positions_.assign(positions, positions + n_tokens);
    factors_.clear();
    if (p.freq_factors) factors_.assign(p.freq_factors, p.freq_factors + half);
    params_ = p;
    params_.freq_factors = nullptr;
    valid_ = true;
    // θ(t, i) = pos_t · freq_scale · base^(−2i / n_rot) / ff[i], in double so that large
    // positions keep their precision.
    std::vector<double> inv_freq(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
        inv_freq[static_cast<size_t>(i)] =
            std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot) /
            (p.freq_factors ? p.freq_factors[i] : 1.0);
    }
    table_.resize(static_cast<size_t>(n_tokens) * static_cast<size_t>(half) * 2);
    for (int32_t t = 0; t < n_tokens; ++t) {
        const double pos = static_cast<double>(positions[t]) * p.freq_scale;
        float* row = table_.data() + static_cast<size_t>(t) * static_cast<size_t>(half) * 2;
        for (int i = 0; i < half; ++i) {
            const double th = pos * inv_freq[static_cast<size_t>(i)];
            row[2 * i] = static_cast<float>(std::cos(th));
            row[2 * i + 1] = static_cast<float>(std::sin(th));
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
                if (params.neox) {
                    for (int i = 0; i < half; ++i) {
                        const float a = v[i], b = v[i + half];
                        v[i] = a * c[2 * i] - b * c[2 * i + 1];
                        v[i + half] = a * c[2 * i + 1] + b * c[2 * i];
                    }
                } else {
                    for (int i = 0; i < half; ++i) {
                        const float a = v[2 * i], b = v[2 * i + 1];
                        v[2 * i] = a * c[2 * i] - b * c[2 * i + 1];
                        v[2 * i + 1] = a * c[2 * i + 1] + b * c[2 * i];
                    }
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
