#include "core/document_lookup.h"

#include "core/persona_prefix.h"
#include "store/store.h"

namespace hearth::app {

namespace st = hearth::store;

hearth::Result<std::vector<st::Source>> look_up_passages(st::Store& store, st::Id conversation,
                                                         const QString& text) {
    auto ids = store.lookup_documents(conversation);
    if (!ids) return ids.error();
    if (ids->empty()) return std::vector<st::Source>{};
    return store.retrieve(*ids, text, kPassagesPerMessage);
}

QString with_passages(const QString& text, std::span<const st::Source> sources) {
    if (sources.empty()) return text;
    QString out = QStringLiteral("Passages from the documents that may help:\n\n");
    for (const st::Source& s : sources) {
        out += QStringLiteral("<passage source=\"%1\"").arg(tag_attribute(s.name));
        if (!s.heading.isEmpty())
            out += QStringLiteral(" section=\"%1\"").arg(tag_attribute(s.heading));
        QString body = s.text;
        while (body.endsWith(QLatin1Char('\n'))) body.chop(1);
        out += QStringLiteral(">\n%1\n</passage>\n\n").arg(body);
    }
    return out + text;
}

}  // namespace hearth::app
