#include "model/model_name.h"

#include <algorithm>
#include <cctype>

#include "gguf/gguf_file.h"

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

}  // namespace hearth
