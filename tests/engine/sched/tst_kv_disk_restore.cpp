// The scheduler over the disk tier: KV written down by one run and read back by the next
// (a restart: new model, cache and scheduler on the same folder) gives the logits of
// caching off, bit for bit, under memory pressure too; bad files are recomputed; another
// model's files are never read; prefetch and cancellation during a load keep every block
// accounted for.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "model/synthetic_model.h"
#if defined(HEARTH_WITH_CUDA)
#include <cstdlib>
#include <cstring>

#include "cuda/cuda_backend.h"
#include "cuda/host_twin_backend.h"
#endif
#include "sched_rig.h"

using namespace hearth;
using namespace hearth::test;
using quant::TensorType;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kSeed = 77;

using Results = std::vector<std::vector<Turn>>;

QString compare(const Results& got, const Results& want, const char* what) {
    for (std::size_t c = 0; c < want.size(); ++c)
        for (std::size_t t = 0; t < want[c].size(); ++t) {
            if (got[c][t].reply != want[c][t].reply)
                return QString("%1: conversation %2 turn %3: replies differ")
                    .arg(what)
                    .arg(c)
                    .arg(t);
            if (got[c][t].logits.size() != want[c][t].logits.size())
                return QString("%1: conversation %2 turn %3: logit rows differ")
                    .arg(what)
                    .arg(c)
                    .arg(t);
            for (std::size_t i = 0; i < want[c][t].logits.size(); ++i) {
                const std::string diff =
                    first_difference(got[c][t].logits[i], want[c][t].logits[i]);
                if (!diff.empty())
                    return QString("%1: conversation %2 turn %3 token %4: %5")
                        .arg(what)
                        .arg(c)
                        .arg(t)
                        .arg(i)
                        .arg(QString::fromStdString(diff));
            }
        }
    return {};
}

int64_t loaded_tokens(const Results& r) {
    int64_t n = 0;
    for (const auto& conv : r)
        for (const Turn& t : conv) n += t.stats.prompt_tokens_loaded;
    return n;
}

// A first run of the workload that writes down to o.disk_dir, closed as it ends (a
// restart follows). Fatal on error.
Results first_run(const RigOptions& o, const Workload& w) {
    Results out;
    std::string error;
    auto rig = Rig::make(o);
    if (!run_workload(*rig, w, out, error)) qFatal("first run: %s", error.c_str());
    return out;
}

std::vector<fs::path> block_files(const QString& dir) {
    std::vector<fs::path> out;
    for (const auto& d : fs::recursive_directory_iterator(dir.toStdString()))
        if (d.path().extension() == ".kvb") out.push_back(d.path());
    std::sort(out.begin(), out.end());
    return out;
}

#if defined(HEARTH_WITH_CUDA)
// The device the two device-path tests run on: the CUDA kernels' host twins, or with
// HEARTH_KV_TIER_DEVICE=cuda (the CTest entry tst_kv_tiers_cuda, label gpu, which
// tests/gpu/run.sh runs) the real CUDA backend on device 0. Empty: skip, with why.
std::function<std::unique_ptr<kernels::Backend>()> device_backend(QString& why) {
    const char* device = std::getenv("HEARTH_KV_TIER_DEVICE");
    if (!device || std::strcmp(device, "cuda") != 0)
        return [] { return kernels::make_cuda_host_twin_backend(); };
    std::string error;
    if (!kernels::CudaBackend::create(0, &error)) {
        why = QString::fromStdString("no CUDA device: " + error);
        return {};
    }
    return [] {
        std::string e;
        return std::unique_ptr<kernels::Backend>(kernels::CudaBackend::create(0, &e));
    };
}
#endif

}  // namespace

// Sets `slot` to device_backend(), or skips with why (fails under HEARTH_REQUIRE_GPU).
#define HEARTH_DEVICE_BACKEND(slot)                                         \
    do {                                                                    \
        QString why_;                                                       \
        (slot) = device_backend(why_);                                      \
        if (!(slot)) {                                                      \
            if (std::getenv("HEARTH_REQUIRE_GPU")) QFAIL(qPrintable(why_)); \
            QSKIP(qPrintable(why_));                                        \
        }                                                                   \
    } while (false)

class TestKvDiskRestore : public QObject {
    Q_OBJECT

    Results reference(const Workload& w, TensorType type, const RigOptions& like = {}) {
        RigOptions off = like;
        off.disk_dir.clear();
        off.weight_type = type;
        off.prefix_caching = false;
        off.scheduler.max_running = 1;
        auto ref = Rig::make(off);
        Results out;
        std::string error;
        if (!run_workload(*ref, w, out, error)) qFatal("reference: %s", error.c_str());
        return out;
    }

