// Chat-formatted prompts for hearth-cli, through the model's chat template.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {

// The prompt for one user message (and an optional system prompt), ending with the
// generation prompt.
Result<std::vector<int32_t>> chat_prompt(const gguf::GgufFile& file, const Tokenizer& tokenizer,
                                         const std::string& system, const std::string& user);

}  // namespace hearth::cli
