// Replies in the real main window offscreen (software renderer, synthetic model), as a
// user meets them: typed with no chat open, cut at their length limit and continued with
// the Continue button, finished while another chat was on screen and seen whole on
// return (its row marked while it streams), found by search and scrolled to, the status bar's speed
// the reply's own, and a chat's own reply settings set through its dialog, and an edit that opens
// in view and keeps the earlier version one click away.
#include <QFile>
#include <QQmlContext>
#include <QQmlProperty>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "ui_harness.h"

namespace {

constexpr int kReplyTimeoutMs = 60000;

}  // namespace

class TestUiReplies : public QObject {
    Q_OBJECT
    UiHarness ui_;

    void type_and_send(const QString& text) {
        QQuickItem* field = ui_.item(QStringLiteral("composerField"));
        ui_.click(field);
        field->forceActiveFocus();
        ui_.type(text);
        ui_.key(Qt::Key_Return);
    }

    // The list is scrolled to its end and the last row is whole above the composer.
    bool last_row_in_view() {
        QQuickItem* list = ui_.item(QStringLiteral("messageList"));
        QQuickItem* last = ui_.item(QStringLiteral("message_%1").arg(ui_.chat->count() - 1));
        if (!list || !last) return false;
        const qreal list_bottom = list->mapToScene(QPointF(0, list->height())).y();
        const qreal last_bottom = last->mapToScene(QPointF(0, last->height())).y();
        // Scrolled to the end, unless it all fits (then a ListView with margins is not
        // "at the end").
        const bool fits = prop(list, "contentHeight").toReal() <= list->height();
        return (fits || prop(list, "atYEnd").toBool()) && last_bottom <= list_bottom + 1;
    }

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        QVERIFY2(ui_.start(QStringLiteral("light"), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(ui_.personas->count() >= 4, 10000);
    }

    // With no chat open, what is typed starts a chat and is sent in it (it used to be lost:
    // the new chat was not ready when the text was handed over).
    void typedWithNoChatOpen() {
        QCOMPARE(ui_.chat->conversationId(), -1);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        type_and_send(QStringLiteral("Hello from nowhere"));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QVERIFY(ui_.chat->conversationId() >= 0);
        QTRY_COMPARE(ui_.chat->count(), 2);
        QCOMPARE(ui_.chat->get(0).value(QStringLiteral("text")).toString(),
                 QStringLiteral("Hello from nowhere"));
        QTRY_COMPARE(prop(ui_.item(QStringLiteral("composerField")), "text").toString(), QString());
    }

    // A reply cut at its limit says so and offers Continue, which appends to it.
    void continueAReplyCutAtItsLimit() {
        ui_.chat->setMaxReplyTokens(12);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        type_and_send(QStringLiteral("Go on and on"));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.chat->rowOf(reply) > 0);
        const int row = ui_.chat->rowOf(reply);
        QQuickItem* message = nullptr;
        QTRY_VERIFY((message = ui_.item(QStringLiteral("message_%1").arg(row))));
        QQuickItem* label = nullptr;
        QTRY_VERIFY((label = ui_.visible_item(QStringLiteral("replyEndLabel"), message)));
        QVERIFY(prop(label, "text").toString().contains(QStringLiteral("length limit")));
        QQuickItem* button = nullptr;
        QTRY_VERIFY((button = ui_.visible_item(QStringLiteral("continueButton"), message)));
        finished.clear();
        QVERIFY(ui_.click(button));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QCOMPARE(finished.at(0).at(0).toLongLong(), reply);
        QTRY_COMPARE(ui_.chat->get(row).value(QStringLiteral("generatedTokens")).toInt(), 24);
        QCOMPARE(ui_.chat->rowOf(reply), row);  // the same message, no new one
        // The header says how much of the context the chat fills: the reply's prompt and
        // the reply (the synthetic model's context is 1,024 tokens).
        const QVariantMap m = ui_.chat->get(row);
        const int used = m.value(QStringLiteral("promptTokensCached")).toInt() +
                         m.value(QStringLiteral("promptTokensComputed")).toInt() +
                         m.value(QStringLiteral("promptTokensShifted")).toInt() + 24;
        QQuickItem* meter = ui_.item(QStringLiteral("contextMeter"));
        QVERIFY(meter);
        QTRY_VERIFY(meter->isVisible());
        QTRY_COMPARE(prop(meter, "text").toString(),
                     QStringLiteral(" · %1 of 1,024 tokens").arg(used));
        ui_.chat->setMaxReplyTokens(24);
    }

