// The words of an import's notes ("2 attachments (a.png, b.pdf) were not imported"),
// shared by the readers so that every app's report reads alike.
#pragma once

#include <QLatin1String>
#include <QString>
#include <QStringList>

namespace hearth::imports {

// "1 answer", "3 answers".
inline QString plural(int n, const char* one, const char* many) {
    return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}
inline QLatin1String was(int n) {
    return QLatin1String(n == 1 ? "was" : "were");
}
// n tool calls, with their results, left out.
inline QString tool_calls_note(int n) {
    return QStringLiteral("%1 and %2 %3 not imported")
        .arg(plural(n, "tool call", "tool calls"),
             QLatin1String(n == 1 ? "its result" : "their results"), was(n));
}

}  // namespace hearth::imports
