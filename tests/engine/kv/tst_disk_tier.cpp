// The KV cache's disk tier on its own: the block file format, round trips through the
// worker thread and across a reopen (a restart), the LRU budget, the lock, and faults
// (truncated and flipped files, files of another key, leftovers of a crash, a write that
// fails): each is a miss or a refusal with a message, never wrong bytes.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>

#ifndef _WIN32
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "kv/block_file.h"
#include "kv/disk_tier.h"

using namespace hearth;
using namespace hearth::kv;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBlockBytes = 4096 + 24;  // not a multiple of the checksum's 32

TierKey key(int block_size = 16, const std::string& model = "model-a") {
    TierKey::Parts p;
    p.model = model;
    p.numerics = "cpu AVX2 batch-invariant";
    p.n_layers = 2;
    p.n_kv_heads = 2;
    p.head_dim = 8;
    p.block_size = block_size;
    return TierKey::make(p);
}

BlockHash hash_of(int i) {
    const int32_t t = i;
    return hash_block(std::nullopt, std::span(&t, 1), {"test"});
}

std::vector<std::byte> bytes_of(int i, std::size_t n = kBlockBytes) {
    std::mt19937 rng(static_cast<uint32_t>(1000 + i));
    std::vector<std::byte> b(n);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    return b;
}

std::unique_ptr<DiskTier> open_tier(const QString& dir, std::uint64_t budget = 1ull << 30,
                                    const TierKey& k = key()) {
    DiskTierConfig c;
    c.dir = dir.toStdString();
    c.budget_bytes = budget;
    auto t = DiskTier::open(c, k, kBlockBytes);
    if (!t) qFatal("open: %s", t.message().c_str());
    return std::move(t).value();
}

// Loads these blocks and waits for the result.
LoadedBlocks load_now(DiskTier& t, std::vector<BlockHash> hashes) {
    const uint64_t job = t.load(std::move(hashes));
    t.flush();
    for (LoadedBlocks& l : t.take_loaded())
        if (l.job == job) return std::move(l);
    qFatal("load %llu did not finish", static_cast<unsigned long long>(job));
}

fs::path file_of(const QString& dir, const TierKey& k, const BlockHash& h) {
    return fs::path(dir.toStdString()) / k.hex() / (h.hex() + ".kvb");
}

}  // namespace

class TestDiskTier : public QObject {
    Q_OBJECT

  private slots:
    void checksum_sees_every_word() {
        auto data = bytes_of(1, 1000);
        const uint64_t base = checksum64(data);
        for (std::size_t i = 0; i < data.size(); i += 7) {
            data[i] ^= std::byte{0x10};
            QVERIFY2(checksum64(data) != base, qPrintable(QString("byte %1").arg(i)));
            data[i] ^= std::byte{0x10};
        }
        QCOMPARE(checksum64(data), base);
        data.push_back(std::byte{0});  // the length counts too
        QVERIFY(checksum64(data) != base);
    }

    void checksum_is_incremental() {
        const auto data = bytes_of(3, 1001);
        const uint64_t whole = checksum64(data);
        for (std::size_t a : {0, 1, 7, 8, 9, 31, 32, 33, 500, 1000, 1001})
            for (std::size_t b : {std::size_t{0}, std::size_t{3}, std::size_t{40}}) {
                const std::size_t mid = std::min(a + b, data.size());
                Checksum64 c;
                c.update(std::span(data).first(a));
                c.update(std::span(data).subspan(a, mid - a));
                c.update(std::span(data).subspan(mid));
                QVERIFY2(c.finish() == whole, qPrintable(QString("split %1/%2").arg(a).arg(mid)));
            }
    }

