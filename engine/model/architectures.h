// The GGUF architectures (general.architecture) Hearth runs, for callers that decide
// before a file is read (the model catalog); ModelConfig::from_gguf is the one that loads.
#pragma once

#include <string_view>

namespace hearth {

bool is_supported_architecture(std::string_view architecture);

}  // namespace hearth
