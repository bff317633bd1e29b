// The engine on the default model: chats that share a persona give the same greedy
// replies and logits with prefix caching on as with it off (several conversations at
// once, and again under memory pressure), a second chat with the persona finds it in
// the cache, and a resumed conversation computes only its new message and glue. With the
// disk tier, a second engine (a restart) continues from what the first wrote down.
#include <QTemporaryDir>
#include <QTest>

#include "chat/prompt_builder.h"
#include "engine.h"
#include "sched_rig.h"
#include "support/test_model.h"

using namespace hearth;

namespace {

constexpr const char* kPersona =
    "You are Ada, a patient tutor who explains computing with short, concrete examples. "
    "Keep answers under three sentences and end with a question that checks understanding.";
const char* const kMessages[3][2] = {
    {"What is a hash table?", "And what happens on a collision?"},
    {"Explain recursion.", "Give me a tiny example in Python."},
    {"What does a compiler do?", "How is that different from an interpreter?"},
};

struct ChatRun {
    std::vector<std::vector<int32_t>> prompts;  // [conversation * 2 + turn]
    std::vector<std::vector<int32_t>> replies;
    std::vector<std::vector<std::vector<float>>> logits;
    std::vector<sched::RequestStats> stats;
};

// Turn 1 of the three conversations at once, then turn 2 of all three at once.
ChatRun run_chats(Engine& engine) {
    const chat::PromptBuilder builder(engine.tokenizer(),
                                      chat::ChatTemplate::from_gguf(engine.file()));
    ChatRun run;
    run.prompts.resize(6);
    run.replies.resize(6);
    run.logits.resize(6);
    run.stats.resize(6);
    std::vector<std::vector<chat::Message>> convs(3);
    for (auto& c : convs) c.push_back({chat::Role::System, kPersona, std::nullopt});
    const auto collect = [&](int c, int turn, RequestHandle& h) {
        const int k = c * 2 + turn;
        const sched::Event last = h.wait([&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Token && e.token >= 0)
                run.logits[k].push_back(e.logits);
        });
        if (last.kind != sched::EventKind::Finished) qFatal("%s", last.error.c_str());
        run.replies[k] = last.tokens;
        run.stats[k] = last.stats;
        convs[c].push_back({chat::Role::Assistant, last.text, last.tokens});
    };
    for (int turn = 0; turn < 2; ++turn) {
        std::vector<std::shared_ptr<RequestHandle>> handles(3);
        for (int c = 0; c < 3; ++c) {
            convs[c].push_back({chat::Role::User, kMessages[c][turn], std::nullopt});
            auto prompt = builder.build(convs[c]);
            if (!prompt) qFatal("%s", prompt.message().c_str());
            sched::Request r;
            r.conversation = c;
            r.prompt = prompt->ids;
            r.max_tokens = 24;
            r.record_logits = true;
            run.prompts[c * 2 + turn] = prompt->ids;
            handles[c] = engine.submit(std::move(r));
            // The first chat computes the persona before the others start; else all three
            // may compute it side by side in one step (prefixes in flight are not shared).
            if (turn == 0 && c == 0) collect(0, 0, *handles[0]);
        }
        for (int c = turn == 0 ? 1 : 0; c < 3; ++c) collect(c, turn, *handles[c]);
    }
    return run;
}

}  // namespace

class TestEngineModel : public QObject {
    Q_OBJECT

    std::unique_ptr<Engine> start(const QString& path, bool caching, std::size_t kv_mb,
                                  int32_t max_running, const QString& disk_dir = {}) {
        EngineConfig c;
        c.kv_disk_dir = disk_dir.toStdString();
        c.model_path = path.toStdString();
        c.prefix_caching = caching;
        c.kv_mb = kv_mb;
        c.scheduler.max_running = max_running;
        c.scheduler.max_batch_tokens = 64;  // prompts span several chunks
        auto e = Engine::create(c);
        if (!e) qFatal("%s", e.message().c_str());
        return std::move(e).value();
    }

