// The Model page driven in the real window offscreen (software renderer, synthetic
// models). "On this computer" lists the models in Hearth's folder and in a folder the user
// adds, says which one is open and whether each fits, opens another with a click, sets the
// one opened at start, sets a model's own defaults (the persona of its new chats, a reply
// setting), and deletes a file after asking, never the open one. "Get models"
// searches a local server playing Hugging Face, shows a repository's files with their fit,
// downloads one (checked against its SHA-256) and opens it. "Recommended" shows the
// catalog built in, offline, then a newer list from the local server, whose file is
// downloaded (checked against the Hub's X-Linked-Etag) and opened.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlProperty>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "core/app_settings.h"
#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/hub_search.h"
#include "core/message_list_model.h"
#include "core/model_catalog.h"
#include "core/model_downloader.h"
#include "core/model_library.h"
#include "core/persona_list_model.h"
#include "model/synthetic_model.h"
#include "test_http_server.h"
#include "ui_harness.h"

namespace {

bool write_model(const QString& path, uint32_t seed) {
    hearth::SyntheticModelSpec spec;
    spec.seed = seed;
    auto bytes = hearth::make_synthetic_model(spec);
    QFile f(path);
    return bytes && f.open(QIODevice::WriteOnly) &&
           f.write(reinterpret_cast<const char*>(bytes->data()), qint64(bytes->size())) ==
               qint64(bytes->size());
}

}  // namespace

class TestUiModels : public QObject {
    Q_OBJECT
    UiHarness ui_;
    QTemporaryDir extra_;
    ModelLibrary* library_ = nullptr;

    QQuickItem* row(const QString& file) {
        return ui_.visible_item(QStringLiteral("libraryRow_") + file);
    }
    QQuickItem* in_row(const QString& file, const char* name) {
        QQuickItem* r = row(file);
        return r ? ui_.visible_item(QLatin1String(name), r) : nullptr;
    }

  private slots:
    HEARTH_UI_CLEANUP(ui_)
    void initTestCase() {
        QString error;
        QVERIFY2(ui_.start(QStringLiteral("light"), &error), qPrintable(error));
        library_ = ui_.window->findChild<ModelLibrary*>(QStringLiteral("library"));
        QVERIFY(library_);
        // Hearth's folder is the harness's (it holds synthetic.gguf, the open model); the
        // other apps' folders of this machine stay out of the test.
        library_->setOtherApps(false);
        library_->setModelsDir(ui_.dir.path());
        QVERIFY(write_model(ui_.dir.filePath(QStringLiteral("second.gguf")), 7));
        QVERIFY(write_model(extra_.filePath(QStringLiteral("from-my-folder.gguf")), 9));
    }

    void listsTheModelsAndWhichIsOpen() {
        ui_.show_page(QStringLiteral("model"));
        QVERIFY(ui_.click(QStringLiteral("modelTabLibrary")));
        QTRY_VERIFY_WITH_TIMEOUT(library_->active() && !library_->scanning(), 10000);
        QTRY_VERIFY(row(QStringLiteral("synthetic.gguf")));
        QVERIFY(row(QStringLiteral("second.gguf")));
        QQuickItem* open_button = in_row(QStringLiteral("synthetic.gguf"), "libraryOpen");
        QVERIFY(open_button);
        QVERIFY(!open_button->isEnabled());  // open now
        QCOMPARE(open_button->property("text").toString(), QStringLiteral("Open now"));
        // Will it run here: in words, the numbers one click away.
        QQuickItem* fit = in_row(QStringLiteral("second.gguf"), "libraryFit");
        QVERIFY(fit);
        QVERIFY2(fit->property("text").toString().startsWith("Fits in memory; runs on the CPU"),
                 qPrintable(fit->property("text").toString()));
        QVERIFY(!in_row(QStringLiteral("second.gguf"), "libraryFitDetail"));
        QVERIFY(ui_.click(fit));
        QQuickItem* detail = nullptr;
        QTRY_VERIFY((detail = in_row(QStringLiteral("second.gguf"), "libraryFitDetail")));
        QVERIFY2(detail->property("text").toString().contains("KV cache"),
                 qPrintable(detail->property("text").toString()));
        // The open model cannot be deleted; another can.
        QVERIFY(!in_row(QStringLiteral("synthetic.gguf"), "libraryDelete")->isEnabled());
        QVERIFY(in_row(QStringLiteral("second.gguf"), "libraryDelete")->isEnabled());
    }

