// Shared by the golden suites: reading tests/data/tokenizer and reporting mismatches.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QStringList>
#include <QTest>

#include <string>
#include <vector>

#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

namespace hearth::test {

inline QJsonObject load_golden_json(const QString& name) {
    const QString path = source_dir() + "/tests/data/tokenizer/" + name;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    if (doc.isNull()) qFatal("%s: %s", qPrintable(path), qPrintable(error.errorString()));
    return doc.object();
}

inline std::vector<TokenId> ids_of(const QJsonValue& v) {
    std::vector<TokenId> ids;
    for (const QJsonValue& x : v.toArray()) ids.push_back(x.toInt());
    return ids;
}

inline std::string from_hex(const QJsonValue& v) {
    return QByteArray::fromHex(v.toString().toLatin1()).toStdString();
}

// The expected bytes of a golden "detok"/"detok_hex" pair (key "detok" or
// "special_detok"): the text, or its hex where it is not valid UTF-8.
inline std::string expected_text(const QJsonObject& c, const QString& key) {
    if (c.contains(key)) return c[key].toString().toStdString();
    return from_hex(c[key + "_hex"]);
}

inline QString show(const std::vector<TokenId>& ids) {
    QStringList l;
    for (const TokenId id : ids) l << QString::number(id);
    return "[" + l.join(", ") + "]";
}

// Text for a failure message: UTF-8 as is, control characters and bad bytes escaped.
inline QString quoted(const std::string& s) {
    QString out = "\"";
    const QByteArray bytes = QByteArray::fromStdString(s);
    for (qsizetype i = 0; i < bytes.size();) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        qsizetype len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        const QByteArray ch = bytes.mid(i, len);
        const QString decoded = QString::fromUtf8(ch);
        if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7F ||
                 (c >= 0x80 && (len == 1 || decoded.contains(QChar(0xFFFD)))))
            out += QString("\\x%1").arg(c, 2, 16, QChar('0')), len = 1;
        else
            out += decoded;
        i += len;
    }
    return out + "\"";
}

// Collects mismatches and reports the first few with both sides.
class Mismatches {
  public:
    void add(const QString& what) {
        if (count_++ < 8) lines_ << what;
    }
    void add_ids(const std::string& text, const std::vector<TokenId>& want,
                 const std::vector<TokenId>& got) {
        add(quoted(text) + "\n  llama.cpp " + show(want) + "\n  hearth    " + show(got));
    }
    // Fails the calling test function when anything was added.
    void check(const QString& label, qsizetype total) const {
        if (count_ == 0) return;
        const QString msg = QString("%1: %2 of %3 differ from llama.cpp; first ones:\n%4")
                                .arg(label)
                                .arg(count_)
                                .arg(total)
                                .arg(lines_.join("\n"));
        QFAIL(qPrintable(msg));
    }

  private:
    int count_ = 0;
    QStringList lines_;
};

// The vocabulary's size, special ids and every token's attribute against llama.cpp's
// ("vocab": n_tokens, bos, eos, eot, add_bos, eog, attrs by id where not normal); fails the
// calling test on a difference. compare_eot false: where the file names no EOT token and
// several tokens could be it, llama.cpp takes whichever its hash map yields first (SmolLM2:
// <|endoftext|>), Hearth the first in its order of preference (<|im_end|>); both end
// generation on all of them.
inline void check_vocabulary(const Tokenizer& tok, const QJsonObject& v, bool compare_eot = true) {
    QCOMPARE(tok.vocab_size(), v["n_tokens"].toInt());
    QCOMPARE(tok.bos(), v["bos"].toInt());
    QCOMPARE(tok.eos(), v["eos"].toInt());
    if (compare_eot) QCOMPARE(tok.eot(), v["eot"].toInt());
    QCOMPARE(tok.add_bos(), v["add_bos"].toBool());
    QCOMPARE(tok.end_of_generation_tokens(), ids_of(v["eog"]));
    const QJsonObject attrs = v["attrs"].toObject();
    const QMap<QString, TokenAttr> names = {
        {"control", TokenAttr::Control}, {"user_defined", TokenAttr::UserDefined},
        {"unknown", TokenAttr::Unknown}, {"byte", TokenAttr::Byte},
        {"unused", TokenAttr::Unused},   {"undefined", TokenAttr::Undefined}};
    Mismatches m;
    for (TokenId id = 0; id < tok.vocab_size(); ++id) {
        const QString key = QString::number(id);
        const TokenAttr want =
            attrs.contains(key) ? names.value(attrs[key].toString()) : TokenAttr::Normal;
        if (tok.token_attr(id) != want)
            m.add(QString("token %1 '%2': llama.cpp says %3")
                      .arg(id)
                      .arg(QString::fromStdString(tok.token_text(id)))
                      .arg(attrs.contains(key) ? attrs[key].toString() : "normal"));
    }
    m.check("token attributes", tok.vocab_size());
}

// Every golden case's text encoded with special tokens off and on against llama.cpp's ids
// ("ids", "ids_special"); fails the calling test on a difference.
inline void check_encodings(const Tokenizer& tok, const QJsonArray& cases) {
    Mismatches off, on;
    for (const QJsonValue& value : cases) {
        const QJsonObject c = value.toObject();
        const std::string text = c["text"].toString().toStdString();
        const std::vector<TokenId> want = ids_of(c["ids"]);
        const std::vector<TokenId> want_special = ids_of(c["ids_special"]);
        const std::vector<TokenId> got = tok.encode(text, false);
        const std::vector<TokenId> got_special = tok.encode(text, true);
        if (got != want) off.add_ids(text, want, got);
        if (got_special != want_special) on.add_ids(text, want_special, got_special);
    }
    off.check("parse_special=false", cases.size());
    on.check("parse_special=true", cases.size());
}

// Byte strings that are not valid UTF-8 ("invalid_utf8": hex, ids, ids_special) encoded
// with special tokens off and on against llama.cpp's ids; fails the calling test on a
// difference.
inline void check_malformed_utf8(const Tokenizer& tok, const QJsonArray& cases) {
    QVERIFY(!cases.isEmpty());
    Mismatches m;
    for (const QJsonValue& value : cases) {
        const QJsonObject c = value.toObject();
        const std::string raw = from_hex(c["hex"]);
        for (const bool special : {false, true}) {
            const std::vector<TokenId> want = ids_of(c[special ? "ids_special" : "ids"]);
            const std::vector<TokenId> got = tok.encode(raw, special);
            if (got != want) m.add_ids(raw, want, got);
        }
    }
    m.check("malformed UTF-8", cases.size() * 2);
}

}  // namespace hearth::test
