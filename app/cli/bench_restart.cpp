// hearth-cli bench restart: what the KV cache's disk tier buys after a restart.
// 8 conversations share a 300-token persona and are grown to about 1,500 tokens each;
// then each is resumed with a 20-token message, one after another, in these modes:
//   resident      the same engine, no restart: histories parked in memory
//   disk tier     a new engine (the restart) over the folder the first engine wrote
//   prefetched    the same, after Engine::prefetch of each history (the app does that
//                 when a conversation is selected, before the user has typed)
//   no disk tier  a new engine without one: every history is prefilled again
//   peers         --peer: llama.cpp restoring a saved state file (scripts/bench/restart)
// Every engine is started afresh; the disk tier lives in a new temporary folder. The
// restart is a new engine in the same process: the operating system's page cache still
// holds the files the first engine wrote, as it would after a quick restart of the app.
#include <QJsonArray>
#include <QTemporaryDir>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/bench_support.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine.h"

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kConversations = 8, kPersona = 300, kHistory = 1200, kMessage = 20, kReply = 16;

struct Workload {
    std::vector<int32_t> persona;
    std::vector<std::vector<int32_t>> histories;  // after the persona, before the reply
    std::vector<std::vector<int32_t>> messages;

    QJsonObject json() const { return workload_json(persona, histories, {messages}, kReply); }
};

struct Resumed {
    std::vector<double> ttft_ms;
    std::vector<int32_t> computed, loaded;
};

// Grows every conversation to persona + history + its reply; returns those token lists.
std::vector<std::vector<int32_t>> grow(Engine& engine, const Workload& w) {
    std::vector<std::vector<int32_t>> grown;
    for (int c = 0; c < kConversations; ++c) {
        auto prompt = concat(w.persona, w.histories[static_cast<std::size_t>(c)]);
        const sched::Event e = engine.submit(request(c, prompt, kReply, true))->wait();
        prompt.insert(prompt.end(), e.tokens.begin(), e.tokens.end());
        grown.push_back(std::move(prompt));
    }
    return grown;
}

Resumed resume(Engine& engine, const Workload& w, const std::vector<std::vector<int32_t>>& grown) {
    Resumed r;
    for (int c = 0; c < kConversations; ++c) {
        const auto i = static_cast<std::size_t>(c);
        const sched::Event e =
            engine.submit(request(c, concat(grown[i], w.messages[i]), kReply, true))->wait();
        r.ttft_ms.push_back(e.stats.ttft_ms);
        r.computed.push_back(e.stats.prompt_tokens_computed);
        r.loaded.push_back(e.stats.prompt_tokens_loaded);
    }
    return r;
}

// --pressure: 64 conversations of ~1,500 tokens through a KV cache that holds 4 of them,
// each resumed once after all were grown: with the disk tier the resumes come from memory
// or disk; without it, they are computed again.
struct PressureResult {
    int64_t prompt = 0, memory = 0, disk = 0, computed = 0;
    double ttft_ms = 0;            // mean over the resumes
    double written_per_token = 0;  // disk bytes written per generated token, whole run
};

PressureResult run_pressure(Engine& engine, TokenSource& tokens, int conversations) {
    const std::vector<int32_t> persona = tokens.take(kPersona);
    std::vector<std::vector<int32_t>> grown;
    for (int c = 0; c < conversations; ++c) {
        auto prompt = concat(persona, tokens.take(kHistory));
        const sched::Event e = engine.submit(request(c, prompt, kReply, true))->wait();
        prompt.insert(prompt.end(), e.tokens.begin(), e.tokens.end());
        grown.push_back(std::move(prompt));
    }
    PressureResult r;
    std::vector<double> ttft;
    for (int c = 0; c < conversations; ++c) {
        const sched::Event e =
            engine
                .submit(request(c,
                                concat(grown[static_cast<std::size_t>(c)], tokens.take(kMessage)),
                                kReply, true))
                ->wait();
        r.prompt += e.stats.prompt_tokens;
        r.disk += e.stats.prompt_tokens_loaded;
        r.memory += e.stats.prompt_tokens_cached - e.stats.prompt_tokens_loaded;
        r.computed += e.stats.prompt_tokens_computed;
        ttft.push_back(e.stats.ttft_ms);
    }
    engine.wait_idle();
    const EngineStats st = engine.stats();
    r.ttft_ms = mean(ttft);
    r.written_per_token = static_cast<double>(st.disk.written_bytes) /
                          static_cast<double>(std::max<int64_t>(st.scheduler.tokens_generated, 1));
    return r;
}

