#include "cli/cli_args.h"

#include <charconv>

namespace hearth::cli {

Result<Args> Args::parse(const std::vector<std::string>& argv,
                         const std::vector<OptionSpec>& specs) {
    Args args;
    bool options_done = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (options_done || a.size() < 2 || a.rfind("--", 0) != 0) {
            args.positionals_.push_back(a);
            continue;
        }
        if (a == "--") {
            options_done = true;
            continue;
        }
        std::string name = a.substr(2);
        std::optional<std::string> inline_value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name.resize(eq);
        }
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs)
            if (s.name == name) spec = &s;
        if (!spec) return make_error("unknown option --" + name);
        if (spec->takes_value) {
            if (inline_value) {
                args.values_[name] = *inline_value;
            } else if (i + 1 < argv.size()) {
                args.values_[name] = argv[++i];
            } else {
                return make_error("option --" + name + " needs a value");
            }
        } else {
            if (inline_value) return make_error("option --" + name + " takes no value");
            args.values_[name] = "";
        }
    }
    return args;
}

std::optional<std::string> Args::value(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

Result<long long> Args::integer(const std::string& name, long long fallback, long long min,
                                long long max) const {
    const auto v = value(name);
    if (!v) return fallback;
    long long out = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || end != v->data() + v->size())
        return make_error("--" + name + " expects an integer, got '" + *v + "'");
    if (out < min || out > max)
        return make_error("--" + name + " must be between " + std::to_string(min) + " and " +
                          std::to_string(max) + ", got " + *v);
    return out;
}

Result<double> Args::number(const std::string& name, double fallback) const {
    const auto v = value(name);
    if (!v) return fallback;
    try {
        size_t used = 0;
        const double out = std::stod(*v, &used);
        if (used == v->size()) return out;
    } catch (const std::exception&) {
    }
    return make_error("--" + name + " expects a number, got '" + *v + "'");
}

std::string usage_of(const std::vector<OptionSpec>& specs) {
    std::string s;
    for (const OptionSpec& o : specs) {
        std::string left = "  --" + o.name + (o.takes_value ? " VALUE" : "");
        if (left.size() < 24) left.resize(24, ' ');
        s += left + " " + o.help + "\n";
    }
    return s;
}

}  // namespace hearth::cli
