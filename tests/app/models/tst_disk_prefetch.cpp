// The KV disk tier through the app's models: a conversation chatted in one run of the app
// is, in the next run (a fresh bridge on the same disk tier), read back from disk as soon
// as it is selected, before anything is sent; the next message then computes only itself.
#include <QSignalSpy>
#include <QTest>

#include "app_fixture.h"
#include "core/app_settings.h"
#include "engine.h"

using namespace hearth;

class TestDiskPrefetch : public QObject {
    Q_OBJECT
    AppFixture fixture_;

    // An app whose engine has a disk tier (the settings' default) in this suite's cache.
    bool open(App& app, AppSettings& settings) {
        fixture_.start(app, QStringLiteral("prefetch.db"), false);
        if (QTest::currentTestFailed()) return false;
        app.bridge.setSettings(&settings);
        app.bridge.setThreads(2);
        app.bridge.setKvMegabytes(16);
        app.bridge.load(fixture_.model_path());
        return QTest::qWaitFor([&] { return app.bridge.loaded(); }, kLoadTimeoutMs);
    }

  private slots:
    void selectedConversationIsReadBack() {
        AppSettings settings(fixture_.path(QStringLiteral("settings.ini")));
        QVERIFY(settings.kvDiskMb() > 0);
        QVERIFY(settings.kvDiskDir().startsWith(qEnvironmentVariable("XDG_CACHE_HOME")));
        qint64 conversation = -1;
        {
            App first;
            QVERIFY(open(first, settings));
            first.chat.setMaxReplyTokens(12);
            conversation = create_conversation(first, -1);
            QVERIFY(conversation >= 0);
            first.chat.setConversationId(conversation);
            QTRY_VERIFY(first.chat.canSend());
            QVERIFY(send_and_wait(
                        first,
                        QStringLiteral(
                            "Tell me a long story about a lighthouse keeper and the sea, please, "
                            "with a cat in it and a storm at the end.")) >= 0);
            first.bridge.refreshStats();
            QVERIFY(first.bridge.diskCacheOn());
        }  // the app closes: the engine writes down what it queued
        App second;
        QVERIFY(open(second, settings));
        second.bridge.engine()->wait_idle();  // pinned personas warm up (from disk, too)
        second.bridge.refreshStats();
        QVERIFY(second.bridge.diskCacheModelBlocks() > 0);
        const qint64 before = second.bridge.diskCacheLoadedBlocks();
        second.chat.setMaxReplyTokens(4);
        second.chat.setConversationId(conversation);  // selected in the sidebar
        QTRY_VERIFY(second.chat.canSend());           // the prefetch is queued by now
        second.bridge.engine()->wait_idle();
        second.bridge.refreshStats();
        const qint64 prefetched = second.bridge.diskCacheLoadedBlocks();
        QVERIFY(prefetched > before);
        // Sending now reads nothing more from disk but the partly filled last block: the
        // rest was prefetched into memory.
        QSignalSpy finished(&second.chat, &MessageListModel::replyFinished);
        QVERIFY(second.chat.send(QStringLiteral("And then?")));
        QVERIFY(finished.wait(kReplyTimeoutMs));
        second.bridge.engine()->wait_idle();
        second.bridge.refreshStats();
        qInfo("prefetched %lld blocks; the turn loaded %lld more",
              static_cast<long long>(prefetched - before),
              static_cast<long long>(second.bridge.diskCacheLoadedBlocks() - prefetched));
        QVERIFY(second.bridge.diskCacheLoadedBlocks() <= prefetched + 1);
        QVERIFY(second.bridge.stats().kv.prompt_tokens_cached > 0);
        // The reply says where its prompt came from: the disk tier's share is known (most
        // of it was prefetched into memory before the send, so it is small).
        QVERIFY(settle(second));
        const int row = second.chat.count() - 1;
        const int loaded = role(second.chat, row, "promptTokensLoaded").toInt();
        QVERIFY2(loaded >= 0 && loaded <= role(second.chat, row, "promptTokensCached").toInt(),
                 qPrintable(QString::number(loaded)));
        QVERIFY(loaded <= second.bridge.kvBlockSize());
    }

    // Every branch of a deleted conversation goes, the regenerated reply's too.
    void deletedConversationIsForgotten() {
        AppSettings settings(fixture_.path(QStringLiteral("settings-delete.ini")));
        App app;
        QVERIFY(open(app, settings));
        app.chat.setMaxReplyTokens(12);
        app.bridge.engine()->wait_idle();
        // The pinned personas' blocks are written down (pinned blocks are never forgotten).
        QTRY_VERIFY((app.bridge.refreshStats(),
                     app.bridge.diskCacheModelBlocks() >= app.bridge.stats().kv.blocks_pinned));
        const qint64 before = app.bridge.diskCacheModelBlocks();
        const qint64 doomed = create_conversation(app, -1);
        app.chat.setConversationId(doomed);
        QTRY_VERIFY(app.chat.canSend());
        QVERIFY(send_and_wait(
                    app, QStringLiteral(
                             "Something private that should not stay on disk once deleted, written "
                             "out at some length so that it fills several blocks of the cache.")) >=
                0);
        // Another branch: the reply regenerated shorter (so its last block differs).
        app.chat.setMaxReplyTokens(5);
        QSignalSpy again(&app.chat, &MessageListModel::replyFinished);
        QVERIFY(app.chat.regenerate());
        QVERIFY(again.wait(kReplyTimeoutMs));
        app.bridge.engine()->wait_idle();
        // Written down by the tier's worker, after the turn.
        QTRY_VERIFY((app.bridge.refreshStats(), app.bridge.diskCacheModelBlocks() > before));
        QSignalSpy deleted(&app.conversations, &ConversationListModel::deleted);
        app.conversations.remove(doomed);
        app.conversations.commitDelete();
        QVERIFY(deleted.wait(10000));
        QTRY_VERIFY_WITH_TIMEOUT((app.bridge.engine()->wait_idle(), app.bridge.refreshStats(),
                                  app.bridge.diskCacheModelBlocks() <= before),
                                 10000);
    }

    void settingsClearTheDiskCache() {
        AppSettings settings(fixture_.path(QStringLiteral("settings-clear.ini")));
        App app;
        QVERIFY(open(app, settings));
        app.bridge.engine()->wait_idle();  // pinned personas warm up and are written down
        app.bridge.refreshStats();
        QVERIFY(app.bridge.diskCacheOn());
        if (app.bridge.diskCacheBlocks() == 0) {  // this suite's first test wrote some
            app.chat.setConversationId(create_conversation(app, -1));
            QTRY_VERIFY(app.chat.canSend());
            QVERIFY(send_and_wait(app, QStringLiteral("A message long enough to fill blocks.")) >=
                    0);
            app.bridge.engine()->wait_idle();
        }
        app.bridge.clearDiskCache();
        QTRY_VERIFY_WITH_TIMEOUT((app.bridge.refreshStats(), app.bridge.diskCacheBlocks() == 0),
                                 10000);
        QCOMPARE(app.bridge.diskCacheBytes(), qint64{0});
        // Off in the settings: the next load runs without it and says so.
        settings.setKvDiskMb(0);
        QSignalSpy reloaded(&app.bridge, &EngineBridge::loadFinished);
        app.bridge.load(fixture_.model_path());
        QVERIFY(reloaded.wait(kLoadTimeoutMs));
        app.bridge.refreshStats();
        QVERIFY(!app.bridge.diskCacheOn());
    }
};

QTEST_MAIN(TestDiskPrefetch)
#include "tst_disk_prefetch.moc"
