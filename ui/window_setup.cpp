#include "window_setup.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QQmlAbstractUrlInterceptor>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickItem>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QUrl>

#include "common/paths.h"
#include "core/app_settings.h"
#include "ui_translator.h"

namespace hearth::ui {

namespace {

// Under Qt Quick's software renderer, Material's ElevationEffect (a ShaderEffect, which
// that renderer does not draw) is replaced by FlatElevationEffect.qml: see that file.
class FlatElevationInterceptor final : public QQmlAbstractUrlInterceptor {
  public:
    QUrl intercept(const QUrl& url, DataType type) override {
        if (type == QmlFile &&
            url.path().endsWith(QLatin1String("/Controls/Material/impl/ElevationEffect.qml")))
            return QUrl(QStringLiteral("qrc:/Hearth/FlatElevationEffect.qml"));
        return url;
    }
};

// Under the software renderer, Material's Ripple (the hover, focus and press highlight of
// buttons, combo boxes and delegates) was drawn at the window's top-left corner instead
// of on its control. After its first frame the ripple changes nodes that hang from a
// plain QSGNode, and Qt's software renderer places such nodes as if they hung from the
// root: no transform, no clip, full opacity. A ripple with no contents draws nothing, and
// clearing the flag also drops the nodes it already made (hiding it would not: a hidden
// item keeps its nodes). Hidden subtrees are skipped; they are reached once shown, before
// their ripples draw again.
void drop_material_ripples(QQuickItem* item) {
    const QList<QQuickItem*> children = item->childItems();
    for (QQuickItem* child : children) {
        if (!child->isVisible()) continue;
        if (child->inherits("QQuickMaterialRipple"))
            child->setFlag(QQuickItem::ItemHasContents, false);
        else
            drop_material_ripples(child);
    }
}

}  // namespace

WindowOptions with_environment(WindowOptions o) {
    if (qEnvironmentVariableIsSet("HEARTH_STORE"))
        o.storePath = qEnvironmentVariable("HEARTH_STORE");
    if (qEnvironmentVariableIsSet("HEARTH_THEME"))
        o.theme = qEnvironmentVariable("HEARTH_THEME").toLower();
    if (qEnvironmentVariableIsSet("HEARTH_LANGUAGE"))
        o.language = qEnvironmentVariable("HEARTH_LANGUAGE");
    return o;
}

QString startup_model_path(const QString& argument, const QString& last_model) {
    if (!argument.isEmpty()) return argument;
    const QString fallback = QString::fromStdString(paths::default_model_path());
    if (qEnvironmentVariableIsSet("HEARTH_MODEL")) return fallback;  // the variable's path
    return !last_model.isEmpty() && QFileInfo(last_model).isFile() ? last_model : fallback;
}

QObject* load_main_window(QQmlApplicationEngine& engine, const WindowOptions& o) {
    QQmlContext* ctx = engine.rootContext();
    ctx->setContextProperty(QStringLiteral("initialModelPath"), o.modelPath);
    ctx->setContextProperty(QStringLiteral("initialStorePath"), o.storePath);
    ctx->setContextProperty(QStringLiteral("logFolder"), o.logFolder);
    ctx->setContextProperty(QStringLiteral("forcedTheme"), o.theme);
    ctx->setContextProperty(QStringLiteral("engineThreads"), o.threads);
    ctx->setContextProperty(QStringLiteral("engineKvMegabytes"), o.kvMegabytes);
    ctx->setContextProperty(QStringLiteral("seedPersonas"), o.seedPersonas);
    ctx->setContextProperty(QStringLiteral("defaultModelPath"),
                            QString::fromStdString(paths::default_model_path()));
    ctx->setContextProperty(QStringLiteral("appVersion"), QCoreApplication::applicationVersion());
    // Where exports are offered first: the documents folder, or home where there is none.
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    ctx->setContextProperty(
        QStringLiteral("documentsFolder"),
        QUrl::fromLocalFile(QFileInfo(documents).isDir() ? documents : QDir::homePath()));
    ctx->setContextProperty(QStringLiteral("qtVersion"), QString::fromLatin1(qVersion()));
    // (graphicsApi() still says OpenGL in Qt 6.4 when the software backend is chosen.)
    if (QQuickWindow::sceneGraphBackend() == QLatin1String("software")) {
        static FlatElevationInterceptor interceptor;  // the engine does not own interceptors
        engine.addUrlInterceptor(&interceptor);
    }
    // The language before the window exists (its strings are made once, in it).
    auto* translator = new UiTranslator(&engine, &engine);
    translator->apply(o.language.isNull() ? AppSettings().language() : o.language);
    ctx->setContextProperty(QStringLiteral("uiTranslator"), translator);
    // Qt 6.4 has no loadFromModule: the module's files live under qrc:/<URI>/.
    engine.load(QUrl(QStringLiteral("qrc:/Hearth/Main.qml")));
    if (engine.rootObjects().isEmpty()) return nullptr;
    QObject* root = engine.rootObjects().constFirst();
    if (QQuickWindow::sceneGraphBackend() == QLatin1String("software")) {
        if (auto* window = qobject_cast<QQuickWindow*>(root))
            // Each frame, on the GUI thread, before its polish and sync.
            QObject::connect(window, &QQuickWindow::afterAnimating, window,
                             [window] { drop_material_ripples(window->contentItem()); });
    }
    return root;
}

}  // namespace hearth::ui
