// The Hearth desktop app.
#include <QCommandLineParser>
#include <QGuiApplication>
#include <QNetworkProxyFactory>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>

#include <cstdio>

#include "app_logging.h"
#include "common/log.h"
#include "core/app_settings.h"
#include "render_backend.h"
#include "window_setup.h"

Q_IMPORT_QML_PLUGIN(HearthPlugin)
Q_IMPORT_QML_PLUGIN(HearthCorePlugin)

int main(int argc, char* argv[]) {
    QGuiApplication app(argc, argv);
    // Downloads and Hugging Face search go through the system's proxy (Qt does not by
    // default): the environment's http(s)_proxy on Linux, the system settings on Windows.
    QNetworkProxyFactory::setUseSystemConfiguration(true);
    QGuiApplication::setOrganizationName(QStringLiteral("Hearth"));
    QGuiApplication::setOrganizationDomain(QStringLiteral("hearth.github.io"));
    QGuiApplication::setApplicationName(QStringLiteral("Hearth"));
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Hearth"));
    QGuiApplication::setApplicationVersion(QStringLiteral(HEARTH_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("hearth"));

    if (qEnvironmentVariableIsEmpty("QT_QUICK_CONTROLS_STYLE"))
        QQuickStyle::setStyle(QStringLiteral("Material"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Desktop chat with local language models"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption smoke(
        QStringLiteral("smoke-test"),
        QStringLiteral("Start, show the main window, then quit (exit status 0 once its first "
                       "frame is drawn): checks an installation."));
    parser.addOption(smoke);
    parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("GGUF model to open"),
                                 QStringLiteral("[model]"));
    parser.process(app);

    const QString log_dir = hearth::app::setup_logging();
    hearth::log::get("app")->info("Hearth {} starting (Qt {}), logs in {}", HEARTH_VERSION,
                                  qVersion(), log_dir.toStdString());
    const hearth::ui::RenderBackend render = hearth::ui::choose_render_backend();
    hearth::log::get("app")->info("rendering: {} ({})",
                                  render.software ? "Qt Quick software renderer" : "GPU",
                                  render.reason.toStdString());

    // The model on the command line, else $HEARTH_MODEL, else the one set to open at start
    // or the one open last time, else the default one (startup_model_path); the history
    // at its default location ($HEARTH_STORE overrides it).
    hearth::ui::WindowOptions options;
    options.modelPath = hearth::ui::startup_model_path(parser.positionalArguments().value(0),
                                                       AppSettings().modelToOpen());
    options.logFolder = log_dir;
    options = hearth::ui::with_environment(options);

    QQmlApplicationEngine engine;
    QObject* root = hearth::ui::load_main_window(engine, options);
    if (!root) {
        hearth::log::get("app")->error("the main window failed to load");
        return 1;
    }
    if (parser.isSet(smoke)) {
        auto* window = qobject_cast<QQuickWindow*>(root);
        if (!window) return 1;
        QObject::connect(
            window, &QQuickWindow::frameSwapped, &app,
            [] {
                hearth::log::get("app")->info("smoke test: the main window is shown");
                std::printf("main window shown\n");
                std::fflush(stdout);
                QTimer::singleShot(0, qApp, &QCoreApplication::quit);
            },
            Qt::SingleShotConnection);
    }
    return QGuiApplication::exec();
}
