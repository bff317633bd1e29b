// --temperature, --top-k, ... shared by generate and chat.
#pragma once

#include <vector>

#include "cli/cli_args.h"
#include "sampling/sampler.h"

namespace hearth::cli {

std::vector<OptionSpec> sampling_options();
Result<SamplingParams> parse_sampling(const Args& args);

}  // namespace hearth::cli
