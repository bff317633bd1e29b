// The engine facade on a synthetic model file: streamed events in order, requests from
// several threads at once, callbacks on the engine thread, cancellation, pinned prefixes
// warmed up in the background and served from the cache, shutdown with work in flight,
// and errors as events.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "deferred_backend.h"
#include "engine.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/model_config.h"
#include "model/synthetic_model.h"
#include "sched_rig.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;
using hearth::test::greedy;

namespace {

std::vector<int32_t> tokens(uint32_t seed, int n) {
    std::vector<int32_t> t;
    uint32_t x = seed;
    for (int i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        t.push_back(3 + static_cast<int32_t>((x >> 8) % 250));
    }
    return t;
}

}  // namespace

class TestEngine : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_path_;

    std::unique_ptr<Engine> make(
        std::size_t kv_mb = 8, double pinned_share = 0.25, bool background = false,
        sched::SchedulerConfig::Overlap overlap = sched::SchedulerConfig::Overlap::Auto,
        bool speculate = true) {
        EngineConfig c;
        c.scheduler.overlap = overlap;
        if (!speculate) c.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
        c.background_priority = background;
        c.model_path = model_path_;
        c.n_threads = 2;
        c.kv_mb = kv_mb;
        c.max_pinned_share = pinned_share;
        auto e = Engine::create(c);
        if (!e) qFatal("engine: %s", e.message().c_str());
        return std::move(e).value();
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        SyntheticModelSpec spec;
        spec.weight_type = quant::TensorType::Q8_0;
        spec.seed = 5;
        auto bytes = make_synthetic_model(spec);
        QVERIFY(bytes);
        model_path_ = dir_.filePath("synthetic.gguf").toStdString();
        std::ofstream(model_path_, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes->data()),
                   static_cast<std::streamsize>(bytes->size()));
    }

    void streamsEventsInOrder() {
        auto engine = make();
        QVERIFY(engine->kv_blocks() > 0);
        auto h = engine->submit(greedy(1, tokens(1, 40), 12));
        std::string text;
        int n_tokens = 0;
        const sched::Event last = h->wait([&](const sched::Event& e) {
            QCOMPARE(e.request, h->id());
            if (e.kind == sched::EventKind::Token) {
                text += e.text;
                if (e.token >= 0) ++n_tokens;
            }
        });
        QCOMPARE(last.kind, sched::EventKind::Finished);
        QCOMPARE(last.stop, StopReason::MaxTokens);
        QCOMPARE(n_tokens, 12);
        QCOMPARE(last.tokens.size(), std::size_t{12});
        QCOMPARE(last.text, text);
        QCOMPARE(last.stats.prompt_tokens, 40);
        QCOMPARE(last.stats.prompt_tokens_computed, 40);
        QVERIFY(last.stats.ttft_ms > 0);
        QVERIFY(!h->next(std::chrono::milliseconds(1)));  // nothing after the last event
        QVERIFY(h->done());
    }

    void manyThreadsAtOnceMatchOneAtATime() {
        auto engine = make();
        std::vector<std::vector<int32_t>> expected;
        for (int i = 0; i < 8; ++i) {
            auto last = engine->submit(greedy(100 + i, tokens(10 + i, 20 + 3 * i), 8))->wait();
            QCOMPARE(last.kind, sched::EventKind::Finished);
            expected.push_back(last.tokens);
        }
        auto fresh = make();  // a cold cache: nothing shared with the first run
        std::vector<std::vector<int32_t>> got(8);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                for (int k = 0; k < 2; ++k) {
                    const int i = t * 2 + k;
                    got[static_cast<std::size_t>(i)] =
                        fresh->submit(greedy(100 + i, tokens(10 + i, 20 + 3 * i), 8))
                            ->wait()
                            .tokens;
                }
            });
        for (auto& th : threads) th.join();
        for (int i = 0; i < 8; ++i)
            QCOMPARE(got[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)]);
        fresh->wait_idle();
        QCOMPARE(fresh->stats().requests_finished, int64_t{8});
    }

    void callbacksRunOnTheEngineThread() {
        auto engine = make();
        std::mutex mu;
        std::condition_variable cv;
        std::vector<sched::EventKind> kinds;
        std::thread::id where;
        bool finished = false;
        engine->submit(greedy(1, tokens(2, 30), 5), [&](const sched::Event& e) {
            std::lock_guard lk(mu);
            where = std::this_thread::get_id();
            kinds.push_back(e.kind);
            if (e.kind == sched::EventKind::Finished) finished = true;
            cv.notify_all();
        });
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return finished; });
        QVERIFY(where != std::this_thread::get_id());
        QCOMPARE(kinds.back(), sched::EventKind::Finished);
        QCOMPARE(std::count(kinds.begin(), kinds.end(), sched::EventKind::Token), 5);
    }

    // The engine's decode speed is the reply's own: live while it decodes, then exactly
    // the finished reply's RequestStats number, which it keeps while idle. Read in the
    // callbacks, on the engine thread, so the request cannot finish between the event and
    // the read.
    void decodeSpeedIsTheReplysOwn() {
        // A token a step: with drafts, a reply's last few tokens can arrive with its end,
        // when the stats already show it finished.
        auto engine = make(8, 0.25, false, sched::SchedulerConfig::Overlap::Auto, false);
        QVERIFY(engine->stats().speed_is_last);
        QCOMPARE(engine->stats().decode_tokens_per_s, 0.0);
        std::mutex mu;
        std::condition_variable cv;
        // From the third token (the first with a speed) to the one before the last (the
        // last arrives with Finished, after the stats have counted the end).
        std::vector<EngineStats> during;
        std::optional<EngineStats> at_end;
        std::optional<sched::Event> last;
        int n_tokens = 0;
        engine->submit(greedy(1, tokens(9, 30), 40), [&](const sched::Event& e) {
            const EngineStats now = engine->stats();
            std::lock_guard lk(mu);
            if (e.kind == sched::EventKind::Token && e.token >= 0 && ++n_tokens >= 3 &&
                n_tokens < 40)
                during.push_back(now);
            if (e.kind == sched::EventKind::Finished || e.kind == sched::EventKind::Error) {
                at_end = now;
                last = e;
                cv.notify_all();
            }
        });
        {
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return last.has_value(); });
        }
        QCOMPARE(last->kind, sched::EventKind::Finished);
        QCOMPARE(last->stats.generated_tokens, 40);
        QCOMPARE(during.size(), std::size_t{37});
        for (const EngineStats& s : during) {
            QCOMPARE(s.decoding, 1);
            QVERIFY(!s.speed_is_last);
            QVERIFY2(s.decode_tokens_per_s > 0, qPrintable(QString::number(s.decode_tokens_per_s)));
        }
        const double own = last->stats.decode_tokens_per_s();
        QVERIFY(own > 0);
        QCOMPARE(at_end->decoding, 0);
        QVERIFY(at_end->speed_is_last);
        QCOMPARE(at_end->decode_tokens_per_s, own);
        engine->wait_idle();
        QCOMPARE(engine->stats().decode_tokens_per_s, own);  // kept while idle
        QVERIFY(engine->stats().speed_is_last);
    }

    // background_priority: the engine thread (where callbacks run) is a background thread,
    // SCHED_BATCH at the caller's nice value (kernels/cpu/thread_pool.h); without it, a
    // thread like the caller.
    void backgroundPriorityMakesTheEngineThreadABatchThread() {
#if defined(__linux__)
        const auto nice_here = [] {
            errno = 0;
            return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
        };
        const int caller = nice_here();
        const int caller_policy = sched_getscheduler(0);
        for (const bool background : {false, true}) {
            auto engine = make(8, 0.25, background);
            std::atomic<int> nice{-100}, policy{-100};
            engine->submit(greedy(1, tokens(3, 10), 1), [&](const sched::Event&) {
                policy.store(sched_getscheduler(0));
                nice.store(nice_here());
            });
            QTRY_VERIFY(nice.load() != -100);
            engine->wait_idle();
            QCOMPARE(nice.load(), caller);
            QCOMPARE(policy.load(), background ? SCHED_BATCH : caller_policy);
        }
        QCOMPARE(nice_here(), caller);
        QCOMPARE(sched_getscheduler(0), caller_policy);
#else
        QSKIP("thread priorities are checked on Linux");
#endif
    }

    void cancelStopsARequest() {
        auto engine = make();
        auto h = engine->submit(greedy(1, tokens(3, 30), 900));
        auto first = h->next();
        QVERIFY(first);
        while (first->kind != sched::EventKind::Token) first = h->next();
        engine->cancel(h->id());
        const sched::Event last = h->wait();
        QCOMPARE(last.kind, sched::EventKind::Finished);
        QCOMPARE(last.stop, StopReason::Cancelled);
        QVERIFY(last.tokens.size() < 900);
        engine->wait_idle();
        QCOMPARE(engine->stats().kv.blocks_used, 0);
    }

    // Overlapped steps (on by default only on a GPU) in the engine: events delivered while
    // the next step runs, the same tokens as plain steps for requests arriving from
    // several threads, a cancellation that lands while its step is in flight, and a
    // shutdown with a step in flight.
    void overlappedStepsInTheEngine() {
        using Overlap = sched::SchedulerConfig::Overlap;
        std::vector<std::vector<int32_t>> expected(6), got(6);
        for (int run = 0; run < 2; ++run) {
            auto engine = make(8, 0.25, false, run == 0 ? Overlap::Off : Overlap::On);
            auto& out = run == 0 ? expected : got;
            std::vector<std::thread> threads;
            for (int t = 0; t < 3; ++t)
                threads.emplace_back([&, t] {
                    std::vector<std::shared_ptr<RequestHandle>> mine;
                    for (int k = 0; k < 2; ++k) {
                        const int i = t * 2 + k;
                        mine.push_back(engine->submit(greedy(200 + i, tokens(40 + i, 25 + i), 10)));
                    }
                    for (int k = 0; k < 2; ++k)
                        out[static_cast<std::size_t>(t * 2 + k)] =
                            mine[static_cast<std::size_t>(k)]->wait().tokens;
                });
            for (auto& th : threads) th.join();
        }
        for (int i = 0; i < 6; ++i) {
            QCOMPARE(got[static_cast<std::size_t>(i)].size(), std::size_t{10});
            QCOMPARE(got[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)]);
        }

        auto engine = make(8, 0.25, false, Overlap::On);
        auto h = engine->submit(greedy(1, tokens(3, 30), 900));
        auto other = engine->submit(greedy(2, tokens(4, 30), 900));
        int seen = 0;
        while (seen < 5) {
            const auto e = h->next();
            QVERIFY(e && !is_last_event(*e));
            if (e->kind == sched::EventKind::Token && e->token >= 0) ++seen;
        }
        engine->cancel(h->id());
        int after_last = 0;
        const sched::Event last = h->wait([&](const sched::Event& e) {
            if (is_last_event(e)) return;
            if (e.kind == sched::EventKind::Token && e.token >= 0) ++after_last;
        });
        QCOMPARE(last.kind, sched::EventKind::Finished);
        QCOMPARE(last.stop, StopReason::Cancelled);
        QCOMPARE(last.tokens.size(), static_cast<std::size_t>(seen + after_last));
        QVERIFY(!h->next(std::chrono::milliseconds(20)));  // nothing after the last event
        engine->cancel(other->id());
        QCOMPARE(other->wait().stop, StopReason::Cancelled);
        engine->wait_idle();
        QCOMPARE(engine->stats().kv.blocks_used, 0);
        auto in_flight = engine->submit(greedy(3, tokens(5, 30), 900));
        QVERIFY(in_flight->next());
        engine.reset();  // stops with a step in flight
        const sched::Event end = in_flight->wait();
        QVERIFY(end.kind == sched::EventKind::Error ||
                (end.kind == sched::EventKind::Finished && end.stop == StopReason::Cancelled));
    }

    // A device that fails as a request ends (its KV copied to the host tier throws) fails
    // the requests with the reason, not the process (it used to end it: the exception left
    // the engine thread); later requests get the reason at once; the engine still stops.
    void aDeviceFailureEndsRequestsNotTheProcess() {
        test::DeferredBackend* device = nullptr;
        EngineConfig c;
        c.model_path = model_path_;
        c.device = "cpu";
        c.n_threads = 2;
        c.kv_mb = 8;
        c.wrap_backend = [&device](std::unique_ptr<kernels::Backend> inner) {
            auto d = std::make_unique<test::DeferredBackend>(std::move(inner));
            device = d.get();
            return std::unique_ptr<kernels::Backend>(std::move(d));
        };
        auto created = Engine::create(c);
        QVERIFY2(created, created ? "" : created.message().c_str());
        auto engine = std::move(created).value();
        QVERIFY(device);
        auto h = engine->submit(greedy(1, tokens(3, 40), 900));
        for (int seen = 0; seen < 5;) {
            const auto e = h->next();
            QVERIFY(e && !is_last_event(*e));
            if (e->kind == sched::EventKind::Token && e->token >= 0) ++seen;
        }
        QVERIFY(engine->stats().host_on);  // so the cancel copies its blocks down
        device->fail_downloads = true;
        engine->cancel(h->id());
        const sched::Event last = h->wait();
        QCOMPARE(last.kind, sched::EventKind::Error);
        QVERIFY2(last.error.find("the device is gone") != std::string::npos, last.error.c_str());
        QVERIFY2(last.error.find("load the model again") != std::string::npos, last.error.c_str());
        auto later = engine->submit(greedy(2, tokens(4, 10), 5));
        const sched::Event refused = later->wait();
        QCOMPARE(refused.kind, sched::EventKind::Error);
        QCOMPARE(refused.error, last.error);
        engine.reset();
    }

    // A disk tier whose lock another engine holds (in the app: the engine a reopened model
    // replaces, still closing as the new one starts) is opened once the lock is free, as
    // the engine thread next wakes; it used to stay off until the model was opened again.
    void aHeldDiskTierIsOpenedOnceFree() {
        QTemporaryDir kv_dir;
        QVERIFY(kv_dir.isValid());
        EngineConfig c;
        c.model_path = model_path_;
        c.device = "cpu";
        c.n_threads = 2;
        c.kv_mb = 8;
        c.kv_disk_dir = kv_dir.path().toStdString();
        auto first = Engine::create(c);
        QVERIFY(first);
        QVERIFY(first.value()->stats().disk_on);
        auto second = Engine::create(c);
        QVERIFY(second);
        Engine& engine = *second.value();
        QVERIFY(!engine.stats().disk_on);
        QVERIFY2(engine.stats().disk.status.find("locked") != std::string::npos,
                 engine.stats().disk.status.c_str());
        // Tried again at most once a second: still held, it stays off.
        std::this_thread::sleep_for(std::chrono::milliseconds(1100));
        QCOMPARE(engine.submit(greedy(1, tokens(3, 20), 2))->wait().kind,
                 sched::EventKind::Finished);
        QVERIFY(!engine.stats().disk_on);
        first.value().reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(1100));
        // The next request wakes the engine thread, which opens the tier first, and its
        // turn is written down there as it ends.
        QCOMPARE(engine.submit(greedy(2, tokens(4, 40), 4))->wait().kind,
                 sched::EventKind::Finished);
        QVERIFY(engine.stats().disk_on);
        QVERIFY(engine.stats().disk.status.empty());
        QTRY_VERIFY_WITH_TIMEOUT(engine.stats().disk.entries > 0, 10000);
    }

    void pinnedPrefixIsWarmedAndServed() {
        auto engine = make();
        const std::vector<int32_t> persona = tokens(4, 70);
        engine->pin(7, persona);
        engine->wait_idle();
        auto pins = engine->pins();
        QCOMPARE(pins.size(), std::size_t{1});
        QCOMPARE(pins[0].state, PinState::Pinned);
        QCOMPARE(pins[0].pinned_tokens, 64);  // whole 16-token blocks of 70 tokens
        QCOMPARE(engine->stats().kv.blocks_pinned, 4);

        std::vector<int32_t> prompt = persona;
        const auto msg = tokens(5, 9);
        prompt.insert(prompt.end(), msg.begin(), msg.end());
        const sched::Event last = engine->submit(greedy(1, prompt, 3))->wait();
        QCOMPARE(last.kind, sched::EventKind::Finished);
        QCOMPARE(last.stats.prompt_tokens_cached, 64);

        // The block map: 4 pinned persona blocks, which parked conversation 1's history
        // starts with (shared: pin and chat; they showed as pinned only, "Shared 0"), its
        // parked tail, and the rest of its blocks freed but still cached.
        (void)engine->block_map();
        engine->wait_idle();
        const BlockMap map = engine->block_map();
        QCOMPARE(static_cast<int32_t>(map.blocks.size()), engine->kv_blocks());
        QCOMPARE(map.block_size, 16);
        const auto count = [&](BlockCell::State st, int64_t owner) {
            return std::count_if(map.blocks.begin(), map.blocks.end(), [&](const BlockCell& c) {
                return c.state == st && (owner == -2 || c.owner == owner);
            });
        };
        const auto pinned_to = [&](int64_t key) {
            return std::count_if(map.blocks.begin(), map.blocks.end(),
                                 [&](const BlockCell& c) { return c.pin == key; });
        };
        QCOMPARE(pinned_to(7), 4);
        QCOMPARE(count(BlockCell::State::Shared, -2), 4);
        QCOMPARE(count(BlockCell::State::Pinned, -2), 0);
        QCOMPARE(count(BlockCell::State::Conversation, 1), 1);  // 82 tokens: 5 full + a tail
        QCOMPARE(count(BlockCell::State::Cached, -2), 1);       // the full block after the persona
        for (const BlockCell& c : map.blocks)
            if (c.state == BlockCell::State::Shared) QCOMPARE(c.holders, 2);
        // A second chat with the persona: the same 4 blocks, now held by three.
        std::vector<int32_t> other = persona;
        const auto msg2 = tokens(6, 9);
        other.insert(other.end(), msg2.begin(), msg2.end());
        QCOMPARE(engine->submit(greedy(2, other, 3))->wait().kind, sched::EventKind::Finished);
        (void)engine->block_map();
        engine->wait_idle();
        const BlockMap map2 = engine->block_map();
        int shared3 = 0;
        for (const BlockCell& c : map2.blocks)
            if (c.state == BlockCell::State::Shared && c.holders == 3 && c.pin == 7) ++shared3;
        QCOMPARE(shared3, 4);

        engine->unpin(7);
        engine->wait_idle();
        QVERIFY(engine->pins().empty());
        QCOMPARE(engine->stats().kv.blocks_pinned, 0);

        // Over the cap: a clear failure, nothing pinned.
        auto small = make(1, 0.02);
        small->pin(1, tokens(6, 200));
        small->wait_idle();
        pins = small->pins();
        QCOMPARE(pins.size(), std::size_t{1});
        QCOMPARE(pins[0].state, PinState::Failed);
        QVERIFY2(pins[0].error.find("cap") != std::string::npos, pins[0].error.c_str());
        QCOMPARE(small->stats().kv.blocks_pinned, 0);
    }

    void errorsAreEvents() {
        auto engine = make();
        // Long enough to be still running at the cancel below: the 2-layer model made 200
        // tokens before it now and then (the context holds 1024).
        auto busy1 = engine->submit(greedy(3, tokens(7, 20), 1000));
        auto busy2 = engine->submit(greedy(3, tokens(7, 20), 5));
        const sched::Event e = busy2->wait();
        QCOMPARE(e.kind, sched::EventKind::Error);
        QVERIFY2(e.error.find("in progress") != std::string::npos, e.error.c_str());
        engine->cancel(busy1->id());
        QCOMPARE(busy1->wait().stop, StopReason::Cancelled);
        const sched::Event neg = engine->submit(greedy(-4, tokens(7, 20), 5))->wait();
        QCOMPARE(neg.kind, sched::EventKind::Error);
        QVERIFY(!engine->submit(greedy(1, {}, 5))->wait().error.empty());

        EngineConfig bad;
        bad.model_path = dir_.filePath("missing.gguf").toStdString();
        auto r = Engine::create(bad);
        QVERIFY(!r);
        QVERIFY2(r.message().find("missing.gguf") != std::string::npos, r.message().c_str());
    }

    // The device setting: auto on a machine without a usable GPU (this one, CI) runs on the
    // CPU and says why; an explicit CUDA device that cannot be used, or a bad name, is an
    // error; cpu is the CPU with nothing to explain.
    void deviceSettingIsChosenOrExplained() {
        EngineConfig c;
        c.model_path = model_path_;
        c.n_threads = 1;
        c.kv_mb = 8;
        auto automatic = Engine::create(c);
        QVERIFY2(automatic, automatic ? "" : automatic.message().c_str());
        QVERIFY((*automatic)->device().kind == DeviceKind::Cpu);
        QVERIFY(!(*automatic)->device().cpu_reason.empty());
        qInfo("auto: the CPU, because %s", (*automatic)->device().cpu_reason.c_str());
        c.device = "cpu";
        auto cpu = Engine::create(c);
        QVERIFY(cpu && (*cpu)->device().cpu_reason.empty());
        QCOMPARE((*cpu)->device().description, std::string("cpu"));
        c.device = "cuda:0";
        auto cuda = Engine::create(c);
        QVERIFY(!cuda);
        QVERIFY2(cuda.message().rfind("cuda:0", 0) == 0, cuda.message().c_str());
        c.device = "gpu";
        auto bad = Engine::create(c);
        QVERIFY(!bad);
        QVERIFY2(bad.message().find("expected auto, cpu, cuda or cuda:N") != std::string::npos,
                 bad.message().c_str());
    }

    // What a GPU would have to hold for this model: the weights as stored, whole KV blocks
    // of a full context, and activations that grow with the step size.
    void vramNeedsFollowTheConfig() {
        auto file = gguf::GgufFile::open(model_path_);
        QVERIFY(file);
        auto mc = ModelConfig::from_gguf(**file);
        QVERIFY(mc);
        EngineConfig c;
        c.block_size = 16;
        const VramNeeds small = vram_needs(c, *mc, (*file)->file_size());
        QCOMPARE(small.weight_bytes, static_cast<std::uint64_t>((*file)->file_size()));
        QCOMPARE(small.kv_bytes_per_block,
                 static_cast<std::uint64_t>(KvStorage::bytes_per_block(
                     {static_cast<int32_t>(mc->n_layer), static_cast<int32_t>(mc->n_head_kv),
                      static_cast<int32_t>(mc->head_dim), 16})));
        QCOMPARE(small.context_blocks, (mc->context_length + 15) / 16);
        QCOMPARE(small.kv_budget_bytes, std::uint64_t{0});
        c.scheduler.max_batch_tokens *= 4;
        c.kv_mb = 64;
        const VramNeeds big = vram_needs(c, *mc, (*file)->file_size());
        QVERIFY(big.activation_bytes > 3 * small.activation_bytes);
        QCOMPARE(big.kv_budget_bytes, std::uint64_t{64} << 20);
        QVERIFY(vram_bytes_needed(small) >
                small.weight_bytes + small.activation_bytes +
                    small.kv_bytes_per_block * static_cast<std::uint64_t>(small.context_blocks));
    }

    void shutdownEndsEveryRequest() {
        std::vector<std::shared_ptr<RequestHandle>> handles;
        {
            auto engine = make();
            for (int i = 0; i < 6; ++i)
                handles.push_back(engine->submit(greedy(i, tokens(8 + i, 30), 500)));
        }
        for (auto& h : handles) {
            const sched::Event e = h->wait();
            QVERIFY(e.kind == sched::EventKind::Error ||
                    (e.kind == sched::EventKind::Finished && e.stop == StopReason::Cancelled));
        }
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
