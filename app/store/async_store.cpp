#include "store/async_store.h"

#include <QTimer>

#include "common/log.h"

namespace hearth::store {

// Owns the Store on the worker thread. Every member but the mailbox is touched only on
// that thread. Jobs arrive through a Mailbox (common/mailbox.h), not inside posted
// lambdas, so that ThreadSanitizer sees the hand-off; the same for deliveries back.
class StoreWorker : public QObject {
    Q_OBJECT

  public:
    std::optional<Store> store;
    QTimer* flush_timer = nullptr;

    // Deleted once its thread has stopped: clearing the mailbox orders the worker's last
    // job before what is destroyed here (drain() takes the mailbox's lock once more after
    // its last job, finding it empty).
    ~StoreWorker() override { jobs_.clear(); }

    void push(std::function<void()> job) {
        if (jobs_.post(std::move(job)))
            QMetaObject::invokeMethod(this, "drain", Qt::QueuedConnection);
    }

  private:
    Q_INVOKABLE void drain() {
        for (auto jobs = jobs_.take(); !jobs.empty(); jobs = jobs_.take())
            for (auto& job : jobs) job();
    }

    Mailbox<std::function<void()>> jobs_;
};

namespace {

// How often the worker looks for reply updates that are due (a stalled stream still gets
// written about reply_flush_interval after its last token, give or take this).
constexpr int kFlushPollMs = 200;

}  // namespace

AsyncStore::AsyncStore(QObject* parent) : QObject(parent) {
    thread_.setObjectName(QStringLiteral("hearth-store"));
    worker_ = new StoreWorker;
    worker_->moveToThread(&thread_);
    thread_.start();
    post([this](Store*) {
        // Created here so the timer belongs to the worker thread.
        worker_->flush_timer = new QTimer(worker_);
        worker_->flush_timer->setInterval(kFlushPollMs);
        QObject::connect(worker_->flush_timer, &QTimer::timeout, worker_, [this] {
            if (worker_->store && worker_->store->has_pending_replies()) {
                if (auto rc = worker_->store->flush_replies(false); !rc) report_error(rc.error());
            }
            // Idle while nothing is pending (post() restarts it), so it costs no wake-ups.
            if (!worker_->store || !worker_->store->has_pending_replies())
                worker_->flush_timer->stop();
        });
    });
}

AsyncStore::~AsyncStore() {
    // Runs after everything queued before it: pending replies are written by ~Store.
    QThread* thread = &thread_;
    post([this, thread](Store*) {
        delete worker_->flush_timer;
        worker_->flush_timer = nullptr;
        worker_->store.reset();
        thread->quit();
    });
    thread_.wait();
    delete worker_;
    deliveries_.clear();  // after the worker's last deliver()
}

void AsyncStore::post(std::function<void(Store*)> work) {
    worker_->push([this, work = std::move(work)] {
        work(worker_->store ? &*worker_->store : nullptr);
        QTimer* timer = worker_->flush_timer;
        if (timer && !timer->isActive() && worker_->store && worker_->store->has_pending_replies())
            timer->start();
    });
}

void AsyncStore::deliver(std::function<void()> call) {
    // Safe from the worker: this object outlives the worker thread (the destructor joins
    // it); calls still queued when it is destroyed are dropped with it.
    if (deliveries_.post(std::move(call)))
        QMetaObject::invokeMethod(this, "run_deliveries", Qt::QueuedConnection);
}

void AsyncStore::run_deliveries() {
    for (auto& call : deliveries_.take()) call();
}

void AsyncStore::report_error(const Error& error) {
    hearth::log::get("store")->error("{}", error.message);
    const QString message = QString::fromStdString(error.message);
    deliver([this, message] { emit errorOccurred(message); });
}

void AsyncStore::open(const QString& path, OpenOptions options, Callback<OpenReport> done) {
    open_ = false;
    post([this, path, options = std::move(options), done = std::move(done)](Store*) mutable {
        worker_->store.reset();  // at most one database at a time
        auto opened = Store::open(path, std::move(options));
        Result<OpenReport> result =
            opened ? Result<OpenReport>(opened->report()) : Result<OpenReport>(opened.error());
        if (opened) worker_->store.emplace(std::move(*opened));
        deliver([this, done, result = std::move(result)]() mutable {
            const bool ok = result.ok();
            open_ = ok;
            if (done) done(std::move(result));
            if (ok) {
                emit storeOpened();
                emit conversationsChanged();
            }
        });
    });
}

void AsyncStore::close(Callback<void> done) {
    open_ = false;
    post([this, done = std::move(done)](Store*) {
        worker_->store.reset();
        if (done) deliver([done] { done(Result<void>()); });
    });
}

void AsyncStore::conversations(ConversationFilter filter,
                               Callback<std::vector<Conversation>> done) {
    run<std::vector<Conversation>>([filter](Store& s) { return s.conversations(filter); },
                                   std::move(done));
}

void AsyncStore::create_conversation(Conversation draft, Callback<Conversation> done) {
    run<Conversation>([draft](Store& s) { return s.create_conversation(draft); },
                      [this, done = std::move(done)](Result<Conversation> r) {
                          const bool ok = r.ok();
                          if (done) done(std::move(r));
                          if (ok) emit conversationsChanged();
                      });
}

void AsyncStore::update_conversation(Conversation conversation, Callback<void> done) {
    run<void>([conversation](Store& s) { return s.update_conversation(conversation); },
              [this, done = std::move(done)](Result<void> r) {
                  if (!r && !done) report_error(r.error());
                  const bool ok = r.ok();
                  if (done) done(std::move(r));
                  if (ok) emit conversationsChanged();
              });
}

void AsyncStore::delete_conversation(Id id, Callback<void> done) {
    run<void>([id](Store& s) { return s.delete_conversation(id); },
              [this, done = std::move(done)](Result<void> r) {
                  if (!r && !done) report_error(r.error());
                  const bool ok = r.ok();
                  if (done) done(std::move(r));
                  if (ok) emit conversationsChanged();
              });
}

void AsyncStore::active_thread(Id conversation_id, Callback<std::vector<ThreadEntry>> done) {
    run<std::vector<ThreadEntry>>(
        [conversation_id](Store& s) { return s.active_thread(conversation_id); }, std::move(done));
}

void AsyncStore::append_message(Id conversation_id, MessageDraft draft, Callback<Message> done) {
    run<Message>(
        [conversation_id, draft](Store& s) { return s.append_message(conversation_id, draft); },
        [this, conversation_id, done = std::move(done)](Result<Message> r) {
            const bool ok = r.ok();
            if (done) done(std::move(r));
            if (ok) {
                emit threadChanged(conversation_id);
                emit conversationsChanged();
            }
        });
}

void AsyncStore::edit_message(Id message_id, MessageDraft draft, Callback<Message> done) {
    run<Message>([message_id, draft](Store& s) { return s.edit_message(message_id, draft); },
                 [this, done = std::move(done)](Result<Message> r) {
                     const std::optional<Id> conversation =
                         r ? std::optional(r->conversation_id) : std::nullopt;
                     if (done) done(std::move(r));
                     if (conversation) emit threadChanged(*conversation);
                 });
}

void AsyncStore::page_variant(Id message_id, int delta, Callback<Id> done) {
    // The conversation is looked up on the worker so threadChanged can name it.
    struct Paged {
        Id shown;
        Id conversation;
    };
    run<Paged>(
        [message_id, delta](Store& s) -> Result<Paged> {
            auto shown = s.page_variant(message_id, delta);
            if (!shown) return shown.error();
            auto m = s.message(*shown);
            if (!m) return m.error();
            return Paged{*shown, m->conversation_id};
        },
        [this, done = std::move(done)](Result<Paged> r) {
            if (!r) {
                if (done) done(r.error());
                return;
            }
            const Paged paged = *r;
            if (done) done(paged.shown);
            emit threadChanged(paged.conversation);
        });
}

void AsyncStore::begin_reply(Id conversation_id, std::optional<Id> parent,
                             QString token_fingerprint, Callback<Id> done) {
    run<Id>([=](Store& s) { return s.begin_reply(conversation_id, parent, token_fingerprint); },
            [this, conversation_id, done = std::move(done)](Result<Id> r) {
                const bool ok = r.ok();
                if (done) done(std::move(r));
                if (ok) emit threadChanged(conversation_id);
            });
}

void AsyncStore::update_reply(Id message_id, QString text, std::vector<std::int32_t> token_ids,
                              Callback<bool> done) {
    run<bool>([message_id, text = std::move(text), token_ids = std::move(token_ids)](
                  Store& s) { return s.update_reply(message_id, text, token_ids); },
              std::move(done));
}

void AsyncStore::finish_reply(Id message_id, GenerationStats stats, MessageState end_state,
                              Callback<void> done) {
    run<void>([=](Store& s) { return s.finish_reply(message_id, stats, end_state); },
              std::move(done));
}

void AsyncStore::reopen_reply(Id message_id, Callback<void> done) {
    run<void>([message_id](Store& s) { return s.reopen_reply(message_id); }, std::move(done));
}

void AsyncStore::search(QString query, SearchOptions options,
                        Callback<std::vector<SearchHit>> done) {
    run<std::vector<SearchHit>>(
        [query = std::move(query), options](Store& s) { return s.search(query, options); },
        std::move(done));
}

}  // namespace hearth::store

#include "async_store.moc"
