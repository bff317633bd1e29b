#include "cli/sampling_options.h"

#include <limits>

namespace hearth::cli {

std::vector<OptionSpec> sampling_options() {
    return {
        {"temperature", true, "sampling temperature; 0 is greedy (default 0.8)"},
        {"top-k", true, "keep the k most likely tokens; 0 is off (default 40)"},
        {"top-p", true, "nucleus sampling threshold; 1 is off (default 0.95)"},
        {"min-p", true, "drop tokens below min-p times the best probability (default 0.05)"},
        {"repeat-penalty", true, "penalise recent tokens; 1 is off (default 1.0)"},
        {"frequency-penalty", true, "subtract per occurrence in the window (default 0)"},
        {"presence-penalty", true, "subtract once if present in the window (default 0)"},
        {"seed", true, "random seed (default 0)"},
    };
}

Result<SamplingParams> parse_sampling(const Args& args) {
    SamplingParams p;
    auto number = [&](const char* name, float& out) -> Result<void> {
        auto v = args.number(name, out);
        if (!v) return v.error();
        out = static_cast<float>(*v);
        return {};
    };
    for (auto [name, out] :
         {std::pair{"temperature", &p.temperature}, std::pair{"top-p", &p.top_p},
          std::pair{"min-p", &p.min_p}, std::pair{"repeat-penalty", &p.repeat_penalty},
          std::pair{"frequency-penalty", &p.frequency_penalty},
          std::pair{"presence-penalty", &p.presence_penalty}})
        if (auto r = number(name, *out); !r) return r.error();
    if (p.temperature < 0) return make_error("--temperature must be ≥ 0");
    if (p.top_p <= 0 || p.top_p > 1) return make_error("--top-p must be in (0, 1]");
    if (p.min_p < 0 || p.min_p >= 1) return make_error("--min-p must be in [0, 1)");
    if (p.repeat_penalty <= 0) return make_error("--repeat-penalty must be > 0");
    auto k = args.integer("top-k", p.top_k, 0, 1 << 30);
    if (!k) return k.error();
    p.top_k = static_cast<int32_t>(*k);
    auto seed = args.integer("seed", 0, 0, std::numeric_limits<long long>::max());
    if (!seed) return seed.error();
    p.seed = static_cast<uint64_t>(*seed);
    return p;
}

}  // namespace hearth::cli
