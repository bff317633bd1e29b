#include "openai_response.h"

#include <nlohmann/json.hpp>

namespace hearth::server {

using nlohmann::json;

namespace {

std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string event(const json& j) {
    return "data: " + dump(j) + "\n\n";
}

json usage(const sched::RequestStats& s) {
    return {{"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.generated_tokens},
            {"total_tokens", s.prompt_tokens + s.generated_tokens},
            {"prompt_tokens_details", {{"cached_tokens", s.prompt_tokens_cached}}},
            // Speculative decoding's drafts, in the fields OpenAI gives its predicted outputs:
            // draft tokens the reply kept and those it did not.
            {"completion_tokens_details",
             {{"accepted_prediction_tokens", s.draft_accepted},
              {"rejected_prediction_tokens", s.draft_tokens - s.draft_accepted}}}};
}

json base(const AnswerHeader& h, bool chunk) {
    const bool chat = h.endpoint == Endpoint::Chat;
    return {{"id", h.id},
            {"object",
             chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
            {"created", h.created},
            {"model", h.model},
            {"system_fingerprint", "hearth"}};
}

json choice(const AnswerHeader& h, const std::string* text, const char* finish, bool chunk) {
    json c = {{"index", 0},
              {"logprobs", nullptr},
              {"finish_reason", finish ? json(finish) : json(nullptr)}};
    if (h.endpoint == Endpoint::Completion) {
        c["text"] = text ? *text : std::string();
    } else if (chunk) {
        c["delta"] = text ? json{{"content", *text}} : json::object();
    } else {
        c["message"] = {{"role", "assistant"}, {"content", text ? *text : std::string()}};
    }
    return c;
}

}  // namespace

const char* finish_reason(StopReason stop) {
    return stop == StopReason::MaxTokens ? "length" : "stop";
}

std::string answer_json(const AnswerHeader& h, const std::string& text, StopReason stop,
                        const sched::RequestStats& stats) {
    json j = base(h, false);
    j["choices"] = json::array({choice(h, &text, finish_reason(stop), false)});
    j["usage"] = usage(stats);
    return dump(j);
}

std::string open_event(const AnswerHeader& h) {
    json j = base(h, true);
    json c = choice(h, nullptr, nullptr, true);
    if (h.endpoint == Endpoint::Chat) c["delta"] = {{"role", "assistant"}, {"content", ""}};
    j["choices"] = json::array({std::move(c)});
    return event(j);
}

std::string text_event(const AnswerHeader& h, const std::string& text) {
    json j = base(h, true);
    j["choices"] = json::array({choice(h, &text, nullptr, true)});
    return event(j);
}

std::string finish_event(const AnswerHeader& h, StopReason stop) {
    json j = base(h, true);
    j["choices"] = json::array({choice(h, nullptr, finish_reason(stop), true)});
    return event(j);
}

std::string usage_event(const AnswerHeader& h, const sched::RequestStats& stats) {
    json j = base(h, true);
    j["choices"] = json::array();
    j["usage"] = usage(stats);
    return event(j);
}

std::string error_event(const std::string& error_json) {
    return "data: " + error_json + "\n\n";
}

std::string stats_json(const EngineStats& e, const ServerCounts& c) {
    json j = {{"kv",
               {{"blocks_total", e.kv.blocks_total},
                {"blocks_used", e.kv.blocks_used},
                {"blocks_cached", e.kv.blocks_cached},
                {"blocks_pinned", e.kv.blocks_pinned},
                {"prompt_tokens_queried", e.kv.prompt_tokens_queried},
                {"prompt_tokens_cached", e.kv.prompt_tokens_cached}}},
              {"requests_running", e.scheduler.running},
              {"requests_waiting", e.scheduler.waiting},
              {"conversations_parked", e.conversations_parked},
              {"decode_tokens_per_s", e.decode_tokens_per_s},
              {"server",
               {{"requests", c.requests},
                {"errors", c.errors},
                {"cancelled", c.cancelled},
                {"active", c.active}}}};
    return dump(j);
}

std::string models_json(const std::vector<std::string>& ids, int64_t created,
                        int32_t context_length) {
    json data = json::array();
    for (const std::string& id : ids)
        data.push_back({{"id", id},
                        {"object", "model"},
                        {"created", created},
                        {"owned_by", "hearth"},
                        {"meta", {{"n_ctx", context_length}}}});
    return dump(json{{"object", "list"}, {"data", std::move(data)}});
}

}  // namespace hearth::server
