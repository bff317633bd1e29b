#include "cpu/weight_pack.h"

#include <cstring>

#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

void pack_q4_0x8(const uint8_t* src, std::size_t row_bytes, int64_t rows, int64_t nb,
                 uint8_t* dst) {
    constexpr std::size_t kSrcBlock = sizeof(quant::BlockQ4_0);  // fp16 d, 16 bytes of nibbles
    static_assert(kSrcBlock == 18 && kQ4_0x8BlockBytes == kQ4_0x8Rows * kSrcBlock);
    const int64_t groups = (rows + kQ4_0x8Rows - 1) / kQ4_0x8Rows;
    std::memset(dst, 0, q4_0x8_bytes(rows, nb));
    for (int64_t g = 0; g < groups; ++g) {
        uint8_t* group = dst + static_cast<std::size_t>(g) * q4_0x8_group_bytes(nb);
        for (int i = 0; i < kQ4_0x8Rows; ++i) {
            const int64_t r = g * kQ4_0x8Rows + i;
            if (r >= rows) break;  // padding rows stay zero: scale 0, no contribution
            const uint8_t* row = src + static_cast<std::size_t>(r) * row_bytes;
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t* in = row + static_cast<std::size_t>(b) * kSrcBlock;
                uint8_t* out = group + static_cast<std::size_t>(b) * kQ4_0x8BlockBytes;
                std::memcpy(out + 2 * i, in, 2);
                for (int c = 0; c < 4; ++c)
                    std::memcpy(out + 16 + 32 * c + 4 * i, in + 2 + 4 * c, 4);
            }
        }
    }
}

}  // namespace hearth::kernels::cpu