  private slots:
    void cachingOnEqualsOff_data() {
        QTest::addColumn<int>("kvMb");
        QTest::addColumn<bool>("pressure");
        QTest::newRow("roomy") << 64 << false;
        // About 250 blocks-worth of tokens in flight; 6 MiB holds 17 blocks of 16 tokens.
        QTest::newRow("pressure") << 6 << true;
    }
    void cachingOnEqualsOff() {
        QFETCH(int, kvMb);
        QFETCH(bool, pressure);
        HEARTH_REQUIRE_MODEL(path);
        auto off = start(path, false, 64, 1);
        const ChatRun expected = run_chats(*off);
        off.reset();
        auto on = start(path, true, static_cast<std::size_t>(kvMb), 3);
        const ChatRun got = run_chats(*on);
        const chat::PromptBuilder builder(on->tokenizer(),
                                          chat::ChatTemplate::from_gguf(on->file()));
        // Batch-invariant kernels (docs/architecture.md): the same floats, bit for bit.
        for (int k = 0; k < 6; ++k) {
            QCOMPARE(got.prompts[k], expected.prompts[k]);
            QCOMPARE(got.replies[k], expected.replies[k]);
            QCOMPARE(got.logits[k].size(), expected.logits[k].size());
            QVERIFY(!got.logits[k].empty() && !got.logits[k].front().empty());
            for (std::size_t i = 0; i < got.logits[k].size(); ++i) {
                const std::string diff =
                    test::first_difference(got.logits[k][i], expected.logits[k][i]);
                QVERIFY2(
                    diff.empty(),
                    qPrintable(QString("conversation %1 turn %2 token %3, caching on vs off: %4")
                                   .arg(k / 2)
                                   .arg(k % 2)
                                   .arg(i)
                                   .arg(QString::fromStdString(diff))));
            }
        }
        on->wait_idle();
        const EngineStats st = on->stats();
        qInfo("%lld of %lld prompt tokens from cache; evictions %lld, preemptions %lld",
              static_cast<long long>(st.kv.prompt_tokens_cached),
              static_cast<long long>(st.kv.prompt_tokens_queried),
              static_cast<long long>(st.kv.evictions),
              static_cast<long long>(st.scheduler.preemptions));
        if (pressure) {
            QVERIFY(st.kv.evictions > 0);
            QVERIFY(st.scheduler.preemptions > 0);
            return;
        }
        // Roomy: the persona came from the cache for the later chats, and every resumed
        // turn computed only the new message and its glue (the previous reply's last
        // token, whose KV a finished turn never computes, counts as glue).
        const int32_t persona =
            static_cast<int32_t>(builder.persona_prefix(std::string_view(kPersona)).size());
        int32_t persona_hits = 0;
        for (int c = 0; c < 3; ++c)
            persona_hits += got.stats[c * 2].prompt_tokens_cached >= persona / 16 * 16;
        QVERIFY2(persona_hits >= 2,
                 "the persona should come from the cache after its first prefill");
        for (int c = 0; c < 3; ++c) {
            const auto& p1 = got.prompts[c * 2];
            const auto& p2 = got.prompts[c * 2 + 1];
            const auto& reply = got.replies[c * 2];
            const auto expected_new =
                static_cast<int32_t>(p2.size() - p1.size() - reply.size() + 1);
            QCOMPARE(got.stats[c * 2 + 1].prompt_tokens_computed, expected_new);
        }
    }

    void diskTierAcrossRestart() {
        HEARTH_REQUIRE_MODEL(path);
        QTemporaryDir dir;
        auto first = start(path, true, 64, 3, dir.path());
        const ChatRun expected = run_chats(*first);
        first->wait_idle();
        const EngineStats before = first->stats();
        QVERIFY(before.disk_on);
        first.reset();  // the queued blocks are written down as it closes
        auto second = start(path, true, 64, 3, dir.path());
        QVERIFY(second->stats().disk.model_entries > 0);
        const ChatRun got = run_chats(*second);
        for (int k = 0; k < 6; ++k) {
            QCOMPARE(got.replies[k], expected.replies[k]);
            QCOMPARE(got.logits[k].size(), expected.logits[k].size());
            for (std::size_t i = 0; i < got.logits[k].size(); ++i) {
                const std::string diff =
                    test::first_difference(got.logits[k][i], expected.logits[k][i]);
                QVERIFY2(diff.empty(),
                         qPrintable(QString("conversation %1 turn %2 token %3, restored from "
                                            "disk vs computed: %4")
                                        .arg(k / 2)
                                        .arg(k % 2)
                                        .arg(i)
                                        .arg(QString::fromStdString(diff))));
            }
        }
        // The very first prompt after the restart: persona and message from disk, all but
        // the partly filled last block and the last token.
        const int32_t whole = static_cast<int32_t>(got.prompts[0].size() - 1) / 16 * 16;
        QCOMPARE(got.stats[0].prompt_tokens_loaded, whole);
        QCOMPARE(got.stats[0].prompt_tokens_computed,
                 static_cast<int32_t>(got.prompts[0].size()) - whole);
        second->wait_idle();
        const EngineStats after = second->stats();
        qInfo("restart: %lld blocks written by the first engine, %lld loaded by the second",
              static_cast<long long>(before.disk.written_blocks + before.disk.pending_writes),
              static_cast<long long>(after.disk.loaded_blocks));
        QVERIFY(after.disk.loaded_blocks > 0);
        QVERIFY(after.kv.prompt_tokens_loaded > 0);
    }
};

QTEST_GUILESS_MAIN(TestEngineModel)
#include "tst_engine_model.moc"
