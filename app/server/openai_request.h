// The OpenAI request bodies the server accepts, parsed and checked before anything reaches
// the engine. Every check that fails names the field (ApiError::param) so that a client
// sees what to fix; nothing here throws.
//
// Accepted (POST /v1/chat/completions): model, messages (system, developer (as system),
// user, assistant; content a string or an array of text parts), max_tokens or
// max_completion_tokens, temperature, top_p, seed, stop (a string or up to 4),
// frequency_penalty, presence_penalty, n (1 only), stream, stream_options.include_usage,
// the llama.cpp-server extensions top_k, min_p, repeat_penalty and ignore_eos, and
// chat_template_kwargs.enable_thinking.
// POST /v1/completions takes a prompt (a string, or an array holding one) instead of
// messages; its max_tokens defaults to 16 as OpenAI's does. Unknown fields are ignored (as
// OpenAI's API and llama-server do), except ones that would change the answer in a way
// this server cannot honour (n > 1, logprobs, tools, echo, response_format other than
// text, images): those are errors, not silently dropped.
//
// Defaults, where the request says nothing: temperature 1 and top_p 1 (OpenAI's), top_k 40
// and min_p 0.05 (llama-server's), a fresh random seed, and the reply may run to the end of
// the context (chat) or 16 tokens (completions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api_error.h"
#include "chat/chat_template.h"
#include "sampling/sampler.h"

namespace hearth::server {

struct RequestLimits {
    int max_messages = 4096;
    int max_stop_strings = 4;
    int max_stop_bytes = 256;  // each
    int max_depth = 32;        // JSON nesting
};

struct GenerationOptions {
    std::string model;
    std::optional<int32_t> max_tokens;  // nullopt: the default of the endpoint
    SamplingParams sampling;
    bool seed_given = false;
    std::vector<std::string> stop;
    bool ignore_eos = false;
    bool stream = false;
    bool include_usage = false;
};

struct ChatRequest {
    GenerationOptions options;
    std::vector<chat::Message> messages;
    // chat_template_kwargs.enable_thinking (vLLM's and SGLang's name): reasoning on or off
    // for templates with a switch (Qwen3); nullopt: the template's default.
    std::optional<bool> thinking;
};

struct CompletionRequest {
    GenerationOptions options;
    std::string prompt;
};

// `fresh_seed` is the seed used when the request gives none.
std::variant<ChatRequest, ApiError> parse_chat_request(std::string_view body,
                                                       std::uint64_t fresh_seed,
                                                       const RequestLimits& limits = {});
std::variant<CompletionRequest, ApiError> parse_completion_request(
    std::string_view body, std::uint64_t fresh_seed, const RequestLimits& limits = {});

}  // namespace hearth::server
