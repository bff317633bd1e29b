// Reference decoding. Every element is computed on its own from bit offsets into the
// block; see the per-type comments for where its bits live.
//
// Why double arithmetic gives results bit-identical to a correct float implementation:
// fp16 values carry 11 significant bits, and every product in these formats is an fp16
// times small integers (≤ 7 bits for Q8_0/Q6_K scales, ≤ 6 for K-quant scales, ≤ 5 for
// quants), so all products are exact in float and in double. At most one addition
// follows ("+ m", "- dmin·m"), or (IQ4_XS) one rounding of a product exact in double
// (d·scale·grid value: 11 + 6 + 8 bits); rounding it to double and then to float equals rounding it
// to float directly because 53 ≥ 2·24 + 2 (double rounding is innocuous). The association
// (d·sc)·q follows ggml only because it decides the sign of a zero result.
#include "quant_reference.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace hearth::test {

using quant::TensorType;

namespace {

// Bits [bit, bit + count) of the little-endian bit stream at p (bit k is bit k % 8 of
// byte k / 8).
uint32_t field(const uint8_t* p, int64_t bit, int count) {
    uint32_t v = 0;
    for (int k = 0; k < count; ++k) {
        const int64_t b = bit + k;
        v |= static_cast<uint32_t>((p[b / 8] >> (b % 8)) & 1u) << k;
    }
    return v;
}

double fp16_at(const uint8_t* block, int byte) {
    return ref_fp16(static_cast<uint16_t>(field(block, 8 * byte, 16)));
}

// Sub-block j's 6-bit scale and min in the 12 scale bytes of Q4_K/Q5_K (bit offsets
// relative to the first scale byte): j < 4: scale = bits 8j..8j+5, min = bits
// 8(j+4)..+5. j ≥ 4: the low four bits are the low (scale) / high (min) nibble of byte
// j + 4, the top two bits are bits 6-7 of byte j - 4 (scale) / byte j (min).
void k_scale(const uint8_t* s, int j, int* sc, int* m) {
    if (j < 4) {
        *sc = static_cast<int>(field(s, 8 * j, 6));
        *m = static_cast<int>(field(s, 8 * (j + 4), 6));
    } else {
        *sc = static_cast<int>(field(s, 8 * (j + 4), 4) | (field(s, 8 * (j - 4) + 6, 2) << 4));
        *m = static_cast<int>(field(s, 8 * (j + 4) + 4, 4) | (field(s, 8 * j + 6, 2) << 4));
    }
}

// Nibble index k of the 32-element formats: element e < 16 is the low nibble of quant
// byte e, element e ≥ 16 the high nibble of byte e - 16.
int64_t nibble_bit(int64_t qs_byte, int64_t e) {
    return 8 * (qs_byte + e % 16) + 4 * (e / 16);
}

}  // namespace

RefLayout ref_layout(TensorType type) {
    switch (type) {
        case TensorType::F32:
            return {1, 4, {}};
        case TensorType::F16:
            return {1, 2, {}};
        case TensorType::BF16:
            return {1, 2, {}};
        case TensorType::Q4_0:
            return {32, 2 + 16, {0}};  // d, qs[16]
        case TensorType::Q4_1:
            return {32, 2 + 2 + 16, {0, 2}};  // d, m, qs[16]
        case TensorType::Q5_0:
            return {32, 2 + 4 + 16, {0}};  // d, qh[4], qs[16]
        case TensorType::Q5_1:
            return {32, 2 + 2 + 4 + 16, {0, 2}};
        case TensorType::Q8_0:
            return {32, 2 + 32, {0}};  // d, qs[32]
        case TensorType::Q4_K:
            return {256, 4 + 12 + 128, {0, 2}};  // d, dmin, scales, qs
        case TensorType::Q5_K:
            return {256, 4 + 12 + 32 + 128, {0, 2}};  // .., qh[32], qs
        case TensorType::Q6_K:
            return {256, 128 + 64 + 16 + 2, {208}};  // ql, qh, sc, d
        case TensorType::Q2_K:
            return {256, 16 + 64 + 2 + 2, {80, 82}};  // scales, qs, d, dmin
        case TensorType::Q3_K:
            return {256, 32 + 64 + 12 + 2, {108}};  // hmask, qs, scales, d
        case TensorType::IQ4_NL:
            return {32, 2 + 16, {0}};  // d, qs[16]
        case TensorType::IQ4_XS:
            return {256, 2 + 2 + 4 + 128, {0}};  // d, scales_h, scales_l[4], qs[128]
    }
    return {0, 0, {}};
}

const std::vector<TensorType>& all_types() {
    static const std::vector<TensorType> kTypes = {
        TensorType::F32,  TensorType::F16,    TensorType::BF16,  TensorType::Q4_0,
        TensorType::Q4_1, TensorType::Q5_0,   TensorType::Q5_1,  TensorType::Q8_0,
        TensorType::Q2_K, TensorType::Q3_K,   TensorType::Q4_K,  TensorType::Q5_K,
        TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS};
    return kTypes;
}

