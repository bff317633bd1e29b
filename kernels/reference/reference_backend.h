// A Backend made of the naive reference ops: slow, simple, float accumulation without
// activation quantisation. Tests run whole models on it to tell a kernel error from a
// model error, and compare the optimised backends against it end to end.
#pragma once

#include <memory>

#include "backend.h"

namespace hearth::kernels {

std::unique_ptr<Backend> make_reference_backend();

}  // namespace hearth::kernels