    // The status bar's speed is the last reply's own statistic.
    void statusBarSpeedIsTheReplys() {
        const QVariantMap last = ui_.chat->get(ui_.chat->count() - 1);
        const double speed = last.value(QStringLiteral("tokensPerSecond")).toDouble();
        QVERIFY(speed > 0);
        QQuickItem* status = ui_.item(QStringLiteral("statusSpeed"));
        QVERIFY(status);
        QTRY_COMPARE(prop(status, "text").toString(),
                     QStringLiteral("last reply %1 tokens/s").arg(QString::number(speed, 'f', 1)));
    }

    // A reply that finished while another chat was on screen is seen whole on return (it
    // used to be under the composer).
    void finishedElsewhereIsSeenOnReturn() {
        const qint64 a = ui_.chat->conversationId();
        ui_.chat->setMaxReplyTokens(300);
        QSignalSpy started(ui_.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        type_and_send(QStringLiteral("A long one, please"));
        QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty(), kReplyTimeoutMs);
        ui_.conversations->createConversation(-1, QStringLiteral("Elsewhere"));
        QTRY_VERIFY(ui_.chat->conversationId() != a);
        // While it streams, its row in the list says so (a pulsing dot).
        QTRY_VERIFY(ui_.visible_item(
            QStringLiteral("busyDot"),
            ui_.item(QStringLiteral("conversationRow_%1").arg(ui_.conversations->rowOf(a)))));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        ui_.chat->setMaxReplyTokens(24);
        const int row = ui_.conversations->rowOf(a);
        QVERIFY(row >= 0);
        QQuickItem* item = nullptr;
        QTRY_VERIFY((item = ui_.item(QStringLiteral("conversationRow_%1").arg(row))));
        QVERIFY(ui_.click(item));
        QTRY_COMPARE(ui_.chat->conversationId(), a);
        QTRY_VERIFY(ui_.chat->count() >= 4);
        QTRY_VERIFY_WITH_TIMEOUT(last_row_in_view(), 5000);
    }

    // A search hit in an older message opens the chat scrolled to that message.
    void searchHitScrollsToItsMessage() {
        // Enough replies below the first message that it is out of view at the end.
        ui_.chat->setMaxReplyTokens(120);
        for (int i = 0; i < 3; ++i) {
            QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
            type_and_send(QStringLiteral("More, part %1").arg(i));
            QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        }
        ui_.chat->setMaxReplyTokens(24);
        const qint64 chat = ui_.chat->conversationId();
        ui_.conversations->createConversation(-1, QStringLiteral("Somewhere else"));
        QTRY_VERIFY(ui_.chat->conversationId() != chat);
        ui_.key(Qt::Key_F, Qt::ControlModifier);
        ui_.type(QStringLiteral("nowhere"));
        // (The list holds the conversations until the hits arrive.)
        QTRY_VERIFY_WITH_TIMEOUT(
            ui_.conversations->count() >= 1 &&
                ui_.conversations->get(0).value(QStringLiteral("isSearchHit")).toBool(),
            10000);
        QCOMPARE(ui_.conversations->get(0).value(QStringLiteral("conversationId")).toLongLong(),
                 chat);
        QSignalSpy revealed(ui_.chat, &MessageListModel::messageRevealed);
        QVERIFY(ui_.click(QStringLiteral("conversationRow_0")));
        QTRY_COMPARE(ui_.chat->conversationId(), chat);
        QTRY_COMPARE(revealed.count(), 1);
        QCOMPARE(revealed.at(0).at(0).toInt(), 0);
        QQuickItem* list = ui_.item(QStringLiteral("messageList"));
        // The message starts at the top of the list, in view.
        QString where;
        QTRY_VERIFY2_WITH_TIMEOUT(
            [&] {
                QQuickItem* first = ui_.item(QStringLiteral("message_0"));
                if (!first) {
                    where = QStringLiteral("message_0 is not built");
                    return false;
                }
                const qreal top = first->mapToScene(QPointF(0, 0)).y();
                const qreal list_top = list->mapToScene(QPointF(0, 0)).y();
                where = QStringLiteral("message_0 at y %1, list from %2, %3 high")
                            .arg(top)
                            .arg(list_top)
                            .arg(list->height());
                return top >= list_top - 1 && top < list_top + list->height() / 2;
            }(),
            qPrintable(where), 5000);
        QQuickItem* search = ui_.item(QStringLiteral("searchField"));
        search->forceActiveFocus();
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY(!ui_.conversations->searching());
    }

