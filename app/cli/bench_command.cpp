// hearth-cli bench NAME: the prefix-cache benchmarks, each run with the cache on and off
// in one invocation (one engine at a time, same model and threads), printing a table (or
// one JSON object with --json) and writing a PNG plot (--plot).
//   shared-prefix  requests with a 200-token shared prefix, 30 unique tokens, 50 output
//                  tokens, Poisson arrivals over a sweep of rates
//   switch         8 conversations sharing a 300-token persona, grown to ~1,500 tokens,
//                  visited round-robin with 20-token messages: TTFT of resumed turns
//   memory         16 conversations sharing a 1,000-token persona at once: KV blocks in
//                  use vs unshared and vs ideal
//   restart        the switch workload's conversations resumed after a restart, with and
//                  without the KV disk tier (bench_restart.cpp)
//   knowledge      8 new chats of a persona holding a 6,000-token document, against the
//                  same persona without it, the document pasted, after a restart
//                  (bench_knowledge.cpp)
//   overflow       one chat past its context under each overflow policy, and llama-server
//                  --context-shift as the peer (bench_overflow.cpp)
//   shift-quality  what a context shift costs: logits and greedy tokens against recomputing
//                  after 1, 5 and 20 steps, and perplexity, on a long text (--text)
//   speculate      speculative decoding against plain decoding: code editing, a summary and
//                  free chat at 1 and 8 conversations; llama-server's as the peer
//                  (bench_speculate.cpp)
//   gpu            the CUDA backend (engine/bench/gpu_bench.h): prefill, decode at batch
//                  1/8/32, bandwidth and tensor-core fractions, a shared persona; JSON
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "cli/bench_support.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/plot.h"
#include "common/paths.h"
#if defined(HEARTH_WITH_CUDA)
#include "bench/gpu_bench.h"
#endif
#include "model/model_config.h"

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<OptionSpec> bench_options() {
    std::vector<OptionSpec> o = {
        {"json", false, "print one JSON object instead of a table"},
        {"plot", true, "write the plot to this PNG file (default: hearth-bench-NAME.png)"},
        {"seed", true, "workload seed (default 1)"},
        {"rates", true, "shared-prefix: arrival rates in requests/s, comma-separated"},
        {"requests", true, "shared-prefix: requests per rate (default 24); soak: per phase (400)"},
        {"phases", true, "soak: phases, a model reload between them (default 5)"},
        {"conversations", true, "soak: conversations (default 48)"},
        {"concurrency", true, "soak: requests in flight (default 12)"},
        {"kv-share", true, "soak: KV cache as a share of the working set (default 0.10)"},
        {"cancel-rate", true, "soak: share of requests cancelled (default 0.10)"},
        {"shift-rate", true,
         "soak: share of chats that shift their context when they outgrow it instead of "
         "starting over (default 0)"},
        {"overlap", true,
         "soak: overlapped steps: auto (default: on a GPU), on or off (the reference's: off)"},
        {"rounds", true, "switch: round-robin rounds (default 5); speculate: runs each way (2)"},
        {"batches", true, "speculate: conversations at once, comma-separated (default 1,8)"},
        {"workloads", true, "speculate: code, summary, chat (default all)"},
        {"max-draft", true, "speculate: most draft tokens per sequence and step (default 7)"},
        {"draft-step-tokens", true,
         "speculate: drafts only while a step has at most this many tokens (default: 8 on "
         "the CPU, 64 on a GPU)"},
        {"dump-workload", true,
         "switch, restart, overflow, knowledge, speculate: write the workload as JSON and exit"},
        {"peer", true,
         "switch, restart, overflow, knowledge, speculate: JSON with peers' results "
         "(scripts/bench/switch, restart, overflow, knowledge, speculate)"},
        {"document-tokens", true, "knowledge: the persona's document (default 6000)"},
        {"turns", true, "overflow: the chat's turns (default 60)"},
        {"persona-tokens", true, "overflow: the persona's length (default 500)"},
        {"message-tokens", true, "overflow: each message's length (default 300)"},
        {"reply-tokens", true, "overflow: each reply's length (default 48)"},
        {"keep", true, "overflow: the share of the context a step keeps (default 0.5)"},
        {"policies", true, "overflow: fewest, drop, shift (default all three)"},
        {"text", true, "shift-quality: the long text to read (UTF-8)"},
        {"steps", true, "shift-quality: after how many steps to compare logits (default 1,5,20)"},
        {"pressure", false,
         "restart: 64 conversations through a KV cache for 4 instead (hit rates per tier)"},
        {"shapes", true, "gpu: generated model shapes (default llama-1b,llama-8b; also tiny)"},
        {"types", true, "gpu: their weight types (default Q4_0,Q4_K,F16)"},
        {"help", false, "show this help"},
    };
    auto e = engine_options();
    o.insert(o.end(), e.begin(), e.end());
    return o;
}

