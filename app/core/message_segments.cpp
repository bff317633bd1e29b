#include "core/message_segments.h"

#include <QVariantMap>

namespace {

QVariant to_variant(const MarkdownSegment& seg) {
    const bool code = seg.kind == MarkdownSegment::Kind::Code;
    return QVariantMap{
        {QStringLiteral("kind"), code ? QStringLiteral("code") : QStringLiteral("text")},
        {QStringLiteral("text"), seg.text},
        {QStringLiteral("language"), seg.language},
        {QStringLiteral("open"), seg.open},
    };
}

}  // namespace

const QVariantList& SegmentsCache::of(qint64 id, const QString& text) {
    Entry& e = entries_[id];
    if (!e.splitter.update(text) && e.shown.size() == e.splitter.segments().size()) return e.value;
    const std::vector<MarkdownSegment>& now = e.splitter.segments();
    // Only the segments from the first one that differs are converted again (while a
    // reply streams: the last one, or a new one).
    size_t same = 0;
    while (same < now.size() && same < e.shown.size() && now[same] == e.shown[same]) ++same;
    e.value.resize(static_cast<qsizetype>(same));
    e.shown.resize(same);
    for (size_t i = same; i < now.size(); ++i) {
        e.value.append(to_variant(now[i]));
        e.shown.push_back(now[i]);
    }
    return e.value;
}

void SegmentsCache::retain(const std::function<bool(qint64)>& keep) {
    for (auto it = entries_.begin(); it != entries_.end();)
        it = keep(it->first) ? std::next(it) : entries_.erase(it);
}
