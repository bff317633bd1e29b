// libFuzzer target: the OpenAI-compatible server's request parser (app/server) on
// untrusted bodies: every body is a request or an OpenAI-shaped error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "server/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    auto chat = hearth::server::parse_chat_request(body, 42);
    if (auto* e = std::get_if<hearth::server::ApiError>(&chat))
        (void)hearth::server::error_json(*e);  // the error body is valid JSON for any text
    (void)hearth::server::parse_completion_request(body, 42);
    return 0;
}
