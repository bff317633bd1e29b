// Randomised property test of KvCacheManager: thousands of scheduler-like operations
// (allocate prompts that share "persona" prefixes, prefill in chunks, decode, free, park,
// resume, pin, unpin) over pools small enough to force eviction and parked-tail reclaim.
// The test keeps its own model: the token each block should hold (written when the test
// "computes" a position), who holds which block. After every operation it checks:
//   - each block is in the free queue exactly once or held (ref_count > 0), never both;
//   - ref_count == holders (sequences' tables + pins + parked tails);
//   - cached hashes are unique and name a block carrying that hash;
//   - pinned blocks are never evicted or handed out again;
//   - every token a sequence is told is computed is held by its block (cache hits serve
//     the prompt's own tokens).
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "kv/kv_cache_manager.h"

using namespace hearth::kv;

namespace {

constexpr uint32_t kSeed = 7340021;
constexpr int kOps = 2500;

class Harness {
  public:
    Harness(uint32_t seed, int32_t block_size) : rng_(seed), bs_(block_size) {
        // Personas of 1..4 blocks and a little; prompts are a persona plus a suffix over a
        // tiny alphabet, so suffixes also collide sometimes (duplicate blocks).
        for (int p = 0; p < 4; ++p) {
            std::vector<TokenId> t;
            const int n = bs_ * (1 + pick(4)) + pick(bs_);
            for (int i = 0; i < n; ++i) t.push_back(1000 * (p + 1) + pick(3));
            personas_.push_back(t);
        }
        KvCacheConfig c;
        c.block_size = bs_;
        c.n_blocks = 12 + pick(12);
        c.hash_keys.model_fingerprint = "property-model";
        m_ = std::make_unique<KvCacheManager>(c);
        content_.assign(static_cast<std::size_t>(c.n_blocks), {});
    }

    void run(int n_ops) {
        for (int op = 0; op < n_ops && !QTest::currentTestFailed(); ++op) {
            const int kind = pick(100);
            if (kind < 18)
                do_allocate();
            else if (kind < 55)
                do_step();
            else if (kind < 62)
                do_free();
            else if (kind < 70)
                do_park();
            else if (kind < 80)
                do_resume();
            else if (kind < 83)
                do_drop();
            else if (kind < 88)
                do_pin();
            else if (kind < 92)
                do_unpin();
            else
                do_lookup();
            check();
        }
        const KvCacheStats st = m_->stats();
        qInfo(
            "  %d blocks; allocations %d ok, %d failed; prompt tokens %lld, %lld from cache;"
            " evictions %lld; parked reclaims %lld; tail resumes %d; pins %d ok, %d refused",
            st.blocks_total, allocs_ok_, allocs_failed_,
            static_cast<long long>(st.prompt_tokens_queried),
            static_cast<long long>(st.prompt_tokens_cached), static_cast<long long>(st.evictions),
            static_cast<long long>(st.parked_reclaims), tail_resumes_, pins_ok_, pins_refused_);
        // The run must have exercised the interesting paths, or it proves little.
        QVERIFY(st.evictions > 0);
        QVERIFY(st.prompt_tokens_cached > 0);
        QVERIFY(allocs_failed_ > 0);
        QVERIFY(pins_ok_ > 0);
    }

  private:
    struct Seq {
        std::vector<BlockId> table;
        std::vector<TokenId> tokens;
        int32_t computed = 0;
    };

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    std::size_t index(BlockId id) const { return static_cast<std::size_t>(id); }

    std::vector<TokenId> random_prompt() {
        std::vector<TokenId> t = personas_[static_cast<std::size_t>(pick(4))];
        if (pick(4) == 0) t.resize(static_cast<std::size_t>(1 + pick(static_cast<int>(t.size()))));
        const int extra = 1 + pick(3 * bs_);
        for (int i = 0; i < extra; ++i) t.push_back(pick(4));
        return t;
    }

    template <typename Map>
    typename Map::iterator random_entry(Map& map) {
        auto it = map.begin();
        std::advance(it, pick(static_cast<int>(map.size())));
        return it;
    }

    // What the engine would see: the positions below `computed` must hold the tokens.
    void verify_computed(const Seq& s) {
        for (int32_t p = 0; p < s.computed; ++p) {
            const auto& c = content_[index(s.table[static_cast<std::size_t>(p / bs_)])];
            const auto off = static_cast<std::size_t>(p % bs_);
            QVERIFY2(off < c.size() && c[off] == s.tokens[static_cast<std::size_t>(p)],
                     "a computed position does not hold the sequence's token");
        }
    }

    // A new block table from allocate / resume: blocks past the computed ones are fresh.
    void adopt(SeqId id, const Allocation& a, const std::vector<TokenId>& tokens) {
        Seq s{a.block_table, tokens, a.n_computed_tokens};
        QCOMPARE(a.n_prompt_tokens, static_cast<int32_t>(tokens.size()));
        QVERIFY(a.n_computed_tokens < a.n_prompt_tokens);
        QCOMPARE(s.table.size(), (tokens.size() + static_cast<std::size_t>(bs_) - 1) /
                                     static_cast<std::size_t>(bs_));
        const std::size_t reused = static_cast<std::size_t>((s.computed + bs_ - 1) / bs_);
        for (std::size_t i = reused; i < s.table.size(); ++i) fresh(s.table[i]);
        verify_computed(s);
        seqs_[id] = std::move(s);
    }