    void addsAFolder() {
        auto* dialog = ui_.window->findChild<QObject*>(QStringLiteral("libraryFolderDialog"));
        QVERIFY(dialog);
        QVERIFY(ui_.click(QStringLiteral("libraryAddFolder")));
        dialog->setProperty("selectedFolder", QUrl::fromLocalFile(extra_.path()));
        QMetaObject::invokeMethod(dialog, "accepted");
        QMetaObject::invokeMethod(dialog, "close");
        QVERIFY(ui_.popups_closed());
        QTRY_VERIFY_WITH_TIMEOUT(row(QStringLiteral("from-my-folder.gguf")), 10000);
        QVERIFY(ui_.screenshot(QStringLiteral("model-library")));
    }

    void opensAnotherModel() {
        QVERIFY(ui_.click(in_row(QStringLiteral("second.gguf"), "libraryOpen")));
        QTRY_VERIFY_WITH_TIMEOUT(
            ui_.bridge->loaded() && ui_.bridge->modelPath() == ui_.dir.filePath("second.gguf"),
            30000);
        QTRY_VERIFY(in_row(QStringLiteral("synthetic.gguf"), "libraryDelete")->isEnabled());
        QTRY_VERIFY(!in_row(QStringLiteral("second.gguf"), "libraryOpen")->isEnabled());
        // This model's page says what the estimate was.
        QVERIFY(ui_.click(QStringLiteral("modelTabThis")));
        QQuickItem* estimate = nullptr;
        QTRY_VERIFY((estimate = ui_.visible_item(QStringLiteral("fitEstimate"))));
        QVERIFY2(estimate->property("value").toString().contains("Fits in memory"),
                 qPrintable(estimate->property("value").toString()));
        QVERIFY(ui_.screenshot(QStringLiteral("model-this")));
        QVERIFY(ui_.click(QStringLiteral("modelTabLibrary")));
        QTRY_VERIFY(!library_->scanning() && row(QStringLiteral("second.gguf")));
    }

    void setsTheModelOpenedAtStart() {
        auto* settings = ui_.window->findChild<AppSettings*>(QStringLiteral("settings"));
        QVERIFY(settings);
        QVERIFY(ui_.click(in_row(QStringLiteral("from-my-folder.gguf"), "libraryDefault")));
        QTRY_COMPARE(settings->defaultModelPath(), extra_.filePath("from-my-folder.gguf"));
        QCOMPARE(settings->modelToOpen(), extra_.filePath("from-my-folder.gguf"));
        QVERIFY(ui_.click(in_row(QStringLiteral("from-my-folder.gguf"), "libraryDefault")));
        QTRY_COMPARE(settings->defaultModelPath(), QString());
    }

    // A model's own defaults: its row's Defaults… sets the persona its new chats start
    // with and a reply setting of its own; the row says so, a new chat (Ctrl+N) has that
    // persona, and its reply is the model's length.
    void setsAModelsOwnDefaults() {
        auto* settings = ui_.window->findChild<AppSettings*>(QStringLiteral("settings"));
        QVERIFY(settings);
        const QString second = ui_.dir.filePath(QStringLiteral("second.gguf"));
        QCOMPARE(settings->lastModelPath(), second);  // open since opensAnotherModel
        QSignalSpy created(ui_.personas, &PersonaListModel::personaCreated);
        ui_.personas->create(QStringLiteral("Terse"), QStringLiteral("Answer briefly."), QString(),
                             QString(), false, {});
        QTRY_VERIFY(!created.isEmpty());
        const qint64 persona = created.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.personas->rowOf(persona) >= 0);

