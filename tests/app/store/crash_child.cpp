#include "crash_child.h"

#include <unistd.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QTimer>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>

#include "store/async_store.h"
#include "store/store.h"

namespace hearth::store::test {
namespace {

constexpr const char* kFingerprint = "c0ffee42";

// One write(2) per line: a line is either wholly in the pipe or not at all when the
// process is killed, so the parent never reads half an acknowledgement.
void ack(const QByteArray& line) {
    const QByteArray out = line + '\n';
    for (qsizetype at = 0; at < out.size();) {
        const ssize_t n =
            ::write(STDOUT_FILENO, out.constData() + at, static_cast<std::size_t>(out.size() - at));
        if (n <= 0) std::_Exit(4);
        at += n;
    }
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "crash child: %s\n", what.c_str());
    std::_Exit(3);
}

QByteArray hex_hash(const QString& text, std::span<const std::int32_t> ids) {
    return message_hash(text.toUtf8(), ids).toHex();
}

// Deterministic text and token ids for a seed: mixed scripts, so UTF-8 lengths vary.
class Generator {
  public:
    explicit Generator(std::uint64_t seed) : rng_(seed) {}
    std::uint64_t next() { return rng_(); }
    int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
    QString words(int count) {
        static const char* const kWords[] = {"the",
                                             "model",
                                             "replies",
                                             "caf\xc3\xa9",
                                             "na\xc3\xafve",
                                             "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                             "\xf0\x9f\x99\x82",
                                             "token",
                                             "cache",
                                             "\"quoted\"",
                                             "line\n",
                                             "stream",
                                             "crash",
                                             "sqlite"};
        QString out;
        for (int i = 0; i < count; ++i)
            out += QString::fromUtf8(kWords[below(14)]) + QLatin1Char(' ');
        return out;
    }
    void tokens(std::vector<std::int32_t>& into, int count) {
        for (int i = 0; i < count; ++i) into.push_back(static_cast<std::int32_t>(rng_()));
    }

  private:
    std::mt19937_64 rng_;
};

MessageDraft user_draft(Generator& gen) {
    MessageDraft d;
    d.role = Role::User;
    d.text = gen.words(1 + gen.below(60));
    gen.tokens(d.token_ids, gen.below(40));
    d.token_fingerprint = QString::fromLatin1(kFingerprint);
    return d;
}

GenerationStats stats_for(std::size_t tokens) {
    GenerationStats s;
    s.ttft_ms = 12.5;
    s.tokens_per_second = 40.0;
    s.prompt_tokens_cached = 3;
    s.prompt_tokens_computed = 9;
    s.generated_tokens = static_cast<std::int64_t>(tokens);
    return s;
}

// Where the previous (killed) child left off, so each run writes into a long thread.
Id latest_conversation(Store& store) {
    auto list = store.conversations();
    if (!list) fail(list.message());
    return list->empty() ? 0 : list->front().id;
}

[[noreturn]] void run_sync(Store& store, Generator& gen) {
    Id conversation = latest_conversation(store);
    std::vector<Id> users;
    for (;;) {
        const int roll = gen.below(100);
        if (conversation == 0 || roll < 6) {
            auto c = store.create_conversation(Conversation{});
            if (!c) fail(c.message());
            conversation = c->id;
            users.clear();
            ack("C " + QByteArray::number(c->id));
        } else if (roll < 40 || (roll < 50 && users.empty())) {
            const MessageDraft d = user_draft(gen);
            auto m = store.append_message(conversation, d);
            if (!m) fail(m.message());
            users.push_back(m->id);
            ack("M " + QByteArray::number(m->id) + ' ' + hex_hash(d.text, d.token_ids));
        } else if (roll < 50) {
            const MessageDraft d = user_draft(gen);
            auto m = store.edit_message(
                users[static_cast<std::size_t>(gen.below(static_cast<int>(users.size())))], d);
            if (!m) fail(m.message());
            users.push_back(m->id);
            ack("M " + QByteArray::number(m->id) + ' ' + hex_hash(d.text, d.token_ids));
        } else {
            auto thread = store.active_thread(conversation);
            if (!thread) fail(thread.message());
            std::optional<Id> parent;
            if (!thread->empty()) parent = thread->back().message.id;
            // Sometimes regenerate: a sibling of the last reply.
            if (!thread->empty() && thread->back().message.role == Role::Assistant &&
                gen.below(3) == 0)
                parent = thread->back().message.parent_id;
            auto r = store.begin_reply(conversation, parent, QString::fromLatin1(kFingerprint));
            if (!r) fail(r.message());
            ack("B " + QByteArray::number(*r));
            QString text;
            std::vector<std::int32_t> ids;
            for (int i = 0, n = 3 + gen.below(40); i < n; ++i) {
                text += gen.words(1 + gen.below(3));
                gen.tokens(ids, 1 + gen.below(3));
                auto wrote = store.update_reply(*r, text, ids);
                if (!wrote) fail(wrote.message());
                if (*wrote)
                    ack("P " + QByteArray::number(*r) + ' ' +
                        QByteArray::number(text.toUtf8().size()) + ' ' +
                        QByteArray::number(static_cast<qsizetype>(ids.size())) + ' ' +
                        hex_hash(text, ids));
            }
            auto done = store.finish_reply(*r, stats_for(ids.size()));
            if (!done) fail(done.message());
            ack("F " + QByteArray::number(*r) + ' ' + hex_hash(text, ids));
        }
    }
}

// The same kinds of work through AsyncStore: each step starts in the previous one's callback.
class AsyncWriter {
  public:
    AsyncWriter(AsyncStore& store, Generator& gen) : store_(store), gen_(gen) {}

