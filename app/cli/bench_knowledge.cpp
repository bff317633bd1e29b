// hearth-cli bench knowledge: what a persona that holds a document costs a new chat.
// A persona's instructions (120 tokens) and a document (--document-tokens, default 6,000:
// a handbook; 1,500 for the Llama 3.2 1B shape) are its prefix; 8 new chats each ask one
// 24-token question and read a 16-token reply, one after another. Modes, each a new engine:
//   persona only     the same instructions without the document (the target's baseline)
//   document         the persona with the document, prefix cache on (the app): the first
//                    chat computes the prefix, the others take it from the cache
//   document, warm   the same with the prefix pinned first (a persona kept warm: the app
//                    computes it when the model opens, before any chat)
//   pasted           the document pasted into every chat (prefix cache off)
//   after restart    a new engine over the disk tier an earlier one wrote: the prefix is
//                    read back from disk by the first chat
//   peers            --peer: llama-server with the document as the system prompt
//                    (scripts/bench/knowledge)
// The target: a new chat of the persona with the document (chats 2-8, and every chat when
// warm) within 1.2x the TTFT of one without it.
#include <QJsonArray>
#include <QTemporaryDir>

#include <cstdio>

#include "cli/bench_support.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine.h"

namespace hearth::cli {
namespace {

constexpr int kChats = 8, kInstructions = 120, kQuestion = 24, kReply = 16;
constexpr int64_t kPinKey = 1;

struct Workload {
    std::vector<int32_t> instructions, document;
    std::vector<std::vector<int32_t>> questions;