  private slots:
    void restartEqualsCacheOff_data() {
        QTest::addColumn<TensorType>("type");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<int>("nBlocks");
        QTest::newRow("F32 bs16 roomy") << TensorType::F32 << 16 << 512;
        QTest::newRow("F32 bs7 pressure") << TensorType::F32 << 7 << 60;
        QTest::newRow("Q8_0 bs3 pressure") << TensorType::Q8_0 << 3 << 120;
    }
    void restartEqualsCacheOff() {
        QFETCH(TensorType, type);
        QFETCH(int, blockSize);
        QFETCH(int, nBlocks);
        const Workload w = Workload::random(kSeed, 6, 3, 2, synthetic_vocab_size());
        const Results want = reference(w, type);
        QTemporaryDir dir;
        RigOptions o;
        o.weight_type = type;
        o.block_size = blockSize;
        o.n_blocks = nBlocks;
        o.scheduler.max_running = 4;
        o.scheduler.max_batch_tokens = 48;
        o.disk_dir = dir.path().toStdString();
        std::string error;
        Results first, second;
        int64_t computed_first = 0;
        {
            auto rig = Rig::make(o);
            QVERIFY2(run_workload(*rig, w, first, error), error.c_str());
            computed_first = rig->scheduler->stats().tokens_computed;
            QVERIFY(rig->cache->pool().check_consistency());
        }  // the tier writes down what is queued as it closes
        QVERIFY2(compare(first, want, "first run").isEmpty(),
                 qPrintable(compare(first, want, "first run")));
        auto rig = Rig::make(o);  // a restart: nothing in memory
        QVERIFY(rig->disk->stats().model_entries > 0);
        QVERIFY2(run_workload(*rig, w, second, error), error.c_str());
        const QString diff = compare(second, want, "after the restart");
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        const int64_t loaded = loaded_tokens(second);
        const int64_t computed = rig->scheduler->stats().tokens_computed;
        qInfo(
            "restart: %lld prompt tokens loaded from disk; %lld tokens computed against %lld "
            "the first time",
            static_cast<long long>(loaded), static_cast<long long>(computed),
            static_cast<long long>(computed_first));
        QVERIFY(loaded > 0);
        QVERIFY(computed < computed_first);
        QCOMPARE(rig->cache->stats().prompt_tokens_loaded, loaded);
        QVERIFY(rig->cache->pool().check_consistency());
        const kv::DiskTierStats ds = rig->disk->stats();
        QVERIFY(ds.bytes <= ds.budget_bytes);
        QCOMPARE(ds.bad_files, int64_t{0});
    }

    // A backend whose memory the host cannot write (a GPU's): loads go through buffers that
    // the engine thread uploads. The CUDA kernels' host twins stand in for the device.
    void deviceMemoryGoesThroughBuffers() {
#if !defined(HEARTH_WITH_CUDA)
        QSKIP("needs the CUDA backend's host twins (a build with CUDA)");
#else
        RigOptions o;
        HEARTH_DEVICE_BACKEND(o.backend);
        const Workload w = Workload::random(kSeed + 7, 2, 2, 1, synthetic_vocab_size());
        const Results want = reference(w, TensorType::F32, o);
        QTemporaryDir dir;
        o.disk_dir = dir.path().toStdString();
        (void)first_run(o, w);
        auto rig = Rig::make(o);
        QVERIFY(!rig->storage->host_visible());
        Results got;
        std::string error;
        QVERIFY2(run_workload(*rig, w, got, error), error.c_str());
        const QString diff = compare(got, want, "device path after the restart");
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(loaded_tokens(got) > 0);
        QVERIFY(rig->cache->pool().check_consistency());
#endif
    }

