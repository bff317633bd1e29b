// The KV bookkeeping below the manager: block hashes, the intrusive free queue, and the
// block pool, by hand (exact ids and queue order) and by a randomised property test.
#include <QTest>

#include <map>
#include <random>
#include <set>

#include "kv/block_hash.h"
#include "kv/block_pool.h"
#include "kv/free_block_queue.h"

using namespace hearth::kv;

namespace {

constexpr uint32_t kSeed = 20240611;

std::vector<BlockId> ids(std::initializer_list<BlockId> l) {
    return l;
}

BlockHash test_hash(int i) {
    const std::vector<TokenId> t{i};
    return hash_block(std::nullopt, t, BlockHashKeys{"test-model"});
}

}  // namespace

class TstBlockPool : public QObject {
    Q_OBJECT

  private slots:
    void hash_depends_on_every_input() {
        const BlockHashKeys keys{"model-a"};
        const std::vector<TokenId> a{1, 2, 3, 4}, b{1, 2, 4, 3};
        const BlockHash h = hash_block(std::nullopt, a, keys);
        QVERIFY(h == hash_block(std::nullopt, a, keys));
        QVERIFY(!(h == hash_block(std::nullopt, b, keys)));
        QVERIFY(!(h == hash_block(std::nullopt, a, BlockHashKeys{"model-b"})));
        QVERIFY(!(h == hash_block(h, a, keys)));
        // A parent-less block and a block whose parent is all zero bytes differ too.
        QVERIFY(!(h == hash_block(BlockHash{}, a, keys)));
        QCOMPARE(h.hex().size(), std::size_t{32});
    }

    void hash_full_blocks_chains() {
        const BlockHashKeys keys{"m"};
        const std::vector<TokenId> t{5, 6, 7, 8, 9, 10, 11};
        const auto hs = hash_full_blocks(t, 3, 2, keys);
        QCOMPARE(hs.size(), std::size_t{2});
        const BlockHash h0 = hash_block(std::nullopt, std::span(t).subspan(0, 3), keys);
        QVERIFY(hs[0] == h0);
        QVERIFY(hs[1] == hash_block(h0, std::span(t).subspan(3, 3), keys));
        // Continuing from a parent gives the same chain as hashing in one go.
        const auto tail = hash_full_blocks(std::span(t).subspan(3), 3, 1, keys, h0);
        QVERIFY(tail[0] == hs[1]);
    }

    void free_queue_operations() {
        std::vector<KvBlock> blocks(5);
        for (int i = 0; i < 5; ++i) blocks[static_cast<std::size_t>(i)].id = i;
        FreeBlockQueue q(blocks);
        QCOMPARE(q.to_vector(), ids({0, 1, 2, 3, 4}));
        QCOMPARE(q.pop_front(), 0);
        q.remove(2);  // from the middle
        QCOMPARE(q.to_vector(), ids({1, 3, 4}));
        q.remove(4);  // the tail
        q.push_back(2);
        q.push_front(0);
        QCOMPARE(q.to_vector(), ids({0, 1, 3, 2}));
        QCOMPARE(q.size(), 4);
        QVERIFY(!q.contains(4));
        QVERIFY(q.contains(3));
        while (!q.empty()) q.pop_front();
        QCOMPARE(q.front(), kNoBlock);
        q.push_front(4);
        QCOMPARE(q.to_vector(), ids({4}));
    }

    void allocate_and_free_order() {
        BlockPool pool(8);
        auto a = pool.allocate(4);
        QVERIFY(a.ok());
        QCOMPARE(*a, ids({0, 1, 2, 3}));
        pool.cache_full_block(0, test_hash(0));
        pool.cache_full_block(1, test_hash(1));
        // A sequence frees tail first: 3 and 2 are uncached (head), 1 and 0 cached (tail).
        pool.free(ids({3, 2, 1, 0}));
        QCOMPARE(pool.free_queue().to_vector(), ids({3, 2, 4, 5, 6, 7, 1, 0}));
        QVERIFY(pool.check_consistency().ok());
        auto too_many = pool.allocate(9);
        QVERIFY(!too_many.ok());
        QVERIFY(too_many.message().find("out of KV cache blocks") != std::string::npos);
        QCOMPARE(pool.n_free(), 8);
    }

