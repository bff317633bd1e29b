// hearth-gpu-bench: the GPU benchmark (bench/gpu_bench.h) without Qt, for the GPU machine
// (tests/gpu/run.sh). The same as `hearth-cli bench gpu --json`.
//
//   hearth-gpu-bench [--device cuda:N|cpu] [--model PATH] [--shapes a,b] [--types a,b]
//                    [--prefill N] [--decode N] [--no-persona] [--work-dir DIR]
// Prints progress on stderr and the JSON object on stdout.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu_bench.h"

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == ',') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

int usage() {
    std::fprintf(stderr,
                 "usage: hearth-gpu-bench [--device cuda:N|cpu] [--model PATH] [--shapes "
                 "llama-1b,llama-8b]\n"
                 "                        [--types Q4_0,Q4_K,F16] [--prefill N] [--decode N]\n"
                 "                        [--no-persona] [--work-dir DIR]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    hearth::GpuBenchOptions o;
    o.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--no-persona") {
            o.shared_persona = false;
            continue;
        }
        const char* v = value();
        if (!v) return usage();
        if (a == "--device") {
            o.device = v;
        } else if (a == "--model") {
            o.default_model = v;
        } else if (a == "--shapes") {
            o.shapes = split(v);
        } else if (a == "--types") {
            o.types = split(v);
        } else if (a == "--prefill") {
            o.prefill_tokens = std::atoi(v);
        } else if (a == "--decode") {
            o.decode_tokens = std::atoi(v);
        } else if (a == "--work-dir") {
            o.work_dir = v;
        } else {
            return usage();
        }
    }
    if (o.prefill_tokens < 1 || o.decode_tokens < 2) return usage();
    auto r = hearth::run_gpu_bench(o);
    if (!r) {
        std::fprintf(stderr, "hearth-gpu-bench: %s\n", r.message().c_str());
        return 1;
    }
    std::fputs(r->c_str(), stdout);
    return 0;
}
