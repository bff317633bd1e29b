#include "common/paths.h"

#include <cstdlib>

namespace hearth::paths {
namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

}  // namespace

std::string data_dir() {
#ifdef _WIN32
    std::string base = env("APPDATA");
    if (base.empty()) base = env("USERPROFILE") + "\\AppData\\Roaming";
    return base + "\\Hearth";
#else
    std::string base = env("XDG_DATA_HOME");
    if (base.empty()) base = env("HOME") + "/.local/share";
    return base + "/Hearth";
#endif
}

#ifdef _WIN32
constexpr const char* kSep = "\\";
#else
constexpr const char* kSep = "/";
#endif

std::string cache_dir() {
#ifdef _WIN32
    std::string base = env("LOCALAPPDATA");
    if (base.empty()) base = env("USERPROFILE") + "\\AppData\\Local";
    return base + "\\Hearth\\cache";
#else
    std::string base = env("XDG_CACHE_HOME");
    if (base.empty()) base = env("HOME") + "/.cache";
    return base + "/Hearth";
#endif
}

std::string kv_cache_dir() {
    return cache_dir() + kSep + "kv";
}

std::string kernel_choice_file() {
    return cache_dir() + kSep + "kernel-choices.txt";
}

std::string default_model_path() {
    if (std::string over = env("HEARTH_MODEL"); !over.empty()) return over;
#ifdef _WIN32
    return data_dir() + "\\models\\" + kDefaultModelFile;
#else
    return data_dir() + "/models/" + kDefaultModelFile;
#endif
}

}  // namespace hearth::paths
