// What every inference subcommand of hearth-cli loads: the file, a backend, the model
// and its tokenizer, with errors a person can act on.
#pragma once

#include <memory>
#include <string>

#include "backend.h"
#include "cli/cli_args.h"
#include "common/result.h"
#include "gguf/gguf_file.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {

struct LoadedModel {
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<kernels::Backend> backend;
    std::unique_ptr<LlamaModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
};

// Uses --model (default: $HEARTH_MODEL or the default model) and --threads.
Result<LoadedModel> load_model(const Args& args);

// The options load_model reads, for each command's option list.
std::vector<OptionSpec> model_options();

}  // namespace hearth::cli
