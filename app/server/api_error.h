// ApiError: an error answer of the OpenAI-compatible server, shaped as OpenAI's API shapes
// them ({"error": {"message", "type", "param", "code"}}) with the HTTP status to send.
#pragma once

#include <string>

namespace hearth::server {

struct ApiError {
    int status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string param;  // the request field at fault; empty: none
    std::string code;   // e.g. "context_length_exceeded", "model_not_found"; empty: none
};

inline ApiError bad_request(std::string message, std::string param = {}, std::string code = {}) {
    return ApiError{400, std::move(message), "invalid_request_error", std::move(param),
                    std::move(code)};
}

inline ApiError server_error(int status, std::string message, std::string code = {}) {
    return ApiError{status, std::move(message), "server_error", {}, std::move(code)};
}

// The body of an error answer: {"error": {...}} as compact JSON.
std::string error_json(const ApiError& e);

}  // namespace hearth::server
