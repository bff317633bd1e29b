#include "ui_harness.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QGuiApplication>
#include <QImage>
#include <QPointer>
#include <QQuickStyle>
#include <QSGRendererInterface>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>
#include <algorithm>

#include <fstream>
#include <functional>

#include "core/conversation_list_model.h"
#include "core/engine_bridge.h"
#include "core/history_store.h"
#include "core/message_list_model.h"
#include "core/persona_list_model.h"
#include "model/synthetic_model.h"
#include "window_setup.h"

Q_IMPORT_QML_PLUGIN(HearthPlugin)
Q_IMPORT_QML_PLUGIN(HearthCorePlugin)

namespace {

void collect(QQuickItem* item, const QString& name, QList<QQuickItem*>& out, bool first_only) {
    if (!item) return;
    if (item->objectName() == name) {
        out.append(item);
        if (first_only) return;
    }
    for (QQuickItem* child : item->childItems()) {
        collect(child, name, out, first_only);
        if (first_only && !out.isEmpty()) return;
    }
}

}  // namespace

bool UiHarness::run_until(const std::function<bool()>& pred, int ms) {
    if (pred()) return true;
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(2);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (pred()) loop.quit();
    });
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    poll.start();
    loop.exec();
    return pred();
}

void UiHarness::run_for(int ms) {
    run_until([] { return false; }, ms);
}

void UiHarness::prepare_process() {
    QQuickStyle::setStyle(QStringLiteral("Material"));
    if (qEnvironmentVariableIsEmpty("HEARTH_UI_RHI"))
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    // AppSettings (QSettings) and the log stay out of the user's folders.
    QStandardPaths::setTestModeEnabled(true);
    static QTemporaryDir config;
    qputenv("XDG_CONFIG_HOME", config.path().toUtf8());
    // Test mode keeps QSettings in ~/.qttest, shared by every run of every suite: each
    // process gets its own (a folder one suite added to the model list stayed for all).
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, config.path());
}

bool UiHarness::start(const QString& theme, QString* error, const QString& model) {
    if (!dir.isValid()) return *error = QStringLiteral("no temporary folder"), false;
    if (model.isEmpty()) {
        hearth::SyntheticModelSpec spec;
        spec.weight_type = hearth::quant::TensorType::Q8_0;
        spec.seed = 5;
        // Big enough that a reply takes a visible while (a few hundred tokens/s on two
        // cores), so the UI is seen streaming it token by token even on a loaded machine.
        spec.n_embd = 512;
        spec.n_layer = 8;
        spec.n_ff = 1536;
        spec.n_head = 8;
        spec.n_head_kv = 4;
        auto bytes = hearth::make_synthetic_model(spec);
        if (!bytes) return *error = QStringLiteral("no synthetic model"), false;
        model_path = dir.filePath(QStringLiteral("synthetic.gguf"));
        std::ofstream(model_path.toStdString(), std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes->data()),
                   static_cast<std::streamsize>(bytes->size()));
    } else {
        model_path = model;
        real_model = true;
    }
    hearth::ui::WindowOptions o;
    o.modelPath = model_path;
    o.storePath = dir.filePath(QStringLiteral("history.db"));
    o.logFolder = dir.path();
    o.theme = theme;
    o.threads = threads;
    o.kvMegabytes = kv_megabytes;
    engine = std::make_unique<QQmlApplicationEngine>();
    QObject::connect(engine.get(), &QQmlEngine::warnings, engine.get(),
                     [this](const QList<QQmlError>& warnings) {
                         for (const QQmlError& w : warnings)
                             if (w.description().contains(QLatin1String("Error:")))
                                 qml_errors << w.toString();
                     });
    QObject* root = hearth::ui::load_main_window(*engine, o);
    window = qobject_cast<QQuickWindow*>(root);
    if (!window) return *error = QStringLiteral("Main.qml did not load"), false;
    bridge = root->findChild<EngineBridge*>(QStringLiteral("bridge"));
    chat = root->findChild<MessageListModel*>(QStringLiteral("chat"));
    conversations = root->findChild<ConversationListModel*>(QStringLiteral("conversations"));
    personas = root->findChild<PersonaListModel*>(QStringLiteral("personas"));
    store = root->findChild<HistoryStore*>(QStringLiteral("history"));
    if (!bridge || !chat || !conversations || !personas || !store)
        return *error = QStringLiteral("a view model is missing"), false;
    window->resize(1200, 780);
    window->requestActivate();
    if (!QTest::qWaitForWindowExposed(window))
        return *error = QStringLiteral("window not exposed"), false;
    // Deterministic replies that run to their length.
    // Deterministic replies; on the synthetic model they run to their length (its text is
    // noise), a real model ends its turn as it would in the app.
    chat->setDefaultSampling(hearth::SamplingParams::greedy());
    chat->setStopAtEndOfTurn(real_model);
    chat->setMaxReplyTokens(24);
    QElapsedTimer t;
    t.start();
    static_cast<void>(
        QTest::qWaitFor([this] { return bridge->loaded() && store->ready(); }, 60000));
    if (!bridge->loaded())
        return *error = QStringLiteral("model not loaded: ") + bridge->errorString(), false;
    if (!store->ready())
        return *error = QStringLiteral("store not open: ") + store->errorString(), false;
    return true;
}

QQuickItem* UiHarness::item(const QString& name) const {
    QList<QQuickItem*> out;
    collect(window ? window->contentItem() : nullptr, name, out, true);
    return out.value(0);
}

