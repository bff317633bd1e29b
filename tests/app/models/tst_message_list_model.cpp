// MessageListModel on a synthetic model and a store in a temporary folder: two chats with
// one persona stream replies that end with statistics, the second served from the
// persona's cached prefix; replies are regenerated (with a fresh seed each time) and
// paged, a branch is made by editing, a reply is stopped, cut at its length and continued;
// rows are split into prose and code blocks (kept up to date while a reply streams); a
// stale reload never brings an ended reply back; views hear of a streaming reply at most
// once a frame; a message found by search is revealed on its branch.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include "app_fixture.h"
#include "chat/prompt_builder.h"
#include "core/app_settings.h"

using namespace hearth;

class TestMessageListModel : public QObject {
    Q_OBJECT
    AppFixture fixture_;

  private slots:
    void twoChatsWithOnePersona() {
        App app;
        START(fixture_, app, QStringLiteral("chats.sqlite3"), true,
              fixture_.slow_model_path());  // seen streaming
        QTRY_COMPARE(app.personas.count(), 4);
        QSignalSpy created(&app.personas, &PersonaListModel::personaCreated);
        app.personas.create(QStringLiteral("Tester"), kSystemPrompt, QString(), QString(), true);
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_COMPARE_WITH_TIMEOUT(app.bridge.pinState(persona), QStringLiteral("pinned"), 30000);

        const qint64 c1 = create_conversation(app, persona);
        QVERIFY(c1 > 0);
        // An empty new chat with the same persona is not made twice: it is opened again.
        QCOMPARE(create_conversation(app, persona), c1);
        QTRY_COMPARE(app.conversations.count(), 1);

        // ---- chat 1: a streamed reply that ends with statistics ----
        app.chat.setMaxReplyTokens(160);
        app.chat.setUpdateIntervalMs(0);  // every turn of the event loop: the model is fast
        app.chat.setConversationId(c1);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.count(), 0);
        QCOMPARE(app.chat.personaName(), QStringLiteral("Tester"));
        std::vector<int> lengths_seen;  // of the reply's text while it streamed
        connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& tl, const QModelIndex&) {
                    if (role(app.chat, tl.row(), "state").toString() == QLatin1String("streaming"))
                        lengths_seen.push_back(role(app.chat, tl.row(), "generatedTokens").toInt());
                });
        // Where each reply is when it begins: its row is there at once (it used to come one
        // store round trip later, so a short reply could end before it was seen).
        QStringList begun;  // "row index/count state rows" per replyStarted
        connect(&app.chat, &MessageListModel::replyStarted, this, [&](qint64 id) {
            const int r = app.chat.rowOf(id);
            begun.append(r < 0 ? QStringLiteral("absent")
                               : QStringLiteral("%1 %2/%3 %4 %5")
                                     .arg(r)
                                     .arg(role(app.chat, r, "variantIndex").toInt())
                                     .arg(role(app.chat, r, "variantCount").toInt())
                                     .arg(role(app.chat, r, "state").toString())
                                     .arg(app.chat.count()));
        });
        QSignalSpy generating(&app.chat, &MessageListModel::generatingChanged);
        int row = send_and_wait(app, QStringLiteral("Hello there, tell me a story"));
        QCOMPARE(begun, QStringList{QStringLiteral("1 0/1 streaming 2")});
        QVERIFY(row >= 0);
        QVERIFY(generating.count() >= 2);  // on, then off
        QVERIFY(!app.chat.generating());
        QCOMPARE(app.chat.count(), 2);
        QCOMPARE(row, 1);
        QCOMPARE(role(app.chat, 0, "role").toString(), QStringLiteral("user"));
        QCOMPARE(role(app.chat, 0, "text").toString(),
                 QStringLiteral("Hello there, tell me a story"));
        QCOMPARE(role(app.chat, 1, "role").toString(), QStringLiteral("assistant"));
        QCOMPARE(role(app.chat, 1, "state").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, 1, "generatedTokens").toInt(), 160);
        QVERIFY(role(app.chat, 1, "ttftMs").toDouble() > 0);
        QVERIFY(role(app.chat, 1, "tokensPerSecond").toDouble() > 0);
        QVERIFY(role(app.chat, 1, "inContext").toBool());
        // The persona was pinned: its whole blocks came from the cache.
        const int cached1 = role(app.chat, 1, "promptTokensCached").toInt();
        const int computed1 = role(app.chat, 1, "promptTokensComputed").toInt();
        QVERIFY2(cached1 >= 16, qPrintable(QString::number(cached1)));
        QVERIFY(computed1 > 0);
        // It grew while streaming: several different lengths were shown before the end.
        std::sort(lengths_seen.begin(), lengths_seen.end());
        lengths_seen.erase(std::unique(lengths_seen.begin(), lengths_seen.end()),
                           lengths_seen.end());
        QVERIFY2(lengths_seen.size() >= 2, qPrintable(QString::number(lengths_seen.size())));
        const QString reply1 = role(app.chat, 1, "text").toString();
        QVERIFY(!reply1.isEmpty());
        // The conversation was named after its first message.
        QTRY_COMPARE(app.chat.title(), QStringLiteral("Hello there, tell me a story"));

        // ---- chat 2, same persona: its prefix comes from the cache ----
        const qint64 c2 = create_conversation(app, persona);  // chat 1 has messages now
        QVERIFY(c2 > 0 && c2 != c1);
        QTRY_COMPARE(app.conversations.count(), 2);
        app.chat.setConversationId(c2);
        QCOMPARE(app.chat.count(), 0);
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Second chat here"));
        QVERIFY(row >= 0);
        QVERIFY(role(app.chat, row, "promptTokensCached").toInt() >= 16);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));

        // ---- back to chat 1: the stored thread, then a second turn from the cache ----
        app.chat.setConversationId(c1);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 1, "text").toString(), reply1);
        QCOMPARE(role(app.chat, 1, "promptTokensCached").toInt(), cached1);  // stored stats
        QTRY_VERIFY(app.chat.canSend());
        row = send_and_wait(app, QStringLiteral("Go on"));
        QCOMPARE(row, 3);
        // The whole first turn (prompt and reply) was reused, give or take a block.
        const int cached2 = role(app.chat, 3, "promptTokensCached").toInt();
        QVERIFY2(cached2 >= cached1 + computed1 + 160 - 16, qPrintable(QString::number(cached2)));

        // ---- regenerate: a second variant of the last reply; page back and forth ----
        const QString reply2 = role(app.chat, 3, "text").toString();
        const qint64 variant1 = role(app.chat, 3, "messageId").toLongLong();
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        app.chat.setDefaultSampling([] {
            SamplingParams p;
            p.temperature = 1.5f;
            p.top_k = 0;
            p.top_p = 1.0f;
            p.min_p = 0.0f;
            p.seed = 99;
            return p;
        }());
        begun.clear();
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        // The new variant took the old one's place as soon as it began.
        QCOMPARE(begun, QStringList{QStringLiteral("3 1/2 streaming 4")});
        QTRY_COMPARE(role(app.chat, 3, "variantCount").toInt(), 2);
        QCOMPARE(role(app.chat, 3, "variantIndex").toInt(), 1);
        QCOMPARE(app.chat.count(), 4);
        const qint64 variant2 = role(app.chat, 3, "messageId").toLongLong();
        const QString reply2b = role(app.chat, 3, "text").toString();
        // (The synthetic model's replies may well read the same; the ids differ.)
        QVERIFY(variant2 != variant1);
        QCOMPARE(role(app.chat, 3, "state").toString(), QStringLiteral("done"));
        app.chat.pageVariant(variant2, -1);
        QTRY_COMPARE(role(app.chat, 3, "variantIndex").toInt(), 0);
        QCOMPARE(role(app.chat, 3, "messageId").toLongLong(), variant1);
        QCOMPARE(role(app.chat, 3, "text").toString(), reply2);
        app.chat.pageVariant(role(app.chat, 3, "messageId").toLongLong(), +1);
        QTRY_COMPARE(role(app.chat, 3, "messageId").toLongLong(), variant2);
        QCOMPARE(role(app.chat, 3, "text").toString(), reply2b);

        // ---- edit the first message: a branch with a reply of its own ----
        app.chat.setDefaultSampling(SamplingParams::greedy());
        const qint64 first = role(app.chat, 0, "messageId").toLongLong();
        finished.clear();
        QVERIFY(app.chat.editAndResend(first, QStringLiteral("Hello, a different question")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 0, "text").toString(),
                 QStringLiteral("Hello, a different question"));
        QCOMPARE(role(app.chat, 0, "variantCount").toInt(), 2);
        QCOMPARE(role(app.chat, 0, "variantIndex").toInt(), 1);
        QCOMPARE(role(app.chat, 1, "state").toString(), QStringLiteral("done"));
        // Paging the first message back restores the old branch below it.
        app.chat.pageVariant(role(app.chat, 0, "messageId").toLongLong(), -1);
        QTRY_COMPARE(app.chat.count(), 4);
        QCOMPARE(role(app.chat, 3, "messageId").toLongLong(), variant2);

        // ---- stop a reply ----
        app.chat.setMaxReplyTokens(500);
        finished.clear();
        bool stopped_early = false;
        QMetaObject::Connection c =
            connect(&app.bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
                if (e.kind == sched::EventKind::Token && !stopped_early) {
                    stopped_early = true;
                    app.chat.stop();
                }
            });
        QVERIFY(app.chat.send(QStringLiteral("Please stop me")));
        QVERIFY(app.chat.generating());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        disconnect(c);
        QVERIFY(stopped_early);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        QTRY_COMPARE(app.chat.count(), 6);
        QCOMPARE(role(app.chat, 5, "state").toString(), QStringLiteral("stopped"));
        QVERIFY(role(app.chat, 5, "generatedTokens").toInt() < 500);
        QVERIFY(!app.chat.generating());
        QVERIFY(app.chat.canSend());
        // The stored copy says so too.
        app.chat.reload();
        QTRY_COMPARE(role(app.chat, 5, "state").toString(), QStringLiteral("stopped"));

        // ---- search ----
        app.conversations.search(QStringLiteral("second"));
        QVERIFY(app.conversations.searching());
        QTRY_VERIFY(app.conversations.count() >= 1 &&
                    role(app.conversations, 0, "isSearchHit").toBool());
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), c2);
        QVERIFY(role(app.conversations, 0, "snippet").toString().contains(QLatin1String("Second")));
        QVERIFY(!role(app.conversations, 0, "highlights").toList().isEmpty());
        QVERIFY(role(app.conversations, 0, "snippetHtml")
                    .toString()
                    .contains(QLatin1String("<b>Second</b>")));
        app.conversations.search(QString());
        QTRY_VERIFY(app.conversations.count() == 2 &&
                    !role(app.conversations, 0, "isSearchHit").toBool());
        // Newest first: chat 1 had the last message.
        QCOMPARE(role(app.conversations, 0, "conversationId").toLongLong(), c1);
    }

    // The end of a reply racing a reload: a reload issued just before the Finished event
    // is handled reads the store while the reply is still "streaming" there, and its
    // snapshot arrives after the model ended the stream. The row must not go back to
    // streaming (it used to, until another reload came, or for good when none did).
    void staleReloadAfterEndKeepsTheEnd() {
        App app;
        // Runs before the model's own handler (connected in start()): on the reply's
        // Finished event, reload first.
        int reloads = 0;
        connect(&app.bridge, &EngineBridge::requestEvent, this, [&](const sched::Event& e) {
            if (e.kind == sched::EventKind::Finished) {
                app.chat.reload();
                ++reloads;
            }
        });
        START(fixture_, app, QStringLiteral("stale-reload.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        QVERIFY(c > 0);
        app.chat.setMaxReplyTokens(24);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());

        for (int turn = 0; turn < 3; ++turn) {
            qint64 reply = -1;
            QStringList states_after_end;  // of the reply's row, once it ended
            auto record = [&](int row) {
                if (reply >= 0 && row >= 0 &&
                    role(app.chat, row, "messageId").toLongLong() == reply)
                    states_after_end.append(role(app.chat, row, "state").toString());
            };
            auto on_changed = connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                                      [&](const QModelIndex& tl, const QModelIndex& br) {
                                          for (int r = tl.row(); r <= br.row(); ++r) record(r);
                                      });
            auto on_inserted = connect(&app.chat, &QAbstractItemModel::rowsInserted, this,
                                       [&](const QModelIndex&, int first, int last) {
                                           for (int r = first; r <= last; ++r) record(r);
                                       });
            auto on_finished = connect(&app.chat, &MessageListModel::replyFinished, this,
                                       [&](qint64 id, const QString&) { reply = id; });
            QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
            QVERIFY(app.chat.send(QStringLiteral("Turn %1, say something").arg(turn)));
            QVERIFY(finished.wait(kReplyTimeoutMs));
            const int before = reloads;
            QVERIFY(before >= turn + 1);
            // Let the stale snapshot, the store's write and the reloads after it land.
            QVERIFY(settle(app));
            const int row = app.chat.rowOf(reply);
            QVERIFY(row >= 0);
            QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
            QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 24);
            QVERIFY2(!states_after_end.contains(QStringLiteral("streaming")),
                     qPrintable(states_after_end.join(QLatin1Char(','))));
            QVERIFY(!app.chat.generating());
            disconnect(on_changed);
            disconnect(on_inserted);
            disconnect(on_finished);
        }
    }

    // Every row has its text split into prose and code (the `segments` role), kept up to
    // date while a reply streams (announced with the text) and forgotten with the row.
    void segmentsRole() {
        App app;
        START(fixture_, app, QStringLiteral("segments.sqlite3"), true,
              fixture_.slow_model_path());  // seen streaming
        const qint64 c = create_conversation(app, -1);
        QVERIFY(c > 0);
        app.chat.setMaxReplyTokens(160);  // long enough to be seen streaming
        app.chat.setUpdateIntervalMs(0);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(app.chat.roleNames().value(MessageListModel::SegmentsRole) == "segments");

        int streamed = 0;
        QStringList mismatches;
        connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& tl, const QModelIndex&, const QList<int>& roles) {
                    if (!roles.contains(MessageListModel::TextRole)) return;
                    if (!roles.contains(MessageListModel::SegmentsRole)) {
                        mismatches << QStringLiteral("text changed without its segments");
                        return;
                    }
                    ++streamed;
                    const QString text = role(app.chat, tl.row(), "text").toString();
                    if (role(app.chat, tl.row(), "segments").toList() != expected_segments(text))
                        mismatches << text;
                });
        const QString message = QStringLiteral(
            "Why do these "
            "differ?\n\n```python\nprint(`a`)\n```\n\nand\n\n~~~js\nconsole.log(1)\n~~~");
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.send(message));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        // The reply's row comes with the reload begin_reply starts (a short reply may end first).
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(app.chat.rowOf(reply) > 0);
        const int row = app.chat.rowOf(reply);
        QVERIFY2(mismatches.isEmpty(), qPrintable(mismatches.join(QStringLiteral("\n---\n"))));
        QVERIFY(streamed > 3);

        const QVariantList user = role(app.chat, row - 1, "segments").toList();
        QCOMPARE(user.size(), 4);
        const auto seg = [&](int i, const char* key) {
            return user.at(i).toMap().value(QLatin1String(key));
        };
        QCOMPARE(seg(0, "kind").toString(), QStringLiteral("text"));
        QCOMPARE(seg(0, "text").toString(), QStringLiteral("Why do these differ?"));
        QCOMPARE(seg(1, "kind").toString(), QStringLiteral("code"));
        QCOMPARE(seg(1, "language").toString(), QStringLiteral("python"));
        QCOMPARE(seg(1, "text").toString(), QStringLiteral("print(`a`)"));
        QCOMPARE(seg(1, "open").toBool(), false);
        QCOMPARE(seg(2, "text").toString(), QStringLiteral("and"));
        QCOMPARE(seg(3, "language").toString(), QStringLiteral("js"));
        QCOMPARE(seg(3, "text").toString(), QStringLiteral("console.log(1)"));
        QCOMPARE(app.chat.get(row - 1).value(QStringLiteral("segments")).toList(), user);
        // The finished reply (and after a reload from the store) splits as its text does.
        QTRY_COMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
        QCOMPARE(role(app.chat, row, "segments").toList(),
                 expected_segments(role(app.chat, row, "text").toString()));
        app.chat.reload();
        QTRY_COMPARE(role(app.chat, row, "segments").toList(),
                     expected_segments(role(app.chat, row, "text").toString()));
        // No clipboard without a QGuiApplication; never for prose or a segment not there.
        const qint64 user_id = role(app.chat, row - 1, "messageId").toLongLong();
        QVERIFY(!app.chat.copyCode(user_id, 1));
        QVERIFY(!app.chat.copyCode(user_id, 0));
        QVERIFY(!app.chat.copyCode(user_id, 9));
        QVERIFY(!app.chat.copyCode(-5, 1));
        // Another conversation: rows (and their segments) replaced.
        const qint64 other = create_conversation(app, -1);
        app.chat.setConversationId(other);
        QTRY_VERIFY(app.chat.canSend());
        QCOMPARE(app.chat.count(), 0);
        app.chat.setConversationId(c);
        QTRY_COMPARE(app.chat.count(), 2);
        QCOMPARE(role(app.chat, 0, "segments").toList(), user);
    }

    // Views hear of a streaming reply at most once a frame (kUpdateIntervalMs), however
    // fast tokens come: the GUI does not lay the text out again for every token.
    void streamingUpdatesAreCoalesced() {
        App app;
        START(fixture_, app, QStringLiteral("coalesced.sqlite3"), true, fixture_.slow_model_path());
        const qint64 c = create_conversation(app, -1);
        app.chat.setMaxReplyTokens(300);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QElapsedTimer clock;
        std::vector<qint64> updates;  // ms, of text updates of the streaming reply
        connect(&app.chat, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& tl, const QModelIndex&, const QList<int>& roles) {
                    if (roles.contains(MessageListModel::TextRole) &&
                        role(app.chat, tl.row(), "state").toString() == QLatin1String("streaming"))
                        updates.push_back(clock.elapsed());
                });
        clock.start();
        const int row = send_and_wait(app, QStringLiteral("Talk for a while"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 300);
        QVERIFY2(updates.size() >= 3, qPrintable(QString::number(updates.size())));
        // A timer of kUpdateIntervalMs cannot fire more often; the first token is shown at
        // once (one more).
        const qint64 span = updates.back() - updates.front();
        const auto bound = static_cast<size_t>(span / MessageListModel::kUpdateIntervalMs + 2);
        QVERIFY2(updates.size() <= bound,
                 qPrintable(QStringLiteral("%1 updates in %2 ms").arg(updates.size()).arg(span)));
        QVERIFY(updates.size() < 300);
    }

    // Regenerate samples with a new seed each time (the same seed gave the same reply word
    // for word at temperature 0.8), and the seed used is stored with the reply; a seed the
    // chat fixes is used for every reply.
    void seedsAreFreshUnlessFixed() {
        App app;
        START(fixture_, app, QStringLiteral("seeds.sqlite3"));
        SamplingParams hot;
        hot.temperature = 1.5f;
        hot.top_k = 0;
        hot.top_p = 1.0f;
        hot.min_p = 0.0f;
        app.chat.setDefaultSampling(hot);
        app.chat.setMaxReplyTokens(40);
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        const int row = send_and_wait(app, QStringLiteral("Say anything"));
        QVERIFY(row > 0);
        const QString seed1 = role(app.chat, row, "seed").toString();
        QVERIFY(!seed1.isEmpty());
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.regenerate());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_COMPARE(role(app.chat, row, "variantCount").toInt(), 2);
        const QString seed2 = role(app.chat, row, "seed").toString();
        QVERIFY(!seed2.isEmpty());
        QVERIFY2(seed1 != seed2, qPrintable(seed1));
        // Stored: a reload reads it back from the history.
        QVERIFY(settle(app));
        app.chat.reload();
        QTRY_COMPARE(role(app.chat, row, "seed").toString(), seed2);

        // A fixed seed: the same reply twice.
        app.chat.setConversationSampling({{QStringLiteral("seed"), QStringLiteral("42")}});
        QCOMPARE(app.chat.conversationSampling().value(QStringLiteral("seed")).toString(),
                 QStringLiteral("42"));
        QStringList texts;
        for (int i = 0; i < 2; ++i) {
            finished.clear();
            QVERIFY(app.chat.regenerate());
            QVERIFY(finished.wait(kReplyTimeoutMs));
            QTRY_COMPARE(role(app.chat, row, "variantCount").toInt(), 3 + i);
            QCOMPARE(role(app.chat, row, "seed").toString(), QStringLiteral("42"));
            texts << role(app.chat, row, "text").toString();
        }
        QCOMPARE(texts[0], texts[1]);
    }

    // A reply cut at its token limit says so (finishReason "length", also after a reload),
    // and Continue appends to the same message: its prompt is the earlier prompt plus the
    // reply's tokens, so all of it comes from the KV cache.
    void lengthLimitAndContinue() {
        App app;
        START(fixture_, app, QStringLiteral("continue.sqlite3"));
        app.chat.setMaxReplyTokens(24);
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        const int row = send_and_wait(app, QStringLiteral("Tell me about the sea"));
        QVERIFY(row > 0);
        const qint64 reply = role(app.chat, row, "messageId").toLongLong();
        QCOMPARE(role(app.chat, row, "finishReason").toString(), QStringLiteral("length"));
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 24);
        const QString first_text = role(app.chat, row, "text").toString();
        const int first_prompt = role(app.chat, row, "promptTokensCached").toInt() +
                                 role(app.chat, row, "promptTokensComputed").toInt();
        QVERIFY(settle(app));
        app.chat.reload();
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, row, "finishReason").toString(), QStringLiteral("length"));
        QVERIFY(app.chat.canContinue(reply));
        QVERIFY(
            !app.chat.canContinue(role(app.chat, row - 1, "messageId").toLongLong()));  // a user's

        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.continueReply(reply));
        QVERIFY(app.chat.generating());
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QCOMPARE(finished.at(0).at(0).toLongLong(), reply);  // the same message
        QCOMPARE(app.chat.count(), row + 1);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 48);
        QVERIFY(role(app.chat, row, "text").toString().startsWith(first_text));
        QVERIFY(role(app.chat, row, "text").toString().size() > first_text.size());
        // The earlier prompt and the 24 tokens were cached (all but the last, which is
        // always computed to give the next token's logits).
        QVERIFY2(role(app.chat, row, "promptTokensCached").toInt() >= first_prompt + 24 - 1,
                 qPrintable(QString::number(role(app.chat, row, "promptTokensCached").toInt())));
        QCOMPARE(role(app.chat, row, "finishReason").toString(), QStringLiteral("length"));
        // The store has the whole of it.
        const QString whole = role(app.chat, row, "text").toString();
        QVERIFY(settle(app));
        app.chat.reload();
        QVERIFY(settle(app));
        QCOMPARE(role(app.chat, row, "text").toString(), whole);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 48);
        QCOMPARE(role(app.chat, row, "state").toString(), QStringLiteral("done"));
    }

    // A search hit opens its conversation scrolled to the message, on the message's branch
    // when another one is shown.
    void revealMessage() {
        App app;
        START(fixture_, app, QStringLiteral("reveal.sqlite3"));
        app.chat.setMaxReplyTokens(8);
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(app, QStringLiteral("First question")) > 0);
        QVERIFY(send_and_wait(app, QStringLiteral("Second question")) > 0);
        const qint64 old_second = role(app.chat, 2, "messageId").toLongLong();
        // A branch: the second question edited; the old one is on the branch not shown.
        QSignalSpy finished(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.editAndResend(old_second, QStringLiteral("Another second question")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        QTRY_VERIFY(app.chat.rowOf(old_second) < 0);

        QSignalSpy revealed(&app.chat, &MessageListModel::messageRevealed);
        const qint64 first = role(app.chat, 0, "messageId").toLongLong();
        app.chat.revealMessage(first);  // on screen: at once
        QCOMPARE(revealed.count(), 1);
        QCOMPARE(revealed.at(0).at(0).toInt(), 0);
        app.chat.revealMessage(old_second);  // another branch: shown, then revealed
        QTRY_COMPARE(revealed.count(), 2);
        QCOMPARE(revealed.at(1).at(0).toInt(), 2);
        QCOMPARE(app.chat.rowOf(old_second), 2);
        // Opening a conversation and revealing in one go (the rows come later).
        app.chat.setConversationId(-1);
        app.chat.setConversationId(c);
        app.chat.revealMessage(first);
        QTRY_COMPARE(revealed.count(), 3);
        QCOMPARE(revealed.at(2).at(0).toInt(), 0);
    }

    // A chat's own reply settings are stored and used: over the persona's, over the app's.
    void conversationSampling() {
        App app;
        START(fixture_, app, QStringLiteral("chat-sampling.sqlite3"));
        const qint64 c = create_conversation(app, -1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(app.chat.conversationSampling().isEmpty());
        app.chat.setConversationSampling({{QStringLiteral("temperature"), 0.3},
                                          {QStringLiteral("maxTokens"), 5},
                                          {QStringLiteral("frequencyPenalty"), 9.0},  // clamped
                                          {QStringLiteral("topK"), QString()}});      // unset
        QVERIFY(settle(app));
        app.chat.setConversationId(-1);
        app.chat.setConversationId(c);
        QTRY_VERIFY(app.chat.canSend());
        const QVariantMap m = app.chat.conversationSampling();
        QCOMPARE(m.value(QStringLiteral("temperature")).toDouble(), 0.3);
        QCOMPARE(m.value(QStringLiteral("maxTokens")).toInt(), 5);
        QCOMPARE(m.value(QStringLiteral("frequencyPenalty")).toDouble(),
                 AppSettings::kFrequencyPenaltyMax);
        QVERIFY(!m.contains(QStringLiteral("topK")));
        // maxTokens 5: the reply stops there although the app's default is 512.
        app.chat.setMaxReplyTokens(512);
        const int row = send_and_wait(app, QStringLiteral("Hello"));
        QVERIFY(row > 0);
        QCOMPARE(role(app.chat, row, "generatedTokens").toInt(), 5);
    }

    void destroyedWhileStreaming() {
        QString db;
        {
            App app;
            START(fixture_, app, QStringLiteral("teardown.sqlite3"));
            const qint64 c = create_conversation(app, -1);
            app.chat.setMaxReplyTokens(500);
            app.chat.setConversationId(c);
            QTRY_VERIFY(app.chat.canSend());
            QSignalSpy started(&app.chat, &MessageListModel::replyStarted);
            QVERIFY(app.chat.send(QStringLiteral("Talk for a long time")));
            QVERIFY(started.wait(kReplyTimeoutMs));
        }  // everything goes at once, mid-reply
        // The reply was kept, marked stopped.
        App again;
        START(fixture_, again, QStringLiteral("teardown.sqlite3"), false);
        QTRY_COMPARE(again.conversations.count(), 1);
        again.chat.setConversationId(role(again.conversations, 0, "conversationId").toLongLong());
        QTRY_COMPARE(again.chat.count(), 2);
        QCOMPARE(role(again.chat, 1, "state").toString(), QStringLiteral("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestMessageListModel)
#include "tst_message_list_model.moc"