// --- shared-prefix ------------------------------------------------------------------

struct RateResult {
    double rate = 0;
    double throughput = 0;  // requests/s
    double latency_ms = 0;  // mean, arrival to last token
    double ttft_ms = 0;     // mean, arrival to first token
};

std::vector<RateResult> run_shared_prefix(Engine& engine, const std::vector<double>& rates,
                                          int n_requests, uint64_t seed, TokenSource& tokens) {
    const std::vector<int32_t> prefix = tokens.take(200);
    kv::SeqId next_conv = 1;
    // Steady state: the shared prefix has been seen once (and kernels are warm).
    (void)engine.submit(request(next_conv++, concat(prefix, tokens.take(30)), 50, false))->wait();
    std::vector<RateResult> out;
    for (double rate : rates) {
        std::mt19937_64 rng(seed + static_cast<uint64_t>(rate * 1000));
        std::exponential_distribution<double> gap(rate);
        std::vector<double> arrival(static_cast<std::size_t>(n_requests));
        double t = 0;
        for (auto& a : arrival) a = (t += gap(rng));
        std::vector<std::vector<int32_t>> prompts;
        for (int i = 0; i < n_requests; ++i) prompts.push_back(concat(prefix, tokens.take(30)));

        std::mutex mu;
        std::condition_variable cv;
        int done = 0;
        std::vector<Clock::time_point> submitted(arrival.size()), first(arrival.size()),
            last(arrival.size());
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < arrival.size(); ++i) {
            std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(arrival[i])));
            submitted[i] = Clock::now();
            engine.submit(
                request(next_conv++, prompts[i], 50, false), [&, i](const sched::Event& e) {
                    const auto now = Clock::now();
                    std::lock_guard lk(mu);
                    if (e.kind == sched::EventKind::Token && e.token >= 0 &&
                        first[i] == Clock::time_point{})
                        first[i] = now;
                    if (e.kind == sched::EventKind::Finished || e.kind == sched::EventKind::Error) {
                        last[i] = now;
                        ++done;
                        cv.notify_all();
                    }
                });
        }
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return done == n_requests; });
        std::vector<double> lat, ttft;
        Clock::time_point end = t0;
        for (std::size_t i = 0; i < arrival.size(); ++i) {
            lat.push_back(
                std::chrono::duration<double, std::milli>(last[i] - submitted[i]).count());
            ttft.push_back(
                std::chrono::duration<double, std::milli>(first[i] - submitted[i]).count());
            end = std::max(end, last[i]);
        }
        const double span = std::chrono::duration<double>(end - t0).count();
        out.push_back({rate, n_requests / span, mean(lat), mean(ttft)});
        std::fprintf(stderr, "  %s rate %.2f/s: %.2f req/s, latency %.0f ms, TTFT %.0f ms\n",
                     engine.config().prefix_caching ? "cache on " : "cache off", rate,
                     out.back().throughput, out.back().latency_ms, out.back().ttft_ms);
    }
    return out;
}