const std::vector<TensorType>& writable_types() {
    static const std::vector<TensorType> kTypes = {
        TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,
        TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
        TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};
    return kTypes;
}

std::vector<uint8_t> random_blocks(TensorType type, int64_t n_blocks, std::mt19937_64& rng) {
    const RefLayout lay = ref_layout(type);
    std::vector<uint8_t> data(static_cast<size_t>(n_blocks * lay.bytes));
    for (size_t i = 0; i < data.size();
         i += 8) {  // 8 random bytes per draw: large tensors are quick
        const uint64_t r = rng();
        for (size_t k = 0; k < 8 && i + k < data.size(); ++k)
            data[i + k] = static_cast<uint8_t>(r >> (8 * k));
    }
    for (int64_t i = 0; i < n_blocks; ++i) {
        for (int off : lay.fp16_offsets) {
            uint16_t h;
            do {
                h = static_cast<uint16_t>(rng());
            } while (((h >> 10) & 0x1f) == 0x1f);  // exponent 31 is inf/NaN
            uint8_t* p = data.data() + i * lay.bytes + off;
            p[0] = static_cast<uint8_t>(h & 0xff);
            p[1] = static_cast<uint8_t>(h >> 8);
        }
    }
    return data;
}

double ref_fp16(uint16_t h) {
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    double v;
    if (exp == 0x1f) {
        v = mant == 0 ? std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
    } else if (exp == 0) {
        v = std::ldexp(mant, -24);  // subnormal: mant · 2^-14 · 2^-10
    } else {
        v = std::ldexp(1024 + mant, exp - 25);  // (1 + mant/1024) · 2^(exp-15)
    }
    return (h & 0x8000) ? -v : v;
}

double ref_bf16(uint16_t h) {
    const int exp = (h >> 7) & 0xff;
    const int mant = h & 0x7f;
    double v;
    if (exp == 0xff) {
        v = mant == 0 ? std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
    } else if (exp == 0) {
        v = std::ldexp(mant, -133);  // mant · 2^-126 · 2^-7
    } else {
        v = std::ldexp(128 + mant, exp - 134);
    }
    return (h & 0x8000) ? -v : v;
}

