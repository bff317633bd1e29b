// A name for people: what the app's title bar and model page call a model. The GGUF's
// general.name is often a converter's title-casing of a training tag ("Smollm2 135M 8k
// Lc100K Mix1 Ep2" for SmolLM2-135M-Instruct), while the file name usually says what the
// model is; general.basename tells whether the file name is about this model at all.
#pragma once

#include <string>
#include <string_view>

namespace hearth {

namespace gguf {
class GgufFile;
}

// In order of preference:
//  1. the file name's stem without a trailing quantisation tag (".Q4_1", "-Q4_K_M",
//     ".f16", "-IQ4_XS", "_bf16", any case) and with '-' and '_' turned into spaces, when
//     that stem contains general.basename (any case, separators ignored):
//     "SmolLM2-135M-Instruct.Q4_1.gguf" → "SmolLM2 135M Instruct";
//  2. general.name with runs of whitespace made one space, trimmed;
//  3. the stem as in 1;
//  4. "model". Never empty.
// path may be empty (a model parsed from memory); '/' and '\' both separate folders.
std::string readable_model_name(const gguf::GgufFile& file, std::string_view path);

// The quantisation people call the file by: the llama.cpp recipe named by general.file_type
// ("Q4_K_M", "IQ4_XS", "F16"), which mixes tensor types; for a file without one (or with a
// value llama.cpp does not name), the tensor type holding most of the bytes. The mix can
// differ from the name: Gemma 3 270M's "Q4_K_M" holds most of its bytes in its Q8_0
// embedding table. Empty for a file with no tensors and no file type.
std::string quantisation_label(const gguf::GgufFile& file);

}  // namespace hearth
