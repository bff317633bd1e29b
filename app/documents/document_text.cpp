// extract_document: the checks every format shares (found, readable, size, format, empty,
// length), the format from the name and first bytes, and the reader per format.
#include "documents/document_text.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <array>

#include "documents/document_formats.h"

namespace hearth::documents {

using detail::file_error;

namespace {

// Enough of a file for its signature, and for the names of a ZIP's first members.
constexpr qint64 kHeadBytes = 4096;

// An encrypted Office file is not a ZIP: it is an OLE compound file holding the ZIP
// encrypted (as is a Word 97-2003 .doc, but those are not named .docx).
constexpr char kOleMagic[] = "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

struct Extension {
    const char* suffix;
    DocumentFormat format;
    const char* language;  // Code only
};

// clang-format off
constexpr std::array kExtensions{
    Extension{"txt", DocumentFormat::PlainText, ""}, Extension{"text", DocumentFormat::PlainText, ""},
    Extension{"log", DocumentFormat::PlainText, ""}, Extension{"csv", DocumentFormat::PlainText, ""},
    Extension{"tsv", DocumentFormat::PlainText, ""},
    Extension{"md", DocumentFormat::Markdown, ""}, Extension{"markdown", DocumentFormat::Markdown, ""},
    Extension{"mdown", DocumentFormat::Markdown, ""}, Extension{"mkd", DocumentFormat::Markdown, ""},
    Extension{"html", DocumentFormat::Html, ""}, Extension{"htm", DocumentFormat::Html, ""},
    Extension{"xhtml", DocumentFormat::Html, ""},
    Extension{"pdf", DocumentFormat::Pdf, ""},
    Extension{"docx", DocumentFormat::Docx, ""},
    Extension{"odt", DocumentFormat::Odt, ""},
    // Code: the language names are those Markdown code fences use.
    Extension{"c", DocumentFormat::Code, "c"}, Extension{"h", DocumentFormat::Code, "c"},
    Extension{"cpp", DocumentFormat::Code, "cpp"}, Extension{"cc", DocumentFormat::Code, "cpp"},
    Extension{"cxx", DocumentFormat::Code, "cpp"}, Extension{"hpp", DocumentFormat::Code, "cpp"},
    Extension{"hh", DocumentFormat::Code, "cpp"}, Extension{"hxx", DocumentFormat::Code, "cpp"},
    Extension{"inl", DocumentFormat::Code, "cpp"}, Extension{"cu", DocumentFormat::Code, "cuda"},
    Extension{"cuh", DocumentFormat::Code, "cuda"}, Extension{"m", DocumentFormat::Code, "objectivec"},
    Extension{"mm", DocumentFormat::Code, "objectivec"}, Extension{"cs", DocumentFormat::Code, "csharp"},
    Extension{"java", DocumentFormat::Code, "java"}, Extension{"kt", DocumentFormat::Code, "kotlin"},
    Extension{"kts", DocumentFormat::Code, "kotlin"}, Extension{"scala", DocumentFormat::Code, "scala"},
    Extension{"groovy", DocumentFormat::Code, "groovy"}, Extension{"gradle", DocumentFormat::Code, "groovy"},
    Extension{"py", DocumentFormat::Code, "python"}, Extension{"pyi", DocumentFormat::Code, "python"},
    Extension{"js", DocumentFormat::Code, "javascript"}, Extension{"mjs", DocumentFormat::Code, "javascript"},
    Extension{"cjs", DocumentFormat::Code, "javascript"}, Extension{"jsx", DocumentFormat::Code, "jsx"},
    Extension{"ts", DocumentFormat::Code, "typescript"}, Extension{"tsx", DocumentFormat::Code, "tsx"},
    Extension{"vue", DocumentFormat::Code, "vue"}, Extension{"svelte", DocumentFormat::Code, "svelte"},
    Extension{"css", DocumentFormat::Code, "css"}, Extension{"scss", DocumentFormat::Code, "scss"},
    Extension{"less", DocumentFormat::Code, "less"}, Extension{"php", DocumentFormat::Code, "php"},
    Extension{"rs", DocumentFormat::Code, "rust"}, Extension{"go", DocumentFormat::Code, "go"},
    Extension{"rb", DocumentFormat::Code, "ruby"}, Extension{"pl", DocumentFormat::Code, "perl"},
    Extension{"pm", DocumentFormat::Code, "perl"}, Extension{"lua", DocumentFormat::Code, "lua"},
    Extension{"r", DocumentFormat::Code, "r"}, Extension{"jl", DocumentFormat::Code, "julia"},
    Extension{"swift", DocumentFormat::Code, "swift"}, Extension{"dart", DocumentFormat::Code, "dart"},
    Extension{"hs", DocumentFormat::Code, "haskell"}, Extension{"ml", DocumentFormat::Code, "ocaml"},
    Extension{"ex", DocumentFormat::Code, "elixir"}, Extension{"exs", DocumentFormat::Code, "elixir"},
    Extension{"erl", DocumentFormat::Code, "erlang"}, Extension{"clj", DocumentFormat::Code, "clojure"},
    Extension{"zig", DocumentFormat::Code, "zig"}, Extension{"nim", DocumentFormat::Code, "nim"},
    Extension{"f90", DocumentFormat::Code, "fortran"}, Extension{"asm", DocumentFormat::Code, "asm"},
    Extension{"s", DocumentFormat::Code, "asm"}, Extension{"sh", DocumentFormat::Code, "bash"},
    Extension{"bash", DocumentFormat::Code, "bash"}, Extension{"zsh", DocumentFormat::Code, "zsh"},
    Extension{"fish", DocumentFormat::Code, "fish"}, Extension{"ps1", DocumentFormat::Code, "powershell"},
    Extension{"bat", DocumentFormat::Code, "batch"}, Extension{"cmd", DocumentFormat::Code, "batch"},
    Extension{"json", DocumentFormat::Code, "json"}, Extension{"jsonl", DocumentFormat::Code, "json"},
    Extension{"yaml", DocumentFormat::Code, "yaml"}, Extension{"yml", DocumentFormat::Code, "yaml"},
    Extension{"toml", DocumentFormat::Code, "toml"}, Extension{"ini", DocumentFormat::Code, "ini"},
    Extension{"cfg", DocumentFormat::Code, "ini"}, Extension{"conf", DocumentFormat::Code, "ini"},
    Extension{"xml", DocumentFormat::Code, "xml"}, Extension{"svg", DocumentFormat::Code, "xml"},
    Extension{"sql", DocumentFormat::Code, "sql"}, Extension{"graphql", DocumentFormat::Code, "graphql"},
    Extension{"proto", DocumentFormat::Code, "protobuf"}, Extension{"qml", DocumentFormat::Code, "qml"},
    Extension{"cmake", DocumentFormat::Code, "cmake"}, Extension{"mk", DocumentFormat::Code, "makefile"},
    Extension{"glsl", DocumentFormat::Code, "glsl"}, Extension{"hlsl", DocumentFormat::Code, "hlsl"},
    Extension{"tex", DocumentFormat::Code, "latex"}, Extension{"diff", DocumentFormat::Code, "diff"},
    Extension{"patch", DocumentFormat::Code, "diff"},
};
// clang-format on

// Files known by their whole name (no extension, or a misleading one).
struct Named {
    const char* name;
    const char* language;
};
constexpr std::array kNamedCode{Named{"cmakelists.txt", "cmake"}, Named{"makefile", "makefile"},
                                Named{"gnumakefile", "makefile"},
                                Named{"dockerfile", "dockerfile"}};

const Extension* extension_of(const QString& suffix) {
    for (const Extension& e : kExtensions)
        if (suffix == QLatin1String(e.suffix)) return &e;
    return nullptr;
}

const Named* named_code(const QString& file_name) {
    for (const Named& n : kNamedCode)
        if (file_name == QLatin1String(n.name)) return &n;
    return nullptr;
}

// An OpenDocument text's first member is "mimetype", stored, holding the media type
// (also "...text-template" and "...text-master").
bool is_odt_zip(QByteArrayView head) {
    if (head.size() < 38 || head.sliced(30, 8) != "mimetype") return false;
    const auto extra = static_cast<qsizetype>(static_cast<unsigned char>(head[28]) |
                                              (static_cast<unsigned char>(head[29]) << 8));
    const qsizetype data = 38 + extra;
    return data < head.size() &&
           head.sliced(data).startsWith("application/vnd.oasis.opendocument.text");
}

bool starts_as_html(QByteArrayView head) {
    if (head.startsWith("\xEF\xBB\xBF")) head = head.sliced(3);
    qsizetype i = 0;
    while (i < head.size() && QChar::isSpace(static_cast<unsigned char>(head[i]))) ++i;
    const QByteArray start =
        head.sliced(i).first(std::min<qsizetype>(head.size() - i, 14)).toByteArray().toLower();
    return start.startsWith("<!doctype html") || start.startsWith("<html");
}

}  // namespace

std::optional<DocumentFormat> format_of(const QString& path, QByteArrayView head) {
    const QFileInfo info(path);
    const QString suffix = info.suffix().toLower();
    // The content first, where it cannot be mistaken: a renamed file is what it holds.
    if (head.startsWith("%PDF-")) return DocumentFormat::Pdf;
    if (head.startsWith("PK\x03\x04")) {
        if (is_odt_zip(head)) return DocumentFormat::Odt;
        if (head.contains("word/")) return DocumentFormat::Docx;
    }
    if (named_code(info.fileName().toLower())) return DocumentFormat::Code;
    if (const Extension* e = extension_of(suffix)) return e->format;
    if (suffix.isEmpty()) {
        if (starts_as_html(head)) return DocumentFormat::Html;
        if (detail::looks_like_text(head)) return DocumentFormat::PlainText;
    }
    return std::nullopt;
}

QString format_name(DocumentFormat format) {
    switch (format) {
        case DocumentFormat::PlainText:
            return QStringLiteral("Text");
        case DocumentFormat::Markdown:
            return QStringLiteral("Markdown");
        case DocumentFormat::Code:
            return QStringLiteral("Code");
        case DocumentFormat::Html:
            return QStringLiteral("Web page");
        case DocumentFormat::Pdf:
            return QStringLiteral("PDF");
        case DocumentFormat::Docx:
            return QStringLiteral("Word document");
        case DocumentFormat::Odt:
            return QStringLiteral("OpenDocument text");
    }
    return {};
}

bool can_read_pdf() {
    return detail::pdf_supported();
}

hearth::Result<DocumentText> extract_document(const QString& path, const ExtractOptions& options) {
    const QFileInfo info(path);
    const QString name = info.fileName().isEmpty() ? path : info.fileName();
    if (!info.exists())
        return file_error(name, QStringLiteral("was not found (was it moved or deleted?)"));
    if (info.isDir()) return file_error(name, QStringLiteral("is a folder, not a document"));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return file_error(name, QStringLiteral("cannot be read: %1").arg(file.errorString()));
    const auto too_large = [&](qint64 size) {
        return file_error(
            name, QStringLiteral("is too large (%1; Hearth reads documents of at "
                                 "most %2)")
                      .arg(detail::size_text(size), detail::size_text(options.max_file_bytes)));
    };
    if (file.size() > options.max_file_bytes) return too_large(file.size());
    QByteArray bytes = file.read(kHeadBytes);
    const std::optional<DocumentFormat> format = format_of(path, bytes);
    if (!format)
        return file_error(name, QStringLiteral("is not a kind of file Hearth reads (it reads "
                                               "text, Markdown, code, web pages, PDF, Word "
                                               ".docx and OpenDocument .odt files)"));
    if (file.size() == 0) return file_error(name, QStringLiteral("is empty"));

    hearth::Result<detail::Extracted> raw = detail::Extracted{};
    if (*format == DocumentFormat::Docx && bytes.startsWith(kOleMagic)) {
        return file_error(name, QStringLiteral("is password-protected (an encrypted Word "
                                               "document); save a copy without a password "
                                               "and add that"));
    } else if (*format == DocumentFormat::Docx) {
        raw = detail::docx_text(path, name, options.max_file_bytes);
    } else if (*format == DocumentFormat::Odt) {
        raw = detail::odt_text(path, name, options.max_file_bytes);
    } else {
        // In chunks, to one byte past the limit: the file may have grown since its size was
        // checked, and a read of the whole limit would allocate all of it up front.
        constexpr qint64 kChunk = 1 << 20;
        while (!file.atEnd() && bytes.size() <= options.max_file_bytes) {
            const QByteArray chunk =
                file.read(std::min(kChunk, options.max_file_bytes - bytes.size() + 1));
            if (chunk.isEmpty()) break;
            bytes += chunk;
        }
        if (file.error() != QFileDevice::NoError)
            return file_error(name, QStringLiteral("cannot be read: %1").arg(file.errorString()));
        if (bytes.size() > options.max_file_bytes) return too_large(bytes.size());
        if (*format == DocumentFormat::Pdf) {
            raw = detail::pdf_text(bytes, name);
        } else if (*format == DocumentFormat::Html) {
            hearth::Result<QString> html = detail::decode_html(bytes, name);
            if (!html) return html.error();
            raw = detail::Extracted{detail::html_to_text(*html), {}};
        } else {
            hearth::Result<QString> text = detail::decode_text(bytes, name);
            if (!text) return text.error();
            raw = detail::Extracted{std::move(*text), {}};
        }
    }
    if (!raw) return raw.error();

    DocumentText doc;
    doc.text = detail::normalize_text(raw->text);
    doc.format = *format;
    doc.notes = std::move(raw->notes);
    if (doc.text.isEmpty()) return file_error(name, QStringLiteral("has no text"));
    if (doc.text.size() > options.max_text_chars)
        return file_error(name, QStringLiteral("is too long: its text is %1 characters; Hearth "
                                               "keeps at most %2 per document")
                                    .arg(doc.text.size())
                                    .arg(options.max_text_chars));
    if (*format == DocumentFormat::Code) {
        if (const Named* n = named_code(info.fileName().toLower()))
            doc.language = QLatin1String(n->language);
        else if (const Extension* e = extension_of(info.suffix().toLower()))
            doc.language = QLatin1String(e->language);
    }
    return doc;
}

}  // namespace hearth::documents