QList<QQuickItem*> UiHarness::items(const QString& name) const {
    QList<QQuickItem*> out;
    collect(window ? window->contentItem() : nullptr, name, out, false);
    return out;
}

QQuickItem* UiHarness::visible_item(const QString& object_name, QQuickItem* within) const {
    for (QQuickItem* i : items(object_name))
        if (i->isVisible() && (!within || within->isAncestorOf(i))) return i;
    return nullptr;
}

namespace {

// Scrolls the Flickables around `item` (a ScrollView's page) so that it is on screen, as a
// person scrolls to a button below the fold before clicking it.
void scroll_into_view(QQuickItem* item) {
    for (QQuickItem* p = item->parentItem(); p; p = p->parentItem()) {
        if (!p->inherits("QQuickFlickable")) continue;
        auto* content = qvariant_cast<QQuickItem*>(p->property("contentItem"));
        if (!content) continue;
        const qreal top = item->mapToItem(content, QPointF(0, 0)).y();
        const qreal y = p->property("contentY").toReal();
        if (top >= y && top + item->height() <= y + p->height()) continue;
        const qreal most = std::max<qreal>(0, p->property("contentHeight").toReal() - p->height());
        p->setProperty("contentY", std::clamp<qreal>(top - p->height() / 3, 0, most));
    }
}

}  // namespace

bool UiHarness::click_when_still(const std::function<QQuickItem*()>& find, Qt::MouseButton button) {
    // As a hand does: aim once the target is still (a list scrolling to its end, a page
    // sliding in), then move there, then press. The target is looked up on every poll, so
    // a delegate a view recreates meanwhile (a model reset: for a frame there is none) is
    // aimed at in its new place; only a target missing for the whole wait is a failure.
    const auto centre = [](QQuickItem* t) {
        return t->mapToScene(QPointF(t->width() / 2, t->height() / 2));
    };
    QQuickItem* target = find();
    if (target) scroll_into_view(target);  // (again on every poll: a page still laying out)
    QPointF c = target ? centre(target) : QPointF();
    int still = 0;
    for (int polls = 0; still < 3 && polls < 300; ++polls) {
        run_for(10);
        if (!(target = find())) {
            still = 0;
            continue;
        }
        scroll_into_view(target);
        const QPointF now = centre(target);
        still = now == c ? still + 1 : 0;
        c = now;
    }
    if (!target) return false;  // gone for good (one that never stops moving is still clicked)
    QTest::mouseMove(window, c.toPoint());
    QTest::mouseClick(window, button, Qt::NoModifier, c.toPoint());
    QCoreApplication::processEvents();  // what the click queued (callers wait for effects)
    return true;
}

bool UiHarness::click(QQuickItem* item, Qt::MouseButton button) {
    const QPointer<QQuickItem> held(item);
    return click_when_still(
        [&held]() -> QQuickItem* { return held && held->isVisible() ? held.data() : nullptr; },
        button);
}

bool UiHarness::click(const QString& object_name) {
    return click_when_still([&] { return visible_item(object_name); }, Qt::LeftButton);
}

void UiHarness::hover(QQuickItem* item) {
    if (!item) return;
    const QPointF c =
        item->mapToScene(QPointF(item->width() / 2, std::min(item->height() / 2, 20.0)));
    QTest::mouseMove(window, c.toPoint());
    QCoreApplication::processEvents();
}

void UiHarness::type(const QString& text) {
    // QTest::keyClicks is for widgets; a window gets one key at a time.
    for (const QChar c : text) {
        const char ch = c.toLatin1();
        if (ch == '\n')
            QTest::keyClick(window, Qt::Key_Return, Qt::ShiftModifier);
        else
            QTest::keyClick(window, ch);
    }
    QCoreApplication::processEvents();
}

void UiHarness::key(int k, Qt::KeyboardModifiers modifiers) {
    QTest::keyClick(window, static_cast<Qt::Key>(k), modifiers);
    QCoreApplication::processEvents();
}

bool UiHarness::popups_closed(int ms) {
    // Every open popup (menus, dialogs and the shared ToolTip instance, which is not a child
    // of the window) has its item, or a dimmer, on the window's overlay.
    return QTest::qWaitFor(
        [this] {
            for (QQuickItem* layer : window->contentItem()->childItems()) {
                if (!layer->inherits("QQuickOverlay")) continue;
                for (QQuickItem* popup : layer->childItems())
                    if (popup->isVisible()) return false;
            }
            return true;
        },
        ms);
}

bool UiHarness::settle(int ms) {
    // Until two grabs a frame apart are the same: transitions and fades have ended.
    QImage last = window->grabWindow();
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        run_for(20);
        QImage now = window->grabWindow();
        if (now == last) return true;
        last = std::move(now);
    }
    return false;
}

bool UiHarness::screenshot(const QString& name) {
    const QString out = qEnvironmentVariable("HEARTH_SCREENSHOTS");
    if (out.isEmpty()) return true;
    QDir().mkpath(out);
    settle();
    const QImage image = window->grabWindow();
    return !image.isNull() && image.save(QDir(out).filePath(name + QStringLiteral(".png")));
}

void UiHarness::set_theme(const QString& theme) {
    window->setProperty("themeName", theme);
}

void UiHarness::show_page(const QString& page) {
    // The mouse out of the way (over the rail's empty part), as a hand leaves a page it is
    // done with: a tooltip of what it last hovered would take the next click.
    QTest::mouseMove(window, QPoint(30, window->height() / 2 + 60));
    window->setProperty("page", page);
    QCoreApplication::processEvents();
}