double mean_of(const std::vector<int32_t>& v) {
    double s = 0;
    for (int32_t x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

template <typename Make>
int bench_pressure(const Args& args, const EngineConfig& base, const Make& make,
                   const QTemporaryDir& dir, BenchOutput& out) {
    constexpr int kMany = 64, kResident = 4;
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    PressureResult res[2];
    for (int mode = 0; mode < 2; ++mode) {
        auto engine = make(mode == 0 ? &dir : nullptr);
        if (!engine) return fail(1, engine.message());
        (void)base;
        // A KV cache that holds kResident conversations of ~1,516 tokens.
        const std::size_t per_token =
            (*engine)->kv_bytes() /
            static_cast<std::size_t>((*engine)->kv_blocks() * (*engine)->config().block_size);
        EngineConfig c = (*engine)->config();
        c.kv_mb = (kResident * 1536 * per_token) >> 20;
        engine->reset();
        engine = start_engine(c, !args.value("model"));
        if (!engine) return fail(1, engine.message());
        std::fprintf(stderr, "  restart --pressure: %d conversations, %zu MiB of KV, %s...\n",
                     kMany, c.kv_mb, mode == 0 ? "disk tier" : "no disk tier");
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        res[mode] = run_pressure(**engine, tokens, kMany);
    }
    Table t({"", "mean TTFT ms", "from memory", "from disk", "computed", "disk bytes / token"});
    const auto pct = [](int64_t part, int64_t whole) {
        return fmt(100.0 * static_cast<double>(part) /
                       static_cast<double>(std::max<int64_t>(whole, 1)),
                   1) +
               " %";
    };
    const char* names[2] = {"disk tier", "no disk tier"};
    for (int m = 0; m < 2; ++m)
        t.add({names[m], fmt(res[m].ttft_ms, 1), pct(res[m].memory, res[m].prompt),
               pct(res[m].disk, res[m].prompt), pct(res[m].computed, res[m].prompt),
               fmt(res[m].written_per_token / 1024, 1) + " KiB"});
    out.table = t.render() +
                "64 conversations of ~1,500 tokens, a KV cache for 4, each resumed "
                "once with a 20-token message; shares of the resumed prompts' tokens\n";
    for (int m = 0; m < 2; ++m) {
        const QString key = m == 0 ? QStringLiteral("disk") : QStringLiteral("no_disk");
        out.json[key] = QJsonObject{{"ttft_ms", res[m].ttft_ms},
                                    {"prompt_tokens", static_cast<qint64>(res[m].prompt)},
                                    {"from_memory", static_cast<qint64>(res[m].memory)},
                                    {"from_disk", static_cast<qint64>(res[m].disk)},
                                    {"computed", static_cast<qint64>(res[m].computed)},
                                    {"disk_bytes_per_generated_token", res[m].written_per_token}};
    }
    Plot p{"restart --pressure: mean resumed-turn TTFT", "", "TTFT (ms)", {"mean"}, {}};
    p.series.push_back({"disk tier", {}, {res[0].ttft_ms}});
    p.series.push_back({"no disk tier", {}, {res[1].ttft_ms}});
    out.plots = {p};
    return 0;
}

}  // namespace

int bench_restart(const Args& args, const EngineConfig& base, BenchOutput& out) {
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    auto loaded = PeerTtft::from_args(args);
    if (!loaded) return fail(1, loaded.message());
    const std::vector<PeerTtft> peers = std::move(loaded).value();
    // Two copies of what the first run writes: each restart starts from exactly that (a
    // run writes its own turns down too).
    QTemporaryDir disk_dir, disk_copy, pressure_dir;
    if (!disk_dir.isValid() || !disk_copy.isValid())
        return fail(1, "cannot make a temporary folder for the disk tier");
    const auto make = [&](const QTemporaryDir* disk) -> Result<std::unique_ptr<Engine>> {
        EngineConfig c = base;
        c.prefix_caching = true;
        c.kv_disk_dir = disk ? disk->path().toStdString() : std::string();
        c.kv_disk_mb = disk ? 4096 : 0;
        return start_engine(c, !args.value("model"));
    };
    if (args.flag("pressure")) return bench_pressure(args, base, make, pressure_dir, out);

    Workload w;
    std::vector<std::vector<int32_t>> grown;
    Resumed resident, restored, prefetched, reprefill;
    double written_mb = 0, shutdown_ms = 0;
    {
        auto engine = make(nullptr);
        if (!engine) return fail(1, engine.message());
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        w.persona = tokens.take(kPersona);
        for (int c = 0; c < kConversations; ++c) w.histories.push_back(tokens.take(kHistory));
        for (int c = 0; c < kConversations; ++c) w.messages.push_back(tokens.take(kMessage));
        if (auto d = args.value("dump-workload")) {
            if (auto rc = write_json(*d, w.json()); !rc) return fail(1, rc.message());
            return -1;  // done: no benchmark
        }
        std::fprintf(stderr, "  restart: resident (no restart)...\n");
        grown = grow(**engine, w);
        resident = resume(**engine, w, grown);
    }
    {
        std::fprintf(stderr, "  restart: the first run writes down...\n");
        auto engine = make(&disk_dir);
        if (!engine) return fail(1, engine.message());
        (void)grow(**engine, w);
        (*engine)->wait_idle();
        const auto t0 = Clock::now();
        engine->reset();  // the restart: queued blocks are written down as it closes
        shutdown_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        std::error_code ec;
        std::filesystem::copy(disk_dir.path().toStdString(), disk_copy.path().toStdString(),
                              std::filesystem::copy_options::recursive |
                                  std::filesystem::copy_options::overwrite_existing,
                              ec);
        if (ec) return fail(1, "cannot copy the disk tier's folder: " + ec.message());
    }
    {
        std::fprintf(stderr, "  restart: disk tier...\n");
        auto engine = make(&disk_dir);
        if (!engine) return fail(1, engine.message());
        restored = resume(**engine, w, grown);
    }
    {
        std::fprintf(stderr, "  restart: disk tier, prefetched...\n");
        auto engine = make(&disk_copy);
        if (!engine) return fail(1, engine.message());
        written_mb = static_cast<double>((*engine)->stats().disk.bytes) / (1 << 20);
        for (const auto& g : grown) (*engine)->prefetch(g);
        (*engine)->wait_idle();
        prefetched = resume(**engine, w, grown);
    }
    {
        std::fprintf(stderr, "  restart: no disk tier (prefill again)...\n");
        auto engine = make(nullptr);
        if (!engine) return fail(1, engine.message());
        reprefill = resume(**engine, w, grown);
    }

    const double res = mean(resident.ttft_ms), disk = mean(restored.ttft_ms),
                 pre = mean(prefetched.ttft_ms), off = mean(reprefill.ttft_ms);
    Table t({"", "mean TTFT ms", "median TTFT ms", "tokens computed", "tokens from disk"});
    const auto row = [&](const std::string& name, const Resumed& r) {
        t.add({name, fmt(mean(r.ttft_ms), 1), fmt(median(r.ttft_ms), 1),
               fmt(mean_of(r.computed), 1), fmt(mean_of(r.loaded), 1)});
    };
    row("resident (no restart)", resident);
    row("restart, disk tier", restored);
    row("restart, disk tier, prefetched", prefetched);
    row("restart, no disk tier", reprefill);
    for (const PeerTtft& p : peers)
        t.add({p.label, fmt(mean(p.ttft_ms), 1), fmt(median(p.ttft_ms), 1), "-", "-"});
    std::string summary = "disk tier / resident = " + fmt(disk / res, 2) +
                          "x (target <= 1.5); no disk tier / disk tier = " + fmt(off / disk, 1) +
                          "x (target >= 10); prefetched / resident = " + fmt(pre / res, 2) + "x\n";
    for (const PeerTtft& p : peers)
        summary += p.label + " / disk tier = " + fmt(mean(p.ttft_ms) / disk, 2) + "x\n";
    std::size_t tokens = 0;
    for (const auto& g : grown) tokens += g.size();
    summary += "disk tier after the first run: " + fmt(written_mb, 1) + " MiB for " +
               std::to_string(kConversations) + " conversations, " + std::to_string(tokens) +
               " tokens (" + fmt(written_mb * 1024 / static_cast<double>(tokens), 1) +
               " KiB per token); closing that engine took " + fmt(shutdown_ms, 0) + " ms\n";
    out.table = t.render() + summary;
    const auto arr = [](const std::vector<double>& v) {
        QJsonArray a;
        for (double x : v) a.append(x);
        return a;
    };
    out.json["resident_ttft_ms"] = arr(resident.ttft_ms);
    out.json["disk_ttft_ms"] = arr(restored.ttft_ms);
    out.json["prefetched_ttft_ms"] = arr(prefetched.ttft_ms);
    out.json["no_disk_ttft_ms"] = arr(reprefill.ttft_ms);
    out.json["disk_over_resident"] = disk / res;
    out.json["no_disk_over_disk"] = off / disk;
    out.json["disk_mib"] = written_mb;
    out.json["shutdown_ms"] = shutdown_ms;
    QJsonArray peers_json;
    for (const PeerTtft& p : peers)
        peers_json.append(QJsonObject{{"label", QString::fromStdString(p.label)},
                                      {"ttft_ms", arr(p.ttft_ms)},
                                      {"peer_over_disk", mean(p.ttft_ms) / disk}});
    if (!peers.empty()) out.json["peers"] = peers_json;
    Plot summary_plot{"restart: mean resumed-turn TTFT", "", "TTFT (ms)", {"mean"}, {}};
    summary_plot.series.push_back({"resident", {}, {res}});
    summary_plot.series.push_back({"disk tier", {}, {disk}});
    summary_plot.series.push_back({"prefetched", {}, {pre}});
    summary_plot.series.push_back({"no disk tier", {}, {off}});
    for (const PeerTtft& p : peers)
        summary_plot.series.push_back({QString::fromStdString(p.label), {}, {mean(p.ttft_ms)}});
    out.plots = {summary_plot};
    return 0;
}

}  // namespace hearth::cli
