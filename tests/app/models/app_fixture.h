// What the app's view-model suites share: the models wired as the window wires them, on a
// synthetic model and a store in a temporary folder, each under QAbstractItemModelTester
// (fatal), and the waits the tests use.
#pragma once

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/history_store.h"
#include "core/local_backend.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "support/test_model.h"

constexpr int kLoadTimeoutMs = 60000 * hearth::test::kTimeScale;
constexpr int kReplyTimeoutMs = 60000 * hearth::test::kTimeScale;

// Long enough for several whole 16-token KV blocks (the synthetic vocabulary is mostly
// single bytes).
extern const QString kSystemPrompt;

struct App {
    HistoryStore store;
    EngineBridge bridge;
    LocalBackend local;  // the chat's backend: the bridge's engine
    PersonaListModel personas;
    ConversationListModel conversations;
    MessageListModel chat;
    std::unique_ptr<QAbstractItemModelTester> t1, t2, t3;
    App();
};

// A role of a row by its QML name (fatal when there is no such role).
QVariant role(const QAbstractItemModel& m, int row, const char* name);

// The segments role as split_markdown gives it for text.
QVariantList expected_segments(const QString& text);

// The synthetic model and the databases of one suite, in a temporary folder.
class AppFixture {
  public:
    AppFixture();
    const QString& model_path() const { return model_path_; }
    // A bigger synthetic model (as the UI tests use): a reply takes a visible while, so a
    // test can watch it stream.
    const QString& slow_model_path() const { return slow_model_path_; }
    QString path(const QString& name) const { return dir_.filePath(name); }

    // Opens a fresh store (no fsync per commit: tests), wires the models and (load) loads
    // the synthetic model; replies are greedy and run to their length. Check
    // QTest::currentTestFailed() after it.
    void start(App& app, const QString& db_name, bool load = true,
               const QString& model = QString()) const;

  private:
    QTemporaryDir dir_;
    QString model_path_;
    QString slow_model_path_;
};

qint64 create_conversation(App& app, qint64 persona);
// Sends text in the chat on screen and waits for the reply to end and for its row (which
// comes with a reload that a short reply may outrun); returns the row, or -1.
int send_and_wait(App& app, const QString& text);
// Waits until every store job issued so far, and the callbacks they run, are done:
// twice, so that reloads started by those callbacks have landed too.
bool settle(App& app);

#define START(fixture, ...)                     \
    do {                                        \
        (fixture).start(__VA_ARGS__);           \
        if (QTest::currentTestFailed()) return; \
    } while (false)
