// The system prompt a reply starts with: a persona's instructions, then the documents it
// holds, then the conversation's own documents. It is the prompt's prefix that the KV
// cache shares between every chat of the persona (pinned when the persona is kept warm,
// and kept on disk), so its layout depends on nothing but the instructions and the
// documents' names and text, in order: the same documents give the same tokens in any
// process, and an edit to one document changes the prefix from that document on only.
//
// Documents that are looked up instead (Document::lookup: too long to read whole) are
// left out; the passages a message needs come with it (document_lookup.h).
//
// Layout (each document's text as it was extracted; nothing is escaped inside it):
//
//   <instructions>
//
//   Documents for reference:
//
//   <document name="handbook.md">
//   ...
//   </document>
#pragma once

#include <QString>

#include <span>

#include "store/types.h"

namespace hearth::app {

QString persona_prefix(const QString& instructions,
                       std::span<const hearth::store::Document> persona_documents,
                       std::span<const hearth::store::Document> conversation_documents = {});

// A value inside a tag's attribute: quotes and angle brackets would end it, line breaks
// would split the tag (also document_lookup.h's passages').
QString tag_attribute(QString value);

// One document's part of it (the cost the persona editor shows per document).
QString document_block(const hearth::store::Document& document);

// What the prefix grows by when `document` follows the documents before it (first: there
// are none, so the heading comes too), for counting a document's cost without the rest.
QString appended_document(const hearth::store::Document& document, bool first);

}  // namespace hearth::app