    // The host-RAM tier under a device backend's memory pressure: blocks evicted from the
    // device come back from RAM (uploaded at admission), and the logits stay those of
    // caching off. Then with the disk tier under it too.
    void hostTierServesEvictedBlocks() {
#if !defined(HEARTH_WITH_CUDA)
        QSKIP("needs the CUDA backend's host twins (a build with CUDA)");
#else
        RigOptions o;
        HEARTH_DEVICE_BACKEND(o.backend);
        o.n_blocks = 14;  // a few conversations' worth: turns evict each other's blocks
        o.scheduler.max_running = 3;
        const Workload w = Workload::random(kSeed + 8, 6, 3, 2, synthetic_vocab_size());
        const Results want = reference(w, TensorType::F32, o);
        o.host_budget_bytes = 16u << 20;
        auto rig = Rig::make(o);
        Results got;
        std::string error;
        QVERIFY2(run_workload(*rig, w, got, error), error.c_str());
        QString diff = compare(got, want, "host tier");
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        const kv::HostTierStats hs = rig->host->stats();
        qInfo("host tier: %lld hits, %lld entries, %lld bytes", static_cast<long long>(hs.hits),
              static_cast<long long>(hs.entries), static_cast<long long>(hs.bytes));
        QVERIFY(hs.hits > 0);
        QVERIFY(hs.bytes <= hs.budget_bytes);
        QCOMPARE(rig->cache->stats().prompt_tokens_loaded, loaded_tokens(got));
        QVERIFY(rig->cache->pool().check_consistency());
        // A host tier too small to hold much, over the disk tier: both serve.
        QTemporaryDir dir;
        o.disk_dir = dir.path().toStdString();
        o.host_budget_bytes = 3 * KvStorage::bytes_per_block(rig->storage->shape());
        rig.reset();
        auto both = Rig::make(o);
        QVERIFY2(run_workload(*both, w, got, error), error.c_str());
        diff = compare(got, want, "host and disk tiers");
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(both->host->stats().evictions > 0);
        QVERIFY(both->cache->pool().check_consistency());
#endif
    }

    void badFilesAreRecomputed() {
        const Workload w = Workload::random(kSeed + 1, 4, 2, 2, synthetic_vocab_size());
        const Results want = reference(w, TensorType::F32);
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        o.scheduler.max_running = 4;
        std::string error;
        Results got = first_run(o, w);
        const auto files = block_files(dir.path());
        QVERIFY(files.size() > 6);
        int spoiled = 0;
        for (std::size_t i = 0; i < files.size(); i += 3, ++spoiled) {
            if (i % 2 == 0) {
                fs::resize_file(files[i], fs::file_size(files[i]) / 2);
            } else {
                std::fstream f(files[i], std::ios::in | std::ios::out | std::ios::binary);
                f.seekp(200);
                f.put('\x7f');
            }
        }
        auto rig = Rig::make(o);
        QVERIFY2(run_workload(*rig, w, got, error), error.c_str());
        const QString diff = compare(got, want, "with spoiled files");
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(rig->disk->stats().bad_files > 0);
        QVERIFY(rig->cache->pool().check_consistency());
    }

    void anotherModelReadsNothing() {
        const Workload w = Workload::random(kSeed + 2, 3, 2, 1, synthetic_vocab_size());
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        std::string error;
        Results got = first_run(o, w);
        o.weight_type = TensorType::Q8_0;  // another model file
        {
            auto rig = Rig::make(o);
            QCOMPARE(rig->disk->stats().model_entries, int64_t{0});
            QVERIFY2(run_workload(*rig, w, got, error), error.c_str());
            QCOMPARE(loaded_tokens(got), int64_t{0});
        }
        o.weight_type = TensorType::F32;
        o.block_size = 8;  // another block size
        auto rig = Rig::make(o);
        QCOMPARE(rig->disk->stats().model_entries, int64_t{0});
    }

    void smallBudgetStaysCorrect() {
        const Workload w = Workload::random(kSeed + 3, 6, 3, 2, synthetic_vocab_size());
        const Results want = reference(w, TensorType::F32);
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        o.n_blocks = 40;
        o.scheduler.max_running = 3;
        std::string error;
        Results got;
        {
            auto probe = Rig::make(o);
            o.disk_budget_bytes = 12 * (KvStorage::bytes_per_block(probe->storage->shape()) +
                                        kv::kBlockFileHeaderBytes);
        }
        auto rig = Rig::make(o);
        QVERIFY2(run_workload(*rig, w, got, error), error.c_str());
        QVERIFY2(compare(got, want, "small budget").isEmpty(),
                 qPrintable(compare(got, want, "small budget")));
        rig->disk->flush();
        const kv::DiskTierStats ds = rig->disk->stats();
        QVERIFY(ds.evicted_blocks > 0);
        QVERIFY(ds.bytes <= ds.budget_bytes);
        QCOMPARE(static_cast<std::size_t>(ds.entries), block_files(dir.path()).size());
    }

