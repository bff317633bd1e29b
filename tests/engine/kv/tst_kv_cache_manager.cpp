// KvCacheManager by hand, with exact block ids and free-queue order (in the manner of
// vLLM's tests/v1/core/test_prefix_caching.py): pool of 10 blocks of 4 tokens unless said.
#include <QTest>

#include <numeric>

#include "kv/kv_cache_manager.h"

using namespace hearth::kv;

namespace {

std::vector<BlockId> ids(std::initializer_list<BlockId> l) {
    return l;
}
std::vector<BlockId> vec(std::span<const BlockId> s) {
    return {s.begin(), s.end()};
}

// n tokens first, first + 1, ...
std::vector<TokenId> run(TokenId first, int n) {
    std::vector<TokenId> t(static_cast<std::size_t>(n));
    std::iota(t.begin(), t.end(), first);
    return t;
}

std::vector<TokenId> cat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

KvCacheConfig config(int32_t n_blocks = 10, int32_t block_size = 4) {
    KvCacheConfig c;
    c.n_blocks = n_blocks;
    c.block_size = block_size;
    c.hash_keys.model_fingerprint = "test-model";
    return c;
}

// Allocates and computes the whole prompt, as a prefill would.
Allocation prefill(KvCacheManager& m, SeqId seq, const std::vector<TokenId>& prompt) {
    auto a = m.allocate(seq, prompt);
    if (!a.ok()) qFatal("allocate failed: %s", a.message().c_str());
    const int32_t todo = static_cast<int32_t>(prompt.size()) - a->n_computed_tokens;
    if (!m.mark_computed(seq, todo).ok()) qFatal("mark_computed failed");
    return *a;
}

}  // namespace

class TstKvCacheManager : public QObject {
    Q_OBJECT

  private slots:
    void prefix_hit_exact_ids_and_queue_order() {
        KvCacheManager m(config());
        const auto a = run(100, 10);
        const Allocation first = prefill(m, 1, a);
        QCOMPARE(first.block_table, ids({0, 1, 2}));
        QCOMPARE(first.n_computed_tokens, 0);
        QCOMPARE(m.stats().blocks_cached, 2);  // blocks 0 and 1 are full, 2 holds 2 tokens
        QVERIFY(m.pool().block(1).hash && !m.pool().block(2).hash);
        m.free(1);
        // Freed tail first: uncached 2 to the head, then cached 1, 0 after the rest.
        QCOMPARE(m.pool().free_queue().to_vector(), ids({2, 3, 4, 5, 6, 7, 8, 9, 1, 0}));

        const auto b = cat(run(100, 8), run(500, 3));  // shares two blocks
        const CachedPrefix hit = m.longest_cached_prefix(b);
        QCOMPARE(hit.blocks, ids({0, 1}));
        QCOMPARE(hit.n_tokens, 8);
        const Allocation second = prefill(m, 2, b);
        QCOMPARE(second.block_table, ids({0, 1, 2}));  // the head (block 2) is reused
        QCOMPARE(second.n_computed_tokens, 8);
        QCOMPARE(m.pool().free_queue().to_vector(), ids({3, 4, 5, 6, 7, 8, 9}));
        const KvCacheStats s = m.stats();
        QCOMPARE(s.prompt_tokens_queried, int64_t{21});
        QCOMPARE(s.prompt_tokens_cached, int64_t{8});
    }

