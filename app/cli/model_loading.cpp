#include "cli/model_loading.h"

#include "common/paths.h"
#include "cpu/cpu_backend.h"

namespace hearth::cli {

std::vector<OptionSpec> model_options() {
    return {
        {"model", true, "GGUF model file (default: $HEARTH_MODEL or the default model)"},
        {"threads", true, "CPU threads (default: all cores)"},
    };
}

Result<LoadedModel> load_model(const Args& args) {
    LoadedModel m;
    const std::string path = args.value("model").value_or(paths::default_model_path());
    auto file = gguf::GgufFile::open(path);
    if (!file) {
        if (!args.value("model"))
            return make_error(file.message() + " (run scripts/fetch-model to get the default model)");
        return file.error();
    }
    m.file = std::move(file).value();
    auto threads = args.integer("threads", 0, 0, 1024);
    if (!threads) return threads.error();
    m.backend = std::make_unique<kernels::CpuBackend>(static_cast<int>(*threads));
    auto model = LlamaModel::load(*m.file, *m.backend);
    if (!model) return make_error(path + ": " + model.message());
    m.model = std::move(model).value();
    auto tokenizer = Tokenizer::from_gguf(*m.file);
    if (!tokenizer) return make_error(path + ": " + tokenizer.message());
    m.tokenizer = std::move(tokenizer).value();
    return m;
}

}  // namespace hearth::cli
