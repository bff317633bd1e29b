// Chat-formatted prompts for hearth-cli, through the model's chat template.
#pragma once

#include <string>
#include <vector>

#include "cli/model_loading.h"

namespace hearth::cli {

// The prompt for one user message (and an optional system prompt), ending with the
// generation prompt.
Result<std::vector<int32_t>> chat_prompt(const LoadedModel& model, const std::string& system,
                                         const std::string& user);

}  // namespace hearth::cli
