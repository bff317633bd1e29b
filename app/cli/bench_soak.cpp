// hearth-cli bench soak: the engine soak (engine/bench/soak.h) at a length chosen on the
// command line; its table (or JSON) is what docs/reliability.md records.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

#include "bench/soak.h"
#include "cli/bench_support.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "engine.h"

namespace hearth::cli {

int bench_soak(const Args& args, const EngineConfig& config) {
    SoakOptions o;
    o.model_path = config.model_path;
    o.device = config.device;
    o.n_threads = config.n_threads;
    auto phases = args.integer("phases", 5, 1, 1000);
    auto requests = args.integer("requests", 400, 1, 1'000'000);
    auto conversations = args.integer("conversations", 48, 1, 10'000);
    auto concurrency = args.integer("concurrency", 12, 1, 256);
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    auto kv_share = args.number("kv-share", 0.10);
    auto cancel_rate = args.number("cancel-rate", 0.10);
    auto shift_rate = args.number("shift-rate", 0.0);
    for (const auto* r : {&phases, &requests, &conversations, &concurrency, &seed})
        if (!*r) return fail(2, r->message());
    if (!kv_share) return fail(2, kv_share.message());
    if (!cancel_rate) return fail(2, cancel_rate.message());
    if (!shift_rate) return fail(2, shift_rate.message());
    if (!(*shift_rate >= 0 && *shift_rate <= 1)) return fail(2, "--shift-rate must be in [0, 1]");
    if (*concurrency > *conversations)
        return fail(2, "--concurrency must not exceed --conversations");
    if (!(*kv_share > 0 && *kv_share <= 1)) return fail(2, "--kv-share must be in (0, 1]");
    if (!(*cancel_rate >= 0 && *cancel_rate <= 1))
        return fail(2, "--cancel-rate must be in [0, 1]");
    o.phases = static_cast<int>(*phases);
    o.requests_per_phase = static_cast<int>(*requests);
    o.conversations = static_cast<int>(*conversations);
    o.concurrency = static_cast<int>(*concurrency);
    o.seed = static_cast<uint64_t>(*seed);
    o.kv_share = *kv_share;
    o.cancel_rate = *cancel_rate;
    o.shift_rate = *shift_rate;
    const std::string overlap = args.value("overlap").value_or("auto");
    if (overlap == "on")
        o.overlap = sched::SchedulerConfig::Overlap::On;
    else if (overlap == "off")
        o.overlap = sched::SchedulerConfig::Overlap::Off;
    else if (overlap != "auto")
        return fail(2, "--overlap must be auto, on or off");
    o.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    auto report = run_soak(o);
    if (!report) return fail(1, report.message());
    if (!args.flag("json")) {
        std::fputs(report->table().c_str(), stdout);
        return report->ok() ? 0 : 1;
    }
    QJsonObject out;
    out["benchmark"] = "soak";
    out["ok"] = report->ok();
    out["kv_blocks"] = report->kv_blocks;
    out["working_set_blocks"] = report->working_set_blocks;
    QJsonArray phases_json, failures;
    for (const SoakPhase& p : report->phases) {
        QJsonObject j;
        j["requests"] = p.requests;
        j["cancelled"] = p.cancelled;
        j["errors"] = p.errors;
        j["mismatches"] = p.mismatches;
        j["audits"] = p.audits;
        j["prompt_tokens"] = static_cast<double>(p.prompt_tokens);
        j["prompt_tokens_cached"] = static_cast<double>(p.prompt_tokens_cached);
        j["generated_tokens"] = static_cast<double>(p.generated_tokens);
        j["preemptions"] = static_cast<double>(p.preemptions);
        j["recomputed_tokens"] = static_cast<double>(p.recomputed_tokens);
        j["evictions"] = static_cast<double>(p.evictions);
        j["parked_reclaims"] = static_cast<double>(p.parked_reclaims);
        j["persona_edits"] = p.persona_edits;
        j["pins"] = p.pins;
        j["unpins"] = p.unpins;
        j["pins_failed"] = p.pins_failed;
        j["shift_turns"] = p.shift_turns;
        j["prompt_tokens_shifted"] = static_cast<double>(p.prompt_tokens_shifted);
        j["seconds"] = p.seconds;
        j["reference_seconds"] = p.reference_seconds;
        phases_json.append(j);
    }
    for (const std::string& f : report->failures) failures.append(QString::fromStdString(f));
    out["phases"] = phases_json;
    out["failures"] = failures;
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
    return report->ok() ? 0 : 1;
}

}  // namespace hearth::cli
