#include "core/message_segments.h"

#include <QVariantMap>

#include "chat/reasoning.h"

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

ReplyParts reply_parts(const QString& text) {
    ReplyParts p;
    if (!text.contains(QLatin1String("</think>")) && !text.contains(QLatin1String("<think>"))) {
        p.answer = text;
        return p;
    }
    const QByteArray utf8 = text.toUtf8();
    const hearth::chat::ReasoningSplit s =
        hearth::chat::split_reasoning(std::string_view(utf8.constData(), utf8.size()));
    const auto q = [](std::string_view v) {
        return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
    };
    p.reasoning = q(s.reasoning);
    p.answer = q(s.answer);
    p.has_reasoning = s.has_reasoning;
    p.thinking = s.open;
    return p;
}

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
