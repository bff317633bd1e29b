// AsyncStore: work on the worker thread, callbacks on the caller's, in order; timed
// writes of stalled replies; nothing queued is lost when it is destroyed.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include "store/async_store.h"
#include "store_test_util.h"

using namespace hearth::store;
using namespace hearth::store::test;

namespace {}  // namespace

class TestStoreAsync : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int n_ = 0;
    QString next_path() { return dir_.filePath(QStringLiteral("async-%1.sqlite3").arg(++n_)); }

    // Opens `store` at `path` and waits for it.
    bool open(AsyncStore& store, const QString& path, OpenOptions options = {}) {
        bool done = false, ok = false;
        store.open(path, std::move(options), [&](hearth::Result<OpenReport> r) {
            done = true;
            ok = r.ok();
        });
        return QTest::qWaitFor([&] { return done; }, 5000) && ok;
    }

    // Waits until a callback filled `slot` (the caller then checks it is filled).
    template <typename T>
    static void wait_for(std::optional<hearth::Result<T>>& slot) {
        static_cast<void>(QTest::qWaitFor([&] { return slot.has_value(); }, 5000));
    }

  private slots:
    void work_runs_on_the_worker_callbacks_on_the_caller() {
        AsyncStore store;
        const QString path = next_path();
        QVERIFY(open(store, path));
        QThread* worker = nullptr;
        QThread* callback = nullptr;
        bool done = false;
        store.run<int>(
            [&](Store& s) -> hearth::Result<int> {
                worker = QThread::currentThread();
                return s.message_count(0);
            },
            [&](hearth::Result<int> r) {
                callback = QThread::currentThread();
                done = r.ok();
            });
        QTRY_VERIFY_WITH_TIMEOUT(done, 5000);
        QVERIFY(worker != nullptr);
        QVERIFY(worker != QThread::currentThread());
        QCOMPARE(callback, QThread::currentThread());
    }

    void calls_complete_in_order() {
        AsyncStore store;
        QVERIFY(open(store, next_path()));
        QSignalSpy conversations_changed(&store, &AsyncStore::conversationsChanged);
        QSignalSpy thread_changed(&store, &AsyncStore::threadChanged);
        std::optional<hearth::Result<Conversation>> created;
        store.create_conversation(titled(QStringLiteral("async")),
                                  [&](hearth::Result<Conversation> r) { created = std::move(r); });
        wait_for(created);
        QVERIFY(created && created->ok());
        const Id conv = (*created)->id;
        QVERIFY(conversations_changed.count() >= 1);
        // Fire 50 appends without waiting: each lands after the previous one.
        std::vector<Id> acked;
        for (int i = 0; i < 50; ++i)
            store.append_message(conv, draft(Role::User, QStringLiteral("m%1").arg(i)),
                                 [&](hearth::Result<Message> r) {
                                     if (r) acked.push_back(r->id);
                                 });
        QTRY_COMPARE_WITH_TIMEOUT(acked.size(), std::size_t{50}, 10000);
        QVERIFY(std::is_sorted(acked.begin(), acked.end()));
        std::optional<hearth::Result<std::vector<ThreadEntry>>> thread;
        store.active_thread(
            conv, [&](hearth::Result<std::vector<ThreadEntry>> r) { thread = std::move(r); });
        wait_for(thread);
        QVERIFY(thread && thread->ok());
        QCOMPARE((*thread)->size(), std::size_t{50});
        QCOMPARE((*thread)->at(49).message.text, QStringLiteral("m49"));
        QCOMPARE(thread_changed.count(), 50);
        QCOMPARE(thread_changed.last().at(0).toLongLong(), conv);
    }

    // Continue through the worker: a finished reply is reopened, extended and finished
    // again by calls fired without waiting (they run in order).
    void reopen_reply_continues_a_reply() {
        AsyncStore store;
        QVERIFY(open(store, next_path()));
        std::optional<hearth::Result<Conversation>> created;
        store.create_conversation(titled(QStringLiteral("continue")),
                                  [&](hearth::Result<Conversation> r) { created = std::move(r); });
        wait_for(created);
        QVERIFY(created && created->ok());
        std::optional<hearth::Result<Message>> user;
        store.append_message((*created)->id, draft(Role::User, QStringLiteral("go on")),
                             [&](hearth::Result<Message> r) { user = std::move(r); });
        wait_for(user);
        QVERIFY(user && user->ok());
        std::optional<hearth::Result<Id>> begun;
        store.begin_reply((*created)->id, (*user)->id, {},
                          [&](hearth::Result<Id> r) { begun = std::move(r); });
        wait_for(begun);
        QVERIFY(begun && begun->ok());
        const Id reply = **begun;
        store.update_reply(reply, QStringLiteral("Hello"), {1});
        store.finish_reply(reply, {}, MessageState::Complete);
        std::optional<hearth::Result<void>> reopened;
        store.reopen_reply(reply, [&](hearth::Result<void> r) { reopened = std::move(r); });
        store.update_reply(reply, QStringLiteral("Hello, world"), {1, 2});
        GenerationStats stats;
        stats.finish_reason = FinishReason::Stop;
        stats.seed = 5;
        std::optional<hearth::Result<void>> finished;
        store.finish_reply(reply, stats, MessageState::Complete,
                           [&](hearth::Result<void> r) { finished = std::move(r); });
        wait_for(finished);
        QVERIFY(reopened && reopened->ok());
        QVERIFY2(finished && finished->ok(),
                 finished && !finished->ok() ? finished->message().c_str() : "");
        std::optional<hearth::Result<Message>> read;
        store.run<Message>([reply](Store& s) { return s.message(reply); },
                           [&](hearth::Result<Message> r) { read = std::move(r); });
        wait_for(read);
        QVERIFY(read && read->ok());
        QCOMPARE((*read)->text, QStringLiteral("Hello, world"));
        QCOMPARE((*read)->state, MessageState::Complete);
        QCOMPARE((*read)->stats, stats);

        std::optional<hearth::Result<void>> refused;
        store.reopen_reply((*user)->id, [&](hearth::Result<void> r) { refused = std::move(r); });
        wait_for(refused);
        QVERIFY(refused.has_value());
        HEARTH_CHECK_ERROR(*refused, "not a reply");
    }

    void not_open_is_an_error() {
        AsyncStore store;
        std::optional<hearth::Result<std::vector<Conversation>>> list;
        store.conversations(
            {}, [&](hearth::Result<std::vector<Conversation>> r) { list = std::move(r); });
        wait_for(list);
        QVERIFY(list.has_value());
        HEARTH_CHECK_ERROR(*list, "not open");
        std::optional<hearth::Result<OpenReport>> report;
        store.open(dir_.path(), {}, [&](hearth::Result<OpenReport> r) { report = std::move(r); });
        wait_for(report);
        QVERIFY(report.has_value());
        HEARTH_CHECK_ERROR(*report, "is a folder");
    }

    void failures_without_a_callback_are_signalled() {
        AsyncStore store;
        QVERIFY(open(store, next_path()));
        QSignalSpy errors(&store, &AsyncStore::errorOccurred);
        store.update_reply(4242, QStringLiteral("x"), {});
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 5000);
        QVERIFY(
            errors.first().at(0).toString().contains(QStringLiteral("not a reply being streamed")));
    }

    void a_stalled_reply_is_written_by_the_timer() {
        AsyncStore store;
        const QString path = next_path();
        OpenOptions options;
        options.reply_flush_interval = std::chrono::milliseconds(300);
        QVERIFY(open(store, path, options));
        std::optional<hearth::Result<Conversation>> created;
        store.create_conversation(titled(QStringLiteral("stream")),
                                  [&](hearth::Result<Conversation> r) { created = std::move(r); });
        wait_for(created);
        QVERIFY(created && created->ok());
        std::optional<hearth::Result<Id>> reply;
        store.begin_reply((*created)->id, std::nullopt, {},
                          [&](hearth::Result<Id> r) { reply = std::move(r); });
        wait_for(reply);
        QVERIFY(reply && reply->ok());
        const Id id = **reply;
        std::optional<hearth::Result<bool>> wrote;
        store.update_reply(id, QStringLiteral("one token then silence"), {42},
                           [&](hearth::Result<bool> r) { wrote = std::move(r); });
        wait_for(wrote);
        QVERIFY(wrote && wrote->ok());
        QVERIFY(!**wrote);  // not due yet
        QCOMPARE(committed_text(path, id), QString());
        // No further calls: the worker's timer writes it once due (300 ms + a 200 ms poll).
        QTRY_COMPARE_WITH_TIMEOUT(committed_text(path, id),
                                  QStringLiteral("one token then silence"), 3000);
        std::optional<hearth::Result<void>> finished;
        GenerationStats stats;
        stats.generated_tokens = 1;
        store.finish_reply(id, stats, MessageState::Complete,
                           [&](hearth::Result<void> r) { finished = std::move(r); });
        wait_for(finished);
        QVERIFY(finished && finished->ok());
    }

    void destruction_runs_everything_queued() {
        const QString path = next_path();
        Id conv = 0, reply = 0;
        {
            AsyncStore store;
            QVERIFY(open(store, path));
            std::optional<hearth::Result<Conversation>> created;
            store.create_conversation(
                titled(QStringLiteral("last words")),
                [&](hearth::Result<Conversation> r) { created = std::move(r); });
            wait_for(created);
            QVERIFY(created && created->ok());
            conv = (*created)->id;
            std::optional<hearth::Result<Id>> begun;
            store.begin_reply(conv, std::nullopt, {},
                              [&](hearth::Result<Id> r) { begun = std::move(r); });
            wait_for(begun);
            QVERIFY(begun && begun->ok());
            reply = **begun;
            // Queue work and destroy at once: callbacks will not run, but the work must.
            for (int i = 0; i < 20; ++i)
                store.append_message(conv, draft(Role::User, QStringLiteral("q%1").arg(i)), {});
            store.update_reply(reply, QStringLiteral("pending at shutdown"), {1, 2});
        }
        auto store = Store::open(path);
        HEARTH_CHECK(store);
        auto count = store->message_count(conv);
        HEARTH_CHECK(count);
        QCOMPARE(*count, 21);
        auto m = store->message(reply);
        HEARTH_CHECK(m);
        QCOMPARE(m->text, QStringLiteral("pending at shutdown"));
        QCOMPARE(m->token_ids, (std::vector<std::int32_t>{1, 2}));
        QCOMPARE(m->state, MessageState::Interrupted);
    }

    void search_and_paging() {
        AsyncStore store;
        QVERIFY(open(store, next_path()));
        std::optional<hearth::Result<Conversation>> created;
        store.create_conversation(titled(QStringLiteral("find me")),
                                  [&](hearth::Result<Conversation> r) { created = std::move(r); });
        wait_for(created);
        QVERIFY(created && created->ok());
        std::optional<hearth::Result<Message>> first;
        store.append_message((*created)->id, draft(Role::User, QStringLiteral("an ocelot appears")),
                             [&](hearth::Result<Message> r) { first = std::move(r); });
        wait_for(first);
        QVERIFY(first && first->ok());
        std::optional<hearth::Result<Message>> edited;
        store.edit_message((*first)->id, draft(Role::User, QStringLiteral("a margay appears")),
                           [&](hearth::Result<Message> r) { edited = std::move(r); });
        wait_for(edited);
        QVERIFY(edited && edited->ok());
        std::optional<hearth::Result<Id>> paged;
        store.page_variant((*edited)->id, -1, [&](hearth::Result<Id> r) { paged = std::move(r); });
        wait_for(paged);
        QVERIFY(paged && paged->ok());
        QCOMPARE(**paged, (*first)->id);
        std::optional<hearth::Result<std::vector<SearchHit>>> hits;
        store.search(QStringLiteral("margay"), {},
                     [&](hearth::Result<std::vector<SearchHit>> r) { hits = std::move(r); });
        wait_for(hits);
        QVERIFY(hits && hits->ok());
        QCOMPARE((*hits)->size(), std::size_t{1});
        QCOMPARE((*hits)->front().message_id, (*edited)->id);
    }
};

QTEST_GUILESS_MAIN(TestStoreAsync)
#include "tst_store_async.moc"
