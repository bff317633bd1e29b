// Weights repacked once at load into the layout a kernel streams best (as llama.cpp's
// CPU backend repacks Q4_0 for AVX2). The CPU backend otherwise reads weights in place
// from the mapped file; a packed copy is made only for the types whose kernel at the
// backend's SIMD level asks for one (TypeKernels::packed).
//
// Q4_0x8 — Q4_0 rows (or IQ4_NL rows: the same 18-byte block, a fp16 scale and 16 bytes
// of 4-bit indices) in groups of 8 (the last group padded with zero rows). Group g
// holds, for each block b of the row, kQ4_0x8BlockBytes bytes:
//     uint16_t d[8]          the fp16 scales of rows 8g..8g+7
//     uint8_t  qs[4][8][4]   qs[c][i][j] = byte 4c + j of row 8g+i's block: low nibble
//                            element 4c + j, high nibble element 16 + 4c + j
// so that one 32-byte load gives 4 elements of each of the 8 rows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels::cpu {

inline constexpr int kQ4_0x8Rows = 8;
inline constexpr std::size_t kQ4_0x8BlockBytes = 144;

// Bytes of one group of 8 rows with nb blocks each, and of a whole matrix.
inline constexpr std::size_t q4_0x8_group_bytes(int64_t nb) {
    return static_cast<std::size_t>(nb) * kQ4_0x8BlockBytes;
}
inline constexpr std::size_t q4_0x8_bytes(int64_t rows, int64_t nb) {
    return static_cast<std::size_t>((rows + kQ4_0x8Rows - 1) / kQ4_0x8Rows) *
           q4_0x8_group_bytes(nb);
}

// Repacks rows Q4_0 rows of nb blocks (row r at src + r·row_bytes) into dst
// (q4_0x8_bytes(rows, nb) bytes).
void pack_q4_0x8(const uint8_t* src, std::size_t row_bytes, int64_t rows, int64_t nb, uint8_t* dst);

}  // namespace hearth::kernels::cpu
