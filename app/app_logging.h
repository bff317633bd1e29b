// Logging for the desktop app: a rotating file in <app data>/logs and Qt's own messages
// (qDebug, QML warnings) routed into the same spdlog sinks under the "qt" logger.
#pragma once

#include <QString>

namespace hearth::app {

// Returns the log folder (created if needed).
QString setup_logging();

}  // namespace hearth::app