float ref_element(TensorType type, const uint8_t* data, int64_t i) {
    const RefLayout lay = ref_layout(type);
    const uint8_t* blk = data + (i / lay.elems) * lay.bytes;
    const int64_t e = i % lay.elems;
    switch (type) {
        case TensorType::F32: {
            float f;
            std::memcpy(&f, blk, 4);
            return f;
        }
        case TensorType::F16:
            return static_cast<float>(ref_fp16(static_cast<uint16_t>(field(blk, 0, 16))));
        case TensorType::BF16:
            return static_cast<float>(ref_bf16(static_cast<uint16_t>(field(blk, 0, 16))));
        case TensorType::Q4_0: {  // (q - 8)·d, quants from byte 2
            const int q = static_cast<int>(field(blk, nibble_bit(2, e), 4));
            return static_cast<float>((q - 8) * fp16_at(blk, 0));
        }
        case TensorType::Q4_1: {  // q·d + m, quants from byte 4
            const int q = static_cast<int>(field(blk, nibble_bit(4, e), 4));
            return static_cast<float>(q * fp16_at(blk, 0) + fp16_at(blk, 2));
        }
        case TensorType::Q5_0: {  // fifth bit of element e: bit e of the stream at byte 2
            const int q =
                static_cast<int>(field(blk, nibble_bit(6, e), 4) | (field(blk, 16 + e, 1) << 4));
            return static_cast<float>((q - 16) * fp16_at(blk, 0));
        }
        case TensorType::Q5_1: {  // qh at byte 4, quants from byte 8
            const int q =
                static_cast<int>(field(blk, nibble_bit(8, e), 4) | (field(blk, 32 + e, 1) << 4));
            return static_cast<float>(q * fp16_at(blk, 0) + fp16_at(blk, 2));
        }
        case TensorType::Q8_0: {
            const int q = static_cast<int>(field(blk, 8 * (2 + e), 8));
            return static_cast<float>((q >= 128 ? q - 256 : q) * fp16_at(blk, 0));
        }
        case TensorType::Q4_K:
        case TensorType::Q5_K: {
            // Sub-block sb = e / 32 (scale sb). Chunk c = e / 64 owns quant bytes
            // 32c..32c+31; element 64c + l takes the low nibble of byte 32c + l,
            // element 64c + 32 + l the high nibble. Q5_K: fifth bit = bit sb of qh[e % 32].
            const bool five = type == TensorType::Q5_K;
            const int64_t sb = e / 32, qs_byte = five ? 48 : 16;
            int q = static_cast<int>(
                field(blk, 8 * (qs_byte + 32 * (e / 64) + e % 32) + 4 * (sb % 2), 4));
            if (five) q |= static_cast<int>(field(blk, 8 * (16 + e % 32) + sb, 1) << 4);
            int sc, m;
            k_scale(blk + 4, static_cast<int>(sb), &sc, &m);
            return static_cast<float>(fp16_at(blk, 0) * sc * q - fp16_at(blk, 2) * m);
        }
        case TensorType::Q6_K: {
            // Element e = 128h + 32k + l: low nibble from ql[64h + l + 32(k & 1)] (the
            // high nibble when k ≥ 2), top two bits = bits 2k, 2k+1 of qh[32h + l]
            // (qh starts at byte 128); scale = int8 at byte 192 + e / 16; d at byte 208.
            const int64_t h = e / 128, k = (e % 128) / 32, l = e % 32;
            const int lo =
                static_cast<int>(field(blk, 8 * (64 * h + l + 32 * (k & 1)) + 4 * (k / 2), 4));
            const int hi = static_cast<int>(field(blk, 8 * (128 + 32 * h + l) + 2 * k, 2));
            const int sc_bits = static_cast<int>(field(blk, 8 * (192 + e / 16), 8));
            const int sc = sc_bits >= 128 ? sc_bits - 256 : sc_bits;
            return static_cast<float>(fp16_at(blk, 208) * sc * ((lo | (hi << 4)) - 32));
        }
        case TensorType::Q2_K:
        case TensorType::Q3_K: {
            // Element e = 128h + 32j + l: its 2 low bits are bits 2j, 2j+1 of quant byte
            // 32h + l (qs at byte 16 for Q2_K, 32 for Q3_K). Q2_K: scale byte e / 16 holds
            // the scale (low nibble) and min (high nibble); d at 80, dmin at 82. Q3_K: the
            // third bit is bit 4h + j of hmask byte l (hmask at byte 0):
            // clear means −4; the 6-bit scale s = e / 16 has its low 4 bits in nibble s / 8 of
            // byte 96 + s % 8 and its high 2 bits at bit 2·(s / 4) of byte 104 + s % 4, and
            // counts from −32; d at 108.
            const int64_t h = e / 128, j = (e % 128) / 32, l = e % 32, s = e / 16;
            if (type == TensorType::Q2_K) {
                const int q = static_cast<int>(field(blk, 8 * (16 + 32 * h + l) + 2 * j, 2));
                const int sc = static_cast<int>(field(blk, 8 * s, 4));
                const int m = static_cast<int>(field(blk, 8 * s + 4, 4));
                return static_cast<float>(fp16_at(blk, 80) * sc * q - fp16_at(blk, 82) * m);
            }
            const int lo = static_cast<int>(field(blk, 8 * (32 + 32 * h + l) + 2 * j, 2));
            const int third = static_cast<int>(field(blk, 8 * l + 4 * h + j, 1));
            const int sc = static_cast<int>(field(blk, 8 * (96 + s % 8) + 4 * (s / 8), 4) |
                                            (field(blk, 8 * (104 + s % 4) + 2 * (s / 4), 2) << 4));
            return static_cast<float>(fp16_at(blk, 108) * (sc - 32) * (lo - (third ? 0 : 4)));
        }
        case TensorType::IQ4_NL:
        case TensorType::IQ4_XS: {
            // 4-bit indices into the non-linear grid below (ggml's kvalues_iq4nl). IQ4_NL:
            // nibbles as Q4_0's from byte 2. IQ4_XS: sub-block s = e / 32 has its indices in
            // bytes 8 + 16s.. (as an IQ4_NL block's) and a 6-bit scale from −32: low 4 bits
            // in nibble s of the bit stream at byte 4, high 2 bits at bit 2s of byte 2.
            static constexpr int kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                              1,    13,   25,  38,  53,  69,  89,  113};
            if (type == TensorType::IQ4_NL)
                return static_cast<float>(fp16_at(blk, 0) * kGrid[field(blk, nibble_bit(2, e), 4)]);
            const int64_t s = e / 32;
            const int idx = static_cast<int>(field(blk, nibble_bit(8 + 16 * s, e % 32), 4));
            const int ls =
                static_cast<int>(field(blk, 32 + 4 * s, 4) | (field(blk, 16 + 2 * s, 2) << 4));
            return static_cast<float>(fp16_at(blk, 0) * (ls - 32) * kGrid[idx]);
        }
    }
    return std::numeric_limits<float>::quiet_NaN();
}

bool same_float(float a, float b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

uint64_t test_seed(uint64_t fallback) {
    const char* env = std::getenv("HEARTH_TEST_SEED");
    return env && *env ? std::strtoull(env, nullptr, 0) : fallback;
}

std::string describe_float(float f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(f),
                  std::bit_cast<uint32_t>(f));
    return buf;
}

}  // namespace hearth::test
