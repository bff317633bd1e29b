// Glyphs: whether the fonts on this machine can draw a piece of text (QML singleton).
// A persona's badge may be an emoji that no installed font has (a Debian machine without
// an emoji font, say): the badge then shows an icon or the persona's initial rather than
// an empty box.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QFont>
#include <QObject>
#include <QString>

class Glyphs : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

  public:
    using QObject::QObject;

    // True when every character of text has a glyph in font or in one of the fonts Qt
    // falls back to for it (as text is drawn: shaped, then checked for missing glyphs).
    Q_INVOKABLE static bool canRender(const QString& text, const QFont& font = QFont());
};
