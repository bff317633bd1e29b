// The OpenAI response bodies the server writes: whole answers, stream chunks (each one
// server-sent event) and usage. Compact JSON; invalid UTF-8 in text (which the engine does
// not produce) would be replaced, never sent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine.h"
#include "generation/generator.h"
#include "sched/scheduler.h"

namespace hearth::server {

enum class Endpoint : uint8_t { Chat, Completion };

// What every body of one answer repeats.
struct AnswerHeader {
    Endpoint endpoint = Endpoint::Chat;
    std::string id;  // "chatcmpl-…" or "cmpl-…"
    int64_t created = 0;
    std::string model;
};

// "stop" (end of generation or a stop string) or "length" (max_tokens).
const char* finish_reason(StopReason stop);

// The non-streaming answer.
std::string answer_json(const AnswerHeader& h, const std::string& text, StopReason stop,
                        const sched::RequestStats& stats);
// One streamed event ("data: {...}\n\n"): the opening chunk (chat: the assistant role),
// a piece of text, the closing chunk with the finish reason, the usage chunk (choices
// empty, stream_options.include_usage) and the end marker.
std::string open_event(const AnswerHeader& h);
std::string text_event(const AnswerHeader& h, const std::string& text);
std::string finish_event(const AnswerHeader& h, StopReason stop);
std::string usage_event(const AnswerHeader& h, const sched::RequestStats& stats);
std::string error_event(const std::string& error_json);
inline constexpr const char* kDoneEvent = "data: [DONE]\n\n";

// GET /stats: the engine's KV cache and queue, and the server's counts (Hearth's own).
struct ServerCounts {
    int64_t requests = 0, errors = 0, cancelled = 0;
    int32_t active = 0;
};
std::string stats_json(const EngineStats& engine, const ServerCounts& server);

// The model served first, then the personas ("persona:NAME"), all served by it.
std::string models_json(const std::vector<std::string>& ids, int64_t created,
                        int32_t context_length);

}  // namespace hearth::server
