#include "support/zip_writer.h"

#include <zlib.h>

namespace hearth::test {

void put16(QByteArray& b, quint32 v) {
    b.append(static_cast<char>(v & 0xff));
    b.append(static_cast<char>((v >> 8) & 0xff));
}

void put32(QByteArray& b, quint32 v) {
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}

QByteArray raw_deflate(const QByteArray& data) {
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    QByteArray out(static_cast<qsizetype>(deflateBound(&zs, static_cast<uLong>(data.size()))),
                   Qt::Uninitialized);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int ret = deflate(&zs, Z_FINISH);
    out.resize(static_cast<qsizetype>(zs.total_out));
    deflateEnd(&zs);
    return ret == Z_STREAM_END ? out : QByteArray();
}

QByteArray make_zip(const QList<ZipMember>& members, QList<qsizetype>* data_offsets) {
    QByteArray zip, dir;
    for (const ZipMember& m : members) {
        const QByteArray name = m.name.toUtf8();
        const QByteArray body = m.deflate ? raw_deflate(m.data) : m.data;
        const auto crc =
            static_cast<quint32>(crc32(0, reinterpret_cast<const Bytef*>(m.data.constData()),
                                       static_cast<uInt>(m.data.size())));
        const auto offset = static_cast<quint32>(zip.size());
        const quint32 method = m.deflate ? 8 : 0;
        const auto packed = static_cast<quint32>(body.size());
        const auto size = static_cast<quint32>(m.data.size());
        const auto name_size = static_cast<quint32>(name.size());
        put32(zip, 0x04034b50);
        for (quint32 v : {20u, 0u, method, 0u, 0x21u}) put16(zip, v);  // version .. date
        put32(zip, crc);
        put32(zip, packed);
        put32(zip, size);
        put16(zip, name_size);
        put16(zip, 0);
        zip += name;
        if (data_offsets) data_offsets->append(zip.size());
        zip += body;

        put32(dir, 0x02014b50);
        for (quint32 v : {20u, 20u, 0u, method, 0u, 0x21u}) put16(dir, v);
        put32(dir, crc);
        put32(dir, packed);
        put32(dir, size);
        for (quint32 v : {name_size, 0u, 0u, 0u, 0u}) put16(dir, v);
        put32(dir, 0);
        put32(dir, offset);
        dir += name;
    }
    const auto dir_offset = static_cast<quint32>(zip.size());
    zip += dir;
    put32(zip, 0x06054b50);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, static_cast<quint32>(members.size()));
    put16(zip, static_cast<quint32>(members.size()));
    put32(zip, static_cast<quint32>(dir.size()));
    put32(zip, dir_offset);
    put16(zip, 0);
    return zip;
}

}  // namespace hearth::test
