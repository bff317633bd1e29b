#include "reference/reference_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

#include "quant/dequant.h"
#include "quant/fp16.h"

namespace hearth::kernels::reference {

std::size_t row_bytes(quant::TensorType type, int64_t cols) {
    const auto tr = quant::traits(type);
    if (!tr || cols % tr->block_elems != 0)
        throw std::invalid_argument("reference: bad weight type or shape");
    return static_cast<std::size_t>(cols / tr->block_elems * tr->block_bytes);
}

std::vector<float> dequantize_matrix(const WeightRef& w) {
    const std::size_t rb = row_bytes(w.type, w.cols);
    std::vector<float> out(static_cast<std::size_t>(w.rows * w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        if (!quant::dequantize(
                w.type, static_cast<const uint8_t*>(w.data) + static_cast<std::size_t>(r) * rb,
                out.data() + r * w.cols, w.cols))
            throw std::invalid_argument("reference: dequantize failed");
    }
    return out;
}

void embed(const WeightRef& table, const int32_t* ids, int32_t n, float* out) {
    const std::size_t rb = row_bytes(table.type, table.cols);
    for (int32_t t = 0; t < n; ++t) {
        if (!quant::dequantize(
                table.type,
                static_cast<const uint8_t*>(table.data) + static_cast<std::size_t>(ids[t]) * rb,
                out + static_cast<int64_t>(t) * table.cols, table.cols))
            throw std::invalid_argument("reference: dequantize failed");
    }
}

void rms_norm(const float* x, const float* weight, int32_t rows, int32_t n, float eps, float* out) {
    for (int32_t r = 0; r < rows; ++r) {
        const float* xr = x + static_cast<int64_t>(r) * n;
        double ss = 0.0;
        for (int32_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
        const double scale = 1.0 / std::sqrt(ss / n + static_cast<double>(eps));
        for (int32_t i = 0; i < n; ++i)
            out[static_cast<int64_t>(r) * n + i] = static_cast<float>(xr[i] * scale * weight[i]);
    }
}

void matmul(const WeightRef& w, const float* x, int32_t n_tokens, float* out, const float* bias) {
    const std::vector<float> wf = dequantize_matrix(w);
    for (int32_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + static_cast<int64_t>(t) * w.cols;
        for (int64_t r = 0; r < w.rows; ++r) {
            double s = bias ? bias[r] : 0.0;
            for (int64_t c = 0; c < w.cols; ++c)
                s += static_cast<double>(wf[static_cast<std::size_t>(r * w.cols + c)]) * xt[c];
            out[t * w.rows + r] = static_cast<float>(s);
        }
    }
}

namespace {

struct Q8Block {
    float d;      // the scale as stored (fp16-rounded for 32-blocks)
    float d_raw;  // max|x| / 127
    int32_t sum;  // Σq
};

std::vector<Q8Block> q8_quantise(const float* x, int64_t n, int64_t block,
                                 std::vector<double>* out) {
    std::vector<Q8Block> blocks;
    for (int64_t b = 0; b < n; b += block) {
        float amax = 0.0f;
        for (int64_t i = b; i < b + block; ++i) amax = std::max(amax, std::fabs(x[i]));
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        const float dh = block == 32 ? quant::fp16_to_f32(quant::f32_to_fp16(d)) : d;
        int32_t sum = 0;
        for (int64_t i = b; i < b + block; ++i) {
            const float q = std::nearbyint(x[i] * id);
            sum += static_cast<int32_t>(q);
            if (out) (*out)[static_cast<std::size_t>(i)] = static_cast<double>(dh) * q;
        }
        blocks.push_back({dh, d, sum});
    }
    return blocks;
}

}  // namespace

std::vector<double> q8_roundtrip(const float* x, int64_t n, int64_t block) {
    std::vector<double> out(static_cast<std::size_t>(n));
    q8_quantise(x, n, block, &out);
    return out;
}

void matmul_q8_activations(const WeightRef& w, const float* x, int32_t n_tokens, int64_t block,
                           float* out) {
    const std::vector<float> wf = dequantize_matrix(w);
    const bool q8_1 =
        block == 32 && (w.type == quant::TensorType::Q4_1 || w.type == quant::TensorType::Q5_1);
    const std::size_t rb = row_bytes(w.type, w.cols);
    const std::size_t bb =
        w.type == quant::TensorType::Q4_1 ? sizeof(quant::BlockQ4_1) : sizeof(quant::BlockQ5_1);
    for (int32_t t = 0; t < n_tokens; ++t) {
        std::vector<double> xq(static_cast<std::size_t>(w.cols));
        const std::vector<Q8Block> blocks =
            q8_quantise(x + static_cast<int64_t>(t) * w.cols, w.cols, block, &xq);
        for (int64_t r = 0; r < w.rows; ++r) {
            double s = 0.0;
            for (int64_t c = 0; c < w.cols; ++c)
                s += static_cast<double>(wf[static_cast<std::size_t>(r * w.cols + c)]) *
                     xq[static_cast<std::size_t>(c)];
            if (q8_1) {
                // Σ_i m·d·q_i was counted above; the kernels use m · fp16(d_raw · Σq).
                const auto* row =
                    static_cast<const uint8_t*>(w.data) + static_cast<std::size_t>(r) * rb;
                for (std::size_t b = 0; b < blocks.size(); ++b) {
                    uint16_t m16;
                    std::memcpy(&m16, row + b * bb + 2, 2);  // d, then m, in both formats
                    const Q8Block& q = blocks[b];
                    const float s_h =
                        quant::fp16_to_f32(quant::f32_to_fp16(q.d_raw * static_cast<float>(q.sum)));
                    s += static_cast<double>(quant::fp16_to_f32(m16)) *
                         (static_cast<double>(s_h) - static_cast<double>(q.d) * q.sum);
                }
            }
            out[t * w.rows + r] = static_cast<float>(s);
        }
    }
}

void rope(float* x, const int32_t* positions, int32_t n_tokens, int32_t n_heads, int32_t head_dim,
          const RopeParams& p) {
    const int half = p.n_rot / 2;
    for (int32_t t = 0; t < n_tokens; ++t) {
        for (int32_t h = 0; h < n_heads; ++h) {
            float* v = x + (static_cast<int64_t>(t) * n_heads + h) * head_dim;
            for (int i = 0; i < half; ++i) {
                double freq = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
                if (p.freq_factors) freq /= p.freq_factors[i];
                const double theta = static_cast<double>(positions[t]) * p.freq_scale * freq;
                const int i0 = p.neox ? i : 2 * i;
                const int i1 = p.neox ? i + half : 2 * i + 1;
                const double a = v[i0], b = v[i1];
                const double c = std::cos(theta) * p.attn_factor;
                const double s = std::sin(theta) * p.attn_factor;
                v[i0] = static_cast<float>(a * c - b * s);
                v[i1] = static_cast<float>(a * s + b * c);
            }
        }
    }
}

void kv_shift(const PagedKvLayer& cache, const int32_t* src_slots, const int32_t* dst_slots,
              const int32_t* deltas, int32_t n, const RopeParams& p) {
    const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * cache.head_dim;
    const int half = p.n_rot / 2;
    for (int32_t m = 0; m < n; ++m) {
        const uint16_t* ks = cache.k + src_slots[m] * row;
        uint16_t* kd = cache.k + dst_slots[m] * row;
        for (int64_t i = 0; i < row; ++i) {
            kd[i] = ks[i];
            cache.v[dst_slots[m] * row + i] = cache.v[src_slots[m] * row + i];
        }
        for (int32_t h = 0; h < cache.n_kv_heads; ++h) {
            const int64_t at = static_cast<int64_t>(h) * cache.head_dim;
            for (int i = 0; i < half; ++i) {
                double freq = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
                if (p.freq_factors) freq /= p.freq_factors[i];
                const double theta = static_cast<double>(deltas[m]) * p.freq_scale * freq;
                const int64_t i0 = at + (p.neox ? i : 2 * i);
                const int64_t i1 = at + (p.neox ? i + half : 2 * i + 1);
                const double a = quant::fp16_to_f32(ks[i0]), b = quant::fp16_to_f32(ks[i1]);
                kd[i0] = quant::f32_to_fp16(
                    static_cast<float>(a * std::cos(theta) - b * std::sin(theta)));
                kd[i1] = quant::f32_to_fp16(
                    static_cast<float>(a * std::sin(theta) + b * std::cos(theta)));
            }
        }
    }
}

void kv_append(const PagedKvLayer& cache, const float* k, const float* v, const int32_t* slots,
               int32_t n_tokens) {
    const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * cache.head_dim;
    for (int32_t t = 0; t < n_tokens; ++t) {
        for (int64_t i = 0; i < row; ++i) {
            cache.k[slots[t] * row + i] = quant::f32_to_fp16(k[t * row + i]);
            cache.v[slots[t] * row + i] = quant::f32_to_fp16(v[t * row + i]);
        }
    }
}

void attention(const float* q, const PagedKvLayer& cache, const AttentionBatch& batch,
               int32_t n_heads, float scale, float* out) {
    const int32_t D = cache.head_dim;
    const int32_t group = n_heads / cache.n_kv_heads;
    std::vector<double> scores, acc(static_cast<std::size_t>(D));
    for (int32_t s = 0; s < batch.n_seqs; ++s) {
        const int32_t* table = batch.block_tables + batch.block_table_start[s];
        const int32_t first_pos = batch.kv_len[s] - batch.q_len[s];
        for (int32_t i = 0; i < batch.q_len[s]; ++i) {
            const int32_t tok = batch.q_start[s] + i;
            const int32_t pos = first_pos + i;  // sees context positions 0..pos
            for (int32_t h = 0; h < n_heads; ++h) {
                const int32_t g = h / group;
                const float* qv = q + (static_cast<int64_t>(tok) * n_heads + h) * D;
                const auto kv_at = [&](const uint16_t* base, int32_t p) {
                    const int64_t slot =
                        static_cast<int64_t>(table[p / cache.block_size]) * cache.block_size +
                        p % cache.block_size;
                    return base + (slot * cache.n_kv_heads + g) * D;
                };
                // A sliding window: positions before lo are masked (probability 0).
                const int32_t lo = batch.window > 0 ? std::max(0, pos - batch.window + 1) : 0;
                scores.assign(static_cast<std::size_t>(pos + 1), 0.0);
                double mx = -HUGE_VAL;
                for (int32_t p = lo; p <= pos; ++p) {
                    const uint16_t* kv = kv_at(cache.k, p);
                    double d = 0.0;
                    for (int32_t e = 0; e < D; ++e)
                        d += static_cast<double>(qv[e]) * quant::fp16_to_f32(kv[e]);
                    double sc = d * scale;
                    if (batch.softcap > 0.0f) sc = std::tanh(sc / batch.softcap) * batch.softcap;
                    scores[static_cast<std::size_t>(p)] = sc;
                    mx = std::max(mx, sc);
                }
                double sum = 0.0;
                for (int32_t p = lo; p <= pos; ++p) {
                    double& sc = scores[static_cast<std::size_t>(p)];
                    sc = std::exp(sc - mx);
                    sum += sc;
                }
                std::fill(acc.begin(), acc.end(), 0.0);
                for (int32_t p = lo; p <= pos; ++p) {
                    const uint16_t* vv = kv_at(cache.v, p);
                    for (int32_t e = 0; e < D; ++e)
                        acc[static_cast<std::size_t>(e)] +=
                            scores[static_cast<std::size_t>(p)] * quant::fp16_to_f32(vv[e]);
                }
                float* o = out + (static_cast<int64_t>(tok) * n_heads + h) * D;
                for (int32_t e = 0; e < D; ++e)
                    o[e] = static_cast<float>(acc[static_cast<std::size_t>(e)] / sum);
            }
        }
    }
}

void geglu(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) {
        const double x = gate[i];
        const double g =
            0.5 * x *
            (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * x * (1.0 + 0.044715 * x * x)));
        out[i] = static_cast<float>(g * up[i]);
    }
}

void scale(float* x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void softcap(float* x, int64_t n, float cap) {
    for (int64_t i = 0; i < n; ++i)
        x[i] = static_cast<float>(std::tanh(static_cast<double>(x[i]) / cap) * cap);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) {
        const double g = gate[i];
        out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
    }
}

void add(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void gather_rows(const float* x, const int32_t* rows, int32_t count, int32_t n, float* out) {
    for (int32_t i = 0; i < count; ++i)
        for (int32_t e = 0; e < n; ++e)
            out[static_cast<int64_t>(i) * n + e] = x[static_cast<int64_t>(rows[i]) * n + e];
}

void top_k(const float* logits, int32_t rows, int32_t n, int32_t k, int32_t* ids, float* values,
           int32_t* invalid) {
    for (int32_t r = 0; r < rows; ++r) {
        std::vector<std::pair<float, int32_t>> all;
        invalid[r] = -1;
        for (int32_t i = 0; i < n; ++i) {
            const float v = logits[static_cast<int64_t>(r) * n + i];
            if ((std::isnan(v) || v == INFINITY) && invalid[r] < 0) invalid[r] = i;
            if (std::isfinite(v)) all.emplace_back(v, i);
        }
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        for (int32_t j = 0; j < k; ++j) {
            const bool has = static_cast<size_t>(j) < all.size();
            ids[static_cast<int64_t>(r) * k + j] = has ? all[static_cast<size_t>(j)].second : -1;
            values[static_cast<int64_t>(r) * k + j] =
                has ? all[static_cast<size_t>(j)].first : -INFINITY;
        }
    }
}

}  // namespace hearth::kernels::reference
