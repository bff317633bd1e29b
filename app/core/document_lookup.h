// Documents too long to read whole are looked up: each message the user sends is given
// the passages of them that best match it (Store::retrieve: BM25 over paragraph chunks).
// The passages go with the message, after the conversation's history and never before
// it, so the persona's prefix and the history stay in the KV cache; the message keeps
// them (Message::sources), so a regenerated reply, a restart and every later turn give
// the model the same text.
//
// The model reads a message with passages as
//
//   Passages from the documents that may help:
//
//   <passage source="handbook.pdf" section="Leave › Holidays">
//   ...
//   </passage>
//
//   <the message>
#pragma once

#include <QString>

#include <span>
#include <vector>

#include "common/result.h"
#include "store/types.h"

namespace hearth::store {
class Store;
}

namespace hearth::app {

inline constexpr int kPassagesPerMessage = 5;
// The passages a message is given take at most a quarter of the context (the best
// first; those past it are left out), or this many characters where the context is not
// known (a remote endpoint).
inline constexpr int kPassageShareOfContext = 4;
inline constexpr int kPassageCharsWithoutContext = 6000;

// The passages of the conversation's looked-up documents (its persona's and its own)
// that best match `text`, best first; none when it has no such documents.
hearth::Result<std::vector<hearth::store::Source>> look_up_passages(hearth::store::Store& store,
                                                                    hearth::store::Id conversation,
                                                                    const QString& text);

// What the model reads for a message given these passages (the text alone when none).
QString with_passages(const QString& text, std::span<const hearth::store::Source> sources);

}  // namespace hearth::app