    QJsonObject json() const {
        const auto arr = [](const std::vector<int32_t>& v) {
            QJsonArray a;
            for (int32_t x : v) a.append(x);
            return a;
        };
        QJsonArray qs;
        for (const auto& q : questions) qs.append(arr(q));
        return QJsonObject{{"instructions", arr(instructions)},
                           {"document", arr(document)},
                           {"questions", qs},
                           {"reply_tokens", kReply}};
    }
};

struct Chats {
    std::vector<double> ttft_ms;
    std::vector<int32_t> computed, loaded;
    double later() const {  // chats 2..8: after the first has computed the prefix
        return mean(std::vector<double>(ttft_ms.begin() + 1, ttft_ms.end()));
    }
};

Result<Chats> run_chats(Engine& engine, const std::vector<int32_t>& prefix, const Workload& w,
                        kv::SeqId first_id) {
    Chats r;
    for (int c = 0; c < kChats; ++c) {
        const sched::Event e =
            engine
                .submit(request(first_id + c, concat(prefix, w.questions[static_cast<size_t>(c)]),
                                kReply, false))
                ->wait();
        if (e.kind == sched::EventKind::Error)
            return make_error(e.error + " (a longer --context, or fewer --document-tokens)");
        r.ttft_ms.push_back(e.stats.ttft_ms);
        r.computed.push_back(e.stats.prompt_tokens_computed);
        r.loaded.push_back(e.stats.prompt_tokens_loaded);
        std::fprintf(stderr, "    chat %d: TTFT %.0f ms, %d computed, %d from disk\n", c + 1,
                     e.stats.ttft_ms, e.stats.prompt_tokens_computed, e.stats.prompt_tokens_loaded);
    }
    return r;
}

}  // namespace

int bench_knowledge(const Args& args, const EngineConfig& base, BenchOutput& out) {
    auto seed = args.integer("seed", 1, 0, 1LL << 62);
    if (!seed) return fail(2, seed.message());
    auto doc_tokens = args.integer("document-tokens", 6000, 1, 1 << 20);
    if (!doc_tokens) return fail(2, doc_tokens.message());
    auto loaded = PeerTtft::from_args(args);
    if (!loaded) return fail(1, loaded.message());
    const std::vector<PeerTtft> peers = std::move(loaded).value();
    QTemporaryDir disk_dir;
    if (!disk_dir.isValid()) return fail(1, "cannot make a temporary folder for the disk tier");
    const auto make = [&](bool cache, bool disk) -> Result<std::unique_ptr<Engine>> {
        EngineConfig c = base;
        c.prefix_caching = cache;
        c.kv_disk_dir = disk ? disk_dir.path().toStdString() : std::string();
        c.kv_disk_mb = disk ? 4096 : 0;
        return start_engine(c, !args.value("model"));
    };

    Workload w;
    Chats bare, doc, warm, pasted, restarted;
    std::vector<int32_t> with_doc;
    const auto mode = [&](const char* name, bool cache, bool disk,
                          const std::vector<int32_t>& prefix, Chats& into, bool pin) -> int {
        std::fprintf(stderr, "  knowledge: %s...\n", name);
        auto engine = make(cache, disk);
        if (!engine) return fail(1, engine.message());
        if (pin) {
            (*engine)->pin(kPinKey, prefix);
            (*engine)->wait_idle();
        }
        auto chats = run_chats(**engine, prefix, w, 1);
        if (!chats) return fail(1, chats.message());
        into = std::move(*chats);
        return 0;
    };
    {
        auto engine = make(true, false);
        if (!engine) return fail(1, engine.message());
        TokenSource tokens(**engine, static_cast<uint64_t>(*seed));
        w.instructions = tokens.take(kInstructions);
        w.document = tokens.take(static_cast<int>(*doc_tokens));
        for (int c = 0; c < kChats; ++c) w.questions.push_back(tokens.take(kQuestion));
        if (auto d = args.value("dump-workload")) {
            if (auto rc = write_json(*d, w.json()); !rc) return fail(1, rc.message());
            return -1;  // done: no benchmark
        }
    }
    with_doc = concat(w.instructions, w.document);
    if (int rc = mode("persona only", true, false, w.instructions, bare, false)) return rc;
    if (int rc = mode("document, prefix cache", true, false, with_doc, doc, false)) return rc;
    if (int rc = mode("document, kept warm", true, false, with_doc, warm, true)) return rc;
    if (int rc = mode("document pasted (cache off)", false, false, with_doc, pasted, false))
        return rc;
    {
        std::fprintf(stderr, "  knowledge: an earlier run writes the prefix down...\n");
        auto engine = make(true, true);
        if (!engine) return fail(1, engine.message());
        (void)engine.value()
            ->submit(request(100, concat(with_doc, w.questions[0]), kReply, false))
            ->wait();
        (*engine)->wait_idle();
    }
    if (int rc = mode("after a restart (disk tier)", true, true, with_doc, restarted, false))
        return rc;

    Table t(
        {"", "first chat TTFT ms", "chats 2-8 mean TTFT ms", "computed (2-8)", "from disk (1st)"});
    const auto row = [&](const std::string& name, const Chats& c) {
        std::vector<double> computed(c.computed.begin() + 1, c.computed.end());
        t.add({name, fmt(c.ttft_ms.front(), 1), fmt(c.later(), 1), fmt(mean(computed), 0),
               std::to_string(c.loaded.front())});
    };
    row("persona only (" + std::to_string(kInstructions) + " tokens)", bare);
    row("+ document, prefix cache", doc);
    row("+ document, kept warm", warm);
    row("+ document pasted (cache off)", pasted);
    row("+ document, after a restart", restarted);
    for (const PeerTtft& p : peers) {
        std::vector<double> later(p.ttft_ms.begin() + std::min<std::size_t>(1, p.ttft_ms.size()),
                                  p.ttft_ms.end());
        t.add({p.label, p.ttft_ms.empty() ? "-" : fmt(p.ttft_ms.front(), 1), fmt(mean(later), 1),
               "-", "-"});
    }
    const double base_ttft = bare.later();
    std::string summary =
        "document " + std::to_string(*doc_tokens) +
        " tokens; new chat with it / without it: " + fmt(doc.later() / base_ttft, 2) +
        "x (chats 2-8), kept warm " + fmt(mean(warm.ttft_ms) / base_ttft, 2) +
        "x (all 8 chats) (target <= 1.2); " +
        "pasted / cached = " + fmt(pasted.later() / doc.later(), 1) + "x; after a restart, " +
        "first chat " + fmt(restarted.ttft_ms.front(), 0) + " ms vs " +
        fmt(doc.ttft_ms.front(), 0) + " ms computed\n";
    for (const PeerTtft& p : peers) {
        std::vector<double> later(p.ttft_ms.begin() + std::min<std::size_t>(1, p.ttft_ms.size()),
                                  p.ttft_ms.end());
        summary += p.label + " chats 2-8 / Hearth's = " + fmt(mean(later) / doc.later(), 2) + "x\n";
    }
    out.table = t.render() + summary;
    const auto arr = [](const std::vector<double>& v) {
        QJsonArray a;
        for (double x : v) a.append(x);
        return a;
    };
    out.json["document_tokens"] = static_cast<qint64>(*doc_tokens);
    out.json["persona_only_ttft_ms"] = arr(bare.ttft_ms);
    out.json["document_ttft_ms"] = arr(doc.ttft_ms);
    out.json["warm_ttft_ms"] = arr(warm.ttft_ms);
    out.json["pasted_ttft_ms"] = arr(pasted.ttft_ms);
    out.json["restart_ttft_ms"] = arr(restarted.ttft_ms);
    out.json["document_over_persona_only"] = doc.later() / base_ttft;
    out.json["warm_over_persona_only"] = mean(warm.ttft_ms) / base_ttft;
    QJsonArray peers_json;
    for (const PeerTtft& p : peers)
        peers_json.append(
            QJsonObject{{"label", QString::fromStdString(p.label)}, {"ttft_ms", arr(p.ttft_ms)}});
    if (!peers.empty()) out.json["peers"] = peers_json;
    Plot plot{"knowledge: TTFT of a new chat (chats 2-8)", "", "TTFT (ms)", {"mean"}, {}};
    plot.series.push_back({"persona only", {}, {bare.later()}});
    plot.series.push_back({"+ document", {}, {doc.later()}});
    plot.series.push_back({"kept warm", {}, {warm.later()}});
    plot.series.push_back({"pasted", {}, {pasted.later()}});
    plot.series.push_back({"after restart", {}, {restarted.later()}});
    for (const PeerTtft& p : peers) {
        std::vector<double> later(p.ttft_ms.begin() + std::min<std::size_t>(1, p.ttft_ms.size()),
                                  p.ttft_ms.end());
        plot.series.push_back({QString::fromStdString(p.label), {}, {mean(later)}});
    }
    out.plots = {plot};
    return 0;
}

}  // namespace hearth::cli