int bench_shared_prefix(const Args& args, const EngineConfig& base, BenchOutput& out) {
    std::vector<double> rates = {0.5, 1, 1.5, 2, 3, 4};
    if (auto r = args.value("rates")) {
        auto parsed = parse_numbers(*r);
        if (!parsed) return fail(2, parsed.message());
        rates = *parsed;
    }
    auto n = args.integer("requests", 24, 1, 100000);
    if (!n) return fail(2, n.message());
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    std::vector<RateResult> res[2];
    for (int mode = 0; mode < 2; ++mode) {
        EngineConfig c = base;
        c.prefix_caching = mode == 0;
        auto engine = start_engine(c, !args.value("model"));
        if (!engine) return fail(1, engine.message());
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        res[mode] = run_shared_prefix(**engine, rates, static_cast<int>(*n),
                                      static_cast<uint64_t>(*seed), tokens);
    }
    // The rate where cache-off saturates: the first whose cache-off throughput falls 10 %
    // short of the offered rate and has reached 90 % of its best over the sweep (past it,
    // more load only lengthens its queue).
    double best_off = 0;
    for (const RateResult& r : res[1]) best_off = std::max(best_off, r.throughput);
    std::size_t sat = rates.size() - 1;
    for (std::size_t i = 0; i < rates.size(); ++i)
        if (res[1][i].throughput < 0.9 * rates[i] && res[1][i].throughput >= 0.9 * best_off) {
            sat = i;
            break;
        }
    Table t({"rate req/s", "on req/s", "off req/s", "on latency ms", "off latency ms", "on TTFT ms",
             "off TTFT ms"});
    QJsonArray rows;
    for (std::size_t i = 0; i < rates.size(); ++i) {
        const RateResult &a = res[0][i], &b = res[1][i];
        t.add({fmt(rates[i], 2) + (i == sat ? " *" : ""), fmt(a.throughput, 2),
               fmt(b.throughput, 2), fmt(a.latency_ms, 0), fmt(b.latency_ms, 0), fmt(a.ttft_ms, 0),
               fmt(b.ttft_ms, 0)});
        QJsonObject r;
        r["rate"] = rates[i];
        r["cache_on"] = QJsonObject{
            {"throughput", a.throughput}, {"latency_ms", a.latency_ms}, {"ttft_ms", a.ttft_ms}};
        r["cache_off"] = QJsonObject{
            {"throughput", b.throughput}, {"latency_ms", b.latency_ms}, {"ttft_ms", b.ttft_ms}};
        rows.append(r);
    }
    const RateResult &a = res[0][sat], &b = res[1][sat];
    const double gain = a.throughput / b.throughput - 1, cut = 1 - a.latency_ms / b.latency_ms;
    out.table = t.render() + "* cache off saturates at " + fmt(rates[sat], 2) +
                " req/s: cache on gives " + fmt(gain * 100, 0) + " % more throughput and " +
                fmt(cut * 100, 0) + " % lower latency (vLLM's reference: +29 %, -60 %)\n";
    out.json["rates"] = rows;
    out.json["saturation_rate"] = rates[sat];
    out.json["throughput_gain"] = gain;
    out.json["latency_reduction"] = cut;
    PlotSeries on{"cache on", rates, {}}, off{"cache off", rates, {}};
    PlotSeries lon{"cache on", rates, {}}, loff{"cache off", rates, {}};
    for (std::size_t i = 0; i < rates.size(); ++i) {
        on.y.push_back(res[0][i].throughput);
        off.y.push_back(res[1][i].throughput);
        lon.y.push_back(res[0][i].latency_ms / 1000);
        loff.y.push_back(res[1][i].latency_ms / 1000);
    }
    out.plots = {{"shared-prefix: throughput",
                  "arrival rate (requests/s)",
                  "completed requests/s",
                  {},
                  {on, off}},
                 {"shared-prefix: mean latency",
                  "arrival rate (requests/s)",
                  "seconds per request",
                  {},
                  {lon, loff}}};
    return 0;
}

// --- switch -------------------------------------------------------------------------

struct SwitchWorkload {
    std::vector<int32_t> persona;
    std::vector<std::vector<int32_t>> histories;              // [conversation], after the persona
    std::vector<std::vector<std::vector<int32_t>>> messages;  // [round][conversation]
    int32_t reply_tokens = 16;

