#include "openai_request.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace hearth::server {

using nlohmann::json;

std::string error_json(const ApiError& e) {
    json err = {{"message", e.message},
                {"type", e.type},
                {"param", e.param.empty() ? json(nullptr) : json(e.param)},
                {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
    return json{{"error", std::move(err)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// The deepest nesting of arrays and objects, counted outside strings, so that a hostile
// body ("[[[[...") is refused before a recursive parser sees it.
int nesting_depth(std::string_view s) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : s) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

std::variant<json, ApiError> parse_object(std::string_view body, const RequestLimits& limits) {
    if (nesting_depth(body) > limits.max_depth)
        return bad_request("The request body nests deeper than " +
                           std::to_string(limits.max_depth) + " levels.");
    json doc;
    try {
        doc = json::parse(body.begin(), body.end());
    } catch (const json::exception& e) {
        return bad_request(std::string("The request body is not valid JSON: ") + e.what());
    }
    if (!doc.is_object()) return bad_request("The request body must be a JSON object.");
    return doc;
}

// Field readers: nullopt when absent or null; an error when present with the wrong type
// or out of range.
using Fail = std::optional<ApiError>;

ApiError type_error(const std::string& field, const char* expected) {
    return bad_request("'" + field + "' must be " + expected + ".", field);
}

Fail read_number(const json& doc, const std::string& field, double lo, double hi,
                 std::optional<double>& out) {
    const auto it = doc.find(field);
    if (it == doc.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) return type_error(field, "a number");
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
        return bad_request("'" + field + "' must be between " + json(lo).dump() + " and " +
                               json(hi).dump() + ", got " + it->dump() + ".",
                           field);
    out = v;
    return std::nullopt;
}

Fail read_integer(const json& doc, const std::string& field, int64_t lo, int64_t hi,
                  std::optional<int64_t>& out) {
    const auto it = doc.find(field);
    if (it == doc.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) {
        // 16.0 is an integer to a JavaScript client.
        if (it->is_number_float()) {
            const double d = it->get<double>();
            if (std::isfinite(d) && std::floor(d) == d && d >= static_cast<double>(lo) &&
                d <= static_cast<double>(hi)) {
                out = static_cast<int64_t>(d);
                return std::nullopt;
            }
        }
        return type_error(field, "an integer");
    }
    const bool negative = it->is_number_integer() && !it->is_number_unsigned();
    const int64_t v =
        negative
            ? it->get<int64_t>()
            : static_cast<int64_t>(std::min<uint64_t>(
                  it->get<uint64_t>(), static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
    if (v < lo || v > hi)
        return bad_request("'" + field + "' must be between " + std::to_string(lo) + " and " +
                               std::to_string(hi) + ", got " + it->dump() + ".",
                           field);
    out = v;
    return std::nullopt;
}

Fail read_bool(const json& doc, const std::string& field, bool& out) {
    const auto it = doc.find(field);
    if (it == doc.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) return type_error(field, "true or false");
    out = it->get<bool>();
    return std::nullopt;
}

// Fields whose meaning this server cannot honour: refused rather than ignored.
Fail refuse_unsupported(const json& doc) {
    auto present = [&](const char* f) {
        const auto it = doc.find(f);
        return it != doc.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>()) &&
               !(it->is_array() && it->empty());
    };
    for (const char* f : {"tools", "functions", "logprobs", "top_logprobs", "echo", "suffix",
                          "best_of", "logit_bias"})
        if (present(f))
            return bad_request(std::string("'") + f + "' is not supported by this server.", f);
    if (const auto it = doc.find("response_format"); it != doc.end() && !it->is_null()) {
        const auto type = it->is_object() ? it->find("type") : it->end();
        if (!it->is_object() || type == it->end() || *type != "text")
            return bad_request("Only the 'text' response format is supported.", "response_format");
    }
    return std::nullopt;
}

Fail read_options(const json& doc, bool chat, std::uint64_t fresh_seed, const RequestLimits& limits,
                  GenerationOptions& o) {
    if (auto f = refuse_unsupported(doc)) return f;
    const auto model = doc.find("model");
    if (model == doc.end() || model->is_null())
        return bad_request("'model' is required (GET /v1/models lists it).", "model");
    if (!model->is_string()) return type_error("model", "a string");
    o.model = model->get<std::string>();

    std::optional<int64_t> n, max_tokens, max_completion, seed, top_k;
    if (auto f = read_integer(doc, "n", 1, 128, n)) return f;
    if (n && *n != 1) return bad_request("Only n = 1 is supported.", "n");
    constexpr int64_t kMaxTokens = 1 << 24;
    if (auto f = read_integer(doc, "max_tokens", 1, kMaxTokens, max_tokens)) return f;
    if (chat)
        if (auto f = read_integer(doc, "max_completion_tokens", 1, kMaxTokens, max_completion))
            return f;
    if (max_completion) max_tokens = max_completion;
    if (max_tokens) o.max_tokens = static_cast<int32_t>(*max_tokens);

    SamplingParams& sp = o.sampling;
    sp.temperature = 1.0f;  // OpenAI's defaults
    sp.top_p = 1.0f;
    std::optional<double> temperature, top_p, min_p, freq, pres, repeat;
    if (auto f = read_number(doc, "temperature", 0, 2, temperature)) return f;
    if (auto f = read_number(doc, "top_p", 0, 1, top_p)) return f;
    if (auto f = read_number(doc, "min_p", 0, 1, min_p)) return f;
    if (auto f = read_number(doc, "frequency_penalty", -2, 2, freq)) return f;
    if (auto f = read_number(doc, "presence_penalty", -2, 2, pres)) return f;
    if (auto f = read_number(doc, "repeat_penalty", 0, 10, repeat)) return f;
    if (auto f = read_integer(doc, "top_k", 0, 1 << 20, top_k)) return f;
    if (auto f = read_integer(doc, "seed", std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), seed))
        return f;
    if (temperature) sp.temperature = static_cast<float>(*temperature);
    if (top_p) sp.top_p = *top_p > 0 ? static_cast<float>(*top_p) : 1e-6f;
    if (min_p) sp.min_p = static_cast<float>(*min_p);
    if (freq) sp.frequency_penalty = static_cast<float>(*freq);
    if (pres) sp.presence_penalty = static_cast<float>(*pres);
    if (repeat) sp.repeat_penalty = static_cast<float>(*repeat);
    if (top_k) sp.top_k = static_cast<int32_t>(*top_k);
    o.seed_given = seed.has_value();
    sp.seed = seed ? static_cast<std::uint64_t>(*seed) : fresh_seed;

    if (const auto it = doc.find("stop"); it != doc.end() && !it->is_null()) {
        if (it->is_string()) {
            o.stop.push_back(it->get<std::string>());
        } else if (it->is_array()) {
            if (static_cast<int>(it->size()) > limits.max_stop_strings)
                return bad_request(
                    "'stop' takes at most " + std::to_string(limits.max_stop_strings) + " strings.",
                    "stop");
            for (const json& s : *it) {
                if (!s.is_string()) return type_error("stop", "a string or an array of strings");
                o.stop.push_back(s.get<std::string>());
            }
        } else {
            return type_error("stop", "a string or an array of strings");
        }
        for (const std::string& s : o.stop)
            if (s.empty() || static_cast<int>(s.size()) > limits.max_stop_bytes)
                return bad_request("Each stop string must have 1 to " +
                                       std::to_string(limits.max_stop_bytes) + " bytes.",
                                   "stop");
    }
    if (auto f = read_bool(doc, "ignore_eos", o.ignore_eos)) return f;
    if (auto f = read_bool(doc, "stream", o.stream)) return f;
    if (const auto it = doc.find("stream_options"); it != doc.end() && !it->is_null()) {
        if (!it->is_object()) return type_error("stream_options", "an object");
        if (!o.stream)
            return bad_request("'stream_options' is only allowed with 'stream': true.",
                               "stream_options");
        if (auto f = read_bool(*it, "include_usage", o.include_usage)) {
            f->param = "stream_options.include_usage";
            return f;
        }
    }
    return std::nullopt;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts
// (joined); anything else (images, audio) is refused.
Fail read_content(const json& msg, size_t index, std::string& out) {
    const std::string field = "messages[" + std::to_string(index) + "].content";
    const auto it = msg.find("content");
    if (it == msg.end() || it->is_null()) return std::nullopt;  // e.g. an empty assistant turn
    if (it->is_string()) {
        out = it->get<std::string>();
        return std::nullopt;
    }
    if (!it->is_array()) return type_error(field, "a string or an array of text parts");
    for (const json& part : *it) {
        const auto type = part.is_object() ? part.find("type") : part.end();
        const auto text = part.is_object() ? part.find("text") : part.end();
        if (type == part.end() || !type->is_string())
            return type_error(field, "a string or an array of text parts");
        if (*type != "text")
            return bad_request("Content parts of type '" + type->get<std::string>() +
                                   "' are not supported; send text.",
                               field);
        if (text == part.end() || !text->is_string())
            return type_error(field + ".text", "a string");
        out += text->get<std::string>();
    }
    return std::nullopt;
}

}  // namespace

std::variant<ChatRequest, ApiError> parse_chat_request(std::string_view body,
                                                       std::uint64_t fresh_seed,
                                                       const RequestLimits& limits) {
    auto parsed = parse_object(body, limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
    const json& doc = std::get<json>(parsed);
    ChatRequest req;
    if (auto f = read_options(doc, true, fresh_seed, limits, req.options)) return *f;
    const auto messages = doc.find("messages");
    if (messages == doc.end() || messages->is_null())
        return bad_request("'messages' is required.", "messages");
    if (!messages->is_array()) return type_error("messages", "an array");
    if (messages->empty()) return bad_request("'messages' must not be empty.", "messages");
    if (static_cast<int>(messages->size()) > limits.max_messages)
        return bad_request(
            "'messages' holds more than " + std::to_string(limits.max_messages) + " messages.",
            "messages");
    for (size_t i = 0; i < messages->size(); ++i) {
        const json& m = (*messages)[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) return type_error(at, "an object");
        const auto role = m.find("role");
        if (role == m.end() || !role->is_string())
            return type_error(at + ".role", "one of system, developer, user, assistant");
        chat::Message cm;
        const std::string r = role->get<std::string>();
        if (r == "system" || r == "developer") {
            cm.role = chat::Role::System;
        } else if (r == "user") {
            cm.role = chat::Role::User;
        } else if (r == "assistant") {
            cm.role = chat::Role::Assistant;
        } else {
            return bad_request(
                "Role '" + r + "' is not supported; use system, developer, user or assistant.",
                at + ".role");
        }
        if (auto f = read_content(m, i, cm.text)) return *f;
        req.messages.push_back(std::move(cm));
    }
    if (const auto kw = doc.find("chat_template_kwargs"); kw != doc.end() && !kw->is_null()) {
        if (!kw->is_object()) return type_error("chat_template_kwargs", "an object");
        if (const auto t = kw->find("enable_thinking"); t != kw->end() && !t->is_null()) {
            if (!t->is_boolean())
                return type_error("chat_template_kwargs.enable_thinking", "true or false");
            req.thinking = t->get<bool>();
        }
    }
    if (req.messages.back().role == chat::Role::Assistant)
        return bad_request(
            "The last message must not be the assistant's: there is nothing to "
            "reply to.",
            "messages");
    return req;
}

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view body,
                                                                   std::uint64_t fresh_seed,
                                                                   const RequestLimits& limits) {
    auto parsed = parse_object(body, limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
    const json& doc = std::get<json>(parsed);
    CompletionRequest req;
    if (auto f = read_options(doc, false, fresh_seed, limits, req.options)) return *f;
    if (!req.options.max_tokens) req.options.max_tokens = 16;  // OpenAI's default
    const auto prompt = doc.find("prompt");
    if (prompt == doc.end() || prompt->is_null())
        return bad_request("'prompt' is required.", "prompt");
    if (prompt->is_string()) {
        req.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
        req.prompt = (*prompt)[0].get<std::string>();
    } else if (prompt->is_array()) {
        return bad_request(
            "'prompt' must be a string (or an array of one string); batches "
            "and token arrays are not supported.",
            "prompt");
    } else {
        return type_error("prompt", "a string");
    }
    if (req.prompt.empty()) return bad_request("'prompt' must not be empty.", "prompt");
    return req;
}

}  // namespace hearth::server
