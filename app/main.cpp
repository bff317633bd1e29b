// The Hearth desktop app.
#include <QCommandLineParser>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickStyle>
#include <QtQml/QQmlExtensionPlugin>

#include "app_logging.h"
#include "common/log.h"

Q_IMPORT_QML_PLUGIN(HearthPlugin)
Q_IMPORT_QML_PLUGIN(HearthCorePlugin)

int main(int argc, char* argv[]) {
    QGuiApplication app(argc, argv);
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
    parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("GGUF model to open"), QStringLiteral("[model]"));
    parser.process(app);

    const QString log_dir = hearth::app::setup_logging();
    hearth::log::get("app")->info("Hearth {} starting (Qt {}), logs in {}", HEARTH_VERSION, qVersion(),
                                  log_dir.toStdString());

    QQmlApplicationEngine engine;
    engine.rootContext()->setContextProperty(QStringLiteral("initialModelPath"),
                                             parser.positionalArguments().value(0));
    engine.rootContext()->setContextProperty(QStringLiteral("logFolder"), log_dir);
    // Qt 6.4 has no loadFromModule: the module's files live under qrc:/<URI>/.
    engine.load(QUrl(QStringLiteral("qrc:/Hearth/Main.qml")));
    if (engine.rootObjects().isEmpty()) {
        hearth::log::get("app")->error("the main window failed to load");
        return 1;
    }
    return QGuiApplication::exec();
}
