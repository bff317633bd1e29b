// A Backend made of the CUDA kernels' host twins (the *_on_host functions of kernels/cuda):
// the CUDA backend's arithmetic, indexing and launch planning run on the host, so that
// whole models go through the kernels' own code on machines without a GPU. Slow; for
// tests only (tst_cuda_model compares it with the CPU backend and checks its batch
// invariance, as the device tests do with the real backend).
#pragma once

#include <memory>

#include "backend.h"

namespace hearth::kernels {

std::unique_ptr<Backend> make_cuda_host_twin_backend();

}  // namespace hearth::kernels
