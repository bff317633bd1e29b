// One named spdlog logger per subsystem ("gguf", "tokenizer", "chat", "engine", "kv",
// "sched", "store", "app", "ui", ...), all writing to the same sinks. The app adds a
// rotating file sink at start-up; tests and the CLI log to stderr.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace hearth::log {

// The logger for a subsystem, created on first use with the current sinks and level.
std::shared_ptr<spdlog::logger> get(const std::string& subsystem);

// Adds a rotating file sink (max_bytes per file, max_files kept) to every logger,
// present and future. Returns false with a message on stderr if the file cannot be opened.
bool add_rotating_file(const std::string& path, std::size_t max_bytes, std::size_t max_files);

// Level for all loggers ("trace", "debug", "info", "warn", "error", "off").
void set_level(const std::string& level);

// Replaces the stderr sink with nothing, so only file sinks receive messages.
void silence_stderr();

}  // namespace hearth::log
