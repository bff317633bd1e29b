// readable_model_name on synthetic GGUF files (metadata only): the file name when it is
// about the model (general.basename), general.name otherwise, then the file name, then
// "model"; quantisation tags of every spelling come off the file name.
#include <QTest>

#include <optional>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_name.h"
#include "quant/quant_types.h"

using namespace hearth;

namespace {

std::unique_ptr<gguf::GgufFile> file_with(std::optional<std::string> name,
                                          std::optional<std::string> basename) {
    gguf::GgufWriter w;
    w.add_string("general.architecture", "llama");
    if (name) w.add_string("general.name", *name);
    if (basename) w.add_string("general.basename", *basename);
    auto f = gguf::GgufFile::parse(w.bytes());
    if (!f) qFatal("%s", f.message().c_str());
    return std::move(f).value();
}

}  // namespace

class TestModelName : public QObject {
    Q_OBJECT

  private slots:
    void names_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("name");  // "-": absent
        QTest::addColumn<QString>("basename");
        QTest::addColumn<QString>("expected");

        // The default model: its general.name is a title-cased training tag.
        QTest::newRow("default model")
            << "/home/u/.local/share/Hearth/models/SmolLM2-135M-Instruct.Q4_1.gguf"
            << "Smollm2 135M 8k Lc100K Mix1 Ep2"
            << "smollm2"
            << "SmolLM2 135M Instruct";
        // Quantisation tags, any case and separator; the basename matched ignoring both.
        QTest::newRow("-Q4_K_M") << "Llama-3.2-1B-Instruct-Q4_K_M.gguf"
                                 << "x"
                                 << "Llama 3.2"
                                 << "Llama 3.2 1B Instruct";
        QTest::newRow(".f16") << "qwen2.5-0.5b-instruct.f16.gguf"
                              << "x"
                              << "qwen2.5"
                              << "qwen2.5 0.5b instruct";
        QTest::newRow("-IQ4_XS") << "models/Phi_3_mini-IQ4_XS.gguf"
                                 << "x"
                                 << "phi-3"
                                 << "Phi 3 mini";
        QTest::newRow("_bf16") << "C:\\Models\\gemma-2b_bf16.GGUF"
                               << "x"
                               << "Gemma"
                               << "gemma 2b";
        QTest::newRow("-BF16") << "gemma-2b-BF16.gguf"
                               << "x"
                               << "gemma"
                               << "gemma 2b";
        QTest::newRow(".q8_0") << "tiny_llama.q8_0.gguf"
                               << "x"
                               << "TinyLlama"
                               << "tiny llama";
        QTest::newRow("-IQ2_XXS") << "Mixtral-8x7B-IQ2_XXS.gguf"
                                  << "x"
                                  << "mixtral"
                                  << "Mixtral 8x7B";
        QTest::newRow("no tag") << "SmolLM2-360M.gguf"
                                << "x"
                                << "smollm2"
                                << "SmolLM2 360M";
        // A tag-like word that is not at the end, or not a tag, stays.
        QTest::newRow("not a tag") << "Qwen2-7B-Q4-chat.gguf"
                                   << "x"
                                   << "qwen2"
                                   << "Qwen2 7B Q4 chat";
        // The file name is about something else (renamed, or a generic name): general.name,
        // its whitespace tidied.
        QTest::newRow("basename not in file name") << "/tmp/download (1).gguf"
                                                   << "  Phi 3\t Mini \n"
                                                   << "phi-3"
                                                   << "Phi 3 Mini";
        QTest::newRow("no basename") << "SmolLM2-135M-Instruct.Q4_1.gguf"
                                     << "Some Name"
                                     << "-"
                                     << "Some Name";
        QTest::newRow("empty basename") << "SmolLM2-135M-Instruct.Q4_1.gguf"
                                        << "Some Name"
                                        << ""
                                        << "Some Name";
        // Neither helps: the file name, tidied.
        QTest::newRow("stem") << "my_model-Q4_0.gguf"
                              << "-"
                              << "-"
                              << "my model";
        QTest::newRow("blank name") << "my-model.gguf"
                                    << "   "
                                    << "other"
                                    << "my model";
        QTest::newRow("only a tag") << "Q4_K_M.gguf"
                                    << "-"
                                    << "-"
                                    << "Q4 K M";
        // Nothing at all.
        QTest::newRow("nothing") << ""
                                 << "-"
                                 << "-"
                                 << "model";
        QTest::newRow("separators only") << "/models/-_-.gguf"
                                         << " "
                                         << "-"
                                         << "model";
    }

    void names() {
        QFETCH(QString, path);
        QFETCH(QString, name);
        QFETCH(QString, basename);
        QFETCH(QString, expected);
        const auto given = [](const QString& s) {
            return s == "-" ? std::nullopt : std::optional(s.toStdString());
        };
        const auto file = file_with(given(name), given(basename));
        QCOMPARE(QString::fromStdString(readable_model_name(*file, path.toStdString())), expected);
    }

    // The recipe named by general.file_type, else the type holding most bytes.
    void quantisationLabel() {
        const auto parse = [](const gguf::GgufWriter& w) {
            auto f = gguf::GgufFile::parse(w.bytes());
            if (!f) qFatal("%s", f.message().c_str());
            return std::move(f).value();
        };
        gguf::GgufWriter w;
        w.add_string("general.architecture", "gemma3");
        // Most bytes in Q8_0 (the embedding table), fewer in Q4_K: as Gemma 3 270M's.
        const std::vector<std::byte> q8(34 * 8 * 4), q4k(144 * 2);
        const int64_t q8_shape[] = {256, 4};
        const int64_t q4k_shape[] = {256, 2};
        QVERIFY(w.add_tensor("token_embd.weight", quant::TensorType::Q8_0, q8_shape, q8).ok());
        QVERIFY(w.add_tensor("blk.0.ffn_up.weight", quant::TensorType::Q4_K, q4k_shape, q4k).ok());
        QCOMPARE(quantisation_label(*parse(w)), std::string("Q8_0"));  // no file type
        gguf::GgufWriter named = w;
        named.add_u32("general.file_type", 15);
        QCOMPARE(quantisation_label(*parse(named)), std::string("Q4_K_M"));
        gguf::GgufWriter f16 = w;
        f16.add_u32("general.file_type", 1);
        QCOMPARE(quantisation_label(*parse(f16)), std::string("F16"));
        gguf::GgufWriter unknown = w;  // a value llama.cpp does not name: the bytes decide
        unknown.add_u32("general.file_type", 4);
        QCOMPARE(quantisation_label(*parse(unknown)), std::string("Q8_0"));
        gguf::GgufWriter future = w;
        future.add_u32("general.file_type", 1000);
        QCOMPARE(quantisation_label(*parse(future)), std::string("Q8_0"));
        gguf::GgufWriter empty;
        empty.add_string("general.architecture", "llama");
        QCOMPARE(quantisation_label(*parse(empty)), std::string());
    }
};

QTEST_GUILESS_MAIN(TestModelName)
#include "tst_model_name.moc"
