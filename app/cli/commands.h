// hearth-cli subcommands. Each takes its arguments (after the subcommand name) and
// returns the process exit code: 0 success, 1 a runtime error (bad model file...),
// 2 a usage error.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace hearth::cli {

using CommandArgs = std::vector<std::string>;

int run_info(const CommandArgs& args);
int run_tokenize(const CommandArgs& args);
int run_generate(const CommandArgs& args);
int run_chat(const CommandArgs& args);
int run_bench(const CommandArgs& args);
int run_cache(const CommandArgs& args);
int run_serve(const CommandArgs& args);
int run_fit(const CommandArgs& args);
// import-chats (import_chats_command.cpp); the second form writes to `out`/`err` (tests).
int run_import_chats(const CommandArgs& args);
int run_import_chats(const CommandArgs& args, std::ostream& out, std::ostream& err);

// Prints "hearth-cli: message" to stderr and returns code.
int fail(int code, const std::string& message);

}  // namespace hearth::cli
