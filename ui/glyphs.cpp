#include "glyphs.h"

#include <QGlyphRun>
#include <QTextLayout>

bool Glyphs::canRender(const QString& text, const QFont& font) {
    if (text.isEmpty()) return true;
    QTextLayout layout(text, font);
    layout.beginLayout();
    while (layout.createLine().isValid()) {
    }
    layout.endLayout();
    const QList<QGlyphRun> runs = layout.glyphRuns();
    if (runs.isEmpty()) return false;
    for (const QGlyphRun& run : runs)
        for (quint32 glyph : run.glyphIndexes())
            if (glyph == 0) return false;  // .notdef: the box a missing character is drawn as
    return true;
}
