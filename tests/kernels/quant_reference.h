// An independent decoder for the GGUF tensor types, written from the format definitions
// (ggml-common.h) as bit-field extraction from the raw byte array by element index: no
// block structs, no loops over blocks, its own fp16/bf16 decoders via ldexp, arithmetic
// in double. Plus random test blocks and float comparison helpers shared by the suites.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "quant/quant_types.h"

namespace hearth::test {

// Elements and bytes per block, from the format definitions (not from TypeTraits, which
// the tests check against these).
struct RefLayout {
    int64_t elems;
    int64_t bytes;
    std::vector<int> fp16_offsets;  // byte offsets of the block's fp16 scale fields
};
RefLayout ref_layout(quant::TensorType type);

// The 15 supported types.
const std::vector<quant::TensorType>& all_types();
// The 11 of them that Hearth also writes (quant/quantize.h).
const std::vector<quant::TensorType>& writable_types();

// n_blocks random blocks: random bytes, with every fp16 scale field replaced by a random
// *finite* fp16 (all exponents, subnormals and zeros included; no inf/NaN, so a block
// never decodes to NaN unless its type stores raw floats).
std::vector<uint8_t> random_blocks(quant::TensorType type, int64_t n_blocks, std::mt19937_64& rng);

// IEEE binary16 / bfloat16 bits → value, via ldexp. NaN inputs give a NaN of the right sign.
double ref_fp16(uint16_t h);
double ref_bf16(uint16_t h);

// Element i of a tensor of `type` whose raw bytes start at data.
float ref_element(quant::TensorType type, const uint8_t* data, int64_t i);

// Exact agreement: identical bits, or both NaN with the same sign (NaN payloads are not
// part of the contract). Distinguishes +0 from -0.
bool same_float(float a, float b);

// The suites' random seed: $HEARTH_TEST_SEED (decimal or 0x hex) when set, else `fallback`.
uint64_t test_seed(uint64_t fallback);

// "1.5 (0x3fc00000)" for failure messages.
std::string describe_float(float f);

}  // namespace hearth::test