    void hit_is_capped_at_len_minus_one() {
        KvCacheManager m(config());
        prefill(m, 1, run(100, 10));
        m.free(1);
        // Exactly 8 tokens: 7 may come from cache, so one full block; the last is recomputed.
        const CachedPrefix hit = m.longest_cached_prefix(run(100, 8));
        QCOMPARE(hit.blocks, ids({0}));
        QCOMPARE(hit.n_tokens, 4);
        QCOMPARE(m.longest_cached_prefix(run(100, 9)).blocks, ids({0, 1}));
        QCOMPARE(m.longest_cached_prefix(run(100, 1)).n_tokens, 0);
        QCOMPARE(m.longest_cached_prefix(run(101, 9)).n_tokens, 0);  // shifted: no hit
        // The two-step form agrees, cap included, and follows later evictions.
        for (const auto& t : {run(100, 8), run(100, 9), run(100, 1), run(101, 9), run(100, 30)})
            QCOMPARE(m.cached_tokens(m.prefix_hashes(t)), m.longest_cached_prefix(t).n_tokens);
        const auto hashes = m.prefix_hashes(run(100, 9));
        QCOMPARE(hashes.size(), std::size_t{2});
        QCOMPARE(m.cached_tokens(hashes), 8);
        prefill(m, 2, run(900, 40));  // 10 blocks: evicts every cached one
        QCOMPARE(m.cached_tokens(hashes), 0);
        m.free(2);
        KvCacheConfig other = config();
        other.hash_keys.model_fingerprint = "another-model";
        KvCacheManager m2(other);
        prefill(m2, 1, run(100, 10));
        QCOMPARE(m2.longest_cached_prefix(run(100, 9)).n_tokens, 4 * 2);
    }

    void lazy_eviction_tail_blocks_first() {
        KvCacheManager m(config());
        const auto a = run(100, 10);
        prefill(m, 1, a);
        m.free(1);
        // Eight blocks for an unrelated prompt take everything but the cached 1 and 0.
        prefill(m, 2, run(900, 32));
        QCOMPARE(m.longest_cached_prefix(a).blocks, ids({0, 1}));  // freed, still a hit
        QCOMPARE(m.stats().evictions, int64_t{0});
        auto grow = m.append_slots(2, 1);
        QVERIFY(grow.ok());
        QCOMPARE(*grow, ids({1}));  // a's second block goes first
        QCOMPARE(m.longest_cached_prefix(a).blocks, ids({0}));
        QCOMPARE(m.stats().evictions, int64_t{1});
        auto full = m.append_slots(2, 4);
        QVERIFY(full.ok());
        QCOMPARE(*full, ids({0}));
        QCOMPARE(m.stats().blocks_free, 0);
    }

    void out_of_blocks_changes_nothing() {
        KvCacheManager m(config());
        prefill(m, 1, run(100, 10));
        m.free(1);
        prefill(m, 2, run(300, 24));  // 6 blocks
        const auto queue = m.pool().free_queue().to_vector();
        const KvCacheStats before = m.stats();
        auto r = m.allocate(3, cat(run(100, 8), run(700, 20)));  // needs 5 new, 4 free
        QVERIFY(!r.ok());
        QVERIFY(r.message().find("out of KV cache blocks") != std::string::npos);
        QVERIFY(!m.has_sequence(3));
        QCOMPARE(m.pool().free_queue().to_vector(), queue);
        QCOMPARE(m.stats().prompt_tokens_queried, before.prompt_tokens_queried);
        QCOMPARE(m.stats().blocks_cached, before.blocks_cached);
        auto grown = m.append_slots(2, 17);  // 5 more blocks
        QVERIFY(!grown.ok());
        QCOMPARE(m.block_table(2).size(), std::size_t{6});
        QVERIFY(m.append_slots(2, 16).ok());  // 4 blocks: exactly what is free
        QCOMPARE(m.stats().blocks_free, 0);
    }

    void misuse_is_an_error() {
        KvCacheManager m(config());
        QVERIFY(!m.allocate(1, {}).ok());
        prefill(m, 1, run(1, 5));
        QVERIFY(!m.allocate(1, run(1, 5)).ok());
        QVERIFY(!m.mark_computed(1, 1).ok());  // nothing left to compute
        QVERIFY(m.commit(1, run(9, 1)).ok());
        QVERIFY(!m.mark_computed(1, 1).ok());  // known, but no slot yet
        QVERIFY(m.append_slots(1, 1).ok());
        QVERIFY(m.mark_computed(1, 1).ok());
        QCOMPARE(m.n_computed(1), 6);
        QVERIFY(!m.append_slots(7, 1).ok());
        QVERIFY(!m.commit(7, run(1, 1)).ok());
        QVERIFY(!m.unpin(42).ok());
        QVERIFY(!m.park(7).ok());
    }

