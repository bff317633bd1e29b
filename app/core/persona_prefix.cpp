#include "core/persona_prefix.h"

#include <algorithm>

namespace hearth::app {

namespace {

constexpr const char* kHeading = "Documents for reference:";

}  // namespace

QString tag_attribute(QString value) {
    value.replace(QLatin1Char('&'), QLatin1String("&amp;"));
    value.replace(QLatin1Char('"'), QLatin1String("&quot;"));
    value.replace(QLatin1Char('<'), QLatin1String("&lt;"));
    value.replace(QLatin1Char('>'), QLatin1String("&gt;"));
    value.replace(QLatin1Char('\n'), QLatin1Char(' '));
    value.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return value;
}

QString document_block(const hearth::store::Document& d) {
    QString text = d.text;
    while (text.endsWith(QLatin1Char('\n'))) text.chop(1);
    return QStringLiteral("<document name=\"%1\">\n%2\n</document>")
        .arg(tag_attribute(d.name), text);
}

QString appended_document(const hearth::store::Document& d, bool first) {
    return (first ? QLatin1String("\n\n") + QLatin1String(kHeading) : QString()) +
           QLatin1String("\n\n") + document_block(d);
}

QString persona_prefix(const QString& instructions,
                       std::span<const hearth::store::Document> persona_documents,
                       std::span<const hearth::store::Document> conversation_documents) {
    // Documents that are looked up (too long to read whole) are not part of it: their
    // passages come with each message (document_lookup.h).
    const auto read_whole = [](std::span<const hearth::store::Document> list) {
        return std::any_of(list.begin(), list.end(),
                           [](const hearth::store::Document& d) { return !d.lookup; });
    };
    if (!read_whole(persona_documents) && !read_whole(conversation_documents)) return instructions;
    QString out = instructions;
    while (out.endsWith(QLatin1Char('\n')) || out.endsWith(QLatin1Char(' '))) out.chop(1);
    if (!out.isEmpty()) out += QLatin1String("\n\n");
    out += QLatin1String(kHeading);
    for (const auto* list : {&persona_documents, &conversation_documents})
        for (const hearth::store::Document& d : *list)
            if (!d.lookup) out += QLatin1String("\n\n") + document_block(d);
    return out;
}

}  // namespace hearth::app
