// Speculative decoding in the scheduler (SpeculationConfig, sched/scheduler.h): drafts for
// a step's decoding sequences, and their verification once the step has run.
#include <algorithm>

#include "common/log.h"
#include "sched/scheduler.h"
#include "sched/scheduler_seq.h"
#include "spec/ngram_drafter.h"

namespace hearth::sched {

namespace {

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

constexpr int32_t kMaxPause = 32;  // steps without drafts after a long run of misses

}  // namespace

bool Scheduler::may_draft(const Seq& s) const {
    if (!s.req.speculate || s.done || s.load_job != 0 || s.take != 1 || s.generated.empty())
        return false;
    const kv::SeqId conv = s.req.conversation;
    // Decoding: the one token to compute is the last one sampled (not a prompt's chunk, not
    // a shift's gap).
    return s.island_end <= s.island_begin &&
           cache_.n_computed(conv) + 1 == to_i32(cache_.tokens(conv).size());
}

void Scheduler::add_drafts(std::span<Seq* const> batch, int32_t budget) {
    const SpeculationConfig& sp = config_.speculation;
    for (Seq* s : batch) s->draft.clear();
    // Verification reproduces plain decoding only where a token's numbers do not depend on
    // the step that computes it.
    if (sp.mode == SpeculationConfig::Mode::Off || sp.max_draft <= 0 || !model_.batch_invariant())
        return;
    int32_t total = 0;
    for (const Seq* s : batch) total += s->take;
    const int32_t cap = std::min(sp.max_step_tokens, total + budget);
    const int32_t bs = cache_.block_size();
    int32_t free_slots = cache_.pool().n_free() * bs;  // blocks nobody holds, as slots
    for (Seq* s : batch) {
        if (total >= cap) break;
        if (!may_draft(*s)) continue;
        if (s->draft_pause > 0) {
            --s->draft_pause;
            continue;
        }
        const kv::SeqId conv = s->req.conversation;
        const auto known = cache_.tokens(conv);
        // Slots for the draft: what the table already covers past the next token, then
        // blocks of the free queue (the blocks the sequence's next tokens would take; never a
        // parked tail, and never a preemption).
        const int32_t covered = to_i32(cache_.block_table(conv).size()) * bs - to_i32(known.size());
        const int32_t room = std::max(0, covered) + free_slots;
        if (s->draft_len <= 0) s->draft_len = sp.max_draft;
        const int32_t k = std::min(
            {s->draft_len, cap - total, room, s->req.max_tokens - to_i32(s->generated.size()) - 1});
        if (k <= 0) continue;
        if (!s->drafter) {
            s->drafter =
                sp.make_drafter ? sp.make_drafter() : std::make_unique<spec::NgramDrafter>();
        }
        s->drafter->propose(known, k, s->draft);
        if (to_i32(s->draft.size()) > k) s->draft.resize(static_cast<std::size_t>(k));
        if (s->draft.empty()) continue;
        const int32_t vocab = static_cast<int32_t>(model_.config().n_vocab);
        if (std::any_of(s->draft.begin(), s->draft.end(),
                        [vocab](int32_t t) { return t < 0 || t >= vocab; })) {
            s->draft.clear();  // a drafter's bug must not fail the request
            continue;
        }
        const int32_t want = to_i32(known.size()) + to_i32(s->draft.size());
        if (want > s->reserved) {
            const int32_t before = to_i32(cache_.block_table(conv).size());
            if (!cache_.append_slots(conv, want - s->reserved)) {
                s->draft.clear();
                continue;
            }
            s->reserved = want;
            free_slots -= (to_i32(cache_.block_table(conv).size()) - before) * bs;
        }
        s->take += to_i32(s->draft.size());
        total += to_i32(s->draft.size());
    }
}

void Scheduler::verify(Seq& s, std::size_t row, std::size_t pick, std::vector<Event>& events) {
    const kv::SeqId conv = s.req.conversation;
    const auto k = to_i32(s.draft.size());
    int32_t accepted = 0;
    // Counted before the tokens are accepted: the one that ends the request carries them.
    s.stats.draft_tokens += k;
    tokens_drafted_ += k;
    for (int32_t i = 0; i <= k; ++i) {
        // Row i samples the token after the next token and the draft's first i: what plain
        // decoding samples there, its history being exactly those tokens.
        std::span<const float> logits;
        const auto token = draw(s, row + static_cast<std::size_t>(i),
                                pick + s.pick.size() * static_cast<std::size_t>(i), logits, events);
        if (!token) break;
        const bool hit = i < k && *token == s.draft[static_cast<std::size_t>(i)];
        if (hit) {
            ++accepted;
            ++s.stats.draft_accepted;
            ++tokens_accepted_;
        }
        accept(s, *token, logits, events);
        if (s.done || !hit) break;
        // The draft had it: its KV, computed by this step at this position after the same
        // tokens, is this token's.
        if (auto r = cache_.mark_computed(conv, 1); !r) {
            fail(s, r.message(), events);
            break;
        }
    }
    if (s.drafter) s.drafter->feedback(k, accepted);
    // The next draft's length: longer after a full hit, back to what was kept plus one after
    // a partial one; a run of total misses pauses drafting for 1, 2, 4, .. steps.
    const int32_t max_draft = config_.speculation.max_draft;
    if (accepted == k) {
        s.draft_len = std::min(max_draft, s.draft_len + 2);
    } else {
        s.draft_len = std::clamp(accepted + 1, 1, max_draft);
    }
    if (accepted > 0) {
        s.draft_misses = 0;
    } else if (++s.draft_misses >= 2) {
        s.draft_pause = std::min(kMaxPause, 1 << std::min(s.draft_misses - 2, 5));
    }
    s.draft.clear();
}

}  // namespace hearth::sched
