// A Backend that forwards every op to a host-memory backend (the CPU's) and records the
// largest |x| each matrix product reads: what the CUDA kernels' fp16 operands must hold.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "forwarding_backend.h"

namespace hearth::test {

class RangeRecordingBackend final : public ForwardingBackend {
  public:
    using ForwardingBackend::ForwardingBackend;

    struct Range {
        float largest = 0.0f;                   // the largest |x| of any product's input
        float smallest_row_max = INFINITY;      // the smallest nonzero max |x| of a token's row
        long products = 0, rows_past_fp16 = 0;  // token rows with an |x| above 65504
        bool finite = true;
    };
    const Range& range() const { return range_; }

    std::string name() const override { return inner_.name() + " + recorded ranges"; }
    void matmul(const kernels::Weight& w, const float* x, int32_t n_tokens, float* out,
                const float* bias) override {
        ++range_.products;
        for (int32_t t = 0; t < n_tokens; ++t) {
            float m = 0.0f;
            for (int64_t c = 0; c < w.cols(); ++c) {
                const float v = x[t * w.cols() + c];
                range_.finite = range_.finite && std::isfinite(v);
                m = std::max(m, std::fabs(v));
            }
            range_.largest = std::max(range_.largest, m);
            if (m > 0.0f) range_.smallest_row_max = std::min(range_.smallest_row_max, m);
            if (m > 65504.0f) ++range_.rows_past_fp16;
        }
        inner_.matmul(w, x, n_tokens, out, bias);
    }

  private:
    Range range_;
};

}  // namespace hearth::test