    static SwitchWorkload make(TokenSource& tokens, int rounds) {
        SwitchWorkload w;
        w.persona = tokens.take(300);
        for (int c = 0; c < 8; ++c) w.histories.push_back(tokens.take(1200));
        for (int r = 0; r < rounds; ++r) {
            w.messages.emplace_back();
            for (int c = 0; c < 8; ++c) w.messages.back().push_back(tokens.take(20));
        }
        return w;
    }
    QJsonObject json() const { return workload_json(persona, histories, messages, reply_tokens); }
};

struct SwitchResult {
    std::vector<double> ttft_ms;  // per resumed turn, round-major
    std::vector<int32_t> computed;
    double message_only_ms = 0;  // median TTFT of a 20-token prompt on its own
};

SwitchResult run_switch(Engine& engine, const SwitchWorkload& w) {
    SwitchResult out;
    const int C = static_cast<int>(w.histories.size());
    std::vector<std::vector<int32_t>> hist(static_cast<std::size_t>(C));
    // Grow every conversation to its full history (not measured).
    for (int c = 0; c < C; ++c) {
        auto& h = hist[static_cast<std::size_t>(c)];
        h = concat(w.persona, w.histories[static_cast<std::size_t>(c)]);
        const sched::Event e = engine.submit(request(c, h, w.reply_tokens, true))->wait();
        h.insert(h.end(), e.tokens.begin(), e.tokens.end());
    }
    // The time to prefill only a new message: the same messages as prompts of their own.
    std::vector<double> alone;
    for (int c = 0; c < C; ++c)
        alone.push_back(
            engine.submit(request(1000 + c, w.messages[0][static_cast<std::size_t>(c)], 1, false))
                ->wait()
                .stats.ttft_ms);
    out.message_only_ms = median(alone);
    for (const auto& round : w.messages)
        for (int c = 0; c < C; ++c) {
            auto& h = hist[static_cast<std::size_t>(c)];
            h.insert(h.end(), round[static_cast<std::size_t>(c)].begin(),
                     round[static_cast<std::size_t>(c)].end());
            const sched::Event e = engine.submit(request(c, h, w.reply_tokens, true))->wait();
            out.ttft_ms.push_back(e.stats.ttft_ms);
            out.computed.push_back(e.stats.prompt_tokens_computed);
            h.insert(h.end(), e.tokens.begin(), e.tokens.end());
        }
    return out;
}