    // A chat's own reply settings, set in its dialog, are kept and used.
    void chatReplySettingsDialog() {
        QVERIFY(ui_.click(QStringLiteral("chatSettingsButton")));
        QQuickItem* own = nullptr;
        QTRY_VERIFY((own = ui_.visible_item(QStringLiteral("own_maxTokens"))));
        QVERIFY(ui_.click(own));
        QQuickItem* row = ui_.visible_item(QStringLiteral("replySetting_maxTokens"));
        QVERIFY(row);
        QObject* spin = nullptr;
        for (QObject* c : row->findChildren<QObject*>())
            if (c->inherits("QQuickSpinBox")) spin = c;
        QVERIFY(spin);
        spin->setProperty("value", 7);
        ui_.screenshot(QStringLiteral("chat-reply-settings"));
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("chatSettingsDialog"));
        QVERIFY(dialog);
        QMetaObject::invokeMethod(dialog, "accept");
        QTRY_COMPARE(ui_.chat->conversationSampling().value(QStringLiteral("maxTokens")).toInt(),
                     7);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        type_and_send(QStringLiteral("Short now"));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        // The reply's row comes with the reload that begin_reply starts, and a reply this
        // short may end first (under load it did): wait for the row, not only the end.
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.chat->rowOf(reply) > 0);
        QTRY_COMPARE(
            ui_.chat->get(ui_.chat->rowOf(reply)).value(QStringLiteral("generatedTokens")).toInt(),
            7);
    }

    // Edit opens its box in view, buttons included, even for a message at the bottom edge
    // of the list (it used to open below the composer); the edited message then shows
    // ‹ 2 / 2 › without hovering, and ‹ brings the first version and its reply back.
    void editOpensInViewAndKeepsVersions() {
        const int row = ui_.chat->count() - 2;  // the last question
        QVERIFY(row >= 0);
        QCOMPARE(ui_.chat->get(row).value(QStringLiteral("role")).toString(),
                 QStringLiteral("user"));
        const QString before = ui_.chat->get(row).value(QStringLiteral("text")).toString();
        QQuickItem* list = ui_.item(QStringLiteral("messageList"));
        QMetaObject::invokeMethod(list, "positionViewAtIndex", Q_ARG(int, row),
                                  Q_ARG(int, 2 /* ListView.End */));
        QVERIFY(ui_.settle());
        QQuickItem* message = ui_.item(QStringLiteral("message_%1").arg(row));
        QVERIFY(message);
        ui_.hover(message);
        QQuickItem* edit = nullptr;
        QTRY_VERIFY((edit = ui_.visible_item(QStringLiteral("editButton"), message)));
        QVERIFY(ui_.click(edit));
        QQuickItem* field = nullptr;
        QTRY_VERIFY((field = ui_.visible_item(QStringLiteral("editField"), message)));
        QTRY_VERIFY(field->hasActiveFocus());
        // From the box's top to its Save button's bottom, above the composer.
        QQuickItem* save = ui_.visible_item(QStringLiteral("saveEditButton"), message);
        QQuickItem* composer = ui_.item(QStringLiteral("composer"));
        QVERIFY(save && composer);
        QString where;
        const auto in_view = [&] {
            const qreal top = field->mapToScene(QPointF(0, 0)).y();
            const qreal bottom = save->mapToScene(QPointF(0, save->height())).y();
            const qreal list_top = list->mapToScene(QPointF(0, 0)).y();
            const qreal composer_top = composer->mapToScene(QPointF(0, 0)).y();
            where = QStringLiteral("edit box %1 to %2; list from %3, composer from %4")
                        .arg(top)
                        .arg(bottom)
                        .arg(list_top)
                        .arg(composer_top);
            return top >= list_top - 1 && bottom <= composer_top + 1;
        };
        QVERIFY(ui_.settle());
        QVERIFY2(in_view(), qPrintable(where));
        QVERIFY(ui_.screenshot(QStringLiteral("edit-in-view")));
        QMetaObject::invokeMethod(field, "selectAll");
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.type(QStringLiteral("An edited question"));
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QTRY_COMPARE(ui_.chat->get(row).value(QStringLiteral("text")).toString(),
                     QStringLiteral("An edited question"));
        // Away from the message: the versions still show.
        ui_.hover(ui_.item(QStringLiteral("composerField")));
        const auto in_message = [&](const char* name) -> QQuickItem* {
            for (QQuickItem* m : ui_.items(QStringLiteral("message_%1").arg(row)))
                if (QQuickItem* it =
                        m->isVisible() ? ui_.visible_item(QLatin1String(name), m) : nullptr)
                    return it;
            return nullptr;
        };
        QTRY_VERIFY2(
            in_message("variantLabel"),
            qPrintable(QStringLiteral("row %1 of %2: %3 version(s); %4 item(s) named so; list "
                                      "contentY %5 of %6, atYEnd %7 stick %8 count %9")
                           .arg(row)
                           .arg(ui_.chat->count())
                           .arg(ui_.chat->get(row).value("variantCount").toInt())
                           .arg(ui_.items(QStringLiteral("message_%1").arg(row)).size())
                           .arg(prop(list, "contentY").toReal())
                           .arg(prop(list, "contentHeight").toReal())
                           .arg(prop(list, "atYEnd").toBool())
                           .arg(prop(list, "stick").toBool())
                           .arg(prop(list, "count").toInt())));
        QTRY_COMPARE(prop(in_message("variantLabel"), "text").toString(), QStringLiteral("2 / 2"));
        QVERIFY(
            ui_.click_when_still([&] { return in_message("previousVariant"); }, Qt::LeftButton));
        QTRY_COMPARE(ui_.chat->get(row).value(QStringLiteral("text")).toString(), before);
        QTRY_COMPARE(ui_.chat->count(), row + 2);  // with its own reply
    }

    // Ctrl+K finds what was said, not only titles: a word of a message opens its chat at
    // that message, the matching words shown under the chat's title.
    void quickSwitcherFindsMessageText() {
        const qint64 target = ui_.chat->conversationId();
        ui_.conversations->createConversation(-1, QStringLiteral("Elsewhere again"));
        QTRY_VERIFY(ui_.chat->conversationId() != target);
        QSignalSpy revealed(ui_.chat, &MessageListModel::messageRevealed);
        ui_.key(Qt::Key_K, Qt::ControlModifier);
        QQuickItem* field = nullptr;
        QTRY_VERIFY((field = ui_.visible_item(QStringLiteral("quickSwitcherField"))));
        QTRY_VERIFY(field->hasActiveFocus());
        ui_.type(QStringLiteral("please"));  // in "A long one, please"; in no title
        QQuickItem* snippet = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (snippet = ui_.visible_item(QStringLiteral("quickSwitcherSnippet"))), 10000);
        QVERIFY(prop(snippet, "text").toString().contains(QStringLiteral("<b>please</b>")));
        QVERIFY(ui_.screenshot(QStringLiteral("quick-switcher-message")));
        ui_.key(Qt::Key_Return);
        // The switcher has gone (its fade-out ended) before anything else is clicked: a
        // fade cut short left its dimmer over the window for the tests after this one.
        QVERIFY(ui_.popups_closed());
        QTRY_COMPARE(ui_.chat->conversationId(), target);
        QTRY_COMPARE(revealed.count(), 1);
        QCOMPARE(
            ui_.chat->get(revealed.at(0).at(0).toInt()).value(QStringLiteral("text")).toString(),
            QStringLiteral("A long one, please"));
    }

    // The export dialog (what a chat menu's "Export as Markdown…" opens) offers
    // "<title>.md" in the documents folder; once saved, a notice says where. (The menu
    // itself does not open from the harness's synthesized click on ⋯; it was checked by
    // hand under Xvfb.)
    void exportDialogWritesTheFile() {
        const int row = ui_.conversations->rowOf(ui_.chat->conversationId());
        QVERIFY(row >= 0);
        const QString title = ui_.conversations->get(row).value(QStringLiteral("title")).toString();
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("exportDialog"));
        QVERIFY(dialog);
        // (The documents folder is a temporary one here.)
        ui_.engine->rootContext()->setContextProperty(QStringLiteral("documentsFolder"),
                                                      QUrl::fromLocalFile(ui_.dir.path()));
        QVERIFY(QMetaObject::invokeMethod(
            dialog, "ask", Q_ARG(QVariant, ui_.chat->conversationId()), Q_ARG(QVariant, title),
            Q_ARG(QVariant, QStringLiteral("markdown"))));
        QTRY_VERIFY(prop(dialog, "visible").toBool());
        const QString path = ui_.dir.filePath(title + QStringLiteral(".md"));
        QCOMPARE(prop(dialog, "selectedFile").toUrl().toLocalFile(), path);
        QMetaObject::invokeMethod(dialog, "accept");
        QQuickItem* notice = nullptr;
        QTRY_VERIFY2((notice = ui_.visible_item(QStringLiteral("noticeText"))),
                     qPrintable(ui_.conversations->errorString() + QStringLiteral(" | ") +
                                prop(dialog, "selectedFile").toString() + QStringLiteral(" | ") +
                                QString::number(QFile::exists(path))));
        QCOMPARE(prop(notice, "text").toString(), QStringLiteral("Saved to %1").arg(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(file.readAll()).contains(title));
    }

    // Settings → Chat history: a backup, then a chat deleted, then a restore brings back
    // that chat (and only it).
    void backupAndRestoreFromSettings() {
        ui_.engine->rootContext()->setContextProperty(QStringLiteral("documentsFolder"),
                                                      QUrl::fromLocalFile(ui_.dir.path()));
        ui_.show_page(QStringLiteral("settings"));
        const int chats = ui_.conversations->count();
        QVERIFY(chats >= 2);
        QQuickItem* button = ui_.visible_item(QStringLiteral("backupButton"));
        QVERIFY(button);
        QVERIFY(prop(button, "enabled").toBool());
        QVERIFY(ui_.click(button));
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("backupDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(prop(dialog, "visible").toBool());
        const QString path = prop(dialog, "selectedFile").toUrl().toLocalFile();
        QVERIFY2(path.startsWith(ui_.dir.path()) && path.endsWith(QStringLiteral(".hearth")),
                 qPrintable(path));
        QMetaObject::invokeMethod(dialog, "accept");
        QQuickItem* result = nullptr;
        QTRY_VERIFY((result = ui_.visible_item(QStringLiteral("backupResult"))));
        QTRY_COMPARE(prop(result, "text").toString(), QStringLiteral("Backed up to %1.").arg(path));
        QVERIFY(QFile::exists(path));

        const qint64 gone =
            ui_.conversations->get(chats - 1).value(QStringLiteral("conversationId")).toLongLong();
        ui_.conversations->remove(gone);
        ui_.conversations->commitDelete();
        QTRY_COMPARE(ui_.conversations->count(), chats - 1);

        QObject* restore = ui_.window->findChild<QObject*>(QStringLiteral("restoreDialog"));
        QVERIFY(restore);
        QVERIFY(ui_.click(QStringLiteral("restoreButton")));
        QTRY_VERIFY(prop(restore, "visible").toBool());
        restore->setProperty("currentFolder", QUrl::fromLocalFile(ui_.dir.path()));
        QTRY_VERIFY(restore->setProperty("selectedFile", QUrl::fromLocalFile(path)) &&
                    prop(restore, "selectedFile").toUrl() == QUrl::fromLocalFile(path));
        // (Qt's dialog takes the file from its list on accept(), where a person clicks it:
        // here the choice is made through selectedFile, so the dialog's answer is sent.)
        QMetaObject::invokeMethod(restore, "close");
        QMetaObject::invokeMethod(restore, "accepted");
        QTRY_COMPARE(prop(result, "text").toString(),
                     QStringLiteral("1 chat(s) restored, %1 already here.").arg(chats - 1));
        QTRY_COMPARE(ui_.conversations->count(), chats);
        QVERIFY(ui_.screenshot(QStringLiteral("settings-backup")));
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    TestUiReplies t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui_replies.moc"
