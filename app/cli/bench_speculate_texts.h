// The texts of hearth-cli bench speculate's workloads (bench_speculate_texts.cpp).
#pragma once

namespace hearth::cli {

extern const char* const kSpeculateCode;     // a 152-line Python function
extern const char* const kSpeculateArticle;  // ~1,100 words of prose

}  // namespace hearth::cli
