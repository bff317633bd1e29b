// error_text: an engine or store error as the text a view model shows (its message).
#pragma once

#include <QString>

#include "common/result.h"

inline QString error_text(const hearth::Error& e) {
    return QString::fromStdString(e.message);
}
