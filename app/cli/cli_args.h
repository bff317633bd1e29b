// Command-line parsing for hearth-cli subcommands: each subcommand declares its options,
// so an unknown or misspelt option is an error instead of being ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace hearth::cli {

struct OptionSpec {
    std::string name;  // without the leading "--"
    bool takes_value;
    std::string help;
};

class Args {
  public:
    // Parses argv[first..]: "--name value", "--name=value", flags, positionals; "--" ends
    // the options.
    static Result<Args> parse(const std::vector<std::string>& argv,
                              const std::vector<OptionSpec>& specs);

    bool flag(const std::string& name) const { return values_.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    const std::vector<std::string>& positionals() const { return positionals_; }

    // Typed access with a clear error ("--max-tokens expects an integer, got 'x'").
    Result<long long> integer(const std::string& name, long long fallback, long long min,
                              long long max) const;
    Result<double> number(const std::string& name, double fallback) const;

  private:
    std::map<std::string, std::string> values_;
    std::vector<std::string> positionals_;
};

std::string usage_of(const std::vector<OptionSpec>& specs);

}  // namespace hearth::cli
