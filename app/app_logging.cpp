#include "app_logging.h"

#include <QDir>
#include <QStandardPaths>

#include "common/log.h"

namespace hearth::app {
namespace {

void route_qt_message(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
    static const auto logger = log::get("qt");
    const std::string text = msg.toStdString();
    const char* where = ctx.category ? ctx.category : "default";
    switch (type) {
        case QtDebugMsg:
            logger->debug("[{}] {}", where, text);
            break;
        case QtInfoMsg:
            logger->info("[{}] {}", where, text);
            break;
        case QtWarningMsg:
            logger->warn("[{}] {}", where, text);
            break;
        case QtCriticalMsg:
        case QtFatalMsg:
            logger->error("[{}] {}", where, text);
            break;
    }
}

}  // namespace

QString setup_logging() {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/logs";
    QDir().mkpath(dir);
    log::add_rotating_file((dir + "/hearth.log").toStdString(), 5 * 1024 * 1024, 3);
    qInstallMessageHandler(route_qt_message);
    return dir;
}

}  // namespace hearth::app
