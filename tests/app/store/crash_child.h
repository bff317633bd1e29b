// The writer that tst_store_crash kills. It runs in a child process (the test binary
// re-executed with --crash-child) and writes conversations, messages and streaming
// replies for ever, printing one acknowledgement line to stdout after each store call
// returns (sync) or each completion callback runs (async):
//
//   R                          open, about to write
//   C <conversation>           conversation created
//   M <message> <hash>         message added (user message, edit or complete reply)
//   B <message>                reply begun (exists, may be empty)
//   P <message> <bytes> <tokens> <hash>   reply written so far: its first <bytes> bytes of
//                              UTF-8 text and first <tokens> ids hash to <hash>
//   F <message> <hash>         reply finished with this text and these token ids
//
// <hash> is message_hash() of the text and ids, in hex.
#pragma once

#include <cstdint>
#include <span>

#include <QByteArray>
#include <QString>

namespace hearth::store::test {

QByteArray message_hash(const QByteArray& utf8, std::span<const std::int32_t> token_ids);

// argv: --crash-child DB SEED sync|async full|normal. Never returns normally (it is killed).
int crash_child_main(int argc, char** argv);

}  // namespace hearth::store::test
