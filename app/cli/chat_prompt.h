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
// generation prompt; thinking off writes the template's empty reasoning block there, where
// it has a switch (Qwen3). Planned by chat::plan_turn, as the app and the server plan
// theirs: an error when it leaves no room in the context.
Result<std::vector<int32_t>> chat_prompt(const gguf::GgufFile& file, const Tokenizer& tokenizer,
                                         const std::string& system, const std::string& user,
                                         int32_t context_length, bool thinking = true);

// The --no-think option's text, shared by the commands that take it.
inline constexpr const char* kNoThinkHelp =
    "turn the model's reasoning off where its template has a switch (Qwen3)";

}  // namespace hearth::cli
