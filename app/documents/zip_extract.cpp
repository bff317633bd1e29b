#include "documents/zip_extract.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QIODevice>

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace hearth::app {

namespace {

constexpr quint32 kLocalHeaderSig = 0x04034b50;
constexpr quint32 kCentralHeaderSig = 0x02014b50;
constexpr quint32 kEndOfDirSig = 0x06054b50;
constexpr qint64 kEndOfDirSize = 22;
constexpr qint64 kLocalHeaderSize = 30;
constexpr qint64 kCentralHeaderSize = 46;
constexpr qint64 kMaxComment = 0xffff;
constexpr qint64 kMaxCentralDir = 64 << 20;  // a wheel's is a few kB
constexpr qint64 kChunk = 1 << 20;

quint16 u16(const char* p) {
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    return static_cast<quint16>(b[0] | (b[1] << 8));
}

quint32 u32(const char* p) {
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    return static_cast<quint32>(b[0]) | (static_cast<quint32>(b[1]) << 8) |
           (static_cast<quint32>(b[2]) << 16) | (static_cast<quint32>(b[3]) << 24);
}

struct Member {
    quint16 flags = 0;
    quint16 method = 0;
    quint32 crc = 0;
    qint64 compressed = 0;
    qint64 size = 0;
    qint64 local_offset = 0;
};

QString native(const QString& path) {
    return QDir::toNativeSeparators(path);
}

// Reads exactly n bytes at offset; false when the file is shorter or unreadable.
bool read_at(QFile& f, qint64 offset, qint64 n, QByteArray& out) {
    if (offset < 0 || n < 0 || !f.seek(offset)) return false;
    out = f.read(n);
    return out.size() == n;
}

// Finds member through the central directory. Empty error: found; no_member is set when
// the archive is sound but lacks it.
QString find_member(QFile& f, const QString& member, Member& m, qint64& dir_offset,
                    bool& no_member) {
    const QString bad =
        QStringLiteral("%1 is not a valid ZIP archive (%2)").arg(native(f.fileName()));
    const qint64 file_size = f.size();
    if (file_size < kEndOfDirSize)
        return bad.arg(QStringLiteral("%1 bytes long: too short").arg(file_size));
    const qint64 tail_size = std::min(file_size, kEndOfDirSize + kMaxComment);
    QByteArray tail;
    if (!read_at(f, file_size - tail_size, tail_size, tail))
        return QStringLiteral("Cannot read %1: %2").arg(native(f.fileName()), f.errorString());
    qint64 eocd = -1;
    for (qint64 i = tail_size - kEndOfDirSize; i >= 0; --i) {
        if (u32(tail.constData() + i) == kEndOfDirSig &&
            i + kEndOfDirSize + u16(tail.constData() + i + 20) == tail_size) {
            eocd = i;
            break;
        }
    }
    if (eocd < 0) return bad.arg(QStringLiteral("no end of central directory: truncated?"));
    const char* e = tail.constData() + eocd;
    const quint16 disk = u16(e + 4), dir_disk = u16(e + 6);
    const quint16 entries_here = u16(e + 8), entries = u16(e + 10);
    const quint32 dir_size = u32(e + 12), dir_start = u32(e + 16);
    if (entries == 0xffff || dir_size == 0xffffffffu || dir_start == 0xffffffffu)
        return bad.arg(QStringLiteral("ZIP64 archives are not supported"));
    if (disk != 0 || dir_disk != 0 || entries_here != entries)
        return bad.arg(QStringLiteral("multi-part archives are not supported"));
    const qint64 eocd_pos = file_size - tail_size + eocd;
    if (static_cast<qint64>(dir_start) + dir_size > eocd_pos || dir_size > kMaxCentralDir)
        return bad.arg(QStringLiteral("the central directory lies outside the file"));
    QByteArray dir;
    if (!read_at(f, dir_start, dir_size, dir))
        return QStringLiteral("Cannot read %1: %2").arg(native(f.fileName()), f.errorString());
    dir_offset = dir_start;

    const QByteArray wanted = member.toUtf8();
    qint64 pos = 0;
    for (int i = 0; i < entries; ++i) {
        if (pos + kCentralHeaderSize > dir.size() ||
            u32(dir.constData() + pos) != kCentralHeaderSig)
            return bad.arg(QStringLiteral("damaged central directory"));
        const char* h = dir.constData() + pos;
        const qint64 name_len = u16(h + 28), extra_len = u16(h + 30), comment_len = u16(h + 32);
        if (pos + kCentralHeaderSize + name_len + extra_len + comment_len > dir.size())
            return bad.arg(QStringLiteral("damaged central directory"));
        const QByteArray name(h + kCentralHeaderSize, static_cast<qsizetype>(name_len));
        if (name == wanted) {
            m.flags = u16(h + 8);
            m.method = u16(h + 10);
            m.crc = u32(h + 16);
            const quint32 compressed = u32(h + 20), size = u32(h + 24), offset = u32(h + 42);
            if (compressed == 0xffffffffu || size == 0xffffffffu || offset == 0xffffffffu)
                return bad.arg(QStringLiteral("ZIP64 members are not supported"));
            m.compressed = compressed;
            m.size = size;
            m.local_offset = offset;
            return {};
        }
        pos += kCentralHeaderSize + name_len + extra_len + comment_len;
    }
    no_member = true;
    return QStringLiteral("%1 has no member %2").arg(native(f.fileName()), member);
}

QString device_name(QIODevice& d) {
    if (auto* f = qobject_cast<QFileDevice*>(&d)) return native(f->fileName());
    return QStringLiteral("the output");
}

}  // namespace

ZipExtractResult extract_zip_member(const QString& zip_path, const QString& member, QIODevice& out,
                                    const ZipExtractOptions& options) {
    ZipExtractResult r;
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    QFile f(zip_path);
    if (!f.open(QIODevice::ReadOnly)) {
        r.error = QStringLiteral("Cannot open %1: %2").arg(native(zip_path), f.errorString());
        return r;
    }
    Member m;
    qint64 dir_offset = 0;
    r.error = find_member(f, member, m, dir_offset, r.no_member);
    if (!r.error.isEmpty()) return r;
    const QString damaged =
        QStringLiteral("%1 in %2 is damaged (%3)").arg(member, native(zip_path));
    if (m.flags & 0x1) {
        r.error = QStringLiteral("%1 in %2 is encrypted").arg(member, native(zip_path));
        return r;
    }
    if (m.method != 0 && m.method != 8) {
        r.error = QStringLiteral(
                      "%1 in %2 uses compression method %3 (only stored and deflated "
                      "are supported)")
                      .arg(member, native(zip_path))
                      .arg(m.method);
        return r;
    }
    if (m.method == 0 && m.compressed != m.size) {
        r.error = damaged.arg(QStringLiteral("stored with two different sizes"));
        return r;
    }
    if (options.expected_size >= 0 && m.size != options.expected_size) {
        r.error = QStringLiteral("%1 in %2 is %3 bytes, expected %4: not the file expected")
                      .arg(member, native(zip_path))
                      .arg(m.size)
                      .arg(options.expected_size);
        return r;
    }
    if (options.max_size >= 0 && m.size > options.max_size) {
        r.too_large = true;
        r.error = QStringLiteral("%1 in %2 is %3 bytes, more than the %4 allowed")
                      .arg(member, native(zip_path))
                      .arg(m.size)
                      .arg(options.max_size);
        return r;
    }
    QByteArray local;
    if (!read_at(f, m.local_offset, kLocalHeaderSize, local) ||
        u32(local.constData()) != kLocalHeaderSig) {
        r.error = damaged.arg(QStringLiteral("no local header where the directory points"));
        return r;
    }
    const qint64 data_start = m.local_offset + kLocalHeaderSize + u16(local.constData() + 26) +
                              u16(local.constData() + 28);
    QByteArray local_name;
    if (!read_at(f, m.local_offset + kLocalHeaderSize, u16(local.constData() + 26), local_name) ||
        local_name != member.toUtf8()) {
        r.error = damaged.arg(QStringLiteral("the local header names another file"));
        return r;
    }
    if (data_start + m.compressed > dir_offset) {
        r.error = damaged.arg(QStringLiteral("its data runs past the end of the archive"));
        return r;
    }
    if (!f.seek(data_start)) {
        r.error = QStringLiteral("Cannot read %1: %2").arg(native(zip_path), f.errorString());
        return r;
    }

    QCryptographicHash sha(QCryptographicHash::Sha256);
    uLong crc = crc32(0L, Z_NULL, 0);
    qint64 written = 0;
    auto emit_bytes = [&](const char* data, qint64 n) -> bool {
        if (n <= 0) return true;
        if (written + n > m.size) {
            r.error = damaged.arg(QStringLiteral("more data than its recorded size"));
            return false;
        }
        if (out.write(data, n) != n) {
            r.output_error = true;
            r.error = QStringLiteral("Cannot write %1: %2 (is the disk full?)")
                          .arg(device_name(out), out.errorString());
            return false;
        }
        sha.addData(QByteArrayView(data, n));
        crc = crc32(crc, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n));
        written += n;
        if (options.progress) options.progress(written);
        return true;
    };

    QByteArray in(static_cast<qsizetype>(kChunk), Qt::Uninitialized);
    qint64 remaining = m.compressed;
    // The next chunk of the member's stored bytes into in; -1 (r.error set) if cut short.
    const auto read_next = [&]() -> qint64 {
        const qint64 want = std::min(remaining, kChunk);
        const qint64 got = f.read(in.data(), want);
        if (got != want) {
            r.error = damaged.arg(QStringLiteral("the archive is truncated"));
            return -1;
        }
        remaining -= got;
        return got;
    };
    if (m.method == 0) {
        while (remaining > 0) {
            if (cancelled()) {
                r.cancelled = true;
                return r;
            }
            const qint64 got = read_next();
            if (got < 0) return r;
            if (!emit_bytes(in.constData(), got)) return r;
        }
    } else {
        z_stream zs;
        std::memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
            r.error = QStringLiteral("Cannot start decompressing (zlib)");
            return r;
        }
        struct Guard {
            z_stream* z;
            ~Guard() { inflateEnd(z); }
        } guard{&zs};
        QByteArray outbuf(static_cast<qsizetype>(kChunk), Qt::Uninitialized);
        bool ended = false;
        while (!ended) {
            if (cancelled()) {
                r.cancelled = true;
                return r;
            }
            if (zs.avail_in == 0) {
                if (remaining == 0) {
                    r.error = damaged.arg(QStringLiteral("its compressed data ends early"));
                    return r;
                }
                const qint64 got = read_next();
                if (got < 0) return r;
                zs.next_in = reinterpret_cast<Bytef*>(in.data());
                zs.avail_in = static_cast<uInt>(got);
            }
            zs.next_out = reinterpret_cast<Bytef*>(outbuf.data());
            zs.avail_out = static_cast<uInt>(outbuf.size());
            const int ret = inflate(&zs, Z_NO_FLUSH);
            if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
                r.error = damaged.arg(QStringLiteral("cannot decompress: %1")
                                          .arg(zs.msg ? QString::fromLatin1(zs.msg)
                                                      : QStringLiteral("zlib error %1").arg(ret)));
                return r;
            }
            const qint64 produced = outbuf.size() - static_cast<qint64>(zs.avail_out);
            if (!emit_bytes(outbuf.constData(), produced)) return r;
            ended = ret == Z_STREAM_END;
        }
        if (zs.avail_in != 0 || remaining != 0) {
            r.error = damaged.arg(QStringLiteral("data after the end of its compressed stream"));
            return r;
        }
    }
    if (written != m.size) {
        r.error = damaged.arg(QStringLiteral("%1 bytes instead of %2").arg(written).arg(m.size));
        return r;
    }
    if (crc != m.crc) {
        r.error = damaged.arg(QStringLiteral("CRC-32 mismatch"));
        return r;
    }
    r.size = written;
    r.sha256 = QString::fromLatin1(sha.result().toHex());
    if (!options.expected_sha256.isEmpty() && r.sha256 != options.expected_sha256.toLower()) {
        r.error = QStringLiteral(
                      "Checksum mismatch: %1 should have SHA-256 %2, it has %3; it was "
                      "not installed")
                      .arg(member, options.expected_sha256.toLower(), r.sha256);
        return r;
    }
    r.ok = true;
    return r;
}