    void start() {
        store_.conversations({}, [this](Result<std::vector<Conversation>> list) {
            if (!list) fail(list.message());
            if (!list->empty()) conversation_ = list->front().id;
            next();
        });
    }

    void next() {
        const int roll = gen_.below(100);
        if (conversation_ == 0 || roll < 6) {
            store_.create_conversation(Conversation{}, [this](Result<Conversation> c) {
                if (!c) fail(c.message());
                conversation_ = c->id;
                ack("C " + QByteArray::number(c->id));
                next();
            });
        } else if (roll < 50) {
            const MessageDraft d = user_draft(gen_);
            store_.append_message(conversation_, d, [this, d](Result<Message> m) {
                if (!m) fail(m.message());
                ack("M " + QByteArray::number(m->id) + ' ' + hex_hash(d.text, d.token_ids));
                next();
            });
        } else {
            store_.active_thread(conversation_, [this](Result<std::vector<ThreadEntry>> thread) {
                if (!thread) fail(thread.message());
                std::optional<Id> parent;
                if (!thread->empty()) parent = thread->back().message.id;
                store_.begin_reply(conversation_, parent, QString::fromLatin1(kFingerprint),
                                   [this](Result<Id> r) {
                                       if (!r) fail(r.message());
                                       ack("B " + QByteArray::number(*r));
                                       stream(*r);
                                   });
            });
        }
    }

  private:
    // One update per event-loop turn, as tokens from the engine would come, without
    // waiting for the store; then the finish. (Store time moves on per update: see the
    // clock in crash_child_main.)
    void stream(Id id) {
        text_.clear();
        ids_.clear();
        left_ = 3 + gen_.below(40);
        token(id);
    }

    void token(Id id) {
        if (left_-- == 0) {
            const QByteArray final_line =
                "F " + QByteArray::number(id) + ' ' + hex_hash(text_, ids_);
            store_.finish_reply(id, stats_for(ids_.size()), MessageState::Complete,
                                [this, final_line](Result<void> done) {
                                    if (!done) fail(done.message());
                                    ack(final_line);
                                    next();
                                });
            return;
        }
        text_ += gen_.words(1 + gen_.below(3));
        gen_.tokens(ids_, 1 + gen_.below(3));
        const QByteArray line =
            "P " + QByteArray::number(id) + ' ' + QByteArray::number(text_.toUtf8().size()) + ' ' +
            QByteArray::number(static_cast<qsizetype>(ids_.size())) + ' ' + hex_hash(text_, ids_);
        store_.update_reply(id, text_, ids_, [line](Result<bool> wrote) {
            if (!wrote) fail(wrote.message());
            if (*wrote) ack(line);
        });
        QTimer::singleShot(0, &store_, [this, id] { token(id); });
    }

    AsyncStore& store_;
    Generator& gen_;
    Id conversation_ = 0;
    QString text_;
    std::vector<std::int32_t> ids_;
    int left_ = 0;
};

}  // namespace

QByteArray message_hash(const QByteArray& utf8, std::span<const std::int32_t> token_ids) {
    QCryptographicHash hash(QCryptographicHash::Sha1);
    hash.addData(utf8);
    hash.addData(QByteArrayView("\0", 1));
    const auto blob = encode_token_ids(token_ids);
    hash.addData(QByteArrayView(reinterpret_cast<const char*>(blob.data()),
                                static_cast<qsizetype>(blob.size())));
    return hash.result();
}

int crash_child_main(int argc, char** argv) {
    if (argc != 6) fail("usage: --crash-child DB SEED sync|async full|normal");
    const QString path = QString::fromLocal8Bit(argv[2]);
    Generator gen(std::strtoull(argv[3], nullptr, 10));
    OpenOptions options;
    // Write replies far more often than the app does, so kills land between many writes.
    // The store's clock advances 1 ms each time it is read (about once per update), as if
    // tokens came that far apart: a reply is written every other update however fast this
    // machine runs the child, with no sleeping between tokens.
    options.reply_flush_interval = std::chrono::milliseconds(2);
    static std::atomic<std::int64_t> ticks{0};  // the async store reads it on its thread
    options.clock = [] {
        return std::chrono::steady_clock::time_point(std::chrono::milliseconds(++ticks));
    };
    // Both settings must survive a process crash; FULL adds power cuts (not tested here).
    options.full_sync = std::string(argv[5]) == "full";
    if (std::string(argv[4]) == "sync") {
        auto store = Store::open(path, options);
        if (!store) fail(store.message());
        ack("R");
        run_sync(*store, gen);
    }
    QCoreApplication app(argc, argv);
    AsyncStore store;
    AsyncWriter writer(store, gen);
    store.open(path, options, [&](Result<OpenReport> report) {
        if (!report) fail(report.message());
        ack("R");
        writer.start();
    });
    return app.exec();
}

}  // namespace hearth::store::test
