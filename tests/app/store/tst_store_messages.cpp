// Messages as a tree of variants, the active thread, and streaming replies (coalesced
// writes on a fake clock, recovery after a stop mid-reply, their seed and finish reason,
// and Continue: a finished reply reopened and extended).
#include <QTest>

#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;
using std::chrono::milliseconds;

namespace {

std::vector<Id> ids_of(const std::vector<ThreadEntry>& thread) {
    std::vector<Id> out;
    for (const ThreadEntry& e : thread) out.push_back(e.message.id);
    return out;
}

}  // namespace

class TestStoreMessages : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::optional<Store> store_;
    QString path_;
    int n_ = 0;
    std::chrono::steady_clock::time_point fake_now_{};
    Id conv_ = 0;

    void open_store(bool fake_clock) {
        path_ = dir_.filePath(QStringLiteral("messages-%1.sqlite3").arg(++n_));
        OpenOptions options;
        if (fake_clock) options.clock = [this] { return fake_now_; };
        auto store = Store::open(path_, options);
        HEARTH_CHECK(store);
        store_.emplace(std::move(*store));
        auto c = store_->create_conversation(titled(QStringLiteral("thread")));
        HEARTH_CHECK(c);
        conv_ = c->id;
    }

  private slots:
    void init() { open_store(true); }
    void cleanup() { store_.reset(); }

    void a_simple_thread() {
        const std::vector<std::int32_t> prompt_ids{15496, 11, -7, 2147483647};
        auto u = store_->append_message(conv_, draft(Role::User, QStringLiteral("Hello?"),
                                                     prompt_ids, QStringLiteral("ABC123")));
        HEARTH_CHECK(u);
        QCOMPARE(u->token_ids, prompt_ids);
        QCOMPARE(u->token_fingerprint, QStringLiteral("abc123"));
        auto a = store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("Hi.")));
        HEARTH_CHECK(a);
        QCOMPARE(a->parent_id, std::optional<Id>(u->id));
        auto thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u->id, a->id}));
        QCOMPARE(thread->at(0).message.token_ids, prompt_ids);
        QCOMPARE(thread->at(1).variant_count, 1);
        auto c = store_->conversation(conv_);
        HEARTH_CHECK(c);
        QCOMPARE(c->active_leaf_id, std::optional<Id>(a->id));
    }

    void regenerate_and_edit_make_variants() {
        auto u1 = store_->append_message(conv_, draft(Role::User, QStringLiteral("question")));
        HEARTH_CHECK(u1);
        auto a1 =
            store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("answer one")));
        HEARTH_CHECK(a1);
        // Regenerate: a new reply with the same parent.
        auto a2 = store_->begin_reply(conv_, u1->id, {});
        HEARTH_CHECK(a2);
        HEARTH_CHECK(store_->update_reply(*a2, QStringLiteral("answer two"), {}));
        HEARTH_CHECK(store_->finish_reply(*a2, {}));
        auto thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u1->id, *a2}));
        QCOMPARE(thread->at(1).variant_index, 1);
        QCOMPARE(thread->at(1).variant_count, 2);
        auto variants = store_->variants(*a2);
        HEARTH_CHECK(variants);
        QCOMPARE(*variants, (std::vector<Id>{a1->id, *a2}));

        // Edit the question: a sibling user message, shown at once with nothing after it.
        auto u2 =
            store_->edit_message(u1->id, draft(Role::Assistant, QStringLiteral("better question")));
        HEARTH_CHECK(u2);
        QCOMPARE(u2->role, Role::User);  // an edit keeps the speaker
        QVERIFY(!u2->parent_id);
        auto b1 =
            store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("better answer")));
        HEARTH_CHECK(b1);
        thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u2->id, b1->id}));
        QCOMPARE(thread->at(0).variant_index, 1);

        // Page back to the first question: its branch comes back as last shown (a2).
        auto shown = store_->page_variant(u2->id, -1);
        HEARTH_CHECK(shown);
        QCOMPARE(*shown, u1->id);
        thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u1->id, *a2}));
        // Choose the first answer there, then page forward and back again.
        HEARTH_CHECK(store_->page_variant(*a2, -1));
        HEARTH_CHECK(store_->page_variant(u1->id, +1));
        thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u2->id, b1->id}));
        HEARTH_CHECK(store_->page_variant(u2->id, -1));
        thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u1->id, a1->id}));

        HEARTH_CHECK_ERROR(store_->page_variant(u1->id, -1), "no variant 0 of 2");
        HEARTH_CHECK_ERROR(store_->page_variant(u1->id, +2), "no variant 3 of 2");
    }

    void parents_must_be_in_the_same_conversation() {
        auto other = store_->create_conversation(titled(QStringLiteral("other")));
        HEARTH_CHECK(other);
        auto m = store_->append_message(other->id, draft(Role::User, QStringLiteral("elsewhere")));
        HEARTH_CHECK(m);
        HEARTH_CHECK_ERROR(
            store_->add_message(conv_, m->id, draft(Role::User, QStringLiteral("x"))),
            "another conversation");
        HEARTH_CHECK_ERROR(
            store_->add_message(conv_, 424242, draft(Role::User, QStringLiteral("x"))),
            "no message 424242");
        HEARTH_CHECK_ERROR(store_->append_message(999, draft(Role::User, QStringLiteral("x"))),
                           "no conversation");
    }

    void deleting_the_shown_branch_falls_back() {
        auto u = store_->append_message(conv_, draft(Role::User, QStringLiteral("q")));
        HEARTH_CHECK(u);
        auto a1 = store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("a1")));
        HEARTH_CHECK(a1);
        auto a2 = store_->add_message(conv_, u->id, draft(Role::Assistant, QStringLiteral("a2")));
        HEARTH_CHECK(a2);
        auto follow = store_->append_message(conv_, draft(Role::User, QStringLiteral("more")));
        HEARTH_CHECK(follow);
        HEARTH_CHECK(store_->delete_message(a2->id));  // takes `follow` with it
        HEARTH_CHECK_ERROR(store_->message(follow->id), "no message");
        auto thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u->id, a1->id}));
        HEARTH_CHECK(store_->delete_message(u->id));
        thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QVERIFY(thread->empty());
    }

    // A fork copies the thread on screen up to the chosen message (not its other branches,
    // not what follows), token ids and statistics included, and remembers where it came from.
    void fork_copies_the_thread_up_to_a_message() {
        auto c = store_->conversation(conv_);
        HEARTH_CHECK(c);
        c->sampling.temperature = 0.3;
        c->sampling.stop = std::vector<QString>{QStringLiteral("###")};
        c->pinned = true;
        HEARTH_CHECK(store_->update_conversation(*c));
        auto u = store_->append_message(
            conv_, draft(Role::User, QStringLiteral("q"), {5, 6}, QStringLiteral("ab")));
        HEARTH_CHECK(u);
        auto other = store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("a0")));
        HEARTH_CHECK(other);
        auto r = store_->begin_reply(conv_, u->id, QStringLiteral("ab"));
        HEARTH_CHECK(r);
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("a1"), std::vector<int32_t>{7, 8}));
        HEARTH_CHECK_ERROR(store_->fork_conversation(*r), "still being written");
        GenerationStats stats;
        stats.prompt_tokens_cached = 30;
        stats.prompt_tokens_loaded = 20;
        stats.draft_tokens = 14;
        stats.draft_accepted = 9;
        stats.seed = 42;
        HEARTH_CHECK(store_->finish_reply(*r, stats));
        auto after = store_->append_message(conv_, draft(Role::User, QStringLiteral("later")));
        HEARTH_CHECK(after);

        auto fork = store_->fork_conversation(*r);
        HEARTH_CHECK(fork);
        QVERIFY(fork->id != conv_);
        QCOMPARE(fork->title, QStringLiteral("thread"));
        QCOMPARE(fork->forked_from, std::optional<Id>(*r));
        QCOMPARE(fork->sampling, c->sampling);
        QVERIFY(!fork->pinned);
        auto thread = store_->active_thread(fork->id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->size(), std::size_t{2});
        const Message& q = thread->at(0).message;
        const Message& a = thread->at(1).message;
        QVERIFY(q.id != u->id && a.id != *r);
        QCOMPARE(q.text, QStringLiteral("q"));
        QCOMPARE(q.token_ids, (std::vector<int32_t>{5, 6}));
        QCOMPARE(q.token_fingerprint, QStringLiteral("ab"));
        QCOMPARE(a.parent_id, std::optional<Id>(q.id));
        QCOMPARE(a.text, QStringLiteral("a1"));
        QCOMPARE(a.token_ids, (std::vector<int32_t>{7, 8}));
        QCOMPARE(a.stats, stats);
        QCOMPARE(thread->at(1).variant_count, 1);  // a0 stayed behind
        auto count = store_->message_count(fork->id);
        HEARTH_CHECK(count);
        QCOMPARE(*count, 2);
        // The original is as it was.
        auto original = store_->active_thread(conv_);
        HEARTH_CHECK(original);
        QCOMPARE(ids_of(*original), (std::vector<Id>{u->id, *r, after->id}));

        // A titled fork; deleting the message it came from leaves it standing, unmarked.
        auto titled_fork = store_->fork_conversation(u->id, QStringLiteral("  Other way  "));
        HEARTH_CHECK(titled_fork);
        QCOMPARE(titled_fork->title, QStringLiteral("Other way"));
        HEARTH_CHECK(store_->delete_conversation(conv_));
        auto kept = store_->conversation(fork->id);
        HEARTH_CHECK(kept);
        QVERIFY(!kept->forked_from);
        thread = store_->active_thread(fork->id);
        HEARTH_CHECK(thread);
        QCOMPARE(thread->size(), std::size_t{2});
        HEARTH_CHECK_ERROR(store_->fork_conversation(424242), "no message");
    }

    void reply_updates_are_coalesced() {
        auto u = store_->append_message(conv_, draft(Role::User, QStringLiteral("tell me")));
        HEARTH_CHECK(u);
        auto r = store_->begin_reply(conv_, u->id, QStringLiteral("fe"));
        HEARTH_CHECK(r);
        auto begun = store_->message(*r);
        HEARTH_CHECK(begun);
        QCOMPARE(begun->state, MessageState::Streaming);
        QCOMPARE(begun->role, Role::Assistant);

        std::vector<std::int32_t> ids;
        QString text;
        const auto step = [&](int advance_ms, const QString& piece) {
            fake_now_ += milliseconds(advance_ms);
            text += piece;
            ids.push_back(static_cast<std::int32_t>(ids.size()) * 7 - 3);
            return store_->update_reply(*r, text, ids);
        };
        // Within a second of the first update nothing is written...
        for (int i = 0; i < 10; ++i) {
            auto wrote = step(100, QStringLiteral("w%1 ").arg(i));
            HEARTH_CHECK(wrote);
            QVERIFY(!*wrote);
        }
        QCOMPARE(committed_text(path_, *r), QString());
        // ...and a second after the first unwritten update, the latest state is.
        auto wrote = step(100, QStringLiteral("w10 "));
        HEARTH_CHECK(wrote);
        QVERIFY(*wrote);
        QCOMPARE(committed_text(path_, *r), text);
        const QString written = text;

        // A stalled stream: the flush pass writes it once it is due.
        wrote = step(50, QStringLiteral("late"));
        HEARTH_CHECK(wrote);
        QVERIFY(!*wrote);
        QVERIFY(store_->has_pending_replies());
        fake_now_ += milliseconds(900);
        auto flushed = store_->flush_replies();
        HEARTH_CHECK(flushed);
        QCOMPARE(*flushed, 0);
        QCOMPARE(committed_text(path_, *r), written);
        fake_now_ += milliseconds(100);
        flushed = store_->flush_replies();
        HEARTH_CHECK(flushed);
        QCOMPARE(*flushed, 1);
        QCOMPARE(committed_text(path_, *r), text);
        QVERIFY(!store_->has_pending_replies());

        // The end: the last update (not yet written) and the statistics.
        wrote = step(10, QStringLiteral(" end."));
        HEARTH_CHECK(wrote);
        QVERIFY(!*wrote);
        GenerationStats stats;
        stats.ttft_ms = 123.5;
        stats.tokens_per_second = 42.25;
        stats.prompt_tokens_cached = 100;
        stats.prompt_tokens_computed = 7;
        stats.generated_tokens = static_cast<std::int64_t>(ids.size());
        HEARTH_CHECK(store_->finish_reply(*r, stats));
        auto done = store_->message(*r);
        HEARTH_CHECK(done);
        QCOMPARE(done->text, text);
        QCOMPARE(done->token_ids, ids);
        QCOMPARE(done->token_fingerprint, QStringLiteral("fe"));
        QCOMPARE(done->state, MessageState::Complete);
        QCOMPARE(done->stats, stats);
        HEARTH_CHECK_ERROR(store_->update_reply(*r, text, ids), "not a reply being streamed");
        HEARTH_CHECK_ERROR(store_->finish_reply(*r, stats), "not a reply being streamed");
    }

    void a_stopped_reply_is_kept_as_interrupted() {
        auto r = store_->begin_reply(conv_, std::nullopt, {});
        HEARTH_CHECK(r);
        const std::vector<std::int32_t> ids{1, 2, 3};
        auto wrote = store_->update_reply(*r, QStringLiteral("partial"), ids);
        HEARTH_CHECK(wrote);
        QVERIFY(!*wrote);
        store_.reset();  // closing writes what is pending
        auto reopened = Store::open(path_);
        HEARTH_CHECK(reopened);
        QCOMPARE(reopened->report().interrupted_replies, 1);
        auto m = reopened->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Interrupted);
        QCOMPARE(m->text, QStringLiteral("partial"));
        QCOMPARE(m->token_ids, ids);
        // It can still be closed off (keeping its text), e.g. with statistics.
        GenerationStats stats;
        stats.generated_tokens = 3;
        HEARTH_CHECK(reopened->finish_reply(*r, stats, MessageState::Interrupted));
        m = reopened->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->text, QStringLiteral("partial"));
        QCOMPARE(m->stats.generated_tokens, std::optional<std::int64_t>(3));
    }

    void a_reply_deleted_while_streaming_stops_quietly() {
        auto r = store_->begin_reply(conv_, std::nullopt, {});
        HEARTH_CHECK(r);
        HEARTH_CHECK(store_->delete_message(*r));
        HEARTH_CHECK_ERROR(store_->update_reply(*r, QStringLiteral("x"), {}),
                           "not a reply being streamed");
    }

    // The sampling seed (all 64 bits) and why the reply ended are kept with its statistics.
    void reply_seed_and_finish_reason_data() {
        QTest::addColumn<bool>("hasSeed");
        QTest::addColumn<quint64>("seed");
        QTest::addColumn<int>("reason");  // a FinishReason, or -1 for none
        QTest::newRow("stop") << true << quint64{0} << int(FinishReason::Stop);
        QTest::newRow("length") << true << quint64{42} << int(FinishReason::Length);
        QTest::newRow("cancelled, top bit")
            << true << (quint64{1} << 63) << int(FinishReason::Cancelled);
        QTest::newRow("error, all bits") << true << ~quint64{0} << int(FinishReason::Error);
        QTest::newRow("unknown") << false << quint64{0} << -1;
    }
    void reply_seed_and_finish_reason() {
        QFETCH(bool, hasSeed);
        QFETCH(quint64, seed);
        QFETCH(int, reason);
        auto r = store_->begin_reply(conv_, std::nullopt, {});
        HEARTH_CHECK(r);
        GenerationStats stats;
        stats.generated_tokens = 7;
        if (hasSeed) stats.seed = seed;
        if (reason >= 0) stats.finish_reason = static_cast<FinishReason>(reason);
        HEARTH_CHECK(store_->finish_reply(*r, stats));
        auto m = store_->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->stats, stats);
        // Stored as the same 64 bits in a signed INTEGER, the reason by name.
        auto row =
            store_->database().prepare("SELECT seed, finish_reason FROM messages WHERE id = ?");
        HEARTH_CHECK(row);
        row->bind(1, *r);
        auto step = row->step();
        HEARTH_CHECK(step);
        QVERIFY(*step);
        QCOMPARE(row->is_null(0), !hasSeed);
        if (hasSeed) QCOMPARE(static_cast<quint64>(row->column_int64(0)), seed);
        QCOMPARE(row->column_text(1),
                 reason >= 0 ? finish_reason_name(static_cast<FinishReason>(reason)) : QString());
    }

    // Continue: a complete reply is reopened, gets the rest of its text and is finished
    // again, as one message (no new variant) with the new statistics.
    void continue_a_finished_reply() {
        auto u = store_->append_message(conv_, draft(Role::User, QStringLiteral("a story")));
        HEARTH_CHECK(u);
        auto r = store_->begin_reply(conv_, u->id, QStringLiteral("ab"));
        HEARTH_CHECK(r);
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("Once upon"), std::vector{1, 2}));
        GenerationStats first;
        first.generated_tokens = 2;
        first.finish_reason = FinishReason::Length;
        HEARTH_CHECK(store_->finish_reply(*r, first));

        HEARTH_CHECK(store_->reopen_reply(*r));
        auto m = store_->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Streaming);
        QCOMPARE(m->text, QStringLiteral("Once upon"));  // nothing lost by reopening
        const std::vector<std::int32_t> ids{1, 2, 3, 4};
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("Once upon a time"), ids));
        GenerationStats more;
        more.generated_tokens = 2;
        more.seed = 99;
        more.finish_reason = FinishReason::Stop;
        HEARTH_CHECK(store_->finish_reply(*r, more));
        m = store_->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Complete);
        QCOMPARE(m->text, QStringLiteral("Once upon a time"));
        QCOMPARE(m->token_ids, ids);
        QCOMPARE(m->stats, more);
        auto thread = store_->active_thread(conv_);
        HEARTH_CHECK(thread);
        QCOMPARE(ids_of(*thread), (std::vector<Id>{u->id, *r}));
        QCOMPARE(thread->back().variant_count, 1);

        // Reopened and finished with no update (the model had nothing to add): the text stays.
        HEARTH_CHECK(store_->reopen_reply(*r));
        HEARTH_CHECK(store_->finish_reply(*r, more, MessageState::Interrupted));
        m = store_->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->text, QStringLiteral("Once upon a time"));
        QCOMPARE(m->token_ids, ids);
        QCOMPARE(m->state, MessageState::Interrupted);
    }

    // A reply cut short by a restart (Interrupted) can be continued in the next session.
    void continue_an_interrupted_reply_after_a_restart() {
        auto r = store_->begin_reply(conv_, std::nullopt, {});
        HEARTH_CHECK(r);
        HEARTH_CHECK(store_->update_reply(*r, QStringLiteral("partial"), std::vector{7}));
        store_.reset();
        auto reopened = Store::open(path_);
        HEARTH_CHECK(reopened);
        HEARTH_CHECK(reopened->reopen_reply(*r));
        auto wrote =
            reopened->update_reply(*r, QStringLiteral("partial, then whole"), std::vector{7, 8});
        HEARTH_CHECK(wrote);
        HEARTH_CHECK(reopened->finish_reply(*r, {}));
        auto m = reopened->message(*r);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Complete);
        QCOMPARE(m->text, QStringLiteral("partial, then whole"));
        QCOMPARE(m->token_ids, (std::vector<std::int32_t>{7, 8}));
    }

    void reopen_only_finished_replies() {
        auto u = store_->append_message(conv_, draft(Role::User, QStringLiteral("question")));
        HEARTH_CHECK(u);
        HEARTH_CHECK_ERROR(store_->reopen_reply(u->id), "not a reply");
        HEARTH_CHECK_ERROR(store_->reopen_reply(u->id + 1000), "no message");
        auto failed = store_->begin_reply(conv_, u->id, {});
        HEARTH_CHECK(failed);
        HEARTH_CHECK(store_->finish_reply(*failed, {}, MessageState::Failed));
        HEARTH_CHECK_ERROR(store_->reopen_reply(*failed), "regenerate");
        auto m = store_->message(*failed);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Failed);  // refused: left as it was
        m = store_->message(u->id);
        HEARTH_CHECK(m);
        QCOMPARE(m->state, MessageState::Complete);

        // Still streaming here: reopening changes nothing, not even the unwritten text.
        auto live = store_->begin_reply(conv_, u->id, {});
        HEARTH_CHECK(live);
        auto wrote = store_->update_reply(*live, QStringLiteral("not written yet"), {});
        HEARTH_CHECK(wrote);
        QVERIFY(!*wrote);
        HEARTH_CHECK(store_->reopen_reply(*live));
        HEARTH_CHECK(store_->finish_reply(*live, {}));
        m = store_->message(*live);
        HEARTH_CHECK(m);
        QCOMPARE(m->text, QStringLiteral("not written yet"));
    }

    void update_needs_a_begun_reply() {
        auto m =
            store_->append_message(conv_, draft(Role::Assistant, QStringLiteral("done already")));
        HEARTH_CHECK(m);
        HEARTH_CHECK_ERROR(store_->update_reply(m->id, QStringLiteral("x"), {}),
                           "not a reply being streamed");
        HEARTH_CHECK_ERROR(store_->finish_reply(m->id, {}, MessageState::Streaming),
                           "cannot still be streaming");
    }
};

QTEST_GUILESS_MAIN(TestStoreMessages)
#include "tst_store_messages.moc"
