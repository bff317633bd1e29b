// Where Hearth keeps its data, without Qt (the CLI and tests use it; the app agrees with
// it through QStandardPaths::AppDataLocation for the application name "Hearth").
#pragma once

#include <string>

namespace hearth::paths {

// Linux: $XDG_DATA_HOME/Hearth or ~/.local/share/Hearth. Windows: %APPDATA%\Hearth.
std::string data_dir();

// Files that can be rebuilt (the KV cache's disk tier). Linux: $XDG_CACHE_HOME/Hearth or
// ~/.cache/Hearth. Windows: %LOCALAPPDATA%\Hearth\cache.
std::string cache_dir();
// Where the KV cache's disk tier lives by default: <cache_dir>/kv.
std::string kv_cache_dir();
// The CPU kernels measured fastest on this machine (kernels/cpu/kernel_tuner.h):
// <cache_dir>/kernel-choices.txt.
std::string kernel_choice_file();

inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

// $HEARTH_MODEL if set, else <data_dir>/models/SmolLM2-135M-Instruct.Q4_1.gguf.
std::string default_model_path();

}  // namespace hearth::paths
