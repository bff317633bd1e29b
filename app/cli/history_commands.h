// hearth-cli's history commands: read-only access to the chat history for scripting.
//
//   hearth-cli history list   [--db PATH] [--json] [--archived | --all] [--limit N]
//   hearth-cli history show   ID [--db PATH] [--json]
//   hearth-cli history export ID --format md|json [--out PATH [--force]] [--db PATH]
//   hearth-cli history search QUERY... [--db PATH] [--json] [--limit N]
//
// The database (default: <data dir>/hearth.sqlite3) is opened read-only: these commands
// never change it, even to upgrade or repair it. Exit status: 0 done, 1 failed (the
// message is on `err`), 2 wrong usage.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace hearth::cli {

// `args` are the words after "history" (e.g. {"list", "--json"}).
int run_history_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The usage text above, for `hearth-cli help`.
const char* history_usage();

}  // namespace hearth::cli
