// Helpers shared by the test suites.
#pragma once

#include <QString>

namespace hearth::test {

// Path of the default model ($HEARTH_MODEL or the data folder), or an empty string when
// it is not there. Use HEARTH_REQUIRE_MODEL in a test function instead of calling this.
QString default_model_path_if_present();

// Path of Gemma 3 270M Q4_K_M ($HEARTH_GEMMA3_MODEL or gemma-3-270m-q4_k_m.gguf next to the
// default model: scripts/fetch-model --model gemma3-270m), or an empty string when it is not
// there. Use HEARTH_REQUIRE_GEMMA3_MODEL in a test function instead of calling this.
QString gemma3_model_path_if_present();

// True when running in CI (CI=true), where a missing model is a failure, not a skip.
bool in_ci();

// Root of the source tree (for golden data under tests/data).
QString source_dir();

// How many times longer than in a plain build a wait may take: the build sets
// HEARTH_TEST_TIME_SCALE (ThreadSanitizer 4, AddressSanitizer 2) as it scales CTest's limits.
// A streaming reply of the slow synthetic model takes 0.5 s plain and past 50 s under TSan
// beside another suite; waits are there to catch hangs, not to time the code.
#ifndef HEARTH_TEST_TIME_SCALE
#define HEARTH_TEST_TIME_SCALE 1
#endif
constexpr int kTimeScale = HEARTH_TEST_TIME_SCALE;

// The file's SHA-256 in hex, or an empty string when it cannot be read: suites check that
// a model or vocabulary file is the one their goldens were recorded on.
QString sha256_of_file(const QString& path);

}  // namespace hearth::test

// Declares `const QString model_path` or skips (fails in CI) when the model is missing.
#define HEARTH_REQUIRE_MODEL(model_path)                                                         \
    const QString model_path = ::hearth::test::default_model_path_if_present();                  \
    if ((model_path).isEmpty()) {                                                                \
        if (::hearth::test::in_ci())                                                             \
            QFAIL("default model missing in CI: run scripts/fetch-model (or set HEARTH_MODEL)"); \
        QSKIP("default model not found: run scripts/fetch-model or set HEARTH_MODEL");           \
    }

// Declares `const QString model_path` for Gemma 3 270M or skips (fails in CI) when missing.
#define HEARTH_REQUIRE_GEMMA3_MODEL(model_path)                                            \
    const QString model_path = ::hearth::test::gemma3_model_path_if_present();             \
    if ((model_path).isEmpty()) {                                                          \
        if (::hearth::test::in_ci())                                                       \
            QFAIL(                                                                         \
                "Gemma 3 270M missing in CI: run scripts/fetch-model --model gemma3-270m " \
                "(or set HEARTH_GEMMA3_MODEL)");                                           \
        QSKIP(                                                                             \
            "Gemma 3 270M not found: run scripts/fetch-model --model gemma3-270m or set "  \
            "HEARTH_GEMMA3_MODEL");                                                        \
    }