    void prefetchLoadsWithoutComputing() {
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        const Workload w = Workload::random(kSeed + 4, 1, 2, 1, synthetic_vocab_size());
        const Results first = first_run(o, w);
        auto rig = Rig::make(o);
        std::vector<int32_t> prompt = first[0][1].prompt;
        prompt.insert(prompt.end(), first[0][1].reply.begin(), first[0][1].reply.end());
        sched::Request r = greedy(5, prompt, 0);
        r.load_only = true;
        QVERIFY(rig->scheduler->submit(1, std::move(r)));
        std::vector<sched::Event> events;
        QVERIFY(rig->drain(events));
        QCOMPARE(rig->scheduler->stats().tokens_computed, int64_t{0});
        QVERIFY(!events.empty());
        QCOMPARE(events.back().kind, sched::EventKind::Finished);
        QVERIFY(events.back().tokens.empty());
        const auto hashes = rig->cache->prefix_hashes(prompt);
        QVERIFY(rig->cache->cached_tokens(hashes) > 0);
        // The turn itself now starts from memory, but for the partly filled last block
        // (memory caches whole blocks only), which comes from disk again.
        events.clear();
        QVERIFY(rig->scheduler->submit(2, greedy(0, prompt, 2)));
        QVERIFY(rig->drain(events));
        QCOMPARE(events.back().kind, sched::EventKind::Finished);
        const sched::RequestStats st = events.back().stats;
        QVERIFY(st.prompt_tokens_loaded < rig->cache->block_size());
        QCOMPARE(st.prompt_tokens_cached,
                 rig->cache->cached_tokens(hashes) + st.prompt_tokens_loaded);
        QCOMPARE(st.prompt_tokens_computed, 1);  // the last token, for its logits
        QVERIFY(rig->cache->pool().check_consistency());
    }

    void tailKeptByContent() {
        // One turn, a restart, the next turn: everything the first turn computed comes
        // back, the partly filled last block too; only the new message is computed.
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        const Workload w = Workload::random(kSeed + 6, 1, 2, 1, synthetic_vocab_size());
        Workload one = w;
        one.user[0].resize(1);
        const Results first = first_run(o, one);
        std::vector<int32_t> next = first[0][0].prompt;
        next.insert(next.end(), first[0][0].reply.begin(), first[0][0].reply.end());
        const auto& message = w.user[0][1];
        next.insert(next.end(), message.begin(), message.end());
        const auto computed_before =
            static_cast<int32_t>(first[0][0].prompt.size() + first[0][0].reply.size() - 1);
        QVERIFY2(computed_before % 16 != 0, "the first turn should end inside a block");

        auto run_next = [&](Rig& rig) {
            sched::Request r = greedy(0, next, 4);
            r.record_logits = true;
            std::vector<sched::Event> events;
            if (!rig.scheduler->submit(1, std::move(r)) || !rig.drain(events)) qFatal("next turn");
            return events;
        };
        auto rig = Rig::make(o);
        const auto events = run_next(*rig);
        const sched::RequestStats st = events.back().stats;
        QCOMPARE(st.prompt_tokens_loaded, computed_before);
        QCOMPARE(st.prompt_tokens_computed, static_cast<int32_t>(next.size()) - computed_before);
        RigOptions off;
        off.prefix_caching = false;
        auto ref = Rig::make(off);
        const auto want = run_next(*ref);
        QCOMPARE(events.size(), want.size());
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (events[i].kind != sched::EventKind::Token || events[i].token < 0) continue;
            QCOMPARE(events[i].token, want[i].token);
            const std::string diff = first_difference(events[i].logits, want[i].logits);
            QVERIFY2(diff.empty(), diff.c_str());
        }
    }

    void cancelWhileLoading() {
        QTemporaryDir dir;
        RigOptions o;
        o.disk_dir = dir.path().toStdString();
        const Workload w = Workload::random(kSeed + 5, 2, 1, 1, synthetic_vocab_size());
        const Results first = first_run(o, w);
        auto rig = Rig::make(o);
        const std::vector<int32_t>& prompt = first[0][0].prompt;
        QVERIFY(rig->scheduler->submit(1, greedy(0, prompt, 4)));
        std::vector<sched::Event> events;
        QVERIFY(rig->scheduler->step(events));  // admitted: its load is in flight
        QCOMPARE(rig->scheduler->stats().loading, 1);
        rig->scheduler->cancel(1, events);
        QCOMPARE(events.back().stop, StopReason::Cancelled);
        rig->disk->flush();
        events.clear();
        QVERIFY(rig->scheduler->submit(2, greedy(0, prompt, 4)));
        QVERIFY(rig->drain(events));
        QCOMPARE(events.back().tokens, first[0][0].reply.size() >= 4
                                           ? std::vector<int32_t>(first[0][0].reply.begin(),
                                                                  first[0][0].reply.begin() + 4)
                                           : first[0][0].reply);
        QVERIFY(rig->cache->pool().check_consistency());
        rig->cache->drop_parked(0);
        QCOMPARE(rig->cache->stats().blocks_used, 0);
    }
};

QTEST_GUILESS_MAIN(TestKvDiskRestore)
#include "tst_kv_disk_restore.moc"
