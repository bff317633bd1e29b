// hearth-cli bench speculate: speculative decoding (sched/scheduler.h, SpeculationConfig)
// against plain decoding, in one engine: each run is submitted twice, speculation off
// (Request::speculate) and on, in alternating order, --rounds times, greedy; then once more
// each way sampled with a seed. Workloads, through the model's chat template:
//   code      a 152-line Python function pasted with a request to rename a variable and add
//             a parameter (a reply that copies most of its input)
//   summary   an article of ~1,100 words (~1,500 tokens) to summarise
//   chat      a free question (nothing to copy)
// at 1 and 8 conversations at once (--batches). Reported: decode tokens/s each way (at 8,
// the sum of the conversations' rates), their ratio, the drafts' acceptance, tokens per
// step, and whether every speculative reply equals the plain one token for token (it
// must: the command fails otherwise). --peer adds llama-server's runs of the same prompts
// with and without its own speculation (scripts/bench/speculate).
// Targets: code ≥ 2×, summary ≥ 1.3×, chat ≥ 0.95×; at 8 conversations never below 0.95×.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>

#include "cli/bench_speculate_texts.h"
#include "cli/bench_support.h"
#include "cli/chat_prompt.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "engine.h"

namespace hearth::cli {
namespace {

struct Workload {
    std::string name;
    std::string user;
    int32_t max_tokens = 0;
};

std::vector<Workload> workloads() {
    return {
        {"code",
         std::string("Here is a Python function:\n\n```python\n") + kSpeculateCode +
             "```\n\nRename the variable `report` to `result` everywhere in the function and "
             "add a parameter `strict=False`: when it is true, an entry with an unknown kind "
             "raises ValueError instead of being rejected. Reply with the whole updated "
             "function only.",
         640},
        {"summary",
         std::string("Summarise the following article in about 200 words.\n\n") + kSpeculateArticle,
         320},
        {"chat",
         "I have trouble falling asleep and often wake up tired. What are some practical "
         "things I can change in my evening routine? Explain why each one helps.",
         320},
    };
}

struct Runs {
    std::vector<double> tokens_per_s;  // per round: the sum over the batch's conversations
    int64_t drafted = 0, accepted = 0, generated = 0;
    std::vector<std::vector<int32_t>> replies;  // the first round's, per conversation
};

// `batch` conversations of the prompt at once; their decode rates summed.
Result<void> run_batch(Engine& engine, const std::vector<int32_t>& prompt, int32_t max_tokens,
                       int batch, bool speculate, const SamplingParams& sampling,
                       kv::SeqId& next_conv, Runs& runs) {
    std::vector<std::shared_ptr<RequestHandle>> handles;
    for (int i = 0; i < batch; ++i) {
        sched::Request r = request(next_conv++, prompt, max_tokens, false);
        r.stop_at_end_of_generation = true;
        r.sampling = sampling;
        r.speculate = speculate;
        handles.push_back(engine.submit(std::move(r)));
    }
    double rate = 0;
    const bool first_round = runs.replies.empty();
    for (auto& h : handles) {
        const sched::Event e = h->wait();
        if (e.kind == sched::EventKind::Error) return make_error(e.error);
        rate += e.stats.decode_tokens_per_s();
        runs.drafted += e.stats.draft_tokens;
        runs.accepted += e.stats.draft_accepted;
        runs.generated += e.stats.generated_tokens;
        if (first_round) runs.replies.push_back(e.tokens);
    }
    runs.tokens_per_s.push_back(rate);
    return {};
}

struct Peer {
    std::string label, workload;
    double plain = 0, speculative = 0;
    int64_t drafted = 0, accepted = 0;
};

Result<std::vector<Peer>> load_peers(const Args& args) {
    std::vector<Peer> peers;
    const auto path = args.value("peer");
    if (!path) return peers;
    QFile f(QString::fromStdString(*path));
    if (!f.open(QIODevice::ReadOnly)) return make_error("cannot read " + *path);
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    for (const QJsonValue& v : root.value("peers").toArray()) {
        const QJsonObject o = v.toObject();
        Peer p;
        p.label = o.value("label").toString().toStdString();
        p.workload = o.value("workload").toString().toStdString();
        p.plain = o.value("plain_tokens_per_s").toDouble();
        p.speculative = o.value("speculative_tokens_per_s").toDouble();
        p.drafted = o.value("drafted").toInteger();
        p.accepted = o.value("accepted").toInteger();
        if (p.label.empty() || p.workload.empty() || p.plain <= 0)
            return make_error(*path + ": a peer without label, workload or plain_tokens_per_s");
        peers.push_back(p);
    }
    return peers;
}

}  // namespace

int bench_speculate(const Args& args, const EngineConfig& base, BenchOutput& out) {
    auto rounds = args.integer("rounds", 2, 1, 100);
    if (!rounds) return fail(2, rounds.message());
    std::vector<int> batches = {1, 8};
    if (auto b = args.value("batches")) {
        auto parsed = parse_numbers(*b);
        if (!parsed || parsed->empty()) return fail(2, "--batches: numbers, comma-separated");
        batches.clear();
        for (double v : *parsed) {
            if (v < 1 || v > 64) return fail(2, "--batches: 1 to 64 conversations");
            batches.push_back(static_cast<int>(v));
        }
    }
    auto peers = load_peers(args);
    if (!peers) return fail(2, peers.message());
    std::vector<Workload> chosen;
    const std::string names = args.value("workloads").value_or("code,summary,chat");
    for (const Workload& w : workloads())
        if (("," + names + ",").find("," + w.name + ",") != std::string::npos) chosen.push_back(w);
    if (chosen.empty()) return fail(2, "--workloads: code, summary, chat");

    EngineConfig config = base;
    auto max_draft = args.integer("max-draft", config.scheduler.speculation.max_draft, 1, 64);
    if (!max_draft) return fail(2, max_draft.message());
    config.scheduler.speculation.max_draft = static_cast<int32_t>(*max_draft);
    auto step_tokens =
        args.integer("draft-step-tokens", config.scheduler.speculation.max_step_tokens, 0, 4096);
    if (!step_tokens) return fail(2, step_tokens.message());
    config.scheduler.speculation.max_step_tokens = static_cast<int32_t>(*step_tokens);
    if (config.scheduler.speculation.mode == sched::SpeculationConfig::Mode::Off)
        return fail(2,
                    "bench speculate compares speculation with plain decoding: not --speculate "
                    "off");
    // Every conversation at once, and room for their KV.
    config.scheduler.max_running = std::max(config.scheduler.max_running, 64);
    auto engine = Engine::create(config);
    if (!engine) return fail(1, engine.message());
    Engine& e = **engine;
    const auto context = static_cast<int32_t>(e.model_config().context_length);

    if (args.value("dump-workload")) {
        QJsonArray ws;
        for (const Workload& w : chosen) {
            auto prompt = chat_prompt(e.file(), e.tokenizer(), "", w.user, context);
            if (!prompt) return fail(1, w.name + ": " + prompt.message());
            QJsonArray ids;
            for (int32_t t : *prompt) ids.append(t);
            ws.append(QJsonObject{{"name", QString::fromStdString(w.name)},
                                  {"prompt", ids},
                                  {"max_tokens", w.max_tokens}});
        }
        if (auto r = write_json(*args.value("dump-workload"), QJsonObject{{"workloads", ws}}); !r)
            return fail(1, r.message());
        return -1;
    }

    Plot plot{"speculate: decode tokens/s",
              "",
              "tokens/s",
              {},
              {{"plain", {}, {}}, {"speculative", {}, {}}}};
    Table table({"workload", "conversations", "plain tok/s", "speculative tok/s", "ratio",
                 "accepted / drafted", "tokens / step", "same tokens"});
    QJsonArray results;
    kv::SeqId next_conv = 1;
    bool all_same = true;
    for (const Workload& w : chosen) {
        auto prompt = chat_prompt(e.file(), e.tokenizer(), "", w.user, context);
        if (!prompt) return fail(1, w.name + ": " + prompt.message());
        const int32_t max_tokens =
            std::min(w.max_tokens, context - static_cast<int32_t>(prompt->size()));
        for (int batch : batches) {
            Runs plain, spec;
            for (int r = 0; r < *rounds; ++r) {
                for (int k = 0; k < 2; ++k) {  // alternating order, round by round
                    const bool speculate = (k == 0) == (r % 2 == 1);
                    if (auto ok = run_batch(e, *prompt, max_tokens, batch, speculate,
                                            SamplingParams::greedy(), next_conv,
                                            speculate ? spec : plain);
                        !ok)
                        return fail(1, w.name + ": " + ok.message());
                }
            }
            // Seeded sampling, once each way.
            SamplingParams seeded;
            seeded.temperature = 0.7f;
            seeded.seed = 7;
            Runs plain_s, spec_s;
            if (auto ok =
                    run_batch(e, *prompt, max_tokens, batch, false, seeded, next_conv, plain_s);
                !ok)
                return fail(1, w.name + ": " + ok.message());
            if (auto ok = run_batch(e, *prompt, max_tokens, batch, true, seeded, next_conv, spec_s);
                !ok)
                return fail(1, w.name + ": " + ok.message());
            const bool same = plain.replies == spec.replies && plain_s.replies == spec_s.replies;
            all_same = all_same && same;
            const double p = median(plain.tokens_per_s), s = median(spec.tokens_per_s);
            const double steps = static_cast<double>(spec.generated - spec.accepted);
            const double per_step = steps > 0 ? static_cast<double>(spec.generated) / steps : 0;
            table.add({w.name, std::to_string(batch), fmt(p, 1), fmt(s, 1), fmt(s / p, 2) + "x",
                       std::to_string(spec.accepted) + " / " + std::to_string(spec.drafted),
                       fmt(per_step, 2), same ? "yes" : "NO"});
            plot.categories << QString::fromStdString(w.name + " ×" + std::to_string(batch));
            plot.series[0].y.push_back(p);
            plot.series[1].y.push_back(s);
            std::fprintf(stderr, "  %s, %d conversation(s): plain %.1f, speculative %.1f tok/s\n",
                         w.name.c_str(), batch, p, s);
            QJsonArray pr, sr;
            for (double v : plain.tokens_per_s) pr.append(v);
            for (double v : spec.tokens_per_s) sr.append(v);
            results.append(QJsonObject{{"workload", QString::fromStdString(w.name)},
                                       {"conversations", batch},
                                       {"prompt_tokens", static_cast<qint64>(prompt->size())},
                                       {"plain_tokens_per_s", pr},
                                       {"speculative_tokens_per_s", sr},
                                       {"ratio", s / p},
                                       {"drafted", static_cast<qint64>(spec.drafted)},
                                       {"accepted", static_cast<qint64>(spec.accepted)},
                                       {"generated", static_cast<qint64>(spec.generated)},
                                       {"same_tokens", same}});
        }
        for (const Peer& peer : *peers) {
            if (peer.workload != w.name) continue;
            table.add({w.name + " (" + peer.label + ")", "1", fmt(peer.plain, 1),
                       fmt(peer.speculative, 1), fmt(peer.speculative / peer.plain, 2) + "x",
                       std::to_string(peer.accepted) + " / " + std::to_string(peer.drafted), "",
                       ""});
        }
    }
    out.table = table.render();
    out.plots.push_back(plot);
    out.json["results"] = results;
    out.json["backend"] = QString::fromStdString(e.backend_name());
    out.json["same_tokens"] = all_same;
    if (!all_same) {
        std::fputs(out.table.c_str(), stdout);
        return fail(1, "speculative decoding changed a reply: a bug");
    }
    return 0;
}

}  // namespace hearth::cli
