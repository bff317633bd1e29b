// The end of a download, apart from the transfer: checking the finished .part (the
// optional SHA-256, then that it is a GGUF model) off the GUI thread, and putting it under
// its final name without ever replacing a file.
#pragma once

#include <QString>

#include <atomic>

namespace hearth::download {

struct VerifyResult {
    bool ok = false;
    bool cancelled = false;
    bool discard = false;  // the .part is bad (checksum, not GGUF): delete it
    QString error;
};

// Checks the file at path: its SHA-256 against expected_sha256 (lower-case hex; empty:
// no checksum) and, with check_gguf, that GgufFile::open accepts it. Reads in chunks and
// gives up (cancelled) soon after `cancel` is set. Safe on any thread.
VerifyResult verify_download(const QString& path, const QString& expected_sha256, bool check_gguf,
                             const std::atomic_bool& cancel);

// Renames the verified .part to destination, never over an existing file. Returns what
// went wrong for the user, or an empty string.
QString place_download(const QString& part_path, const QString& destination);

}  // namespace hearth::download
