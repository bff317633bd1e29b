#include "model/model_name.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>

#include "gguf/gguf_file.h"
#include "quant/quant_types.h"

namespace hearth {
namespace {

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_separator(char c) {
    return c == '.' || c == '-' || c == '_' || is_space(c);
}

std::string lowercase(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), lower);
    return out;
}

// A llama.cpp file type as written in file names: F16, BF16, F32 (FP16, FP32), or a
// quantisation Q4_1, Q4_K_M, Q8_0, IQ4_XS, IQ2_XXS, TQ1_0, Q4_0_4_4: a letter prefix,
// digits, then '_'-separated groups of letters and digits. Any case.
bool is_quant_tag(std::string_view tag) {
    const std::string t = lowercase(tag);
    if (t == "f16" || t == "bf16" || t == "f32" || t == "fp16" || t == "fp32" || t == "f64")
        return true;
    std::size_t i = 0;
    if (t.rfind("iq", 0) == 0 || t.rfind("tq", 0) == 0)
        i = 2;
    else if (t.rfind('q', 0) == 0)
        i = 1;
    else
        return false;
    const std::size_t digits = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == digits) return false;
    while (i < t.size()) {
        if (t[i] != '_') return false;
        const std::size_t group = ++i;
        while (i < t.size() && std::isalnum(static_cast<unsigned char>(t[i]))) ++i;
        if (i == group) return false;
    }
    return true;
}

// The file name without folders and without ".gguf".
std::string_view stem_of(std::string_view path) {
    const std::size_t slash = path.find_last_of("/\\");
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (name.size() > 5 && lowercase(name.substr(name.size() - 5)) == ".gguf")
        name.remove_suffix(5);
    return name;
}

// The longest trailing "<separator><quant tag>" goes, unless nothing would be left.
std::string_view without_quant_tag(std::string_view stem) {
    for (std::size_t i = 1; i < stem.size(); ++i)
        if (is_separator(stem[i]) && is_quant_tag(stem.substr(i + 1))) return stem.substr(0, i);
    return stem;
}

// Runs of whitespace (and, with dashes, of '-' and '_') become one space; trimmed.
std::string tidy(std::string_view s, bool dashes) {
    std::string out;
    bool gap = false;
    for (char c : s) {
        if (is_space(c) || (dashes && (c == '-' || c == '_'))) {
            gap = !out.empty();
            continue;
        }
        if (gap) out += ' ';
        gap = false;
        out += c;
    }
    return out;
}

// Lower case without separators, for "does the file name mention the basename".
std::string squashed(std::string_view s) {
    std::string out;
    for (char c : s)
        if (!is_separator(c)) out += lower(c);
    return out;
}

}  // namespace

std::string readable_model_name(const gguf::GgufFile& file, std::string_view path) {
    const std::string stem = tidy(without_quant_tag(stem_of(path)), true);
    const std::string basename = squashed(file.get_string("general.basename").value_or(""));
    if (!stem.empty() && !basename.empty() && squashed(stem).find(basename) != std::string::npos)
        return stem;
    std::string name = tidy(file.get_string("general.name").value_or(""), false);
    if (!name.empty()) return name;
    if (!stem.empty()) return stem;
    return "model";
}

std::string quantisation_label(const gguf::GgufFile& file) {
    // llama.cpp's LLAMA_FTYPE_* (llama.h), by value; empty where it names none.
    constexpr std::array<std::string_view, 42> kFileTypes = {
        "F32",    "F16",    "Q4_0",    "Q4_1",      "",       "",        "",
        "Q8_0",   "Q5_0",   "Q5_1",    "Q2_K",      "Q3_K_S", "Q3_K_M",  "Q3_K_L",
        "Q4_K_S", "Q4_K_M", "Q5_K_S",  "Q5_K_M",    "Q6_K",   "IQ2_XXS", "IQ2_XS",
        "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S",     "IQ4_NL", "IQ3_S",   "IQ3_M",
        "IQ2_S",  "IQ2_M",  "IQ4_XS",  "IQ1_M",     "BF16",   "",        "",
        "",       "TQ1_0",  "TQ2_0",   "MXFP4_MOE", "NVFP4",  "Q1_0",    "Q2_0"};
    if (const auto ftype = file.get_u32("general.file_type"); ftype && *ftype < kFileTypes.size())
        if (const std::string_view name = kFileTypes[*ftype]; !name.empty())
            return std::string(name);
    std::map<uint32_t, uint64_t> bytes_by_type;
    for (const auto& t : file.tensors()) bytes_by_type[static_cast<uint32_t>(t.type)] += t.nbytes;
    uint32_t main_type = 0;
    uint64_t most = 0;
    for (const auto& [type, bytes] : bytes_by_type)
        if (bytes > most) most = bytes, main_type = type;
    return most == 0 ? std::string() : std::string(quant::type_name(main_type));
}

}  // namespace hearth
