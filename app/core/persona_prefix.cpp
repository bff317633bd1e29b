#include "core/persona_prefix.h"

namespace hearth::app {

namespace {

constexpr const char* kHeading = "Documents for reference:";

// A name inside its attribute: quotes and angle brackets would end it, line breaks would
// split the tag.
QString attribute(QString name) {
    name.replace(QLatin1Char('&'), QLatin1String("&amp;"));
    name.replace(QLatin1Char('"'), QLatin1String("&quot;"));
    name.replace(QLatin1Char('<'), QLatin1String("&lt;"));
    name.replace(QLatin1Char('>'), QLatin1String("&gt;"));
    name.replace(QLatin1Char('\n'), QLatin1Char(' '));
    name.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return name;
}

}  // namespace

QString document_block(const hearth::store::Document& d) {
    QString text = d.text;
    while (text.endsWith(QLatin1Char('\n'))) text.chop(1);
    return QStringLiteral("<document name=\"%1\">\n%2\n</document>").arg(attribute(d.name), text);
}

QString appended_document(const hearth::store::Document& d, bool first) {
    return (first ? QLatin1String("\n\n") + QLatin1String(kHeading) : QString()) +
           QLatin1String("\n\n") + document_block(d);
}

QString persona_prefix(const QString& instructions,
                       std::span<const hearth::store::Document> persona_documents,
                       std::span<const hearth::store::Document> conversation_documents) {
    if (persona_documents.empty() && conversation_documents.empty()) return instructions;
    QString out = instructions;
    while (out.endsWith(QLatin1Char('\n')) || out.endsWith(QLatin1Char(' '))) out.chop(1);
    if (!out.isEmpty()) out += QLatin1String("\n\n");
    out += QLatin1String(kHeading);
    for (const auto* list : {&persona_documents, &conversation_documents})
        for (const hearth::store::Document& d : *list)
            out += QLatin1String("\n\n") + document_block(d);
    return out;
}

}  // namespace hearth::app