    void lazy_eviction() {
        BlockPool pool(3);
        auto a = pool.allocate(1);
        QVERIFY(a.ok());
        QVERIFY(pool.cache_full_block(0, test_hash(7)));
        pool.free(ids({0}));
        QCOMPARE(pool.get_cached(test_hash(7)), 0);  // freed, still findable
        QCOMPARE(pool.free_queue().to_vector(), ids({1, 2, 0}));
        auto b = pool.allocate(2);
        QVERIFY(b.ok());
        QCOMPARE(pool.get_cached(test_hash(7)), 0);
        QCOMPARE(pool.stats().evictions, 0);
        auto c = pool.allocate(1);
        QVERIFY(c.ok());
        QCOMPARE(*c, ids({0}));
        QCOMPARE(pool.get_cached(test_hash(7)), kNoBlock);  // reused: evicted now
        QVERIFY(!pool.block(0).hash);
        QCOMPARE(pool.stats().evictions, 1);
        QVERIFY(pool.check_consistency().ok());
    }

    void touch_takes_a_hit_out_of_the_queue() {
        BlockPool pool(4);
        auto a = pool.allocate(2);
        QVERIFY(a.ok());
        QVERIFY(pool.cache_full_block(1, test_hash(1)));
        pool.free(ids({1, 0}));
        QCOMPARE(pool.free_queue().to_vector(), ids({0, 2, 3, 1}));
        pool.touch(ids({1}));
        QCOMPARE(pool.block(1).ref_count, 1);
        QCOMPARE(pool.free_queue().to_vector(), ids({0, 2, 3}));
        pool.touch(ids({1}));  // a second holder of a held block
        QCOMPARE(pool.block(1).ref_count, 2);
        pool.free(ids({1}));
        QVERIFY(!pool.free_queue().contains(1));
        pool.free(ids({1}));
        QCOMPARE(pool.free_queue().to_vector(), ids({0, 2, 3, 1}));
        QVERIFY(pool.check_consistency().ok());
    }

    void duplicate_hash_stays_uncached() {
        BlockPool pool(4);
        auto a = pool.allocate(2);
        QVERIFY(a.ok());
        QVERIFY(pool.cache_full_block(0, test_hash(3)));
        QVERIFY(!pool.cache_full_block(1, test_hash(3)));
        QVERIFY(!pool.block(1).hash);
        QCOMPARE(pool.get_cached(test_hash(3)), 0);
        QCOMPARE(pool.n_cached(), 1);
    }

    void pins_are_counted_holders() {
        BlockPool pool(4);
        auto a = pool.allocate(2);
        QVERIFY(a.ok());
        pool.pin(ids({0, 1}));
        pool.pin(ids({0}));
        QCOMPARE(pool.n_pinned(), 2);
        QCOMPARE(pool.block(0).ref_count, 3);
        pool.free(ids({1, 0}));  // the sequence lets go; the pins still hold
        QCOMPARE(pool.n_free(), 2);
        pool.unpin(ids({1, 0}));
        QCOMPARE(pool.n_pinned(), 1);
        QCOMPARE(pool.free_queue().to_vector(), ids({1, 2, 3}));
        pool.unpin(ids({0}));
        QCOMPARE(pool.n_pinned(), 0);
        QVERIFY(pool.check_consistency().ok());
    }

