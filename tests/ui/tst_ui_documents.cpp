// A persona's documents in the real window offscreen (software renderer, the synthetic
// model): the persona's editor adds a file through its file dialog and shows what it
// costs against the model's context; two new chats with the persona then reply, and the
// second one's statistics say that the persona's prefix, its document included, came
// from memory while only the question was computed. A persona whose documents are too
// long to read whole has them looked up: a reply shows the passages its message was
// given as sources, and clicking one opens its file. A chat's own documents are added
// through its documents dialog (the header's Documents button).
#include <QDesktopServices>
#include <QFile>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "ui_harness.h"

namespace {

const QString kPersona = QStringLiteral("Keeper");

}  // namespace

class TestUiDocuments : public QObject {
    Q_OBJECT
    UiHarness ui_;
    QList<QUrl> opened_;  // what the app asked the desktop to open
    QTemporaryDir files_;
    int prefix_tokens_ = 0;

    // A new chat with the persona from its card, a question typed and sent; the reply's row.
    int ask_in_new_chat(const QString& question, const QString& persona = kPersona) {
        ui_.show_page(QStringLiteral("personas"));
        QQuickItem* button = ui_.visible_item(QStringLiteral("newChatWith_") + persona);
        if (!button || !ui_.popups_closed()) return -1;
        ui_.settle();
        const qint64 before = ui_.chat->conversationId();
        ui_.click(button);
        if (!QTest::qWaitFor(
                [&] {
                    return ui_.chat->conversationId() >= 0 &&
                           ui_.chat->conversationId() != before && ui_.chat->canSend();
                },
                10000))
            return -1;
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        QQuickItem* field = ui_.item(QStringLiteral("composerField"));
        ui_.click(field);
        field->forceActiveFocus();
        ui_.type(question);
        ui_.key(Qt::Key_Return);
        if (!finished.wait(60000)) return -1;
        const qint64 id = finished.at(0).at(0).toLongLong();
        static_cast<void>(QTest::qWaitFor([&] { return ui_.chat->rowOf(id) > 0; }, 5000));
        return ui_.chat->rowOf(id);
    }

    // The file dialog's row of a file (its delegates have a fileUrl), when shown.
    QQuickItem* file_row(const QUrl& url) const {
        QList<QQuickItem*> todo{ui_.window->contentItem()};
        while (!todo.isEmpty()) {
            QQuickItem* item = todo.takeLast();
            if (item->isVisible() && item->property("fileUrl").toUrl() == url) return item;
            todo.append(item->childItems());
        }
        return nullptr;
    }

    // As a person: Add files…, the dialog's folder, the file's row clicked, then Open.
    // prefix: the documents editor's ("persona", "chat").
    bool add_through_dialog(const QString& prefix, const QString& file) {
        if (!ui_.click(prefix + QStringLiteral("AddDocuments"))) return false;
        QObject* picker =
            ui_.window->findChild<QObject*>(prefix + QStringLiteral("DocumentDialog"));
        if (!picker || !QTest::qWaitFor([&] { return prop(picker, "visible").toBool(); }, 5000))
            return false;
        picker->setProperty("currentFolder", QUrl::fromLocalFile(files_.path()));
        QQuickItem* entry = nullptr;
        if (!QTest::qWaitFor([&] { return (entry = file_row(QUrl::fromLocalFile(file))); },
                             10000) ||
            !ui_.click(entry) ||
            !QTest::qWaitFor(
                [&] { return prop(picker, "selectedFile").toUrl() == QUrl::fromLocalFile(file); },
                5000))
            return false;
        QMetaObject::invokeMethod(picker, "accept");
        return true;
    }

