// ApiServer: an OpenAI-compatible HTTP server on Hearth's engine, for other programs
// (editors, scripts, agents) on this machine or, with a key, the network.
//
//   GET  /health               200 {"status":"ok"} while a model is loaded, else 503
//   GET  /v1/models            the one model served, and "persona:NAME" for each persona
//   POST /v1/chat/completions  chat (streaming as server-sent events, or one answer); a
//                              persona by its name as the model (PersonaSource)
//   POST /v1/completions       plain text completion
//   GET  /stats                Hearth's own: KV blocks, queue, counts (for monitoring)
//
// Requests are stateless: each is planned by chat::plan_turn (the app's and the CLI's
// planner, so the prompt is rendered with the model's template exactly as the app renders
// it), runs as a conversation of its own that parks nothing when it ends, and finds what
// it shares with earlier requests (a system prompt, a conversation's history) in the KV
// cache by content, through the chained block hashes. Concurrent requests are batched by
// the engine. A client that disconnects has its request cancelled at once.
//
// Safety: loopback unless an API key is set (start() refuses otherwise); the key is
// checked on every endpoint but /health; browsers are let in only from the listed
// origins (any other Origin header gets 403); bodies, max_tokens and stop strings are
// bounded; each connection carries one request read under a deadline and runs on its
// own thread (guarded_server.h), so a slow or hostile client holds up nobody else.
// Every error is an OpenAI-shaped error object with its HTTP status.
//
// Threading: start() returns once the port is bound; requests run on the connection
// threads. The model source is asked on each request (the app swaps models under a
// running server); what it returns is held until that request ends.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hearth {
class Engine;
namespace chat {
class PromptBuilder;
}
}  // namespace hearth

namespace hearth::server {

struct ServedModel {
    Engine* engine = nullptr;
    const chat::PromptBuilder* builder = nullptr;
    std::string id;  // its name in /v1/models and in requests' "model"
    int32_t context_length = 0;
    std::shared_ptr<const void> keep_alive;  // owns engine and builder
};
// The model to serve now; nullptr while none is loaded (requests then get 503).
using ModelSource = std::function<std::shared_ptr<const ServedModel>()>;

// Personas a chat request may name as its model, "persona:NAME": the persona's prefix (its
// instructions and documents, as the app lays them out) is the request's system prompt,
// with the request's own system message after it, so every client of the persona starts
// from its cached (kept warm: pinned) prefix, as the app's chats do. Both are called on
// connection threads.
struct PersonaSource {
    // The prefix text of the persona named so (UTF-8); nullopt: there is none.
    std::function<std::optional<std::string>(const std::string& name)> find;
    std::function<std::vector<std::string>()> names;  // listed by /v1/models
};
inline constexpr std::string_view kPersonaPrefix = "persona:";

struct ServerConfig {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0: any free port (port() tells which)
    std::string api_key;
    std::vector<std::string> cors_origins;  // exact origins, e.g. "http://localhost:3000"
    std::size_t max_body_bytes = 8u << 20;
    // The most a request may ask for (more is an error); 0: none. Either way a reply runs
    // at most to the end of the context.
    int32_t max_tokens_limit = 0;
    std::chrono::milliseconds request_deadline{10'000};  // to send a whole request
    int max_connections = 256;
    // false (default, as llama-server): a request's "model" may name anything, the loaded
    // model answers and replies give its id (clients that send a fixed name work).
    // true: only the loaded model's id; any other is 404 model_not_found.
    bool strict_model = false;
};

// Whether `host` is a loopback address (or "localhost").
bool is_loopback(const std::string& host);

struct ServerStats {
    int64_t requests = 0;             // answered, any status
    int64_t errors = 0;               // answered with a status ≥ 400
    int64_t cancelled = 0;            // requests whose client went away
    int32_t active = 0;               // engine requests in flight
    int64_t connections_cut = 0;      // cut off at the request deadline
    int64_t connections_refused = 0;  // over max_connections
};

class ApiServer {
  public:
    static Result<std::unique_ptr<ApiServer>> start(ServerConfig config, ModelSource models,
                                                    PersonaSource personas = {});
    ~ApiServer();  // stop()s

    int port() const;
    std::string url() const;  // http://host:port
    // Cancels what runs, closes every connection and the listening socket; waits.
    void stop();
    ServerStats stats() const;

  private:
    struct Impl;
    explicit ApiServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::server