int bench_switch(const Args& args, const EngineConfig& base, BenchOutput& out) {
    auto rounds = args.integer("rounds", 5, 1, 100);
    if (!rounds) return fail(2, rounds.message());
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    auto loaded = PeerTtft::from_args(args);
    if (!loaded) return fail(1, loaded.message());
    const std::vector<PeerTtft> peers = std::move(loaded).value();
    SwitchResult res[2];
    for (int mode = 0; mode < 2; ++mode) {
        EngineConfig c = base;
        c.prefix_caching = mode == 0;
        auto engine = start_engine(c, !args.value("model"));
        if (!engine) return fail(1, engine.message());
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        const SwitchWorkload w = SwitchWorkload::make(tokens, static_cast<int>(*rounds));
        if (auto d = args.value("dump-workload")) {
            if (auto rc = write_json(*d, w.json()); !rc) return fail(1, rc.message());
            return -1;  // done: no benchmark
        }
        std::fprintf(stderr, "  switch, cache %s...\n", mode == 0 ? "on" : "off");
        res[mode] = run_switch(**engine, w);
    }
    const double on = mean(res[0].ttft_ms), off = mean(res[1].ttft_ms);
    Table t({"", "mean TTFT ms", "median TTFT ms", "max TTFT ms", "mean tokens computed"});
    const auto row = [&](const std::string& name, const std::vector<double>& v, double computed) {
        t.add({name, fmt(mean(v), 1), fmt(median(v), 1),
               fmt(*std::max_element(v.begin(), v.end()), 1),
               computed >= 0 ? fmt(computed, 1) : "-"});
    };
    const auto mean_computed = [](const std::vector<int32_t>& v) {
        return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    row("cache on", res[0].ttft_ms, mean_computed(res[0].computed));
    row("cache off", res[1].ttft_ms, mean_computed(res[1].computed));
    for (const PeerTtft& p : peers) row(p.label, p.ttft_ms, -1);
    std::string summary_text = "cache off / cache on = " + fmt(off / on, 1) + "x (target >= 10)\n";
    for (const PeerTtft& p : peers) {
        summary_text += p.label + " / cache on = " + fmt(mean(p.ttft_ms) / on, 2) + "x";
        if (p.resident)
            summary_text +=
                "; cache on / " + p.label + " = " + fmt(on / mean(p.ttft_ms), 2) +
                " (resumed turn vs prefilling only the new message on a resident history; "
                "target <= 1.2)";
        summary_text += "\n";
    }
    summary_text +=
        "prefill of the 20-token message alone, no history: " + fmt(res[0].message_only_ms, 1) +
        " ms; resumed turn / message alone = " + fmt(on / res[0].message_only_ms, 2) +
        " (includes attention over the ~1,700-token history)\n";
    out.table = t.render() + summary_text;
    const auto arr = [](const std::vector<double>& v) {
        QJsonArray a;
        for (double x : v) a.append(x);
        return a;
    };
    out.json["cache_on_ttft_ms"] = arr(res[0].ttft_ms);
    out.json["cache_off_ttft_ms"] = arr(res[1].ttft_ms);
    out.json["message_only_ttft_ms"] = res[0].message_only_ms;
    out.json["resumed_over_message_only"] = on / res[0].message_only_ms;
    out.json["off_over_on"] = off / on;
    QJsonArray peers_json;
    for (const PeerTtft& p : peers)
        peers_json.append(QJsonObject{{"label", QString::fromStdString(p.label)},
                                      {"resident", p.resident},
                                      {"ttft_ms", arr(p.ttft_ms)},
                                      {"cache_on_over_peer", on / mean(p.ttft_ms)}});
    if (!peers.empty()) out.json["peers"] = peers_json;
    std::vector<double> turn(res[0].ttft_ms.size());
    std::iota(turn.begin(), turn.end(), 1.0);
    Plot per_turn{"switch: TTFT of each resumed turn",
                  "turn (8 conversations round-robin)",
                  "TTFT (ms)",
                  {},
                  {}};
    per_turn.series.push_back({"cache on", turn, res[0].ttft_ms});
    per_turn.series.push_back({"cache off", turn, res[1].ttft_ms});
    for (const PeerTtft& p : peers)
        per_turn.series.push_back({QString::fromStdString(p.label), turn, p.ttft_ms});
    Plot summary{"switch: mean resumed-turn TTFT", "", "TTFT (ms)", {"mean"}, {}};
    summary.series.push_back({"cache on", {}, {on}});
    summary.series.push_back({"cache off", {}, {off}});
    for (const PeerTtft& p : peers)
        summary.series.push_back({QString::fromStdString(p.label), {}, {mean(p.ttft_ms)}});
    summary.series.push_back({"message alone", {}, {res[0].message_only_ms}});
    out.plots = {per_turn, summary};
    return 0;
}

// --- memory -------------------------------------------------------------------------

struct MemoryResult {
    int32_t peak_blocks = 0;
};

MemoryResult run_memory(Engine& engine, const std::vector<int32_t>& persona,
                        const std::vector<std::vector<int32_t>>& messages, int32_t reply) {
    std::vector<std::shared_ptr<RequestHandle>> handles;
    for (std::size_t c = 0; c < messages.size(); ++c)
        handles.push_back(engine.submit(
            request(static_cast<kv::SeqId>(c), concat(persona, messages[c]), reply, false)));
    MemoryResult r;
    // Peak blocks held while all of them are resident.
    for (bool running = true; running;) {
        r.peak_blocks = std::max(r.peak_blocks, engine.stats().kv.blocks_used);
        running =
            std::any_of(handles.begin(), handles.end(), [](const auto& h) { return !h->done(); });
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (auto& h : handles) (void)h->wait();
    return r;
}

int bench_memory(const Args& args, const EngineConfig& base, BenchOutput& out) {
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    constexpr int kConversations = 16, kMessage = 50, kReply = 16, kPersona = 1000;
    MemoryResult res[2];
    const int32_t bs = base.block_size;
    std::size_t per_block = 0;
    for (int mode = 0; mode < 2; ++mode) {
        EngineConfig c = base;
        c.prefix_caching = mode == 0;
        c.scheduler.max_running = kConversations;
        // Room for all 16 unshared (about 1,070 blocks of 16 tokens): the automatic size
        // (two contexts) would cap the cache-off count at the cache size.
        if (c.kv_mb == 0) c.kv_mb = 512;
        // Cache off: admit all 16 prompts in one step so that all are resident at once, as
        // an engine without sharing holds them. Cache on keeps the normal budget, so the
        // first prompt's persona is cached before the others are admitted.
        if (mode == 1) c.scheduler.max_batch_tokens = kConversations * (kPersona + kMessage);
        auto engine = start_engine(c, !args.value("model"));
        if (!engine) return fail(1, engine.message());
        per_block = (*engine)->kv_bytes() / static_cast<std::size_t>((*engine)->kv_blocks());
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        const std::vector<int32_t> persona = tokens.take(kPersona);
        std::vector<std::vector<int32_t>> messages;
        for (int i = 0; i < kConversations; ++i) messages.push_back(tokens.take(kMessage));
        std::fprintf(stderr, "  memory, cache %s...\n", mode == 0 ? "on" : "off");
        res[mode] = run_memory(**engine, persona, messages, kReply);
    }
    // Each conversation holds persona + message + reply tokens (the last sampled token
    // needs no slot). Unshared: every conversation its own blocks; ideal: the persona's
    // tokens once, every conversation's own tokens once, packed into whole blocks.
    const int32_t own = kMessage + kReply - 1;
    const int32_t unshared = kConversations * ((kPersona + own + bs - 1) / bs);
    const int32_t ideal = (kPersona + kConversations * own + bs - 1) / bs;
    const int32_t on = res[0].peak_blocks, off = res[1].peak_blocks;
    Table t({"", "KV blocks", "MiB", "vs ideal"});
    const double mib = static_cast<double>(per_block) / (1 << 20);
    t.add({"ideal (persona once)", std::to_string(ideal), fmt(ideal * mib, 1), "+0"});
    t.add({"cache on (measured)", std::to_string(on), fmt(on * mib, 1),
           "+" + std::to_string(on - ideal)});
    t.add({"cache off (measured)", std::to_string(off), fmt(off * mib, 1),
           "+" + std::to_string(off - ideal)});
    t.add({"unshared (computed)", std::to_string(unshared), fmt(unshared * mib, 1),
           "+" + std::to_string(unshared - ideal)});
    out.table = t.render() + "cache on is " + std::to_string(on - ideal) +
                " blocks over the ideal for " + std::to_string(kConversations) +
                " conversations (target: at most one per conversation, " +
                std::to_string(kConversations) + "); " + fmt(static_cast<double>(off) / on, 1) +
                "x fewer blocks than cache off\n";
    out.json["block_size"] = bs;
    out.json["ideal_blocks"] = ideal;
    out.json["cache_on_blocks"] = on;
    out.json["cache_off_blocks"] = off;
    out.json["unshared_blocks"] = unshared;
    out.json["within_target"] = on - ideal <= kConversations;
    out.plots = {{"memory: 16 conversations, one 1,000-token persona",
                  "",
                  "KV blocks",
                  {"ideal", "cache on", "cache off", "unshared"},
                  {{"blocks", {}, {double(ideal), double(on), double(off), double(unshared)}}}}};
    return 0;
}

// --- gpu --------------------------------------------------------------------------------

// The GPU benchmark (engine/bench/gpu_bench.h) on --device (cuda:0 unless cpu or cuda:N is
// given), on the default model (or --model) when present and the generated shapes.
int bench_gpu(const Args& args) {
#if defined(HEARTH_WITH_CUDA)
    GpuBenchOptions o;
    const std::string device = args.value("device").value_or("cuda:0");
    o.device = device == "auto" || device == "cuda" ? "cuda:0" : device;
    const std::string model = args.value("model").value_or(paths::default_model_path());
    if (std::filesystem::exists(model)) o.default_model = model;
    const auto list = [](const std::string& text) {
        std::vector<std::string> out;
        for (const QString& part : QString::fromStdString(text).split(',', Qt::SkipEmptyParts))
            out.push_back(part.trimmed().toStdString());
        return out;
    };
    if (auto v = args.value("shapes")) o.shapes = list(*v);
    if (auto v = args.value("types")) o.types = list(*v);
    o.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    auto r = run_gpu_bench(o);
    if (!r) return fail(1, r.message());
    std::fputs(r->c_str(), stdout);
    return 0;
#else
    (void)args;
    return fail(1, "bench gpu: this build has no CUDA backend");
#endif
}

}  // namespace

int run_bench(const CommandArgs& argv) {
    const auto options = bench_options();
    auto args = Args::parse(argv, options);
    if (!args) return fail(2, args.message());
    const auto& pos = args->positionals();
    const std::string name = pos.empty() ? "" : pos[0];
    if (args->flag("help") || pos.size() != 1 ||
        (name != "shared-prefix" && name != "switch" && name != "memory" && name != "gpu" &&
         name != "restart" && name != "soak" && name != "overflow" && name != "shift-quality" &&
         name != "knowledge" && name != "speculate")) {
        std::fprintf(
            args->flag("help") ? stdout : stderr,
            "usage: hearth-cli bench (shared-prefix | switch | memory | restart | knowledge | "
            "overflow | shift-quality | soak | speculate | gpu) [options]\n%s",
            usage_of(options).c_str());
        return args->flag("help") ? 0 : 2;
    }
    if (name == "gpu") return bench_gpu(*args);  // one JSON object, --json or not
    auto config = engine_config(*args);
    if (!config) return fail(2, config.message());
    // Benchmarks measure compute and the memory cache; the disk tier only when asked.
    if (!args->value("kv-disk-mb")) config->kv_disk_mb = 0;
    if (name == "soak") return bench_soak(*args, *config);
    if (name == "shift-quality") return bench_shift_quality(*args, *config);
    if (args->value("cache") && name != "speculate")
        std::fprintf(stderr,
                     "hearth-cli: bench runs with the cache on and off; --cache is ignored\n");

    // Fonts for the plot need a GUI application; offscreen needs no display.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    int qargc = 1;
    char qname[] = "hearth-cli";
    char* qargv[] = {qname, nullptr};
    QGuiApplication app(qargc, qargv);

    BenchOutput out;
    const auto start = Clock::now();
    int rc = 0;
    if (name == "shared-prefix")
        rc = bench_shared_prefix(*args, *config, out);
    else if (name == "switch")
        rc = bench_switch(*args, *config, out);
    else if (name == "restart")
        rc = bench_restart(*args, *config, out);
    else if (name == "knowledge")
        rc = bench_knowledge(*args, *config, out);
    else if (name == "overflow")
        rc = bench_overflow(*args, *config, out);
    else if (name == "speculate")
        rc = bench_speculate(*args, *config, out);
    else
        rc = bench_memory(*args, *config, out);
    if (rc == -1) return 0;
    if (rc != 0) return rc;
    out.json["benchmark"] = QString::fromStdString(name);
    out.json["seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
    out.json["threads"] = config->n_threads;
    const QString plot =
        QString::fromStdString(args->value("plot").value_or("hearth-bench-" + name + ".png"));
    if (auto r = write_plots(plot, out.plots); !r) return fail(1, r.message());
    out.json["plot"] = plot;
    if (args->flag("json")) {
        std::fputs(QJsonDocument(out.json).toJson(QJsonDocument::Compact).append('\n').constData(),
                   stdout);
    } else {
        std::fputs(out.table.c_str(), stdout);
        std::fprintf(stdout, "plot: %s\n", plot.toStdString().c_str());
    }
    return 0;
}

}  // namespace hearth::cli
