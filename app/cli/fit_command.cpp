// hearth-cli fit: will a model run on this computer, and how fast (fit_estimate.h), before
// opening it; with --check, opens it, generates, and prints what was estimated beside what
// was measured (decode tokens/s; the memory the process grew by), so the estimate's error
// can be recorded (docs/benchmarks.md).
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "common/paths.h"
#include "fit_estimate.h"
#include "gguf/gguf_file.h"
#include "memory_probe.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {
namespace {

// The process's resident set (Linux); 0 elsewhere.
std::uint64_t resident_bytes() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) != 0) continue;
        std::istringstream fields(line.substr(6));
        std::uint64_t kib = 0;
        fields >> kib;
        return kib << 10;
    }
    return 0;
}

const char* verdict_name(FitVerdict v) {
    switch (v) {
        case FitVerdict::Fits:
            return "fits";
        case FitVerdict::Tight:
            return "tight";
        case FitVerdict::TooBig:
            return "too-big";
    }
    return "";
}

double mib(std::uint64_t b) {
    return static_cast<double>(b) / (1 << 20);
}

}  // namespace

int run_fit(const CommandArgs& raw) {
    std::vector<OptionSpec> options = engine_options();
    options.push_back({"check", false, "open the model, generate, and compare with the estimate"});
    options.push_back({"tokens", true, "tokens to generate with --check (default 128)"});
    options.push_back({"json", false, "JSON output"});
    options.push_back({"help", false, "show this help"});
    auto args = Args::parse(raw, options);
    if (!args) return fail(2, args.message());
    if (args->flag("help")) {
        std::printf("usage: hearth-cli fit [--model FILE] [--context N] [--check] [options]\n%s",
                    usage_of(options).c_str());
        return 0;
    }
    auto config = engine_config(*args);
    if (!config) return fail(2, config.message());
    auto tokens = args->integer("tokens", 128, 1, 1 << 16);
    if (!tokens) return fail(2, tokens.message());

    auto file = gguf::GgufFile::open(config->model_path);
    if (!file) return fail(1, file.message());
    auto needs = model_needs(**file, config->scheduler.max_batch_tokens);
    if (!needs) return fail(1, config->model_path + ": " + needs.message());
    auto memory = system_memory();
    if (!memory) return fail(1, memory.message());
    const int threads = config->n_threads > 0
                            ? config->n_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    MachineFacts machine{memory->total, memory->available, measure_read_bandwidth(threads)};
    const FitEstimate e =
        estimate_fit(*needs, config->context_length, config->kv_mb, machine, config->block_size);

    QJsonObject out{{"model", QString::fromStdString(config->model_path)},
                    {"context", static_cast<qint64>(e.context)},
                    {"weights_mib", mib(e.weight_bytes)},
                    {"kv_mib", mib(e.kv_bytes)},
                    {"activations_mib", mib(e.activation_bytes)},
                    {"app_mib", mib(e.overhead_bytes)},
                    {"total_mib", mib(e.total_bytes)},
                    {"ram_available_mib", mib(machine.ram_available)},
                    {"read_gb_s", machine.read_bytes_per_s / 1e9},
                    {"threads", threads},
                    {"verdict", verdict_name(e.verdict)},
                    {"estimated_tokens_per_s", e.tokens_per_s}};

    if (args->flag("check")) {
        const std::uint64_t before = resident_bytes();
        file->reset();  // the engine maps its own
        auto engine = start_engine(*config, false);
        if (!engine) return fail(1, engine.message());
        sched::Request req;
        req.prompt = (*engine)->tokenizer().encode("Once upon a time", false);
        req.sampling = SamplingParams::greedy();
        req.max_tokens = static_cast<int32_t>(*tokens);
        req.stop_at_end_of_generation = false;
        auto handle = (*engine)->submit(std::move(req));
        const sched::Event last = follow(**engine, *handle, [](const std::string&) {});
        if (last.kind == sched::EventKind::Error) return fail(1, last.error);
        const std::uint64_t grown = resident_bytes() - before;
        const double measured = last.stats.decode_tokens_per_s();
        // The engine alone: the estimate less the app's share.
        const double estimated_engine = mib(e.total_bytes - e.overhead_bytes);
        out["measured_tokens_per_s"] = measured;
        out["speed_error"] = measured > 0 ? e.tokens_per_s / measured - 1.0 : 0.0;
        out["measured_engine_mib"] = mib(grown);
        out["estimated_engine_mib"] = estimated_engine;
        out["memory_error"] = grown > 0 ? estimated_engine / mib(grown) - 1.0 : 0.0;
    }

    if (args->flag("json")) {
        std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(),
                   stdout);
        return 0;
    }
    std::printf(
        "%s\n  context %lld tokens: weights %.0f MiB + KV %.0f MiB + activations %.0f MiB"
        " + app %.0f MiB = %.0f MiB\n  free memory %.0f MiB: %s\n"
        "  memory read at %.1f GB/s with %d threads: about %.0f tokens/s\n",
        config->model_path.c_str(), static_cast<long long>(e.context), mib(e.weight_bytes),
        mib(e.kv_bytes), mib(e.activation_bytes), mib(e.overhead_bytes), mib(e.total_bytes),
        mib(machine.ram_available), verdict_name(e.verdict), machine.read_bytes_per_s / 1e9,
        threads, e.tokens_per_s);
    if (args->flag("check"))
        std::printf(
            "  measured: %.1f tokens/s (estimate %+.0f %%), the engine took %.0f MiB"
            " (estimate %.0f MiB, %+.0f %%)\n",
            out["measured_tokens_per_s"].toDouble(), 100 * out["speed_error"].toDouble(),
            out["measured_engine_mib"].toDouble(), out["estimated_engine_mib"].toDouble(),
            100 * out["memory_error"].toDouble());
    return 0;
}

}  // namespace hearth::cli