    void decode_hashes_blocks_as_they_fill() {
        KvCacheManager m(config(10, 3));
        prefill(m, 1, run(10, 5));  // one full block of 3
        QCOMPARE(m.stats().blocks_cached, 1);
        for (TokenId t : {15, 16, 17, 18}) {
            QVERIFY(m.append_slots(1, 1).ok());
            QVERIFY(m.commit(1, std::vector<TokenId>{t}).ok());
            QVERIFY(m.mark_computed(1, 1).ok());
        }
        QCOMPARE(m.n_computed(1), 9);
        QCOMPARE(m.stats().blocks_cached, 3);
        QCOMPARE(m.longest_cached_prefix(run(10, 10)).n_tokens, 9);  // generated tokens too
    }

    void pinned_blocks_survive_a_flood() {
        KvCacheManager m(config(12, 4));  // cap: 25 % of 12 = 3 blocks
        QCOMPARE(m.max_pinned_blocks(), 3);
        const auto persona = run(100, 8);
        QVERIFY(!m.pin(persona).ok());  // nothing cached yet
        prefill(m, 1, cat(persona, run(7, 2)));
        m.free(1);
        auto pin = m.pin(persona);
        QVERIFY(pin.ok());
        QCOMPARE(pin->n_blocks, 2);
        QCOMPARE(vec(m.pinned_blocks(pin->id)), ids({0, 1}));
        QCOMPARE(m.stats().blocks_pinned, 2);
        for (SeqId s = 10; s < 40; ++s) {  // floods of unrelated prompts, 10 blocks each
            const Allocation a = prefill(m, s, run(1000 * static_cast<TokenId>(s), 40));
            for (BlockId id : a.block_table) QVERIFY(id != 0 && id != 1);
            m.free(s);
        }
        QCOMPARE(m.longest_cached_prefix(cat(persona, run(1, 1))).blocks, ids({0, 1}));
        QVERIFY(m.pool().block(0).hash);
        QVERIFY(!m.allocate(50, run(5000, 41)).ok());  // 11 blocks: the pins hold 2 of 12

        // Over the cap: a second persona of two more blocks would make 4 > 3.
        const auto other = run(200, 8);
        prefill(m, 2, cat(other, run(3, 1)));
        auto over = m.pin(other);
        QVERIFY(!over.ok());
        QVERIFY(over.message().find("exceed the cap of 3") != std::string::npos);
        QCOMPARE(m.stats().blocks_pinned, 2);
        auto again = m.pin(persona);  // the same blocks again add nothing to the count
        QVERIFY(again.ok());
        QCOMPARE(m.stats().blocks_pinned, 2);
        QVERIFY(m.unpin(pin->id).ok());
        QVERIFY(m.unpin(again->id).ok());
        QCOMPARE(m.stats().blocks_pinned, 0);
        m.free(2);
        prefill(m, 3, run(9000, 48));  // all 12 blocks: the persona is evicted now
        QCOMPARE(m.longest_cached_prefix(cat(persona, run(1, 1))).n_tokens, 0);
    }

