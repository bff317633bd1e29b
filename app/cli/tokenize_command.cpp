// hearth-cli tokenize --model MODEL [--special] TEXT: token ids as a JSON array.
#include <cstdio>
#include <iostream>
#include <iterator>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "common/paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

const std::vector<OptionSpec> kTokenizeOptions = {
    {"model", true, "GGUF model file (default: $HEARTH_MODEL or the default model)"},
    {"special", false, "parse control tokens such as <|im_start|> in the text"},
    {"bos", false, "prepend the BOS token when the model asks for one"},
    {"json", false, "JSON output (the default)"},
    {"help", false, "show this help"},
};

}  // namespace

int run_tokenize(const CommandArgs& argv) {
    auto args = Args::parse(argv, kTokenizeOptions);
    if (!args) return fail(2, args.message());
    if (args->flag("help") || args->positionals().size() != 1) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli tokenize [--model MODEL] [--special] TEXT   (TEXT '-' "
                     "reads stdin)\n%s",
                     usage_of(kTokenizeOptions).c_str());
        return args->flag("help") ? 0 : 2;
    }
    std::string text = args->positionals()[0];
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), {});

    const std::string path = args->value("model").value_or(paths::default_model_path());
    auto file = gguf::GgufFile::open(path);
    if (!file) return fail(1, file.message());
    auto tokenizer = Tokenizer::from_gguf(**file);
    if (!tokenizer) return fail(1, path + ": " + tokenizer.message());

    std::vector<TokenId> ids;
    if (args->flag("bos") && (*tokenizer)->add_bos() && (*tokenizer)->bos() >= 0)
        ids.push_back((*tokenizer)->bos());
    const auto encoded = (*tokenizer)->encode(text, args->flag("special"));
    ids.insert(ids.end(), encoded.begin(), encoded.end());

    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(ids[i]);
    }
    out += "]\n";
    std::fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace hearth::cli
