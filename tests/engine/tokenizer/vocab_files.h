// llama.cpp's vocabulary-only GGUF files (Phi-3, Qwen2), extracted by scripts/vocab-files
// into HEARTH_VOCAB_FILES_DIR (the build folder's vocab-files, made by the CTest fixture
// vocab_files). Shared by the tokenizer and chat golden suites.
#pragma once

#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QTest>

#include <map>
#include <memory>
#include <string>

#include "common/result.h"
#include "gguf/gguf_file.h"
#include "support/test_model.h"
#include "tokenizer/tokenizer.h"

#ifndef HEARTH_VOCAB_FILES_DIR
#error "HEARTH_VOCAB_FILES_DIR must name the folder scripts/vocab-files writes"
#endif

namespace hearth::test {

// DIR/name, or an empty string when the file is not there.
inline QString vocab_file_path_if_present(const QString& name) {
    const QString path = QStringLiteral(HEARTH_VOCAB_FILES_DIR) + "/" + name;
    return QFileInfo(path).isFile() ? path : QString();
}

// A vocabulary-only GGUF file and the tokenizer read from it.
struct VocabFile {
    std::unique_ptr<gguf::GgufFile> file;
    std::unique_ptr<Tokenizer> tokenizer;
};

inline Result<VocabFile> load_vocab_file(const QString& path) {
    auto file = gguf::GgufFile::open(path.toStdString());
    if (!file) return file.error();
    VocabFile v;
    v.file = std::move(file).value();
    auto tok = Tokenizer::from_gguf(*v.file);
    if (!tok) return tok.error();
    v.tokenizer = std::move(tok).value();
    return v;
}

// The files a suite has read, by key: each read once, on first use.
class VocabFiles {
  public:
    // The tokenizer of the file at path, or nullptr after failing the calling test.
    const Tokenizer* get(const QString& key, const QString& path) {
        auto it = files_.find(key);
        if (it == files_.end()) {
            auto v = load_vocab_file(path);
            if (!v) {
                QTest::qFail(qPrintable(path + ": " + QString::fromStdString(v.message())),
                             __FILE__, __LINE__);
                return nullptr;
            }
            it = files_.emplace(key, std::move(v).value()).first;
        }
        return it->second.tokenizer.get();
    }

  private:
    std::map<QString, VocabFile> files_;
};

}  // namespace hearth::test

// Declares `const QString var` = the path of vocab-files/name, or skips (fails in CI) when
// it is missing.
#define HEARTH_REQUIRE_VOCAB_FILE(var, name)                                           \
    const QString var = ::hearth::test::vocab_file_path_if_present(name);              \
    if ((var).isEmpty()) {                                                             \
        const QString why_ = QString("%1 not found in %2: run scripts/vocab-files %2") \
                                 .arg(name, QStringLiteral(HEARTH_VOCAB_FILES_DIR));   \
        if (::hearth::test::in_ci()) QFAIL(qPrintable(why_));                          \
        QSKIP(qPrintable(why_));                                                       \
    }