  public slots:
    void open(const QUrl& url) { opened_ << url; }

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        QVERIFY2(ui_.start(QStringLiteral("light"), &error), qPrintable(error));
        QVERIFY(files_.isValid());
        QSignalSpy created(ui_.personas, &PersonaListModel::personaCreated);
        ui_.personas->create(kPersona, QStringLiteral("You keep the lighthouse."));
        QVERIFY(created.wait(10000));
        QTRY_VERIFY(ui_.personas->rowOf(created.at(0).at(0).toLongLong()) >= 0);
    }

    void addsADocumentAndShowsItsCost() {
        const QString file = files_.filePath(QStringLiteral("handbook.md"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 8; ++i)
            f.write("Rule " + QByteArray::number(i) + ": light the lamp at dusk.\n");
        f.close();

        ui_.show_page(QStringLiteral("personas"));
        QVERIFY(ui_.click(QStringLiteral("editPersona_") + kPersona));
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("personaDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(prop(dialog, "opened").toBool());
        QVERIFY(ui_.click(QStringLiteral("personaDocumentsToggle")));
        QVERIFY(add_through_dialog(QStringLiteral("persona"), file));

        QQuickItem* row = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (row = ui_.visible_item(QStringLiteral("personaDocument_handbook.md"))), 10000);
        QQuickItem* tokens = ui_.visible_item(QStringLiteral("documentTokens"), row);
        QVERIFY(tokens);
        QTRY_VERIFY(prop(tokens, "text").toString().endsWith(QStringLiteral(" tokens")));
        QQuickItem* cost = ui_.visible_item(QStringLiteral("personaPrefixCost"));
        QVERIFY(cost);
        const QRegularExpression numbers(QStringLiteral(
            "Instructions and documents: (\\d+) tokens of the model's (\\d+); (\\d+) are left"));
        QRegularExpressionMatch m;
        QTRY_VERIFY((m = numbers.match(prop(cost, "text").toString())).hasMatch());
        prefix_tokens_ = m.captured(1).toInt();
        QCOMPARE(m.captured(2).toInt(), ui_.bridge->contextLength());
        QCOMPARE(m.captured(3).toInt(), ui_.bridge->contextLength() - prefix_tokens_);
        QVERIFY(prefix_tokens_ > prop(tokens, "text").toString().section(' ', 0, 0).toInt());
        QVERIFY(ui_.screenshot(QStringLiteral("persona-documents")));
        QVERIFY(ui_.click(QStringLiteral("personaSaveButton")));
        QVERIFY(ui_.popups_closed());
    }

    void twoChatsShareItsPrefix() {
        QVERIFY(prefix_tokens_ > 0);
        QVERIFY(ask_in_new_chat(QStringLiteral("What is rule 3?")) > 0);
        const int row = ask_in_new_chat(QStringLiteral("What is rule 5?"));
        QVERIFY(row > 0);
        QQuickItem* message = ui_.item(QStringLiteral("message_%1").arg(row));
        QVERIFY(message);
        const QRegularExpression sources(QStringLiteral(
            "prompt: (?:(\\d+) from memory \\+ )?(?:(\\d+) from disk \\+ )?(\\d+) computed"));
        QRegularExpressionMatch m;
        QTRY_VERIFY((m = sources.match(prop(message, "statsText").toString())).hasMatch());
        const int cached = m.captured(1).toInt() + m.captured(2).toInt();
        const int computed = m.captured(3).toInt();
        QVERIFY2(cached >= prefix_tokens_ - ui_.bridge->kvBlockSize() && computed < 40,
                 qPrintable(prop(message, "statsText").toString()));
        QVERIFY(ui_.screenshot(QStringLiteral("persona-documents-chat")));
    }

    void followsASourceLink() {
        // A manual far longer than the small model's context: looked up, not read whole.
        const QString file = files_.filePath(QStringLiteral("manual.md"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# Lighthouse manual\n\n");
        for (int i = 0; i < 60; ++i)
            f.write("## Task " + QByteArray::number(i) + "\n\nWipe the lens at dawn.\n\n");
        f.write("## Fog\n\nIn fog, sound the horn every thirty seconds.\n");
        f.close();
        QSignalSpy created(ui_.personas, &PersonaListModel::personaCreated);
        ui_.personas->create(QStringLiteral("Archivist"),
                             QStringLiteral("You answer from the manual."));
        QVERIFY(created.wait(10000));
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.personas->rowOf(persona) >= 0);
        QSignalSpy added(ui_.personas, &PersonaListModel::documentsAdded);
        ui_.personas->addDocuments(persona, {file});
        QVERIFY(added.wait(20000));
        QTRY_VERIFY(ui_.personas->prefixCost(persona).value(QStringLiteral("lookup")).toBool());

        const int row =
            ask_in_new_chat(QStringLiteral("What do I do in fog?"), QStringLiteral("Archivist"));
        QVERIFY(row > 0);
        QQuickItem* message = ui_.item(QStringLiteral("message_%1").arg(row));
        QVERIFY(message);
        QQuickItem* sources = nullptr;
        QTRY_VERIFY((sources = ui_.visible_item(QStringLiteral("replySources"), message)));
        QQuickItem* first = ui_.visible_item(QStringLiteral("source0"), sources);
        QVERIFY(first);
        // It names the file and the section, and shows the passage's start.
        QStringList shown;
        QList<QQuickItem*> todo{first};
        while (!todo.isEmpty()) {
            QQuickItem* item = todo.takeLast();
            if (item->isVisible() && item->property("text").isValid())
                shown << item->property("text").toString();
            todo.append(item->childItems());
        }
        QVERIFY2(shown.contains(QStringLiteral("1. manual.md · Lighthouse manual › Fog")) &&
                     shown.contains(QStringLiteral("In fog, sound the horn every thirty seconds.")),
                 qPrintable(shown.join(QLatin1Char('|'))));
        QVERIFY(ui_.screenshot(QStringLiteral("reply-sources")));
        QDesktopServices::setUrlHandler(QStringLiteral("file"), this, "open");
        QVERIFY(ui_.click(first));
        QTRY_COMPARE(opened_, QList<QUrl>{QUrl::fromLocalFile(file)});
        QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
        // What the passage said is what the model was given with the question.
        const QVariantList given =
            ui_.chat->data(ui_.chat->index(row), MessageListModel::SourcesRole).toList();
        QVERIFY(!given.isEmpty());
        QCOMPARE(given.front().toMap().value(QStringLiteral("heading")).toString(),
                 QStringLiteral("Lighthouse manual › Fog"));
    }

    void aChatsOwnDocuments() {
        const QString file = files_.filePath(QStringLiteral("notes.md"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# Notes\n\nThe keeper's cat is called Biscuit.\n");
        f.close();
        QVERIFY(ui_.chat->conversationId() >= 0);
        ui_.show_page(QStringLiteral("chat"));
        QVERIFY(ui_.click(QStringLiteral("chatDocumentsButton")));
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("chatDocumentsDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(prop(dialog, "opened").toBool());
        QVERIFY(add_through_dialog(QStringLiteral("chat"), file));
        QQuickItem* row = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((row = ui_.visible_item(QStringLiteral("chatDocument_notes.md"))),
                                 10000);
        QQuickItem* cost = ui_.visible_item(QStringLiteral("chatPrefixCost"));
        QVERIFY(cost);
        QTRY_VERIFY(prop(cost, "text")
                        .toString()
                        .startsWith(QStringLiteral("Instructions and documents: ")));
        QVERIFY(ui_.screenshot(QStringLiteral("chat-documents")));
        QMetaObject::invokeMethod(dialog, "close");
        QVERIFY(ui_.popups_closed());
        QQuickItem* button = ui_.visible_item(QStringLiteral("chatDocumentsButton"));
        QVERIFY(button);
        QTRY_COMPARE(prop(button, "text").toString(), QStringLiteral("Documents (1)"));
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    TestUiDocuments t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui_documents.moc"
