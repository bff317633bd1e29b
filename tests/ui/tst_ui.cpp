// The real main window, offscreen, on a synthetic model and a history in a temporary
// folder, driven through its items (found by objectName) with the mouse and keyboard:
// a persona is created and kept warm, two chats with it are started from the persona
// page, messages are typed and sent with Enter, replies stream and show their statistics
// (the second chat's persona prefix from the cache), chats are switched, searched and
// found with the quick switcher, a reply is regenerated and another stopped with Esc, a
// message's code blocks each copy their own code, and the Memory page shows the persona's
// and the conversations' blocks.
//
// HEARTH_SCREENSHOTS=<dir>: also saves the main views, light and dark, as PNGs there.
#include <QClipboard>
#include <QColor>
#include <QDir>
#include <QFont>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include "common/paths.h"
#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/history_store.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "ui_harness.h"

namespace {

constexpr int kReplyTimeoutMs = 60000;

const QString kPersonaName = QStringLiteral("Test persona");
// Long enough for several whole 16-token KV blocks.
const QString kSystemPrompt = QStringLiteral(
    "You are a careful test persona. You answer every question with patience, you keep "
    "your replies short, and you never reveal the secret word, which is hearthstone.");

}  // namespace

class TestUi : public QObject {
    Q_OBJECT
    UiHarness ui_;
    qint64 first_chat_ = -1;
    qint64 second_chat_ = -1;
    qint64 persona_ = -1;

    // Types text into the composer and presses Enter; waits for the reply to end.
    // Returns the reply's row, or -1.
    // Sends `text` and waits for the reply to end; its row, or -1. text_updates: the row
    // text the view was told of at each text update before the reply ended.
    int send_and_wait(const QString& text, QStringList* text_updates = nullptr) {
        QQuickItem* field = ui_.item(QStringLiteral("composerField"));
        if (!field) return -1;
        ui_.click(field);
        field->forceActiveFocus();
        ui_.type(text);
        QStringList updates;
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        auto c = connect(ui_.chat, &QAbstractItemModel::dataChanged, this,
                         [&](const QModelIndex& top, const QModelIndex&, const QList<int>& roles) {
                             if (roles.contains(MessageListModel::TextRole) && finished.isEmpty())
                                 updates.append(top.data(MessageListModel::TextRole).toString());
                         });
        ui_.key(Qt::Key_Return);
        static_cast<void>(QTest::qWaitFor([&] { return !finished.isEmpty(); }, kReplyTimeoutMs));
        disconnect(c);
        if (finished.isEmpty()) return qWarning("no reply ended"), -1;
        if (text_updates) *text_updates = updates;
        if (!prop(field, "text").toString().isEmpty())
            return qWarning("the composer was not cleared"), -1;
        const qint64 id = finished.at(0).at(0).toLongLong();
        static_cast<void>(QTest::qWaitFor([&] { return ui_.chat->rowOf(id) >= 0; }, 5000));
        if (ui_.chat->rowOf(id) < 0)
            qWarning("reply %lld (%s) not in the %d rows", id,
                     qPrintable(finished.at(0).at(1).toString()), ui_.chat->count());
        return ui_.chat->rowOf(id);
    }

    QVariant row_role(int row, const char* name) {
        return ui_.chat->get(row).value(QLatin1String(name));
    }

    void start_chat_with_persona() {
        ui_.show_page(QStringLiteral("personas"));
        QQuickItem* button = nullptr;
        QTRY_VERIFY((button = ui_.item(QStringLiteral("newChatWith_") + kPersonaName)) &&
                    button->isVisible());
        QVERIFY(ui_.popups_closed());  // a popup closing still takes the clicks
        ui_.settle();                  // as a person waits for the page to be still
        const qint64 before = ui_.chat->conversationId();
        QVERIFY(ui_.click(button));
        QTRY_VERIFY_WITH_TIMEOUT(
            ui_.chat->conversationId() >= 0 && ui_.chat->conversationId() != before, 10000);
        QCOMPARE(prop(ui_.window, "page").toString(), QStringLiteral("chat"));
        QTRY_COMPARE(ui_.chat->personaName(), kPersonaName);
    }

