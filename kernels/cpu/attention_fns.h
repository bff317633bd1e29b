// The inner attention kernels: a tile of M query vectors (several query positions × the
// query heads that share one KV head) against a range of context positions of one
// sequence's paged cache. attention.cpp splits the batch into tiles, runs them on the
// pool, does the softmax between the two passes and merges context splits.
//
// The arithmetic is that of llama.cpp's default (non-flash) CPU attention, operation for
// operation, because small models amplify even float-rounding differences between two
// forward passes into visibly different logits (tests/engine/model/tst_model_golden.cpp):
//   scores    s_j = scale · Σ_d fp16(q)[d] · k_j[d]   (kq = mul_mat(K f16, Q), which rounds
//             Q to fp16; llamafile's tinyBLAS sums d ≡ l (mod 8) in lane l, then
//             hsum8: ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))), −inf where masked;
//   softmax   e_j = expv(s_j − max) (ggml_v_expf), sum = Σ over aligned 8-position chunks
//             of double(hsum8(e)), p_j = fp16(e_j · float(1 / sum)) (soft_max_ext, then
//             kqv = mul_mat(V f16, P), which rounds P to fp16);
//   output    out[d] = hsum8 of lanes l = Σ_{j ≡ l (mod 8)} p_j · v_j[d].
// That is the order of a batch of several tokens. A batch of one token (decode) goes
// through ggml_vec_dot_f16 instead (tinyBLAS needs two or more columns), which keeps 32
// lanes (four 8-float vectors a0..a3, element i in a[(i / 8) % 4] lane i % 8) and
// reduces them as x = (a0 + a2) + (a1 + a3), t_l = x_l + x_{l+4}, (t0 + t1) + (t2 + t3),
// adding any elements past the last multiple of 32 in double: AttnTile::single.
// Products of two fp16 values are exact in float, so FMA or not gives the same bits and
// the scalar and AVX2 kernels agree bit for bit. Lanes and chunks are taken by absolute
// context position (llama.cpp's KV cell index for a single sequence).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels::cpu {

inline constexpr int kAttnChunk = 16;    // context splits start at multiples of this
inline constexpr int kAttnVChunk = 256;  // positions whose V rows pv() converts at a time

#define HEARTH_ROUND_UP8(n) (((n) + 7) & ~7)

struct AttnTile {
    const float* const* q = nullptr;  // [M] query vectors, head_dim floats each
    const int32_t* qpos = nullptr;    // [M] each query sees context positions ≤ qpos[m]
    int M = 0;
    int D = 0;  // head_dim
    float scale = 1.0f;
    // Context position p of this sequence is row p % block_size of cache block
    // table[p / block_size]; its K (V) vector of this KV head is at
    // k (v) + (table[p / bs] · bs + p % bs) · row_stride + head_offset   (fp16 bits).
    const uint16_t* k = nullptr;
    const uint16_t* v = nullptr;
    const int32_t* table = nullptr;
    int32_t block_size = 0;
    std::size_t row_stride = 0;   // n_kv_heads · head_dim
    std::size_t head_offset = 0;  // kv_head · head_dim
    int32_t c0 = 0, c1 = 0;       // context positions [c0, c1), c0 % 8 == 0
    // s[m · s_stride + j] for j < round_up8(v_m), v_m = visible(m): the scores of the
    // positions c0 + j that query m sees (scores() writes them, and −inf for the rest of
    // the last 8-position chunk), then the probabilities (pv() reads them). Entries past
    // round_up8(v_m) are neither written nor read: their probabilities are exactly 0 in
    // llama.cpp too.
    float* s = nullptr;
    std::size_t s_stride = 0;
    float* qh = nullptr;  // [M][D] scratch: the queries rounded to fp16
    float* vf = nullptr;  // [kAttnVChunk · D] scratch: K / V rows as floats
    bool single = false;  // a one-token step of its sequence: ggml_vec_dot_f16's order
    // [M][D][n_lanes], n_lanes = single ? 32 : 8: pv() adds p_j · v_j[d] to lane
    // (c0 + j) % n_lanes of dimension d.
    float* lanes = nullptr;
};
// visible(m) = clamp(qpos[m] + 1 − c0, 0, c1 − c0). (attention.cpp has its own static
// helper for it, the SIMD files theirs in attention_simd.h: no inline code is shared
// between files built with different instruction sets, see avx2_util.h.)

struct AttnFns {
    // The scores of the tile (see above); returns nothing, writes t.s.
    void (*scores)(const AttnTile& t);
    // e = expv(s − max) in place over n (a multiple of 8) values; returns sum plus the
    // chunk sums in order, each chunk's float hsum8 added in double.
    double (*exp_sum)(float* s, int n, float max, double sum);
    // s = fp16(s · inv) in place over n values.
    void (*normalise)(float* s, int n, float inv);
    // The largest of n (a multiple of 8) values, −inf for none.
    float (*max)(const float* s, int n);
    // lanes[m][d][(c0 + j) % n] += p[m][j] · v_{c0 + j}[d] over the tile's positions.
    void (*pv)(const AttnTile& t);
};

const AttnFns& attn_fns_scalar();
const AttnFns& attn_fns_avx2();    // needs D % 8 == 0
const AttnFns& attn_fns_avx512();  // needs D % 8 == 0 and AVX-512 F/VL

// The sum of lanes l[8] / l[32] (stride apart) in the orders of the comment above:
// hsum8, and ggml_vec_dot_f16's reduction. (Defined in attention.cpp, not inline: the
// AVX2 file is built with other flags.)
float reduce8(const float* l, std::size_t stride);
float reduce32(const float* l, std::size_t stride);

// out[d] = the reduction of lanes [D][n_lanes] at d.
void reduce_lanes(const float* lanes, int n_lanes, int D, float* out);

}  // namespace hearth::kernels::cpu