        QVERIFY(!row(QStringLiteral("second.gguf"))->property("ownDefaults").toBool());
        QVERIFY(ui_.click(in_row(QStringLiteral("second.gguf"), "libraryDefaults")));
        QObject* dialog = ui_.window->findChild<QObject*>(QStringLiteral("modelDefaultsDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        QQuickItem* combo = ui_.visible_item(QStringLiteral("modelDefaultsPersona"));
        QVERIFY(combo);
        QCOMPARE(combo->property("currentIndex").toInt(), 0);  // none yet
        // The personas by name, after "None".
        const int choice = static_cast<int>(
            combo->property("model").toStringList().indexOf(QStringLiteral("Terse")));
        QVERIFY(choice > 0);
        combo->setProperty("currentIndex", choice);
        QQuickItem* own = ui_.visible_item(QStringLiteral("own_maxTokens"));
        QVERIFY(own);
        QVERIFY(ui_.click(own));
        QObject* spin = nullptr;
        for (QObject* c :
             ui_.visible_item(QStringLiteral("replySetting_maxTokens"))->findChildren<QObject*>())
            if (c->inherits("QQuickSpinBox")) spin = c;
        QVERIFY(spin);
        spin->setProperty("value", 5);
        // A model without a reasoning switch has no thinking row.
        QVERIFY(!ui_.visible_item(QStringLiteral("replySetting_thinking")));
        QVERIFY(ui_.screenshot(QStringLiteral("model-defaults")));
        QMetaObject::invokeMethod(dialog, "accept");
        QVERIFY(ui_.popups_closed());
        QCOMPARE(settings->modelSampling(second), (QVariantMap{{"maxTokens", 5}}));
        QCOMPARE(settings->modelPersona(second), static_cast<int>(persona));
        QTRY_VERIFY(row(QStringLiteral("second.gguf"))->property("ownDefaults").toBool());

        // Ctrl+N: a chat with the model's persona, whose replies are the model's length.
        QSignalSpy chats(ui_.conversations, &ConversationListModel::conversationCreated);
        ui_.key(Qt::Key_N, Qt::ControlModifier);
        QTRY_VERIFY(!chats.isEmpty());
        QTRY_COMPARE(ui_.chat->conversationId(), chats.at(0).at(0).toLongLong());
        QTRY_COMPARE(ui_.chat->personaId(), persona);
        QTRY_VERIFY(ui_.chat->canSend());
        QSignalSpy finished(ui_.chat, &MessageListModel::replyFinished);
        QVERIFY(ui_.chat->send(QStringLiteral("Hello")));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        const qint64 reply = finished.at(0).at(0).toLongLong();
        QTRY_VERIFY(ui_.chat->rowOf(reply) > 0);
        QTRY_COMPARE(
            ui_.chat->get(ui_.chat->rowOf(reply)).value(QStringLiteral("generatedTokens")).toInt(),
            5);
        // Back to the Model page for the tests after this one.
        ui_.show_page(QStringLiteral("model"));
        QVERIFY(ui_.click(QStringLiteral("modelTabLibrary")));
        QTRY_VERIFY(row(QStringLiteral("second.gguf")));
    }

    void recommendsDownloadsAndOpens() {
        auto* catalog = ui_.window->findChild<ModelCatalog*>(QStringLiteral("catalog"));
        auto* settings = ui_.window->findChild<AppSettings*>();
        auto* downloader = ui_.window->findChild<ModelDownloader*>(QStringLiteral("hubDownloader"));
        QVERIFY(catalog && settings && downloader);
        downloader->setModelsDir(ui_.dir.path());
        QTemporaryDir kept;
        catalog->setCacheDir(kept.path());
        settings->setCatalogUpdates(false);  // no network: the list built in
        QVERIFY(!catalog->updatesEnabled());

        QVERIFY(ui_.click(QStringLiteral("modelTabRecommended")));
        QVERIFY(!catalog->checking());
        const QString first = catalog->models().value(0).toMap().value("id").toString();
        QVERIFY(!first.isEmpty());
        QTRY_VERIFY(ui_.visible_item(QStringLiteral("catalogModel_") + first));
        QTRY_VERIFY(ui_.visible_item(QStringLiteral("catalogFileFit")));
        QVERIFY(ui_.screenshot(QStringLiteral("model-recommended")));

        // A newer list, from the address automatic checks use once they are allowed.
        TestHttpServer server;
        QVERIFY(server.listen());
        const QByteArray model = small_synthetic_model();
        const QByteArray sha = QCryptographicHash::hash(model, QCryptographicHash::Sha256).toHex();
        const QJsonObject entry{
            {"id", "tiny"},
            {"name", "Tiny Test"},
            {"family", "Test"},
            {"architecture", "llama"},
            {"repo", "someone/Tiny-GGUF"},
            {"license", "mit"},
            {"context_length", 4096},
            {"description", "A synthetic model."},
            {"recommended", "Q8_0"},
            {"shape", QJsonObject{{"layers", 2}, {"kv_heads", 2}, {"head_dim", 16}}},
            {"files",
             QJsonArray{QJsonObject{
                 {"name", "tiny-rec-Q8_0.gguf"}, {"quant", "Q8_0"}, {"size_bytes", model.size()}}}},
            {"sources", QJsonArray{"https://huggingface.co/someone/Tiny-GGUF"}}};
        server.route("/catalog.json").body =
            QJsonDocument(QJsonObject{{"format", "hearth.catalog"},
                                      {"version", 1},
                                      {"updated", "2999-01-01"},
                                      {"models", QJsonArray{entry}}})
                .toJson();
        TestRoute resolve;
        resolve.redirect_to = server.url("/cdn/tiny-rec").toEncoded();
        resolve.headers = {{"X-Linked-Etag", '"' + sha + '"'},
                           {"X-Linked-Size", QByteArray::number(model.size())}};
        server.setRoute("/someone/Tiny-GGUF/resolve/main/tiny-rec-Q8_0.gguf", resolve);
        server.route("/cdn/tiny-rec").body = model;
        catalog->setHubUrl(server.url("").toString());
        catalog->setUpdateUrl(server.url("/catalog.json").toString());
        QVERIFY(ui_.click(QStringLiteral("modelTabThis")));
        settings->setCatalogUpdates(true);
        QVERIFY(ui_.click(QStringLiteral("modelTabRecommended")));  // due: none kept yet
        QTRY_VERIFY_WITH_TIMEOUT(catalog->fromUpdate(), 10000);

        QQuickItem* entry_row = nullptr;
        QTRY_VERIFY((entry_row = ui_.visible_item(QStringLiteral("catalogModel_tiny"))));
        QVERIFY(ui_.click(entry_row));
        QQuickItem* file = nullptr;
        QTRY_VERIFY((file = ui_.visible_item(QStringLiteral("catalogFile_tiny-rec-Q8_0.gguf"))));
        QQuickItem* fit = ui_.visible_item(QStringLiteral("catalogFileFit"), file);
        QVERIFY(fit);
        QVERIFY2(fit->property("text").toString().startsWith("Fits in memory"),
                 qPrintable(fit->property("text").toString()));
        QVERIFY(ui_.click(ui_.visible_item(QStringLiteral("catalogDownload"), file)));
        const auto transfer = [this]() -> ModelDownloader* {
            QQuickItem* pane = ui_.visible_item(QStringLiteral("hubTransfer_tiny-rec-Q8_0.gguf"));
            return pane ? qvariant_cast<ModelDownloader*>(pane->property("job")) : nullptr;
        };
        QTRY_VERIFY_WITH_TIMEOUT(transfer() && transfer()->state() == ModelDownloader::Done, 15000);
        const QString path = ui_.dir.filePath(QStringLiteral("tiny-rec-Q8_0.gguf"));
        QVERIFY(QFile::exists(path));
        // Here now: the same button opens it.
        QQuickItem* button = nullptr;
        QTRY_VERIFY((button = ui_.visible_item(QStringLiteral("catalogDownload"), file)) &&
                    button->property("text").toString() == QLatin1String("Open"));
        QVERIFY(ui_.click(button));
        QTRY_VERIFY_WITH_TIMEOUT(ui_.bridge->loaded() && ui_.bridge->modelPath() == path, 30000);
        // Its pane closes; nothing is left unfinished.
        QQuickItem* pane = ui_.visible_item(QStringLiteral("hubTransfer_tiny-rec-Q8_0.gguf"));
        QVERIFY(pane);
        QVERIFY(ui_.click(ui_.visible_item(QStringLiteral("hubTransferClose"), pane)));
        QTRY_VERIFY(!transfer());
        QVERIFY(!ui_.visible_item(QStringLiteral("hubPending_tiny-rec-Q8_0.gguf")));
    }

    void searchesDownloadsAndOpens() {
        TestHttpServer hub_server;
        QVERIFY(hub_server.listen());
        const QByteArray model = small_synthetic_model();
        const QString sha = QString::fromLatin1(
            QCryptographicHash::hash(model, QCryptographicHash::Sha256).toHex());
        TestRoute search;
        search.body = QJsonDocument(QJsonArray{QJsonObject{{"id", "someone/Tiny-GGUF"},
                                                           {"downloads", 4321},
                                                           {"likes", 5},
                                                           {"gated", false}}})
                          .toJson();
        hub_server.setRoute("/api/models", search);
        TestRoute tree;
        tree.body = QJsonDocument(QJsonArray{QJsonObject{
                                      {"type", "file"},
                                      {"path", "tiny-Q8_0.gguf"},
                                      {"size", model.size()},
                                      {"oid", "ab"},
                                      {"lfs", QJsonObject{{"oid", sha}, {"size", model.size()}}}}})
                        .toJson();
        hub_server.setRoute("/api/models/someone/Tiny-GGUF/tree/main", tree);
        TestRoute resolve;
        resolve.redirect_to = "/cdn/tiny";
        hub_server.setRoute("/someone/Tiny-GGUF/resolve/main/tiny-Q8_0.gguf", resolve);
        TestRoute cdn;
        cdn.body = model;
        hub_server.setRoute("/cdn/tiny", cdn);

        auto* hub = ui_.window->findChild<HubSearch*>(QStringLiteral("hubSearch"));
        auto* downloader = ui_.window->findChild<ModelDownloader*>(QStringLiteral("hubDownloader"));
        QVERIFY(hub && downloader);
        hub->setBaseUrl(hub_server.url("").toString());
        downloader->setModelsDir(ui_.dir.path());

        QVERIFY(ui_.click(QStringLiteral("modelTabGet")));
        QVERIFY(ui_.click(QStringLiteral("hubSearchField")));
        ui_.type(QStringLiteral("tiny"));
        ui_.key(Qt::Key_Return);
        QQuickItem* result = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (result = ui_.visible_item(QStringLiteral("hubResult_someone/Tiny-GGUF"))), 10000);
        QVERIFY(ui_.click(result));
        QQuickItem* file = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (file = ui_.visible_item(QStringLiteral("hubFile_tiny-Q8_0.gguf"))), 10000);
        QQuickItem* fit = ui_.visible_item(QStringLiteral("hubFileFit"), file);
        QVERIFY(fit);
        QVERIFY2(fit->property("text").toString().startsWith("Fits in memory"),
                 qPrintable(fit->property("text").toString()));
        QVERIFY(ui_.screenshot(QStringLiteral("model-get")));
        // Slowly, so it can be paused and closed; then it is listed as unfinished, and
        // resumes from where it stopped.
        hub_server.route("/cdn/tiny").chunk = 4096;
        hub_server.route("/cdn/tiny").chunk_interval_ms = 20;
        QVERIFY(ui_.click(ui_.visible_item(QStringLiteral("hubDownload"), file)));
        // A download's pane holds its ModelDownloader.
        const auto transfer = [this]() -> ModelDownloader* {
            QQuickItem* pane = ui_.visible_item(QStringLiteral("hubTransfer_tiny-Q8_0.gguf"));
            return pane ? qvariant_cast<ModelDownloader*>(pane->property("job")) : nullptr;
        };
        QTRY_VERIFY_WITH_TIMEOUT(transfer() && transfer()->bytesReceived() >= 2 * 4096, 10000);
        QVERIFY(ui_.click(QStringLiteral("hubPause")));
        QTRY_COMPARE(transfer()->state(), ModelDownloader::Cancelled);
        QVERIFY(ui_.click(QStringLiteral("hubTransferClose")));
        QTRY_VERIFY(!transfer());
        QQuickItem* pending = nullptr;
        QTRY_VERIFY((pending = ui_.visible_item(QStringLiteral("hubPending_tiny-Q8_0.gguf"))));
        hub_server.route("/cdn/tiny").chunk = 0;
        QVERIFY(ui_.click(ui_.visible_item(QStringLiteral("hubPendingResume"), pending)));
        QTRY_VERIFY_WITH_TIMEOUT(transfer() && transfer()->state() == ModelDownloader::Done, 15000);
        QVERIFY(hub_server.requests().last().headers.value("range").startsWith("bytes="));
        QVERIFY(!ui_.visible_item(QStringLiteral("hubPending_tiny-Q8_0.gguf")));
        QVERIFY(QFile::exists(ui_.dir.filePath("tiny-Q8_0.gguf")));
        QVERIFY(ui_.click(QStringLiteral("hubOpenDownloaded")));
        QTRY_VERIFY_WITH_TIMEOUT(
            ui_.bridge->loaded() && ui_.bridge->modelPath() == ui_.dir.filePath("tiny-Q8_0.gguf"),
            30000);
        // The list of models on this computer has it, open now.
        QVERIFY(ui_.click(QStringLiteral("modelTabLibrary")));
        QTRY_VERIFY_WITH_TIMEOUT(row(QStringLiteral("tiny-Q8_0.gguf")), 10000);
        QTRY_VERIFY(!in_row(QStringLiteral("tiny-Q8_0.gguf"), "libraryOpen")->isEnabled());
    }

    void deletesAfterAsking() {
        const QString path = ui_.dir.filePath(QStringLiteral("synthetic.gguf"));
        QVERIFY(ui_.click(in_row(QStringLiteral("synthetic.gguf"), "libraryDelete")));
        auto* popup = ui_.window->findChild<QObject*>(QStringLiteral("libraryDeleteDialog"));
        QVERIFY(popup);
        QTRY_VERIFY(popup->property("opened").toBool());
        QVERIFY(QFile::exists(path));  // nothing until it is confirmed
        QMetaObject::invokeMethod(popup, "accept");
        QTRY_VERIFY(!QFile::exists(path));
        QTRY_VERIFY(!row(QStringLiteral("synthetic.gguf")));
        QVERIFY(QFile::exists(ui_.dir.filePath(QStringLiteral("second.gguf"))));
    }
};

int main(int argc, char** argv) {
    UiHarness::prepare_process();
    QGuiApplication app(argc, argv);
    TestUiModels t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_ui_models.moc"