    void fresh(BlockId id) {
        QVERIFY2(!pinned_.count(id), "a pinned block was handed out again");
        QCOMPARE(m_->pool().block(id).ref_count, 1);
        content_[index(id)].clear();
    }

    // Snapshot of everything a failed call must leave alone.
    std::vector<int64_t> snapshot() const {
        const KvCacheStats s = m_->stats();
        std::vector<int64_t> v{s.blocks_used,           s.blocks_cached, s.blocks_pinned,
                               s.prompt_tokens_queried, s.evictions,     s.parked_reclaims};
        for (BlockId id : m_->pool().free_queue().to_vector()) v.push_back(id);
        return v;
    }

    void do_allocate() {
        const SeqId id = next_seq_++;
        const auto prompt = random_prompt();
        const auto before = snapshot();
        auto a = m_->allocate(id, prompt);
        if (!a.ok()) {
            QCOMPARE(snapshot(), before);
            QVERIFY(!m_->has_sequence(id));
            ++allocs_failed_;
            return;
        }
        ++allocs_ok_;
        adopt(id, *a, prompt);
    }

    void do_step() {
        if (seqs_.empty()) return;
        auto it = random_entry(seqs_);
        Seq& s = it->second;
        const SeqId id = it->first;
        if (s.computed < static_cast<int32_t>(s.tokens.size())) {  // a prefill chunk
            const int32_t n = 1 + pick(static_cast<int>(s.tokens.size()) - s.computed);
            for (int32_t p = s.computed; p < s.computed + n; ++p) {
                auto& c = content_[index(s.table[static_cast<std::size_t>(p / bs_)])];
                const auto off = static_cast<std::size_t>(p % bs_);
                if (c.size() <= off) c.resize(off + 1, -1);
                c[off] = s.tokens[static_cast<std::size_t>(p)];
            }
            QVERIFY(m_->mark_computed(id, n).ok());
            s.computed += n;
            return;
        }
        auto grown = m_->append_slots(id, 1);  // decode one token
        if (!grown.ok()) {                     // out of blocks: the scheduler preempts
            m_->free(id);
            seqs_.erase(it);
            return;
        }
        for (BlockId b : *grown) fresh(b);
        s.table.insert(s.table.end(), grown->begin(), grown->end());
        const std::vector<TokenId> t{pick(4)};
        QVERIFY(m_->commit(id, t).ok());
        s.tokens.push_back(t[0]);
    }

    void do_free() {
        if (seqs_.empty()) return;
        auto it = random_entry(seqs_);
        m_->free(it->first);
        seqs_.erase(it);
    }

    void do_park() {
        if (seqs_.empty()) return;
        auto it = random_entry(seqs_);
        QVERIFY(m_->park(it->first).ok());
        const Seq& s = it->second;
        parked_[it->first] = std::vector<TokenId>(s.tokens.begin(), s.tokens.begin() + s.computed);
        seqs_.erase(it);
    }

    void do_resume() {
        if (parked_.empty()) return;
        auto it = random_entry(parked_);
        std::vector<TokenId> tokens = it->second;
        if (pick(4) == 0 && !tokens.empty())
            tokens.resize(static_cast<std::size_t>(pick(static_cast<int>(tokens.size()))));
        const int extra = (tokens.empty() || pick(3) != 0) ? 1 + pick(2 * bs_) : 0;
        for (int i = 0; i < extra; ++i) tokens.push_back(pick(4));
        const BlockId tail = m_->parked_tail(it->first);
        const auto before = snapshot();
        auto r = m_->resume(it->first, tokens);
        if (!r.ok()) {
            QCOMPARE(snapshot(), before);
            QCOMPARE(m_->parked_tail(it->first), tail);
            return;
        }
        QVERIFY(!m_->is_parked(it->first));
        const SeqId id = it->first;
        if (tail != kNoBlock && r->n_computed_tokens > 0 && r->n_computed_tokens % bs_ != 0)
            ++tail_resumes_;
        parked_.erase(it);
        adopt(id, *r, tokens);
    }

    void do_drop() {
        if (parked_.empty()) return;
        auto it = random_entry(parked_);
        m_->drop_parked(it->first);
        QVERIFY(!m_->is_parked(it->first));
        parked_.erase(it);
    }

    void do_pin() {
        const auto& persona = personas_[static_cast<std::size_t>(pick(4))];
        auto r = m_->pin(persona);
        if (!r.ok()) {
            QVERIFY(!r.message().empty());
            ++pins_refused_;
            return;
        }
        ++pins_ok_;
        QVERIFY(m_->stats().blocks_pinned <= m_->max_pinned_blocks());
        std::vector<BlockId> blocks(m_->pinned_blocks(r->id).begin(),
                                    m_->pinned_blocks(r->id).end());
        QCOMPARE(static_cast<int32_t>(blocks.size()), r->n_blocks);
        for (BlockId b : blocks) pinned_[b] = *m_->pool().block(b).hash;
        pins_[r->id] = blocks;
    }

