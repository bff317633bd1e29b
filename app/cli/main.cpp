// hearth-cli: Hearth's headless, scriptable front end. Every subcommand can print
// machine-readable JSON (--json), so scripts and benchmarks can drive the engine.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/history_commands.h"
#include "common/log.h"

namespace {

int run_history(const hearth::cli::CommandArgs& args) {
    return hearth::cli::run_history_command(args, std::cout, std::cerr);
}

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const hearth::cli::CommandArgs&);
};

constexpr Command kCommands[] = {
    {"info", "describe a GGUF model as JSON", hearth::cli::run_info},
    {"tokenize", "print the token ids of a text as a JSON array", hearth::cli::run_tokenize},
    {"generate", "generate a completion (streamed, or JSON with statistics)",
     hearth::cli::run_generate},
    {"chat", "chat with a model in the terminal", hearth::cli::run_chat},
    {"bench", "prefix-cache benchmarks: shared-prefix, switch, memory", hearth::cli::run_bench},
    {"cache", "the KV cache kept on disk: stats, clear", hearth::cli::run_cache},
    {"serve", "an OpenAI-compatible HTTP server on the model", hearth::cli::run_serve},
    {"fit", "will a model fit this computer, how fast (--check: against a real run)",
     hearth::cli::run_fit},
    {"history", "read the chat history: list, show, export, search", run_history},
    {"import-chats", "import the chats of GPT4All, Jan and LM Studio into the history",
     hearth::cli::run_import_chats},
};

void print_usage(std::FILE* out) {
    std::fprintf(out, "usage: hearth-cli COMMAND [options]\n\ncommands:\n");
    for (const Command& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
    std::fprintf(out,
                 "\nRun 'hearth-cli COMMAND --help' for a command's options;"
                 " 'hearth-cli --version' for the version.\n");
}

}  // namespace

int main(int argc, char** argv) {
    hearth::log::set_level(std::getenv("HEARTH_LOG_LEVEL") ? std::getenv("HEARTH_LOG_LEVEL")
                                                           : "warn");
    if (argc == 2 && !std::strcmp(argv[1], "--version")) {
        std::printf("hearth-cli %s\n", HEARTH_VERSION);
        return 0;
    }
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::vector<std::string> args(argv + 2, argv + argc);
    for (const Command& c : kCommands)
        if (std::strcmp(argv[1], c.name) == 0) return c.run(args);
    std::fprintf(stderr, "hearth-cli: unknown command '%s'\n\n", argv[1]);
    print_usage(stderr);
    return 2;
}
