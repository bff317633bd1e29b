// The inner attention kernel: a tile of M query vectors (several query positions × the
// query heads that share one KV head) against a range of context positions of one
// sequence's paged cache, with an online (streaming) softmax. attention.cpp splits the
// batch into tiles, runs them on the pool and normalises / merges their results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels::cpu {

inline constexpr int kAttnChunk = 16;  // context positions per softmax update

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
    int32_t c0 = 0, c1 = 0;       // context positions [c0, c1)
    float* scratch = nullptr;     // attn_scratch_floats(M, D) floats, 64-byte aligned
    // Results, unnormalised: out = acc[m] / l[m]. m[m] is the running max score
    // (−inf and l = 0 when no position in the range was visible to query m).
    float* acc = nullptr;  // [M][D]
    float* m = nullptr;    // [M]
    float* l = nullptr;    // [M]
};

inline std::size_t attn_scratch_floats(int M, int D) {
    // kT [D][chunk] + vf [chunk][D] + scores [M][chunk]
    return static_cast<std::size_t>(2 * D * kAttnChunk + M * kAttnChunk) + 16;
}

using AttnFn = void (*)(const AttnTile&);
void attend_scalar(const AttnTile& t);
void attend_avx2(const AttnTile& t);  // needs D % 8 == 0

}  // namespace hearth::kernels::cpu
