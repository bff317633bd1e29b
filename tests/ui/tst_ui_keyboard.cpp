// The main flows with the keyboard only, in the real window offscreen (software renderer,
// synthetic model): write and send, copy the last reply (Ctrl+Shift+C), regenerate it
// (Ctrl+R), edit the last message (Up in the empty message box, Enter to save and send,
// the keyboard back in the message box), stop a reply (Ctrl+.), the pages (Ctrl+1..5),
// the shortcut sheet (F1, Esc), and Tab through the window and back to the message box;
// and every control has a name for a screen reader.
#include <QClipboard>
#include <QGuiApplication>
#include <QQmlContext>
#include <QQmlProperty>
#include <QSignalSpy>
#include <QTest>

#include "core/conversation_list_model.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "ui_harness.h"

namespace {

constexpr int kReplyTimeoutMs = 60000;

}  // namespace

class TestUiKeyboard : public QObject {
    Q_OBJECT
    UiHarness ui_;

    QQuickItem* composer_field() { return ui_.item(QStringLiteral("composerField")); }
    QString page() { return prop(ui_.window, "page").toString(); }
    QVariantMap last() { return ui_.chat->get(ui_.chat->count() - 1); }

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        QVERIFY2(ui_.start(QStringLiteral("light"), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(ui_.personas->count() >= 4, 10000);
        ui_.chat->setMaxReplyTokens(16);
    }

    void writeAndSend() {
        QTRY_VERIFY(composer_field()->hasActiveFocus());
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.type(QStringLiteral("First question"));
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QTRY_COMPARE(ui_.chat->count(), 2);
        QVERIFY(composer_field()->hasActiveFocus());
    }

    void copyAndRegenerateTheLastReply() {
        QClipboard* clipboard = QGuiApplication::clipboard();
        clipboard->setText(QStringLiteral("before"));
        ui_.key(Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_COMPARE(clipboard->text(), last().value(QStringLiteral("text")).toString());
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.key(Qt::Key_R, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QTRY_COMPARE(last().value(QStringLiteral("variantCount")).toInt(), 2);
    }

    void upEditsTheLastMessage() {
        QVERIFY(composer_field()->hasActiveFocus());
        ui_.key(Qt::Key_Up);
        QQuickItem* editor = nullptr;
        QTRY_VERIFY((editor = ui_.visible_item(QStringLiteral("editField"))));
        QTRY_VERIFY(editor->hasActiveFocus());
        QCOMPARE(prop(editor, "text").toString(), QStringLiteral("First question"));
        ui_.key(Qt::Key_A, Qt::ControlModifier);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.type(QStringLiteral("An edited question"));
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QTRY_COMPARE(ui_.chat->get(0).value(QStringLiteral("text")).toString(),
                     QStringLiteral("An edited question"));
        QCOMPARE(ui_.chat->get(0).value(QStringLiteral("variantCount")).toInt(), 2);
        QTRY_VERIFY(composer_field()->hasActiveFocus());
        // Esc closes the box without a change, and the keyboard is back too.
        ui_.key(Qt::Key_Up);
        QTRY_VERIFY((editor = ui_.visible_item(QStringLiteral("editField"))));
        ui_.key(Qt::Key_Escape);
        QTRY_VERIFY(!ui_.visible_item(QStringLiteral("editField")));
        QTRY_VERIFY(composer_field()->hasActiveFocus());
    }

    void ctrlPeriodStops() {
        ui_.chat->setMaxReplyTokens(2000);
        QSignalSpy started(ui_.chat, &MessageListModel::replyStarted);
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        ui_.type(QStringLiteral("A long one"));
        ui_.key(Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty(), kReplyTimeoutMs);
        ui_.key(Qt::Key_Period, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kReplyTimeoutMs);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        ui_.chat->setMaxReplyTokens(16);
    }

    void pagesByNumber() {
        const QStringList pages{QStringLiteral("chat"), QStringLiteral("personas"),
                                QStringLiteral("memory"), QStringLiteral("model"),
                                QStringLiteral("settings")};
        for (int i = static_cast<int>(pages.size()) - 1; i >= 0; --i) {
            ui_.key(Qt::Key_1 + i, Qt::ControlModifier);
            QTRY_COMPARE(page(), pages[i]);
        }
        ui_.key(Qt::Key_Comma, Qt::ControlModifier);
        QTRY_COMPARE(page(), QStringLiteral("settings"));
        ui_.key(Qt::Key_1, Qt::ControlModifier);
        QTRY_COMPARE(page(), QStringLiteral("chat"));
        QTRY_VERIFY(composer_field()->hasActiveFocus());
    }

    // F1 opens the sheet; it names every shortcut of the window; Esc closes it.
    void shortcutSheet() {
        ui_.key(Qt::Key_F1);
        QObject* sheet = ui_.window->findChild<QObject*>(QStringLiteral("shortcutsDialog"));
        QVERIFY(sheet);
        QTRY_VERIFY(prop(sheet, "opened").toBool());
        QTRY_VERIFY(ui_.items(QStringLiteral("shortcutRow")).size() >= 18);
        QVERIFY(ui_.screenshot(QStringLiteral("shortcuts")));
        ui_.key(Qt::Key_Escape);
        QVERIFY(ui_.popups_closed());
        QTRY_VERIFY(composer_field()->hasActiveFocus());
    }

    // Tab goes through the window's controls (each visible when it has the keyboard) and
    // comes back to the message box; the sidebar's search and New chat are on the way.
    void tabGoesAround() {
        QVERIFY(composer_field()->hasActiveFocus());
        QStringList seen;
        bool back = false;
        for (int i = 0; i < 80 && !back; ++i) {
            ui_.key(Qt::Key_Tab);
            QQuickItem* focus = ui_.window->activeFocusItem();
            QVERIFY(focus);
            back = focus == composer_field();
            if (back) break;
            QVERIFY2(focus->isVisible() && focus->width() > 0,
                     qPrintable(QString::fromLatin1(focus->metaObject()->className())));
            seen << (focus->objectName().isEmpty()
                         ? QString::fromLatin1(focus->metaObject()->className())
                         : focus->objectName());
        }
        QVERIFY2(back, qPrintable(seen.join(QLatin1Char(' '))));
        QVERIFY2(seen.contains(QStringLiteral("searchField")), qPrintable(seen.join(' ')));
        QVERIFY2(seen.contains(QStringLiteral("newChatButton")), qPrintable(seen.join(' ')));
    }

    // Every control a screen reader reaches has a name: its own Accessible.name, or a
    // button's words (Qt reads those out); a glyph ("⋯", "↑") is not a name. Walked on
    // every page and in the persona dialog, in the tree the window draws.
    void everyControlHasAName() {
        QStringList unnamed;
        const auto walk = [&](const QString& where) {
            std::function<void(QQuickItem*)> visit = [&](QQuickItem* i) {
                if (!i->isVisible()) return;
                bool control = false, worded = false;
                for (const QMetaObject* m = i->metaObject(); m; m = m->superClass()) {
                    const QByteArray n = m->className();
                    if (n == "QQuickAbstractButton") control = worded = true;
                    if (n == "QQuickTextField" || n == "QQuickTextArea" || n == "QQuickComboBox" ||
                        n == "QQuickSlider" || n == "QQuickSpinBox")
                        control = true;
                }
                if (control && i->isEnabled() && i->opacity() > 0) {
                    const QString name =
                        QQmlProperty(i, QStringLiteral("Accessible.name"), qmlContext(i))
                            .read()
                            .toString();
                    const QString text = i->property("text").toString();
                    const bool has_words =
                        std::any_of(text.begin(), text.end(), [](QChar c) { return c.isLetter(); });
                    if (name.trimmed().isEmpty() && !(worded && has_words))
                        unnamed << QStringLiteral("%1: %2 %3 \"%4\"")
                                       .arg(where,
                                            QString::fromLatin1(i->metaObject()->className()),
                                            i->objectName(), text);
                }
                for (QQuickItem* c : i->childItems()) visit(c);
            };
            visit(ui_.window->contentItem());  // (the popups too: the overlay is in it)
        };
        for (const QString& page :
             {QStringLiteral("chat"), QStringLiteral("personas"), QStringLiteral("memory"),
              QStringLiteral("model"), QStringLiteral("settings")}) {
            ui_.show_page(page);
            QVERIFY(ui_.settle());
            walk(page);
        }
        ui_.show_page(QStringLiteral("personas"));
        QVERIFY(ui_.click(QStringLiteral("newPersonaButton")));
        QTRY_VERIFY(ui_.visible_item(QStringLiteral("personaNameField")));
        QVERIFY(ui_.settle());
        walk(QStringLiteral("persona dialog"));
        ui_.key(Qt::Key_Escape);
        QVERIFY(ui_.popups_closed());
        ui_.show_page(QStringLiteral("chat"));
        QVERIFY2(unnamed.isEmpty(), qPrintable(unnamed.join(QLatin1Char('\n'))));
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    TestUiKeyboard t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui_keyboard.moc"
