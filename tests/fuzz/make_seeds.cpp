// Writes the binary seeds of the fuzz corpus into DIR/<target>/ (scripts/fuzz runs it
// before fuzzing; the text and JSON seeds are committed under tests/fuzz/corpus/):
//   gguf/:  a minimal model file (one tensor) and a SentencePiece vocabulary with a chat
//           template, each a few KiB, written by the project's GgufWriter
//   block_file/: valid KV block files (the tier and hash fuzz_block_file expects)
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "kv/block_file.h"

namespace fs = std::filesystem;

namespace {

void save(const fs::path& path, std::span<const std::byte> bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    const fs::path dir = argv[1];
    using hearth::gguf::GgufWriter;

    {  // a model file: metadata and one small F32 tensor
        GgufWriter w;
        w.add_string("general.architecture", "llama");
        w.add_u32("llama.context_length", 128);
        w.add_u32("llama.embedding_length", 8);
        const std::array<int64_t, 2> ne{8, 2};
        std::vector<std::byte> data(8 * 2 * sizeof(float));
        if (!w.add_tensor("token_embd.weight", hearth::quant::TensorType::F32, ne, data)) return 1;
        save(dir / "gguf" / "minimal.gguf", w.bytes());
    }
    {  // a SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte tokens, two control
       // tokens and a few words, with a ChatML template
        std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
        std::vector<int32_t> types = {2, 3, 3};
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            tokens.push_back(name);
            types.push_back(6);
        }
        for (const char* t : {"<|im_start|>", "<|im_end|>"}) {
            tokens.push_back(t);
            types.push_back(3);
        }
        for (const char* t :
             {"\xE2\x96\x81hello", "\xE2\x96\x81world", "lo", "he", "\xE2\x96\x81"}) {
            tokens.push_back(t);
            types.push_back(1);
        }
        std::vector<float> scores;
        for (size_t i = 0; i < tokens.size(); ++i) scores.push_back(-static_cast<float>(i));
        GgufWriter w;
        w.add_string("general.architecture", "llama");
        w.add_string("tokenizer.ggml.model", "llama");
        w.add_strings("tokenizer.ggml.tokens", tokens);
        w.add_f32s("tokenizer.ggml.scores", scores);
        w.add_i32s("tokenizer.ggml.token_type", types);
        w.add_u32("tokenizer.ggml.bos_token_id", 1);
        w.add_u32("tokenizer.ggml.eos_token_id", 2);
        w.add_string("tokenizer.chat_template",
                     "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
                     "{{ message['content'] }}<|im_end|>\n{% endfor %}");
        save(dir / "gguf" / "spm-vocab.gguf", w.bytes());
    }
    {  // block files with the fuzz target's tier and hash
        hearth::kv::TierId tier{};
        hearth::kv::BlockHash hash{};
        for (size_t i = 0; i < tier.size(); ++i) tier[i] = static_cast<uint8_t>(i + 1);
        for (size_t i = 0; i < hash.bytes.size(); ++i)
            hash.bytes[i] = static_cast<uint8_t>(0xA0 + i);
        for (size_t payload : {0, 1, 64, 200}) {
            std::vector<std::byte> file(hearth::kv::kBlockFileHeaderBytes + payload);
            for (size_t i = 0; i < payload; ++i)
                file[hearth::kv::kBlockFileHeaderBytes + i] = static_cast<std::byte>(i * 7);
            hearth::kv::write_block_header(
                std::span<std::byte, hearth::kv::kBlockFileHeaderBytes>(
                    file.data(), hearth::kv::kBlockFileHeaderBytes),
                tier, hash,
                std::span<const std::byte>(file).subspan(hearth::kv::kBlockFileHeaderBytes));
            save(dir / "block_file" / ("valid-" + std::to_string(payload) + ".kvb"), file);
        }
    }
    return 0;
}
