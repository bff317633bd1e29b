// SegmentsCache: MessageListModel's `segments` role. Each message on screen keeps a
// MarkdownSplitter, so a reply that streams is split again only from its last line on,
// and the QVariantList handed to QML reuses the maps of segments that did not change
// (a delegate's earlier blocks keep their text and are not laid out again).
#pragma once

#include <QVariantList>

#include <functional>
#include <map>
#include <vector>

#include "core/markdown_segments.h"

// A reply's reasoning block and its answer (chat/reasoning.h), as the view shows them.
struct ReplyParts {
    QString reasoning;
    QString answer;
    bool has_reasoning = false;
    bool thinking = false;  // the block is not closed yet
};
ReplyParts reply_parts(const QString& text);

class SegmentsCache {
  public:
    // The segments of message `id` whose text is now `text`: a list of
    // {kind: "text"|"code", text, language, open}.
    const QVariantList& of(qint64 id, const QString& text);
    // Forgets every message for which keep(id) is false.
    void retain(const std::function<bool(qint64)>& keep);
    void clear() { entries_.clear(); }

  private:
    struct Entry {
        MarkdownSplitter splitter;
        std::vector<MarkdownSegment> shown;  // what value holds
        QVariantList value;
    };
    std::map<qint64, Entry> entries_;
};
