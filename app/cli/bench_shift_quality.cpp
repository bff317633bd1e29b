// hearth-cli bench shift-quality: what a context shift costs in quality
// (engine/bench/shift_quality.h), on --model (the default model unless given) and a long
// text (--text), at --context (default 2048); its table (or JSON) is what
// docs/benchmarks.md records.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <cstdio>

#include "bench/shift_quality.h"
#include "cli/bench_support.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "engine.h"

namespace hearth::cli {

int bench_shift_quality(const Args& args, const EngineConfig& config) {
    ShiftQualityOptions o;
    o.model_path = config.model_path;
    o.n_threads = config.n_threads;
    o.context = config.context_length > 0 ? static_cast<int>(config.context_length) : 2048;
    const auto text = args.value("text");
    if (!text) return fail(2, "bench shift-quality: --text FILE (a long UTF-8 text) is needed");
    o.text_path = *text;
    auto persona = args.integer("persona-tokens", 64, 1, 1 << 20);
    auto turn = args.integer("message-tokens", 128, 1, 1 << 20);
    auto keep = args.number("keep", 0.5);
    if (!persona) return fail(2, persona.message());
    if (!turn) return fail(2, turn.message());
    if (!keep || !(*keep > 0 && *keep < 1)) return fail(2, "--keep must be in (0, 1)");
    o.persona = static_cast<int>(*persona);
    o.turn = static_cast<int>(*turn);
    o.keep = *keep;
    if (auto steps = args.value("steps")) {
        auto numbers = parse_numbers(*steps);
        if (!numbers) return fail(2, "--steps: " + numbers.message());
        o.after.clear();
        for (double n : *numbers) {
            if (n < 1 || n != static_cast<int>(n)) return fail(2, "--steps: whole numbers >= 1");
            o.after.push_back(static_cast<int>(n));
        }
    }
    o.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    auto report = run_shift_quality(o);
    if (!report) return fail(1, report.message());
    if (!args.flag("json")) {
        std::fputs(report->table().c_str(), stdout);
        return 0;
    }
    QJsonObject out;
    out["benchmark"] = "shift-quality";
    out["model"] = QString::fromStdString(report->model);
    out["context"] = report->context;
    out["steps"] = report->steps;
    out["tokens_read"] = static_cast<double>(report->tokens_read);
    out["tokens_scored"] = static_cast<double>(report->tokens_scored);
    out["perplexity_drop"] = report->perplexity_drop;
    out["perplexity_shift"] = report->perplexity_shift;
    QJsonArray points;
    for (const ShiftQualityPoint& p : report->points)
        points.append(QJsonObject{{"after_steps", p.steps},
                                  {"tokens", p.tokens},
                                  {"rel_l2_mean", p.rel_l2_mean},
                                  {"rel_l2_max", p.rel_l2_max},
                                  {"greedy_agreement", p.greedy_agreement}});
    out["points"] = points;
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
    return 0;
}

}  // namespace hearth::cli