    void do_unpin() {
        if (pins_.empty()) return;
        auto it = random_entry(pins_);
        QVERIFY(m_->unpin(it->first).ok());
        pins_.erase(it);
        pinned_.clear();
        for (const auto& [pid, blocks] : pins_)
            for (BlockId b : blocks) pinned_[b] = *m_->pool().block(b).hash;
    }

    void do_lookup() {
        const auto prompt = random_prompt();
        const CachedPrefix hit = m_->longest_cached_prefix(prompt);
        QVERIFY(hit.n_tokens < static_cast<int32_t>(prompt.size()));
        Seq probe{hit.blocks, prompt, hit.n_tokens};
        verify_computed(probe);
    }

    void check() {
        if (QTest::currentTestFailed()) return;
        const BlockPool& pool = m_->pool();
        const int32_t n = pool.n_blocks();
        std::vector<int> refs(static_cast<std::size_t>(n), 0);
        for (const auto& [id, s] : seqs_) {
            const auto table = m_->block_table(id);
            QVERIFY(std::equal(s.table.begin(), s.table.end(), table.begin(), table.end()));
            QCOMPARE(m_->n_computed(id), s.computed);
            for (BlockId b : s.table) ++refs[index(b)];
        }
        for (const auto& [id, blocks] : pins_)
            for (BlockId b : blocks) ++refs[index(b)];
        for (const auto& [id, tokens] : parked_) {
            QVERIFY(m_->is_parked(id));
            const BlockId tail = m_->parked_tail(id);
            if (tail != kNoBlock) ++refs[index(tail)];
        }
        const auto queue = pool.free_queue().to_vector();
        const std::set<BlockId> queued(queue.begin(), queue.end());
        QCOMPARE(queued.size(), queue.size());
        for (BlockId b = 0; b < n; ++b) {
            const KvBlock& blk = pool.block(b);
            QCOMPARE(blk.ref_count, refs[index(b)]);
            QCOMPARE(queued.count(b) == 1, blk.ref_count == 0);
        }
        for (const auto& [hash, b] : pool.cached_blocks()) {
            QVERIFY(pool.block(b).hash && *pool.block(b).hash == hash);
            QCOMPARE(content_[index(b)].size(), static_cast<std::size_t>(bs_));
        }
        for (const auto& [b, hash] : pinned_) {
            QVERIFY2(pool.block(b).hash && *pool.block(b).hash == hash, "pinned block evicted");
            QCOMPARE(pool.get_cached(hash), b);
        }
        const KvCacheStats st = m_->stats();
        QCOMPARE(st.blocks_used + st.blocks_free, st.blocks_total);
        QCOMPARE(st.blocks_pinned, static_cast<int32_t>(pinned_.size()));
        QVERIFY(st.blocks_pinned <= m_->max_pinned_blocks());
        QVERIFY(st.prompt_tokens_cached <= st.prompt_tokens_queried);
        const auto consistent = pool.check_consistency();
        QVERIFY2(consistent.ok(), consistent.ok() ? "" : consistent.message().c_str());
        // The manager's own audit (the soak's check) agrees with this model of the holders.
        const auto audited = m_->audit();
        QVERIFY2(audited.ok(), audited.ok() ? "" : audited.message().c_str());
    }

    std::mt19937 rng_;
    int32_t bs_;
    std::vector<std::vector<TokenId>> personas_;
    std::unique_ptr<KvCacheManager> m_;
    std::vector<std::vector<TokenId>> content_;  // block -> token per offset (-1: none)
    std::map<SeqId, Seq> seqs_;
    std::map<SeqId, std::vector<TokenId>> parked_;
    std::map<PinId, std::vector<BlockId>> pins_;
    std::map<BlockId, BlockHash> pinned_;
    SeqId next_seq_ = 1;
    int allocs_ok_ = 0, allocs_failed_ = 0, tail_resumes_ = 0, pins_ok_ = 0, pins_refused_ = 0;
};

}  // namespace

class TstKvCacheProperties : public QObject {
    Q_OBJECT

  private slots:
    void random_operations_keep_invariants_data() {
        QTest::addColumn<int>("block_size");
        QTest::addColumn<uint>("seed");
        for (int bs : {1, 3, 7, 16, 32})
            for (uint k = 0; k < 2; ++k)
                QTest::addRow("bs%d-seed%u", bs, kSeed + k) << bs << kSeed + k;
    }

    void random_operations_keep_invariants() {
        QFETCH(int, block_size);
        QFETCH(uint, seed);
        qInfo("block size %d, seed %u", block_size, seed);
        Harness h(seed, block_size);
        h.run(kOps);
    }
};

QTEST_APPLESS_MAIN(TstKvCacheProperties)
#include "tst_kv_cache_properties.moc"