    void loads_into_a_sink() {
        QTemporaryDir dir;
        auto t = open_tier(dir.path());
        for (int i = 0; i < 2; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
        t->flush();
        QVERIFY(t->store(hash_of(2), bytes_of(2)));  // still queued, maybe
        std::vector<std::vector<std::byte>> into(3, std::vector<std::byte>(kBlockBytes));
        const uint64_t job = t->load({hash_of(0), hash_of(1), hash_of(2)}, [&](std::size_t i) {
            std::span<std::byte> all(into[i]);
            return std::vector<std::span<std::byte>>{all.first(100), all.subspan(100, 2000),
                                                     all.subspan(2100)};
        });
        t->flush();
        const auto done = t->take_loaded();
        QCOMPARE(done.size(), std::size_t{1});
        QCOMPARE(done.front().job, job);
        QCOMPARE(done.front().loaded, std::size_t{3});
        QVERIFY(done.front().blocks.empty());
        for (int i = 0; i < 3; ++i) QVERIFY(into[static_cast<std::size_t>(i)] == bytes_of(i));
        // A cancelled load is never reported.
        const uint64_t dropped = t->load({hash_of(0), hash_of(1)});
        t->cancel_load(dropped);
        t->flush();
        QVERIFY(t->take_loaded().empty());
    }

    void block_file_checks() {
        const auto payload = bytes_of(2);
        std::vector<std::byte> file(kBlockFileHeaderBytes);
        write_block_header(
            std::span<std::byte, kBlockFileHeaderBytes>(file.data(), kBlockFileHeaderBytes),
            key().id, hash_of(2), payload);
        file.insert(file.end(), payload.begin(), payload.end());
        QCOMPARE(check_block_file(file, key().id, hash_of(2), kBlockBytes), BlockFileCheck::Ok);
        QCOMPARE(check_block_file(file, key(32).id, hash_of(2), kBlockBytes),
                 BlockFileCheck::OtherTier);
        QCOMPARE(check_block_file(file, key().id, hash_of(3), kBlockBytes),
                 BlockFileCheck::OtherBlock);
        QCOMPARE(check_block_file(file, key().id, hash_of(2), kBlockBytes + 32),
                 BlockFileCheck::OtherTier);
        auto cut = file;
        cut.resize(cut.size() - 1);
        QCOMPARE(check_block_file(cut, key().id, hash_of(2), kBlockBytes),
                 BlockFileCheck::Truncated);
        cut.resize(10);
        QCOMPARE(check_block_file(cut, key().id, hash_of(2), kBlockBytes),
                 BlockFileCheck::Truncated);
        auto flipped = file;
        flipped[kBlockFileHeaderBytes + 100] ^= std::byte{1};
        QCOMPARE(check_block_file(flipped, key().id, hash_of(2), kBlockBytes),
                 BlockFileCheck::Corrupt);
        flipped = file;
        flipped[4] ^= std::byte{1};  // the version, under the header's own checksum
        QCOMPARE(check_block_file(flipped, key().id, hash_of(2), kBlockBytes),
                 BlockFileCheck::Corrupt);
        flipped = file;
        flipped[0] = std::byte{'X'};
        QCOMPARE(check_block_file(flipped, key().id, hash_of(2), kBlockBytes),
                 BlockFileCheck::NotABlockFile);
    }

    void keys_differ_by_every_part() {
        QVERIFY(key().id != key(32).id);
        QVERIFY(key().id != key(16, "model-b").id);
        TierKey::Parts p;
        p.model = "model-a";
        p.numerics = "cpu AVX-512 batch-invariant";
        p.n_layers = 2;
        p.n_kv_heads = 2;
        p.head_dim = 8;
        p.block_size = 16;
        QVERIFY(TierKey::make(p).id != key().id);
        QCOMPARE(key().hex().size(), std::size_t{32});
    }

    void round_trip_and_restart() {
        QTemporaryDir dir;
        {
            auto t = open_tier(dir.path());
            for (int i = 0; i < 5; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
            QVERIFY(t->contains(hash_of(4)));                 // queued counts
            QVERIFY(!t->store(hash_of(4), bytes_of(4)));      // once
            QVERIFY(!t->store(hash_of(9), bytes_of(9, 10)));  // wrong size
            // A load of queued blocks is served from the queue or the file: same bytes.
            const LoadedBlocks early = load_now(*t, {hash_of(0), hash_of(1)});
            QCOMPARE(early.blocks.size(), std::size_t{2});
            QVERIFY(early.blocks[1] == bytes_of(1));
            t->flush();
            const DiskTierStats s = t->stats();
            QCOMPARE(s.written_blocks, int64_t{5});
            QCOMPARE(s.model_entries, int64_t{5});
            QCOMPARE(s.bytes, int64_t{5 * (kBlockBytes + kBlockFileHeaderBytes)});
            QVERIFY(s.status.empty());
        }
        auto t = open_tier(dir.path());  // a restart
        QCOMPARE(t->stats().model_entries, int64_t{5});
        const LoadedBlocks all =
            load_now(*t, {hash_of(0), hash_of(1), hash_of(2), hash_of(3), hash_of(4)});
        QCOMPARE(all.blocks.size(), std::size_t{5});
        for (int i = 0; i < 5; ++i) QVERIFY(all.blocks[static_cast<std::size_t>(i)] == bytes_of(i));
        // A chain stops at the first block the tier does not hold.
        const LoadedBlocks part = load_now(*t, {hash_of(0), hash_of(7), hash_of(1)});
        QCOMPARE(part.blocks.size(), std::size_t{1});
        // Another key (block size, model) sees none of them.
        t.reset();
        auto other = open_tier(dir.path(), 1ull << 30, key(32));
        QVERIFY(!other->contains(hash_of(0)));
        QCOMPARE(other->stats().entries, int64_t{5});  // but they count in the budget
        QCOMPARE(other->stats().model_entries, int64_t{0});
    }

    void budget_evicts_least_recently_used() {
        QTemporaryDir dir;
        const std::uint64_t file = kBlockBytes + kBlockFileHeaderBytes;
        auto t = open_tier(dir.path(), 3 * file);
        for (int i = 0; i < 3; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
        t->flush();
        QCOMPARE(load_now(*t, {hash_of(0)}).blocks.size(), std::size_t{1});  // 0 is used again
        QVERIFY(t->store(hash_of(3), bytes_of(3)));
        t->flush();
        QVERIFY(t->contains(hash_of(0)));
        QVERIFY(!t->contains(hash_of(1)));  // the least recently used went
        QVERIFY(t->contains(hash_of(2)));
        QVERIFY(t->contains(hash_of(3)));
        QVERIFY(!fs::exists(file_of(dir.path(), key(), hash_of(1))));
        const DiskTierStats s = t->stats();
        QCOMPARE(s.evicted_blocks, int64_t{1});
        QVERIFY(static_cast<std::uint64_t>(s.bytes) <= 3 * file);
        // A smaller budget at the next start trims at once.
        t.reset();
        auto small = open_tier(dir.path(), file);
        QCOMPARE(small->stats().entries, int64_t{1});
        // A budget below one block writes nothing.
        small.reset();
        auto none = open_tier(dir.path(), file - 1);
        QVERIFY(!none->store(hash_of(5), bytes_of(5)));
        QCOMPARE(none->stats().entries, int64_t{0});
    }

    void bad_files_are_misses_and_deleted() {
        QTemporaryDir dir;
        {
            auto t = open_tier(dir.path());
            for (int i = 0; i < 4; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
        }
        // 1: truncated (a torn write); 2: one bit flipped; 3: another block's file.
        fs::resize_file(file_of(dir.path(), key(), hash_of(1)), 100);
        {
            std::fstream f(file_of(dir.path(), key(), hash_of(2)),
                           std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(500);
            f.put('\x5a');
        }
        fs::copy_file(file_of(dir.path(), key(), hash_of(0)),
                      file_of(dir.path(), key(), hash_of(3)), fs::copy_options::overwrite_existing);
        // A crash while writing leaves a temporary file: deleted at the next start.
        std::ofstream(file_of(dir.path(), key(), hash_of(8)).string() + ".tmp") << "torn";

        auto t = open_tier(dir.path());
        QVERIFY(!fs::exists(file_of(dir.path(), key(), hash_of(8)).string() + ".tmp"));
        QCOMPARE(load_now(*t, {hash_of(0)}).blocks.size(), std::size_t{1});
        for (int i = 1; i < 4; ++i) {
            QVERIFY(t->contains(hash_of(i)));
            QCOMPARE(load_now(*t, {hash_of(i)}).blocks.size(), std::size_t{0});
            QVERIFY(!t->contains(hash_of(i)));
            QVERIFY(!fs::exists(file_of(dir.path(), key(), hash_of(i))));
        }
        QCOMPARE(t->stats().bad_files, int64_t{3});
        // A file deleted behind the tier's back is a miss too.
        fs::remove(file_of(dir.path(), key(), hash_of(0)));
        QCOMPARE(load_now(*t, {hash_of(0)}).blocks.size(), std::size_t{0});
        QVERIFY(!t->contains(hash_of(0)));
    }

    void one_instance_per_folder() {
        QTemporaryDir dir;
        auto t = open_tier(dir.path());
        QVERIFY(t->store(hash_of(0), bytes_of(0)));
        t->flush();
        DiskTierConfig c;
        c.dir = dir.path().toStdString();
        auto second = DiskTier::open(c, key(), kBlockBytes);
        QVERIFY(!second);
        QVERIFY2(second.message().find("another running Hearth") != std::string::npos,
                 second.message().c_str());
        auto cleared = clear_disk_tier(c.dir);
        QVERIFY(!cleared);
        auto seen = inspect_disk_tier(c.dir);
        QVERIFY(seen);
        QCOMPARE(seen->size(), std::size_t{1});
        QCOMPARE(seen->front().entries, int64_t{1});
        QVERIFY(seen->front().description.find("block_size=16") != std::string::npos);
        t.reset();
        cleared = clear_disk_tier(c.dir);
        QVERIFY2(cleared, cleared ? "" : cleared.message().c_str());
        QCOMPARE(*cleared, int64_t{1});
        QCOMPARE(inspect_disk_tier(c.dir)->size(), std::size_t{0});
    }

    void clear_forgets_everything() {
        QTemporaryDir dir;
        auto t = open_tier(dir.path());
        for (int i = 0; i < 3; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
        t->clear();
        t->flush();
        QVERIFY(!t->contains(hash_of(0)));
        QCOMPARE(t->stats().entries, int64_t{0});
        QCOMPARE(inspect_disk_tier(dir.path().toStdString())->front().entries, int64_t{0});
    }

    void a_deleted_models_blocks_go_with_it() {
        QTemporaryDir dir;
        const TierKey b = key(16, "model-b"), c = key(16, "model-c");
        for (const TierKey& k : {b, c}) {  // two other models' blocks, written earlier
            auto t = open_tier(dir.path(), 1ull << 30, k);
            for (int i = 0; i < 3; ++i) QVERIFY(t->store(hash_of(i), bytes_of(i)));
            t->flush();
        }
        auto a = open_tier(dir.path());
        for (int i = 0; i < 2; ++i) QVERIFY(a->store(hash_of(i), bytes_of(i)));
        a->flush();
        QCOMPARE(a->stats().entries, int64_t{8});
        // The running engine's tier deletes model-b's blocks, and only those.
        QCOMPARE(a->erase_model("model-b"), int64_t{3});
        QCOMPARE(a->erase_model("model-a"), int64_t{0});  // its own stay
        QCOMPARE(a->erase_model("model-"), int64_t{0});   // a whole fingerprint only
        QCOMPARE(a->stats().entries, int64_t{5});
        QVERIFY(!fs::exists(fs::path(dir.path().toStdString()) / b.hex()));
        QVERIFY(fs::exists(file_of(dir.path(), c, hash_of(0))));
        QVERIFY(a->contains(hash_of(0)));
        // Without an engine: refused while one holds the folder, then done.
        auto held = erase_model_from_disk_tier(dir.path().toStdString(), "model-c");
        QVERIFY(!held);
        a.reset();
        auto erased = erase_model_from_disk_tier(dir.path().toStdString(), "model-c");
        QVERIFY2(erased, erased ? "" : erased.message().c_str());
        QCOMPARE(*erased, int64_t{3});
        QVERIFY(!fs::exists(fs::path(dir.path().toStdString()) / c.hex()));
        QVERIFY(fs::exists(file_of(dir.path(), key(), hash_of(0))));
    }

    void folder_that_cannot_be_made() {
        QTemporaryDir dir;
        std::ofstream(dir.filePath("plain-file").toStdString()) << "x";
        DiskTierConfig c;
        c.dir = dir.filePath("plain-file/kv").toStdString();
        auto t = DiskTier::open(c, key(), kBlockBytes);
        QVERIFY(!t);
        QVERIFY2(t.message().find("cannot create the KV cache folder") != std::string::npos,
                 t.message().c_str());
    }

    void killed_while_writing() {
#ifdef _WIN32
        QSKIP("uses fork and SIGKILL");
#else
        QTemporaryDir dir;
        constexpr int kBlocks = 400;
        const pid_t child = fork();
        if (child == 0) {  // writes blocks as fast as it can until killed
            DiskTierConfig c;
            c.dir = dir.path().toStdString();
            auto t = DiskTier::open(c, key(), kBlockBytes);
            if (!t) _exit(3);
            for (int i = 0; i < kBlocks; ++i)
                while (!(*t)->store(hash_of(i), bytes_of(i))) usleep(100);
            (*t)->flush();
            _exit(0);
        }
        QVERIFY(child > 0);
        usleep(30000);
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        // The lock died with it; leftovers are deleted; what is there reads back whole.
        auto t = open_tier(dir.path());
        for (const auto& f :
             fs::directory_iterator(fs::path(dir.path().toStdString()) / key().hex()))
            QVERIFY2(f.path().extension() != ".tmp", f.path().c_str());
        int held = 0;
        for (int i = 0; i < kBlocks; ++i) {
            if (!t->contains(hash_of(i))) continue;
            const LoadedBlocks l = load_now(*t, {hash_of(i)});
            if (l.loaded == 1) {
                QVERIFY(l.blocks[0] == bytes_of(i));
                ++held;
            }
        }
        qInfo("killed after writing %d of %d blocks (%s)", held, kBlocks,
              WIFSIGNALED(status) ? "killed" : "it had finished");
        QCOMPARE(t->stats().bad_files, int64_t{0});
#endif
    }

    void failed_write_stops_writing_not_the_caller() {
#ifdef _WIN32
        QSKIP("uses RLIMIT_FSIZE to make writes fail");
#else
        QTemporaryDir dir;
        auto t = open_tier(dir.path());
        // Files may not grow past 1 KiB: a write fails as on a full disk.
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit old{};
        getrlimit(RLIMIT_FSIZE, &old);
        rlimit small = old;
        small.rlim_cur = 1024;
        setrlimit(RLIMIT_FSIZE, &small);
        const bool queued = t->store(hash_of(0), bytes_of(0));
        t->flush();
        setrlimit(RLIMIT_FSIZE, &old);
        QVERIFY(queued);
        const DiskTierStats s = t->stats();
        QCOMPARE(s.write_errors, int64_t{1});
        QVERIFY2(s.status.find("not writing KV blocks down") != std::string::npos,
                 s.status.c_str());
        QVERIFY(!t->contains(hash_of(0)));
        QVERIFY(!t->store(hash_of(1), bytes_of(1)));  // stopped for a while
        QCOMPARE(t->stats().dropped_writes, int64_t{1});
        QVERIFY(!fs::exists(file_of(dir.path(), key(), hash_of(0))));
        for (const auto& f :
             fs::directory_iterator(fs::path(dir.path().toStdString()) / key().hex()))
            QVERIFY2(f.path().extension() != ".tmp", f.path().c_str());
#endif
    }
};

QTEST_GUILESS_MAIN(TestDiskTier)
#include "tst_disk_tier.moc"
