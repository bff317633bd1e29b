// The store off the GUI thread: one worker thread owns the Store (an SQLite connection
// belongs to one thread), jobs run there one at a time in the order they were called,
// and each completion callback runs on the thread that owns this AsyncStore (the GUI
// thread), through its event loop. A write is acknowledged when its callback runs.
//
// Destroying the AsyncStore runs every job already queued (so nothing the caller issued
// is dropped), writes pending reply updates, closes the database and joins the thread;
// callbacks still undelivered at that point are dropped.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <QObject>
#include <QThread>

#include "common/mailbox.h"
#include "common/result.h"
#include "store/store.h"

namespace hearth::store {

class StoreWorker;

class AsyncStore : public QObject {
    Q_OBJECT

  public:
    template <typename T>
    using Callback = std::function<void(Result<T>)>;

    explicit AsyncStore(QObject* parent = nullptr);
    ~AsyncStore() override;

    void open(const QString& path, OpenOptions options, Callback<OpenReport> done);
    void close(Callback<void> done = {});
    // A database is open as far as this thread has heard (set when open() succeeded,
    // before its callback runs; cleared by close() and by a failed open()). Views read
    // the store only when it is open and again on storeOpened(), so a view set up before
    // the database is opened (QML creates both at once) neither fails nor shows an error.
    bool isOpen() const { return open_; }

    // Runs job(store) on the worker thread, then done(result) on this object's thread.
    template <typename T>
    void run(std::function<Result<T>(Store&)> job, Callback<T> done = {});

    void conversations(ConversationFilter filter, Callback<std::vector<Conversation>> done);
    void create_conversation(Conversation draft, Callback<Conversation> done);
    void update_conversation(Conversation conversation, Callback<void> done = {});
    void delete_conversation(Id id, Callback<void> done = {});
    void active_thread(Id conversation_id, Callback<std::vector<ThreadEntry>> done);
    void append_message(Id conversation_id, MessageDraft draft, Callback<Message> done);
    void edit_message(Id message_id, MessageDraft draft, Callback<Message> done);
    void page_variant(Id message_id, int delta, Callback<Id> done);
    void begin_reply(Id conversation_id, std::optional<Id> parent, QString token_fingerprint,
                     Callback<Id> done);
    // Per token; coalesced by the store. `done` (optional) gets true when this update
    // was written. Failures without a callback are reported by errorOccurred().
    void update_reply(Id message_id, QString text, std::vector<std::int32_t> token_ids,
                      Callback<bool> done = {});
    void finish_reply(Id message_id, GenerationStats stats, MessageState end_state,
                      Callback<void> done = {});
    void reopen_reply(Id message_id, Callback<void> done = {});
    void search(QString query, SearchOptions options, Callback<std::vector<SearchHit>> done);

  signals:
    // open() succeeded (isOpen() is true): read what you show.
    void storeOpened();
    // A write without a callback failed (e.g. the timed write of a reply on a full disk).
    void errorOccurred(const QString& message);
    // After a successful write through the typed methods above.
    void conversationsChanged();
    void threadChanged(qint64 conversation_id);

  private:
    // Queues work for the worker thread; the Store is null when none is open.
    void post(std::function<void(Store*)> work);
    // Queues a call on this object's thread (run_deliveries runs what is queued).
    void deliver(std::function<void()> call);
    Q_INVOKABLE void run_deliveries();
    void report_error(const Error& error);

    QThread thread_;
    bool open_ = false;
    StoreWorker* worker_ = nullptr;  // lives on thread_, deleted after it stops
    Mailbox<std::function<void()>> deliveries_;
};

template <typename T>
void AsyncStore::run(std::function<Result<T>(Store&)> job, Callback<T> done) {
    post([this, job = std::move(job), done = std::move(done)](Store* store) {
        Result<T> result =
            store ? job(*store) : Result<T>(make_error("the chat history is not open"));
        if (done) {
            deliver([done, result = std::move(result)]() mutable { done(std::move(result)); });
        } else if (!result) {
            report_error(result.error());
        }
    });
}

}  // namespace hearth::store
