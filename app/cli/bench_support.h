// Small pieces the hearth-cli benchmarks share: reproducible prompt tokens, a text table,
// number formatting, a peer's results from JSON, and what a benchmark hands back.
#pragma once

#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cli/plot.h"
#include "common/result.h"
#include "sched/scheduler.h"

namespace hearth {
class Engine;
struct EngineConfig;
}  // namespace hearth

namespace hearth::cli {

class Args;

// Random ordinary tokens of the engine's vocabulary (no control tokens), from a seed.
class TokenSource {
  public:
    TokenSource(const Engine& engine, uint64_t seed);
    std::vector<int32_t> take(int n);

  private:
    std::vector<int32_t> ordinary_;
    std::mt19937_64 rng_;
};

class Table {
  public:
    explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string render() const;  // Markdown, columns aligned

  private:
    std::vector<std::vector<std::string>> rows_;
};

std::string fmt(double v, int decimals);
double mean(const std::vector<double>& v);
double median(std::vector<double> v);

// A request with a fixed reply length (no stop at end-of-generation tokens), greedy.
sched::Request request(kv::SeqId conversation, std::vector<int32_t> prompt, int32_t max_tokens,
                       bool park);

// A conversation workload's token ids as scripts/bench/switch and restart read them:
// {"persona", "histories", "messages": [round][conversation], "reply_tokens"}.
QJsonObject workload_json(const std::vector<int32_t>& persona,
                          const std::vector<std::vector<int32_t>>& histories,
                          const std::vector<std::vector<std::vector<int32_t>>>& rounds,
                          int reply_tokens);

template <typename... Parts>
std::vector<int32_t> concat(const Parts&... parts) {
    std::vector<int32_t> out;
    (out.insert(out.end(), parts.begin(), parts.end()), ...);
    return out;
}
Result<std::vector<double>> parse_numbers(const std::string& csv);
// A workload for a peer's script (--dump-workload), as compact JSON.
Result<void> write_json(const std::string& path, const QJsonObject& json);

// {"label": "...", "ttft_ms": [...]} as written by scripts/bench/switch-llamacpp.
// A peer's resumed-turn TTFTs (scripts/bench/switch). resident: the peer kept every
// conversation's history in its context (it never switched), so its TTFT is the time to
// prefill only the new message on top of it.
struct PeerTtft {
    std::string label;
    std::vector<double> ttft_ms;
    bool resident = false;
    // {"label", "ttft_ms", "resident"} or {"peers": [such objects]}.
    static Result<std::vector<PeerTtft>> load(const QString& path);
    // From the file named by --peer; none without it.
    static Result<std::vector<PeerTtft>> from_args(const Args& args);
};

struct BenchOutput {
    std::string table;
    QJsonObject json;
    std::vector<Plot> plots;
};

// hearth-cli bench overflow (bench_overflow.cpp): -1 after --dump-workload.
int bench_overflow(const Args& args, const EngineConfig& base, BenchOutput& out);
// hearth-cli bench knowledge (bench_knowledge.cpp): -1 after --dump-workload.
int bench_knowledge(const Args& args, const EngineConfig& base, BenchOutput& out);
// hearth-cli bench speculate (bench_speculate.cpp): -1 after --dump-workload.
int bench_speculate(const Args& args, const EngineConfig& base, BenchOutput& out);
// hearth-cli bench restart (bench_restart.cpp).
int bench_restart(const Args& args, const EngineConfig& base, BenchOutput& out);
// What a context shift costs in quality (engine/bench/shift_quality.h): a table or JSON.
int bench_shift_quality(const Args& args, const EngineConfig& config);
// The engine soak (engine/bench/soak.h): prints its own table or JSON.
int bench_soak(const Args& args, const EngineConfig& config);

}  // namespace hearth::cli