    // Random allocate / free / cache / hit / pin over a tiny pool, against a model of who
    // holds what. Every block is free exactly once or held, with ref_count == holders.
    void random_operations_keep_invariants() {
        for (uint32_t seed = kSeed; seed < kSeed + 4; ++seed) {
            qInfo("tst_block_pool random seed %u", seed);
            std::mt19937 rng(seed);
            auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
            const int n_blocks = 6 + pick(10);
            BlockPool pool(n_blocks);
            std::vector<std::vector<BlockId>> holders;  // each: one reference per block
            std::map<BlockId, int> pins;                // block -> pin references
            for (int op = 0; op < 3000; ++op) {
                const int kind = pick(10);
                if (kind < 3) {
                    const int n = 1 + pick(4);
                    const int free_before = pool.n_free();
                    auto r = pool.allocate(n);
                    QCOMPARE(r.ok(), n <= free_before);
                    if (r.ok()) {
                        for (BlockId id : *r) {
                            QVERIFY(!pins.count(id));
                            QVERIFY(!pool.block(id).hash);
                        }
                        holders.push_back(*r);
                    }
                } else if (kind < 5 && !holders.empty()) {
                    const auto i = static_cast<std::size_t>(pick(static_cast<int>(holders.size())));
                    std::vector<BlockId> rev(holders[i].rbegin(), holders[i].rend());
                    pool.free(rev);
                    holders.erase(holders.begin() + static_cast<std::ptrdiff_t>(i));
                } else if (kind < 7 && !holders.empty()) {
                    const auto& h =
                        holders[static_cast<std::size_t>(pick(static_cast<int>(holders.size())))];
                    const BlockId id =
                        h[static_cast<std::size_t>(pick(static_cast<int>(h.size())))];
                    const BlockHash hash = test_hash(pick(12));
                    const BlockId before = pool.get_cached(hash);
                    // A block is hashed once (its content is fixed once it is full).
                    if (!pool.block(id).hash) {
                        const bool ok = pool.cache_full_block(id, hash);
                        QCOMPARE(ok, before == kNoBlock);
                        QCOMPARE(pool.get_cached(hash), ok ? id : before);
                    }
                } else if (kind < 9) {
                    const BlockId id = pool.get_cached(test_hash(pick(12)));
                    if (id != kNoBlock) {
                        const std::vector<BlockId> one{id};
                        if (kind == 8 && static_cast<int>(pins.size()) < n_blocks / 3) {
                            pool.pin(one);
                            ++pins[id];
                        } else {
                            pool.touch(one);
                            holders.push_back(one);
                        }
                    }
                } else if (!pins.empty()) {
                    auto it = pins.begin();
                    std::advance(it, pick(static_cast<int>(pins.size())));
                    const std::vector<BlockId> one{it->first};
                    pool.unpin(one);
                    if (--it->second == 0) pins.erase(it);
                }
                // Invariants, from the model.
                std::vector<int> refs(static_cast<std::size_t>(n_blocks), 0);
                for (const auto& h : holders)
                    for (BlockId id : h) ++refs[static_cast<std::size_t>(id)];
                for (const auto& [id, n] : pins) refs[static_cast<std::size_t>(id)] += n;
                const auto queue = pool.free_queue().to_vector();
                const std::set<BlockId> queued(queue.begin(), queue.end());
                QCOMPARE(queued.size(), queue.size());
                for (BlockId id = 0; id < n_blocks; ++id) {
                    const KvBlock& b = pool.block(id);
                    QCOMPARE(b.ref_count, refs[static_cast<std::size_t>(id)]);
                    QCOMPARE(queued.count(id) == 1, b.ref_count == 0);
                    QCOMPARE(b.pin_count, pins.count(id) ? pins.at(id) : 0);
                }
                for (const auto& [hash, id] : pool.cached_blocks()) {
                    QVERIFY(pool.block(id).hash);
                    QVERIFY(*pool.block(id).hash == hash);
                }
                QCOMPARE(pool.n_pinned(), static_cast<int32_t>(pins.size()));
                const auto consistent = pool.check_consistency();
                QVERIFY2(consistent.ok(), consistent.ok() ? "" : consistent.message().c_str());
            }
        }
    }
};

QTEST_APPLESS_MAIN(TstBlockPool)
#include "tst_block_pool.moc"
