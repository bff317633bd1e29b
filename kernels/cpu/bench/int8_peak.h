// The machine's integer dot-product peak, the yardstick of prefill (a compute-bound
// product of quantised weights and 8-bit activations): the rate of vpmaddubsw, the
// instruction every AVX2 kernel here builds its dot products on (32 u8 × s8 products
// summed in pairs), in independent chains on every thread, as multiply-accumulates per
// second. Sums of the pairs into 32-bit lanes cost a further instruction per 2 to 16
// maddubs in the kernels, so real products reach a fraction of this.
#pragma once

namespace hearth::kernels::bench {

// MACs per second over `threads` threads, best of `reps` runs; 0 without AVX2.
double measure_int8_peak(int threads, int reps);

}  // namespace hearth::kernels::bench
