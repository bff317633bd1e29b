// Documents cut into passages for retrieval (retrieval.cpp indexes them with FTS5), and
// what a message asks turned into a ranked query over them.
//
// A chunk is a run of whole paragraphs (blank-line separated) of about kChunkTarget
// characters under one heading: a Markdown heading (what every reader in app/documents
// makes of a document's headings) starts a new chunk, and the chunk remembers the
// headings it sits under ("Policies › Refunds"). A document's first line, when it stands
// alone, is short and is not a sentence, is its title: a heading over the rest. A paragraph longer
// than kChunkMax is cut at a sentence's end, else at a space. Chunks cover the text in order,
// without gaps worth reading (only blank lines between them are left out), so a chunk is the text's
// [start, start + length).
#pragma once

#include <QString>

#include <vector>

namespace hearth::store {

inline constexpr int kChunkTarget = 700;
inline constexpr int kChunkMax = 1200;

struct ChunkSpan {
    QString heading;  // the headings above it, outermost first, joined with " › "
    int start = 0;    // in the document's text (QString indices)
    int length = 0;
};

std::vector<ChunkSpan> chunk_document(const QString& text);

// The words of `text` worth looking up, as an FTS5 query that matches any of them
// (bm25 then ranks the chunks matching more, and rarer, words first): each word of two
// or more letters or digits, lower-cased, once, without the commonest English words;
// at most 32. Empty when nothing is left.
QString to_retrieval_query(const QString& text);

}  // namespace hearth::store