    // A 600-token reply asked for in the composer, not yet sent.
    void write_long_request(const QString& text) {
        ui_.chat->setMaxReplyTokens(600);
        QQuickItem* field = ui_.item(QStringLiteral("composerField"));
        ui_.click(field);
        field->forceActiveFocus();
        ui_.type(text);
    }

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        // HEARTH_UI_MODEL: a real model instead of the synthetic one (the screenshots in
        // docs/ are made with the default model: scripts/screenshots).
        if (!qEnvironmentVariableIsEmpty("HEARTH_UI_MODEL")) ui_.kv_megabytes = 128;
        QVERIFY2(ui_.start(qEnvironmentVariable("HEARTH_THEME", QStringLiteral("light")), &error,
                           qEnvironmentVariable("HEARTH_UI_MODEL")),
                 qPrintable(error));
        // The default personas are seeded into the empty history.
        QTRY_VERIFY_WITH_TIMEOUT(ui_.personas->count() >= 4, 10000);
        QVERIFY(ui_.item(QStringLiteral("statusBar")));
    }

    void statusBarShowsTheEngine() {
        QQuickItem* model = ui_.item(QStringLiteral("statusModel"));
        QVERIFY(model);
        QVERIFY(prop(model, "text").toString().contains(ui_.bridge->modelName()));
        QTRY_VERIFY(prop(ui_.item(QStringLiteral("statusKv")), "text")
                        .toString()
                        .contains(QStringLiteral("of %1").arg(ui_.bridge->kvBlocksTotal())));
    }

    void createPersona() {
        QVERIFY(ui_.click(QStringLiteral("navPersonas")));
        QCOMPARE(prop(ui_.window, "page").toString(), QStringLiteral("personas"));
        QVERIFY(ui_.click(QStringLiteral("newPersonaButton")));
        QQuickItem* name = nullptr;
        QTRY_VERIFY((name = ui_.item(QStringLiteral("personaNameField"))) && name->isVisible());
        QTRY_VERIFY(name->hasActiveFocus());
        ui_.type(kPersonaName);
        QQuickItem* prompt = ui_.item(QStringLiteral("personaPromptField"));
        QVERIFY(ui_.click(prompt));
        prompt->forceActiveFocus();
        ui_.type(kSystemPrompt);
        QCOMPARE(prop(prompt, "text").toString(), kSystemPrompt);
        QQuickItem* warm = ui_.item(QStringLiteral("personaKeepWarmSwitch"));
        QVERIFY(ui_.click(warm));
        QVERIFY(prop(warm, "checked").toBool());
        // Its reply settings open within the window (ten rows scroll where it is short).
        QVERIFY(ui_.click(QStringLiteral("personaRepliesToggle")));
        QQuickItem* replies = nullptr;
        QTRY_VERIFY((replies = ui_.item(QStringLiteral("personaReplySettings"))) &&
                    replies->isVisible());
        QQuickItem* save = ui_.item(QStringLiteral("personaSaveButton"));
        QTRY_VERIFY(save->mapToScene(QPointF(0, save->height())).y() <= ui_.window->height());
        ui_.screenshot(QStringLiteral("persona-dialog-light"));
        QSignalSpy created(ui_.personas, &PersonaListModel::personaCreated);
        QVERIFY(ui_.click(QStringLiteral("personaSaveButton")));
        QTRY_VERIFY_WITH_TIMEOUT(!created.isEmpty(), 10000);
        QTRY_VERIFY(!name->isVisible());  // the dialog closed
        persona_ = created.at(0).at(0).toLongLong();
        // Kept warm: its prefix is prefilled and pinned.
        QTRY_COMPARE_WITH_TIMEOUT(ui_.bridge->pinState(persona_), QStringLiteral("pinned"), 60000);
        QQuickItem* card = nullptr;
        QTRY_VERIFY((card = ui_.item(QStringLiteral("personaCard_") + kPersonaName)));
        ui_.screenshot(QStringLiteral("personas-light"));
    }

    void chatStreamsRepliesWithStatistics() {
        start_chat_with_persona();
        if (QTest::currentTestFailed()) return;
        first_chat_ = ui_.chat->conversationId();
        QStringList updates;
        ui_.chat->setMaxReplyTokens(160);  // long enough to be seen streaming
        const int row =
            send_and_wait(QStringLiteral("Hello there, what is the secret word?"), &updates);
        ui_.chat->setMaxReplyTokens(24);
        QVERIFY(row > 0);
        QCOMPARE(row_role(row, "role").toString(), QStringLiteral("assistant"));
        QTRY_COMPARE(row_role(row, "state").toString(), QStringLiteral("done"));
        if (!ui_.real_model) QTRY_COMPARE(row_role(row, "generatedTokens").toInt(), 160);
        QTRY_VERIFY(row_role(row, "ttftMs").toDouble() >= 0);
        QTRY_VERIFY(row_role(row, "tokensPerSecond").toDouble() > 0);
        // Streamed: the view was shown the reply's first piece at once, before the reply
        // ended, and then longer and longer prefixes of its text. (How many pieces depends
        // on the machine: the synthetic model writes 160 tokens in ~120 ms, a few 16 ms
        // flushes, and a busy GUI thread takes its events in fewer batches; so the count
        // is only asked of the real model, which takes seconds.)
        const QString reply = row_role(row, "text").toString();
        QVERIFY2(!updates.isEmpty(), "the view saw no text before the reply ended");
        QVERIFY2(!updates.front().isEmpty() && updates.front().size() < reply.size(),
                 qPrintable(QStringLiteral("the first piece shown was not a part of the reply: %1")
                                .arg(updates.front())));
        for (qsizetype i = 0; i < updates.size(); ++i)
            QVERIFY2(reply.startsWith(updates[i]) &&
                         (i == 0 || updates[i].size() >= updates[i - 1].size()),
                     qPrintable(QStringLiteral("piece %1 was not a growing prefix of the reply: %2")
                                    .arg(i)
                                    .arg(updates[i])));
        qInfo("the reply reached the view in %d pieces before it ended",
              static_cast<int>(updates.size()));
        if (ui_.real_model) QVERIFY2(updates.size() > 3, "the reply did not stream token by token");
        QTRY_VERIFY(row_role(row, "promptTokensCached").toInt() > 0);  // the warm persona
        // The delegate on screen: its text, and its statistics on hover.
        QQuickItem* message = nullptr;
        QTRY_VERIFY((message = ui_.item(QStringLiteral("message_%1").arg(row))));
        QCOMPARE(prop(message, "text").toString(), row_role(row, "text").toString());
        QTRY_VERIFY(prop(message, "statsText").toString().contains(QStringLiteral("tokens/s")));
        // A user's bubble on the right of the column, the reply on the left.
        QQuickItem* user = ui_.item(QStringLiteral("message_%1").arg(row - 1));
        QVERIFY(user);
        QQuickItem* user_bubble = user->findChild<QQuickItem*>(QStringLiteral("messageBubble"));
        QQuickItem* reply_bubble = message->findChild<QQuickItem*>(QStringLiteral("messageBubble"));
        QVERIFY(user_bubble && reply_bubble);
        QTRY_VERIFY(user_bubble->width() > 0 && user_bubble->width() < user->width() * 0.7);
        const qreal user_left = user_bubble->mapToItem(user, QPointF(0, 0)).x();
        const qreal user_right = user_bubble->mapToItem(user, QPointF(user_bubble->width(), 0)).x();
        const qreal reply_left = reply_bubble->mapToItem(message, QPointF(0, 0)).x();
        QVERIFY2(user_left > user->width() / 2, qPrintable(QString::number(user_left)));
        QVERIFY2(user_right > user->width() - 40, qPrintable(QString::number(user_right)));
        QVERIFY2(reply_left < message->width() / 4, qPrintable(QString::number(reply_left)));
        ui_.hover(message);
        QList<QQuickItem*> stats = ui_.items(QStringLiteral("messageStats"));
        QTRY_VERIFY(std::any_of(stats.begin(), stats.end(),
                                [](QQuickItem* i) { return i->isVisible() && i->opacity() > 0; }));
        ui_.screenshot(QStringLiteral("chat-light"));
        // In the narrowest window, with the chat list open beside the chat, the statistics
        // wrap inside the message.
        const int width = ui_.window->width();
        ui_.window->setWidth(ui_.window->minimumWidth());
        ui_.window->setProperty("sidebarWanted", true);
        ui_.settle();
        ui_.hover(message);
        const auto wraps_inside = [&] {
            for (QQuickItem* s : ui_.items(QStringLiteral("messageStats"))) {
                if (!s->isVisible() || s->opacity() == 0 || !message->isAncestorOf(s)) continue;
                const qreal right = s->mapToItem(message, QPointF(s->width(), 0)).x();
                const int line = s->property("font").value<QFont>().pixelSize();
                return right <= message->width() && s->height() > 2 * line;
            }
            return false;
        };
        QTRY_VERIFY(wraps_inside());
        ui_.window->setProperty("sidebarWanted", false);
        ui_.window->setWidth(width);
    }

    void secondChatStartsFromTheCachedPersona() {
        start_chat_with_persona();
        if (QTest::currentTestFailed()) return;
        second_chat_ = ui_.chat->conversationId();
        QVERIFY(second_chat_ != first_chat_);
        const int row = send_and_wait(QStringLiteral("Tell me about hearths."));
        QVERIFY(row > 0);
        // The persona's system prompt (whole blocks of it) came from the cache.
        QTRY_VERIFY(row_role(row, "promptTokensCached").toInt() > 0);
        const int cached = row_role(row, "promptTokensCached").toInt();
        const int computed = row_role(row, "promptTokensComputed").toInt();
        QVERIFY2(cached >= ui_.bridge->kvBlockSize(),
                 qPrintable(QStringLiteral("cached %1").arg(cached)));
        QVERIFY(computed > 0);
        const QRegularExpression sources(QStringLiteral(  // memory, the disk tier, computed
            "prompt: (?:(\\d+) from memory \\+ )?(?:(\\d+) from disk \\+ )?(\\d+) computed"));
        QQuickItem* message = ui_.item(QStringLiteral("message_%1").arg(row));
        QRegularExpressionMatch m;
        QTRY_VERIFY((m = sources.match(prop(message, "statsText").toString())).hasMatch());
        QCOMPARE(m.captured(1).toInt() + m.captured(2).toInt(), cached);
        QCOMPARE(m.captured(3).toInt(), computed);
        QTRY_VERIFY(ui_.bridge->prefixHitRate() > 0);
        QTRY_VERIFY(prop(ui_.item(QStringLiteral("statusHits")), "text").toString() !=
                    QStringLiteral("prefix hits 0%"));

        // The persona's colour is the same in the chat header and on both chats' rows.
        const QColor expected(ui_.personas->colorOf(persona_));
        QVERIFY(expected.isValid());
        QQuickItem* header = ui_.item(QStringLiteral("chatHeaderAvatar"));
        QVERIFY(header);
        QTRY_COMPARE(prop(header, "tint").value<QColor>(), expected);
        QList<QQuickItem*> rows;
        QTRY_VERIFY((rows = ui_.items(QStringLiteral("conversationAvatar"))).size() >= 2);
        for (QQuickItem* avatar : rows) QCOMPARE(prop(avatar, "tint").value<QColor>(), expected);
        QCOMPARE(ui_.chat->personaId(), persona_);
    }

    void switchBetweenChats() {
        QCOMPARE(ui_.chat->conversationId(), second_chat_);
        // Newest first: the first chat is the second row.
        const int row = ui_.conversations->rowOf(first_chat_);
        QVERIFY(row >= 0);
        QQuickItem* item = nullptr;
        QTRY_VERIFY((item = ui_.item(QStringLiteral("conversationRow_%1").arg(row))));
        QVERIFY(ui_.click(item));
        QTRY_COMPARE(ui_.chat->conversationId(), first_chat_);
        QTRY_COMPARE(ui_.chat->count(), 2);
        QTRY_COMPARE(prop(ui_.item(QStringLiteral("message_0")), "text").toString(),
                     QStringLiteral("Hello there, what is the secret word?"));
        QVERIFY(ui_.click(
            QStringLiteral("conversationRow_%1").arg(ui_.conversations->rowOf(second_chat_))));
        QTRY_COMPARE(ui_.chat->conversationId(), second_chat_);
        QTRY_COMPARE(prop(ui_.item(QStringLiteral("message_0")), "text").toString(),
                     QStringLiteral("Tell me about hearths."));
    }

    void regenerateAndPage() {
        const int last = ui_.chat->count() - 1;
        QQuickItem* message = ui_.item(QStringLiteral("message_%1").arg(last));
        QVERIFY(message);
        ui_.hover(message);
        QList<QQuickItem*> buttons = ui_.items(QStringLiteral("regenerateButton"));
        QQuickItem* regen = nullptr;
        for (QQuickItem* b : buttons)
            if (b->isVisible()) regen = b;
        QVERIFY(regen);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        QVERIFY(ui_.click(regen));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QTRY_COMPARE(row_role(ui_.chat->count() - 1, "variantCount").toInt(), 2);
        QTRY_VERIFY([&] {
            for (QQuickItem* l : ui_.items(QStringLiteral("variantLabel")))
                if (prop(l, "text").toString() == QStringLiteral("2 / 2")) return true;
            return false;
        }());
    }

    void escStopsAReply() {
        write_long_request(QStringLiteral("Write a very long story."));
        QSignalSpy started(ui_.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(ui_.chat->generating(), 10000);
        QTRY_VERIFY(ui_.item(QStringLiteral("stopButton")));
        // Streaming (Esc while the reply is still being set up ends it before it starts).
        QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty(), 10000);
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        // (A real model may have ended its reply on its own first.)
        if (!ui_.real_model) QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        ui_.chat->setMaxReplyTokens(24);
    }

    // Esc with the Ctrl+K switcher open during a reply closes the switcher and leaves the
    // reply running (it used to stop the reply and leave the switcher open); the next Esc,
    // with nothing open, stops it.
    void escClosesAPopupBeforeStopping() {
        {  // With no reply running.
            ui_.key(Qt::Key_K, Qt::ControlModifier);
            QQuickItem* f = nullptr;
            QTRY_VERIFY((f = ui_.item(QStringLiteral("quickSwitcherField"))) &&
                        f->hasActiveFocus());
            ui_.key(Qt::Key_Escape);
            QTRY_VERIFY2(!f->isVisible(), "no reply: Esc left the switcher open");
        }
        write_long_request(QStringLiteral("Write another very long story."));
        QSignalSpy started(ui_.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty(), 10000);
        ui_.key(Qt::Key_K, Qt::ControlModifier);
        QQuickItem* switcher = nullptr;
        QTRY_VERIFY((switcher = ui_.item(QStringLiteral("quickSwitcherField"))) &&
                    switcher->hasActiveFocus());
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY(!switcher->isVisible());
        if (!ui_.real_model || finished.isEmpty()) {
            QVERIFY2(finished.isEmpty(), "Esc in the switcher stopped the reply");
            QVERIFY(ui_.chat->generating());
        }
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        if (!ui_.real_model) QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        ui_.chat->setMaxReplyTokens(24);
    }

    void shiftEnterIsANewLine() {
        QQuickItem* field = ui_.item(QStringLiteral("composerField"));
        ui_.click(field);
        field->forceActiveFocus();
        ui_.type(QStringLiteral("one"));
        ui_.key(Qt::Key_Return, Qt::ShiftModifier);
        ui_.type(QStringLiteral("two"));
        QCOMPARE(prop(field, "text").toString(), QStringLiteral("one\ntwo"));
        QVERIFY(!ui_.chat->generating());
        QMetaObject::invokeMethod(field, "clear");
    }

    // A message with two fenced code blocks shows each with a Copy button of its own, which
    // puts exactly that block's code (no fences) on the clipboard and says so.
    void codeBlocksHaveCopyButtons() {
        QVERIFY(!ui_.chat->generating());
        const QString first = QStringLiteral("int answer = 42;");
        const QString second = QStringLiteral("echo \"two\"\nls -l `pwd`");
        const QString text =
            QStringLiteral("Two blocks:\n\n```cpp\n%1\n```\n\nand then\n\n~~~sh\n%2\n~~~")
                .arg(first, second);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        QVERIFY(ui_.chat->send(text));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.chat->rowOf(reply) > 0);
        const int row = ui_.chat->rowOf(reply) - 1;
        QCOMPARE(row_role(row, "text").toString(), text);
        QQuickItem* list = ui_.item(QStringLiteral("messageList"));
        QVERIFY(list);
        QMetaObject::invokeMethod(list, "positionViewAtIndex", Q_ARG(int, row),
                                  Q_ARG(int, 1 /* ListView.Beginning */));
        QQuickItem* message = nullptr;
        QTRY_VERIFY((message = ui_.item(QStringLiteral("message_%1").arg(row))));
        QList<QQuickItem*> buttons;
        QTRY_VERIFY([&] {
            buttons.clear();
            for (QQuickItem* b : ui_.items(QStringLiteral("codeCopyButton")))
                if (message->isAncestorOf(b) && b->isVisible()) buttons << b;
            return buttons.size() == 2;
        }());
        std::sort(buttons.begin(), buttons.end(), [](QQuickItem* a, QQuickItem* b) {
            return a->mapToScene(QPointF()).y() < b->mapToScene(QPointF()).y();
        });
        // The languages in the headers.
        QStringList languages;
        for (QQuickItem* l : ui_.items(QStringLiteral("codeLanguage")))
            if (message->isAncestorOf(l)) languages << prop(l, "text").toString();
        QCOMPARE(languages.size(), 2);
        QVERIFY(languages.contains(QStringLiteral("cpp")) &&
                languages.contains(QStringLiteral("sh")));
        // On screen, then clicked.
        QTRY_VERIFY([&] {
            const QPointF p =
                buttons[1]->mapToScene(QPointF(buttons[1]->width() / 2, buttons[1]->height() / 2));
            return QRectF(0, 0, ui_.window->width(), ui_.window->height()).contains(p);
        }());
        QClipboard* clipboard = QGuiApplication::clipboard();
        clipboard->setText(QStringLiteral("before"));
        QCOMPARE(prop(buttons[1], "text").toString(), QStringLiteral("Copy"));
        QVERIFY(ui_.click(buttons[1]));
        QTRY_COMPARE(clipboard->text(), second);
        QCOMPARE(prop(buttons[1], "text").toString(), QStringLiteral("Copied"));
        QCOMPARE(prop(buttons[0], "text").toString(), QStringLiteral("Copy"));
        QVERIFY(ui_.click(buttons[0]));
        QTRY_COMPARE(clipboard->text(), first);
        // The feedback goes away.
        QTRY_COMPARE_WITH_TIMEOUT(prop(buttons[1], "text").toString(), QStringLiteral("Copy"),
                                  5000);
        ui_.screenshot(QStringLiteral("code-blocks-light"));
    }

    void searchFindsMessages() {
        ui_.key(Qt::Key_F, Qt::ControlModifier);
        QQuickItem* search = ui_.item(QStringLiteral("searchField"));
        QVERIFY(search);
        QTRY_VERIFY(search->hasActiveFocus());
        ui_.type(QStringLiteral("secret"));
        QTRY_VERIFY_WITH_TIMEOUT(ui_.conversations->searching() && ui_.conversations->count() >= 1,
                                 10000);
        QTRY_VERIFY([&] {
            for (QQuickItem* s : ui_.items(QStringLiteral("searchSnippet")))
                if (s->isVisible() && prop(s, "text").toString().contains(QStringLiteral("<b>")))
                    return true;
            return false;
        }());
        // Grouped by chat: the group's title is the chat's, over its matching messages.
        const QString title = ui_.conversations->get(0).value(QStringLiteral("title")).toString();
        QTRY_VERIFY([&] {
            for (QQuickItem* t : ui_.items(QStringLiteral("searchGroupTitle")))
                if (t->isVisible() && prop(t, "text").toString() == title) return true;
            return false;
        }());
        ui_.screenshot(QStringLiteral("search-light"));
        // A hit opens its conversation.
        QVERIFY(ui_.click(QStringLiteral("conversationRow_0")));
        QTRY_COMPARE(
            ui_.chat->conversationId(),
            ui_.conversations->get(0).value(QStringLiteral("conversationId")).toLongLong());
        search->forceActiveFocus();
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY(!ui_.conversations->searching());
        QTRY_VERIFY(ui_.conversations->count() >= 2);
    }

    void quickSwitcherOpensAChat() {
        ui_.key(Qt::Key_K, Qt::ControlModifier);
        QQuickItem* field = nullptr;
        QTRY_VERIFY((field = ui_.item(QStringLiteral("quickSwitcherField"))) && field->isVisible());
        QTRY_VERIFY(field->hasActiveFocus());
        const int row = ui_.conversations->rowOf(first_chat_);
        const QString title = ui_.conversations->get(row).value(QStringLiteral("title")).toString();
        if (!title.isEmpty()) ui_.type(title.left(5));
        QQuickItem* list = ui_.item(QStringLiteral("quickSwitcherList"));
        QVERIFY(list);
        QTRY_VERIFY(prop(list, "count").toInt() >= 1);
        // Down to the first chat when the titles do not tell them apart.
        const QVariantList matches =
            prop(ui_.item(QStringLiteral("quickSwitcher")), "matches").toList();
        int index = 0;
        for (int i = 0; i < matches.size(); ++i)
            if (matches[i].toMap().value(QStringLiteral("id")).toLongLong() == first_chat_)
                index = i;
        for (int i = 0; i < index; ++i) ui_.key(Qt::Key_Down);
        ui_.key(Qt::Key_Return);
        QTRY_COMPARE(ui_.chat->conversationId(), first_chat_);
        QTRY_VERIFY(!field->isVisible());
    }

    void memoryPageShowsTheBlocks() {
        QVERIFY(ui_.click(QStringLiteral("navMemory")));
        QQuickItem* grid = ui_.item(QStringLiteral("kvGrid"));
        QVERIFY(grid && grid->isVisible());
        QTRY_COMPARE(prop(grid, "blockCount").toInt(), ui_.bridge->kvBlocksTotal());
        // The persona's prefix is pinned (held by the pin alone, or shared with the chats
        // that start with it); the two chats keep their own tails resident.
        QTRY_VERIFY_WITH_TIMEOUT(
            prop(grid, "pinnedBlocks").toInt() + prop(grid, "sharedBlocks").toInt() > 0, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(prop(grid, "conversationBlocks").toInt() > 0, 5000);
        QVERIFY(!prop(grid, "pins").toList().isEmpty() || prop(grid, "sharedBlocks").toInt() > 0);
        QVERIFY(grid->height() > 0);
        ui_.screenshot(QStringLiteral("memory-light"));
    }

    void screenshotsOfTheMainViews() {
        if (qEnvironmentVariableIsEmpty("HEARTH_SCREENSHOTS"))
            QSKIP("HEARTH_SCREENSHOTS is not set");
        for (const QString& theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
            ui_.set_theme(theme);
            ui_.show_page(QStringLiteral("chat"));
            ui_.chat->setConversationId(first_chat_);
            QTRY_COMPARE(ui_.chat->count(), 2);
            // The search hit's mark gone, and the reply hovered: its statistics shown.
            QTRY_VERIFY_WITH_TIMEOUT(!ui_.visible_item(QStringLiteral("revealMark")), 5000);
            QQuickItem* reply = nullptr;
            QTRY_VERIFY((reply = ui_.item(QStringLiteral("message_1"))));
            ui_.hover(reply);
            QTRY_VERIFY(reply->findChild<QQuickItem*>(QStringLiteral("messageStats"))->opacity() >
                        0);
            QVERIFY(ui_.screenshot(QStringLiteral("chat-") + theme));
            ui_.show_page(QStringLiteral("personas"));
            QVERIFY(ui_.screenshot(QStringLiteral("personas-") + theme));
            ui_.show_page(QStringLiteral("memory"));
            QVERIFY(ui_.screenshot(QStringLiteral("memory-") + theme));
            ui_.show_page(QStringLiteral("model"));
            QVERIFY(ui_.screenshot(QStringLiteral("model-") + theme));
            ui_.show_page(QStringLiteral("settings"));
            QVERIFY(ui_.screenshot(QStringLiteral("settings-") + theme));
        }
        ui_.set_theme(QStringLiteral("light"));
    }

    // Last: without a model the window explains how to get one.
    void firstRunPageWithoutAModel() {
        ui_.show_page(QStringLiteral("chat"));
        ui_.bridge->load(ui_.dir.filePath(QStringLiteral("missing.gguf")));
        QTRY_VERIFY_WITH_TIMEOUT(!ui_.bridge->loading(), 10000);
        // A failed switch keeps the model and says why in a banner.
        QVERIFY(ui_.bridge->loaded());
        QQuickItem* banner = ui_.item(QStringLiteral("modelErrorBanner"));
        QVERIFY(banner);
        QTRY_VERIFY(banner->isVisible());
        QVERIFY(prop(banner, "text").toString().contains(QStringLiteral("missing.gguf")));
        ui_.bridge->unload();
        QQuickItem* open = ui_.item(QStringLiteral("openModelButton"));
        QVERIFY(open);
        QTRY_VERIFY(open->isVisible());
        // A file that is not there is no red error box (a first run has no model yet): a
        // plain note names the path.
        QQuickItem* note = ui_.item(QStringLiteral("welcomeMissingNote"));
        QTRY_VERIFY(note && note->isVisible());
        QVERIFY(prop(note, "text").toString().contains(QStringLiteral("missing.gguf")));
        QVERIFY(!ui_.item(QStringLiteral("welcomeError"))->isVisible());
        // Typing with no model says what to do instead of vanishing.
        QQuickItem* hint = ui_.item(QStringLiteral("welcomeTypedHint"));
        QVERIFY(hint && !hint->isVisible());
        ui_.type(QStringLiteral("hello"));
        QTRY_VERIFY(hint->isVisible());
        QVERIFY(prop(hint, "text").toString().contains(QStringLiteral("No model is open")));
        // The default model can be downloaded from here (not started: no network in tests;
        // tests/app/download/tst_default_model drives the installer end to end).
        QQuickItem* download = ui_.item(QStringLiteral("downloadDefaultButton"));
        QVERIFY(download);
        QTRY_VERIFY(download->isVisible());
        QVERIFY(download->width() > 0 && download->height() > 0);
        QObject* installer =
            ui_.window->findChild<QObject*>(QStringLiteral("defaultModelInstaller"));
        QVERIFY(installer);
        QCOMPARE(prop(installer, "destinationPath").toString(),
                 QDir::cleanPath(QString::fromStdString(hearth::paths::default_model_path())));
        QCOMPARE(prop(installer, "busy").toBool(), false);
        if (!qEnvironmentVariableIsEmpty("HEARTH_SCREENSHOTS")) {
            for (const QString& theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
                ui_.set_theme(theme);
                QVERIFY(ui_.screenshot(QStringLiteral("welcome-") + theme));
            }
        }
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    TestUi t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui.moc"