    void parked_tail_resumes_without_recompute() {
        KvCacheManager m(config());
        const auto turn1 = run(100, 6);
        prefill(m, 1, turn1);
        QVERIFY(m.append_slots(1, 1).ok());
        QVERIFY(m.commit(1, std::vector<TokenId>{106}).ok());
        QVERIFY(m.mark_computed(1, 1).ok());  // 7 computed: block 0 full, block 1 holds 3
        QVERIFY(m.park(1).ok());
        QVERIFY(m.is_parked(1) && !m.has_sequence(1));
        QCOMPARE(m.parked_tail(1), 1);
        QCOMPARE(m.pool().block(1).ref_count, 1);
        QCOMPARE(m.pool().block(0).ref_count, 0);   // freed but cached
        QVERIFY(!m.allocate(1, run(100, 9)).ok());  // parked: resume it

        const auto turn2 = cat(run(100, 7), run(300, 5));
        auto r = m.resume(1, turn2);
        QVERIFY(r.ok());
        QCOMPARE(r->block_table, ids({0, 1, 2}));
        QCOMPARE(r->n_computed_tokens, 7);  // everything computed before is kept
        QVERIFY(!m.is_parked(1));
        QCOMPARE(m.stats().prompt_tokens_cached, int64_t{7});
        QVERIFY(m.mark_computed(1, 5).ok());
        QCOMPARE(m.stats().blocks_cached, 3);  // the tail filled up and is cached now
    }

    void resume_falls_back_when_tokens_diverge() {
        KvCacheManager m(config());
        prefill(m, 1, run(100, 7));
        QVERIFY(m.park(1).ok());
        QCOMPARE(m.parked_tail(1), 1);
        auto r = m.resume(1, cat(run(100, 5), run(50, 4)));  // an edited last message
        QVERIFY(r.ok());
        QCOMPARE(r->n_computed_tokens, 4);  // only the cached full block
        QCOMPARE(m.pool().block(1).ref_count, r->block_table[1] == 1 ? 1 : 0);
        QVERIFY(!m.is_parked(1));
        QVERIFY(m.pool().check_consistency().ok());
        QVERIFY(m.resume(1, run(1, 3)).error().message.find("active") != std::string::npos);
    }

    void parked_tails_are_reclaimed_oldest_first() {
        KvCacheManager m(config());
        prefill(m, 1, run(100, 6));  // blocks 0, 1
        prefill(m, 2, run(200, 6));  // blocks 2, 3
        QVERIFY(m.park(1).ok());
        QVERIFY(m.park(2).ok());
        QCOMPARE(m.parked_tail(1), 1);
        QCOMPARE(m.parked_tail(2), 3);
        QCOMPARE(m.stats().blocks_free, 8);
        // 9 blocks, the first a hit on seq 2's full block 2: 8 new, one parked tail must go.
        auto big = m.allocate(3, cat(run(200, 4), run(900, 29)));
        QVERIFY(big.ok());
        QCOMPARE(big->n_computed_tokens, 4);
        QCOMPARE(big->block_table, ids({2, 1, 4, 5, 6, 7, 8, 9, 0}));  // reclaimed 1 first
        QCOMPARE(m.stats().parked_reclaims, int64_t{1});
        QCOMPARE(m.parked_tail(1), kNoBlock);
        QCOMPARE(m.parked_tail(2), 3);
        QVERIFY(!m.allocate(4, run(5, 5)).ok());  // 2 blocks: only one (a tail) left
        QCOMPARE(m.parked_tail(2), 3);
        QCOMPARE(m.stats().parked_reclaims, int64_t{1});
        m.free(3);
        // Seq 1's tail is gone and block 0 was evicted by the big prompt: recompute all.
        // Seq 2's full block survived in seq 3's hands, and its tail is still parked.
        auto r1 = m.resume(1, run(100, 8));
        QVERIFY(r1.ok());
        QCOMPARE(r1->n_computed_tokens, 0);
        auto r2 = m.resume(2, run(200, 8));
        QVERIFY(r2.ok());
        QCOMPARE(r2->n_computed_tokens, 6);
        QCOMPARE(r2->block_table, ids({2, 3}));
        m.drop_parked(2);  // not parked any more: no-op
        QVERIFY(m.pool().check_consistency().ok());
    }
};

QTEST_APPLESS_MAIN(TstKvCacheManager)
#include "tst_kv_cache_manager.moc"