ZipExtractResult extract_zip_member_to_file(const QString& zip_path, const QString& member,
                                            const QString& destination,
                                            const ZipExtractOptions& options) {
    ZipExtractResult r;
    if (QFileInfo::exists(destination)) {
        r.output_error = true;
        r.error = QStringLiteral("%1 already exists; move it away first").arg(native(destination));
        return r;
    }
    const QString partial = destination + QStringLiteral(".partial");
    QFile out(partial);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        r.output_error = true;
        r.error = QStringLiteral("Cannot write %1: %2").arg(native(partial), out.errorString());
        return r;
    }
    r = extract_zip_member(zip_path, member, out, options);
    if (r.ok && !out.flush()) {
        r.ok = false;
        r.output_error = true;
        r.error = QStringLiteral("Cannot write %1: %2 (is the disk full?)")
                      .arg(native(partial), out.errorString());
    }
    out.close();
    if (r.ok && out.error() != QFileDevice::NoError) {
        r.ok = false;
        r.output_error = true;
        r.error = QStringLiteral("Cannot write %1: %2 (is the disk full?)")
                      .arg(native(partial), out.errorString());
    }
    if (r.ok && QFileInfo::exists(destination)) {
        r.ok = false;
        r.output_error = true;
        r.error = QStringLiteral("%1 appeared while extracting; it was left alone")
                      .arg(native(destination));
    }
    // QFile::rename never replaces an existing file.
    if (r.ok && !QFile::rename(partial, destination)) {
        r.ok = false;
        r.output_error = true;
        r.error = QStringLiteral("Cannot rename %1 to %2")
                      .arg(native(partial), QFileInfo(destination).fileName());
    }
    if (!r.ok) QFile::remove(partial);
    return r;
}

}  // namespace hearth::app
