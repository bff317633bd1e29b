// The real main window (qrc:/Hearth/Main.qml, set up as app/main.cpp does it) offscreen,
// on a synthetic model and a chat history in a temporary folder; finding items by
// objectName and driving them with the mouse and keyboard. Shared by tst_ui and
// hearth-ui-frame-bench.
#pragma once

#include <utility>

#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QString>
#include <QTemporaryDir>

#include <functional>
#include <memory>

class EngineBridge;
class MessageListModel;
class ConversationListModel;
class PersonaListModel;
class HistoryStore;

struct UiHarness {
    QTemporaryDir dir;
    QString model_path;
    std::unique_ptr<QQmlApplicationEngine> engine;
    QQuickWindow* window = nullptr;
    EngineBridge* bridge = nullptr;
    MessageListModel* chat = nullptr;
    ConversationListModel* conversations = nullptr;
    PersonaListModel* personas = nullptr;
    HistoryStore* store = nullptr;
    bool real_model = false;  // start() was given a model (else the synthetic one)
    // The engine's settings for start() (the window set-up's overrides of the user's).
    int threads = 2;
    int kv_megabytes = 16;
    // Script errors the window's QML raised (a ReferenceError, a TypeError): a binding
    // that threw shows nothing where it should. HEARTH_UI_CLEANUP checks none came in
    // each test.
    QStringList qml_errors;

    // Runs the event loop until pred() holds or ms have passed; returns pred(). Unlike
    // QTest::qWait it never sleeps between rounds of events, so frames are not delayed.
    static bool run_until(const std::function<bool()>& pred, int ms);
    static void run_for(int ms);

    // Call before the QGuiApplication: the style, software rendering (unless
    // $HEARTH_UI_RHI is set), settings in a temporary place.
    static void prepare_process();

    // Writes the synthetic model, loads the window (theme "light"/"dark"/"") and waits for
    // the model and the store. model: a GGUF to use instead of the synthetic one.
    bool start(const QString& theme, QString* error, const QString& model = QString());

    // The item named so (searching every item of the window, popups included).
    QQuickItem* item(const QString& object_name) const;
    QList<QQuickItem*> items(const QString& object_name) const;
    // The first visible item of that name (inside `within` when given), or null.
    QQuickItem* visible_item(const QString& object_name, QQuickItem* within = nullptr) const;
    bool click(QQuickItem* item, Qt::MouseButton button = Qt::LeftButton);
    // By name: the visible item of that name, looked up again while waiting for it to be
    // still (a view may recreate its delegates meanwhile).
    bool click(const QString& object_name);
    // Clicks what find() returns once it has stopped moving (false if it goes away).
    bool click_when_still(const std::function<QQuickItem*()>& find, Qt::MouseButton button);
    void hover(QQuickItem* item);
    void type(const QString& text);
    void key(int key, Qt::KeyboardModifiers modifiers = Qt::NoModifier);
    // Waits until no popup (menu, dialog, tooltip) is open; false after ms.
    bool popups_closed(int ms = 5000);
    // Waits until the window stops changing (two grabs a frame apart are equal).
    bool settle(int ms = 3000);
    // Saves a screenshot to $HEARTH_SCREENSHOTS/<name>.png when it is set (settled first).
    bool screenshot(const QString& name);
    void set_theme(const QString& theme);
    void show_page(const QString& page);
};

// A property of a QML object (an invalid QVariant for null).
inline QVariant prop(QObject* o, const char* name) {
    return o ? o->property(name) : QVariant();
}

// A suite's cleanup(): the test fails when the window's QML raised a script error in it.
#define HEARTH_UI_CLEANUP(harness)                                              \
    void cleanup() {                                                            \
        const QStringList errors = std::exchange((harness).qml_errors, {});     \
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n')))); \
    }
