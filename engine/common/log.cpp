#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace hearth::log {
namespace {

struct Registry {
    std::mutex mutex;
    std::vector<spdlog::sink_ptr> sinks;
    spdlog::sink_ptr stderr_sink;
    spdlog::level::level_enum level = spdlog::level::info;

    Registry() {
        stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
        sinks.push_back(stderr_sink);
        if (const char* env = std::getenv("HEARTH_LOG_LEVEL")) level = spdlog::level::from_str(env);
    }

    // Caller holds the mutex. Re-applies the sinks to every registered logger.
    void apply_to_all() {
        spdlog::apply_all([this](const std::shared_ptr<spdlog::logger>& logger) {
            logger->sinks() = sinks;
            logger->set_level(level);
        });
    }
};

Registry& registry() {
    static Registry instance;
    return instance;
}

}  // namespace

std::shared_ptr<spdlog::logger> get(const std::string& subsystem) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    if (auto existing = spdlog::get(subsystem)) return existing;
    auto logger = std::make_shared<spdlog::logger>(subsystem, reg.sinks.begin(), reg.sinks.end());
    logger->set_level(reg.level);
    logger->flush_on(spdlog::level::warn);
    spdlog::register_logger(logger);
    return logger;
}

bool add_rotating_file(const std::string& path, std::size_t max_bytes, std::size_t max_files) {
    Registry& reg = registry();
    try {
        auto sink =
            std::make_shared<spdlog::sinks::rotating_file_sink_mt>(path, max_bytes, max_files);
        std::lock_guard lock(reg.mutex);
        reg.sinks.push_back(std::move(sink));
        reg.apply_to_all();
        return true;
    } catch (const spdlog::spdlog_ex& e) {
        std::fprintf(stderr, "hearth: cannot open log file %s: %s\n", path.c_str(), e.what());
        return false;
    }
}

void set_level(const std::string& level) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    reg.level = spdlog::level::from_str(level);
    reg.apply_to_all();
}

void silence_stderr() {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    std::erase(reg.sinks, reg.stderr_sink);
    reg.apply_to_all();
}

}  // namespace hearth::log
