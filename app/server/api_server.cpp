#include "api_server.h"

#include <httplib.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "common/log.h"
#include "completion_run.h"
#include "engine.h"
#include "guarded_server.h"
#include "openai_request.h"
#include "openai_response.h"

namespace hearth::server {

namespace {

// Server requests run as conversations of their own, numbered far above the app's store
// ids so that the two never meet in one engine.
constexpr int64_t kFirstConversation = int64_t{1} << 52;

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void send_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(error_json(e), "application/json");
}

const ApiError kNoModel = server_error(503, "No model is loaded yet.", "model_not_loaded");

// Compares without stopping at the first difference, so that timing tells nothing.
bool same_secret(const std::string& a, const std::string& b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
    return diff == 0;
}

}  // namespace

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

struct ApiServer::Impl {
    ServerConfig config;
    ModelSource models;
    GuardedServer http;
    std::thread listener;
    int port = 0;
    std::atomic<bool> stopping{false};
    std::atomic<int64_t> next_conversation{kFirstConversation};
    std::atomic<int64_t> requests{0}, errors{0}, cancelled{0};
    std::atomic<int32_t> active{0};
    std::mutex rng_mutex;
    std::mt19937_64 rng{std::random_device{}()};

    PersonaSource personas;

    Impl(ServerConfig c, ModelSource m, PersonaSource p)
        : config(std::move(c)),
          models(std::move(m)),
          http(config.request_deadline, config.max_connections),
          personas(std::move(p)) {}

    uint64_t random64() {
        std::lock_guard lock(rng_mutex);
        return rng();
    }
    std::string new_id(const char* prefix) {
        static constexpr char kHex[] = "0123456789abcdef";
        std::string id = prefix;
        uint64_t a = random64(), b = random64();
        for (int i = 0; i < 12; ++i, a >>= 4) id += kHex[a & 15];
        for (int i = 0; i < 12; ++i, b >>= 4) id += kHex[b & 15];
        return id;
    }

    // The model served now, or nullptr while none is loaded.
    std::shared_ptr<const ServedModel> current() const {
        auto model = models ? models() : nullptr;
        return model && model->engine && model->builder ? model : nullptr;
    }
    void routes();
    httplib::Server::HandlerResponse gate(const httplib::Request& req, httplib::Response& res);
    void generate(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
    // The served model, or an error answer already written.
    // A persona's name (strict_model lets it through: it is served by the loaded model).
    std::shared_ptr<const ServedModel> model_for(const std::string& wanted, httplib::Response& res,
                                                 bool persona = false);
};

httplib::Server::HandlerResponse ApiServer::Impl::gate(const httplib::Request& req,
                                                       httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    const std::string origin = req.get_header_value("Origin");
    if (!origin.empty()) {
        const auto& allowed = config.cors_origins;
        if (std::find(allowed.begin(), allowed.end(), origin) == allowed.end()) {
            send_error(res, ApiError{403,
                                     "Requests from the web origin '" + origin +
                                         "' are not allowed; add it to the server's allowed "
                                         "origins (--cors-origin).",
                                     "invalid_request_error",
                                     {},
                                     "origin_not_allowed"});
            return HR::Handled;
        }
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Vary", "Origin");
        if (req.method == "OPTIONS") {
            res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
            res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
            res.set_header("Access-Control-Max-Age", "600");
            res.status = 204;
            return HR::Handled;
        }
    }
    if (!config.api_key.empty() && req.path != "/health") {
        const std::string auth = req.get_header_value("Authorization");
        constexpr std::string_view kBearer = "Bearer ";
        const bool ok =
            auth.starts_with(kBearer) && same_secret(auth.substr(kBearer.size()), config.api_key);
        if (!ok) {
            send_error(res, ApiError{401,
                                     auth.empty() ? "No API key was given (Authorization: "
                                                    "Bearer KEY)."
                                                  : "The API key is not valid.",
                                     "invalid_request_error",
                                     {},
                                     "invalid_api_key"});
            return HR::Handled;
        }
    }
    return HR::Unhandled;
}

std::shared_ptr<const ServedModel> ApiServer::Impl::model_for(const std::string& wanted,
                                                              httplib::Response& res,
                                                              bool persona) {
    auto model = current();
    if (!model) {
        send_error(res, kNoModel);
        return nullptr;
    }
    if (config.strict_model && !persona && wanted != model->id) {
        send_error(res, ApiError{404,
                                 "The model '" + wanted + "' does not exist; this server serves '" +
                                     model->id + "'.",
                                 "invalid_request_error", "model", "model_not_found"});
        return nullptr;
    }
    return model;
}

void ApiServer::Impl::routes() {
    http.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return gate(req, res); });
    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        if (current()) {
            res.set_content(R"({"status":"ok"})", "application/json");
        } else {
            send_error(res, kNoModel);
        }
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        auto model = current();
        if (!model) {
            res.set_content(R"({"object":"list","data":[]})", "application/json");
            return;
        }
        std::vector<std::string> ids{model->id};
        if (personas.names)
            for (const std::string& name : personas.names())
                ids.push_back(std::string(kPersonaPrefix) + name);
        res.set_content(models_json(ids, unix_now(), model->context_length), "application/json");
    });
    http.Get("/stats", [this](const httplib::Request&, httplib::Response& res) {
        auto model = current();
        if (!model) return send_error(res, kNoModel);
        res.set_content(
            stats_json(model->engine->stats(), ServerCounts{requests, errors, cancelled, active}),
            "application/json");
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
        generate(req, res, Endpoint::Chat);
    });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
        generate(req, res, Endpoint::Completion);
    });
    // Errors httplib answers itself (no such route: 404, a body over the limit: 413, a
    // malformed request line: 400) get an OpenAI-shaped body too.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            std::string message;
            switch (res.status) {
                case 404:
                    message = "No such endpoint: " + req.method + " " + req.path + ".";
                    break;
                case 413:
                    message = "The request body is too large.";
                    break;
                default:
                    message = "The request was refused (HTTP " + std::to_string(res.status) + ").";
            }
            ApiError e{res.status, message, "invalid_request_error", {}, {}};
            res.set_content(error_json(e), "application/json");
            return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
            std::string what = "unknown error";
            try {
                if (ep) std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            log::get("server")->error("request failed: {}", what);
            send_error(res, server_error(500, "The server failed: " + what));
        });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
        ++requests;
        if (res.status >= 400) ++errors;
        log::get("server")->debug("{} {} {} from {}:{}", req.method, req.path, res.status,
                                  req.remote_addr, req.remote_port);
    });
}

void ApiServer::Impl::generate(const httplib::Request& req, httplib::Response& res,
                               Endpoint endpoint) {
    const uint64_t seed = random64();
    const bool chat = endpoint == Endpoint::Chat;
    std::variant<ChatRequest, ApiError> chat_req;
    std::variant<CompletionRequest, ApiError> text_req;
    const GenerationOptions* options = nullptr;
    if (chat) {
        chat_req = parse_chat_request(req.body, seed);
        if (auto* e = std::get_if<ApiError>(&chat_req)) return send_error(res, *e);
        options = &std::get<ChatRequest>(chat_req).options;
    } else {
        text_req = parse_completion_request(req.body, seed);
        if (auto* e = std::get_if<ApiError>(&text_req)) return send_error(res, *e);
        options = &std::get<CompletionRequest>(text_req).options;
    }
    // A persona by name: its prefix is the system prompt (chat only).
    std::optional<std::string> persona;
    if (options->model.starts_with(kPersonaPrefix)) {
        const std::string name = options->model.substr(kPersonaPrefix.size());
        if (!chat)
            return send_error(res, bad_request("A persona answers chat requests: use "
                                               "/v1/chat/completions.",
                                               "model"));
        persona = personas.find ? personas.find(name) : std::nullopt;
        if (!persona)
            return send_error(res, ApiError{404, "There is no persona named '" + name + "'.",
                                            "invalid_request_error", "model", "model_not_found"});
    }
    auto model = model_for(options->model, res, persona.has_value());
    if (!model) return;
    const int32_t context = model->context_length;
    // max_tokens beyond the set limit is refused; beyond the context it is cut to the room
    // left after the prompt (as llama-server does), so a client need not know the context.
    if (config.max_tokens_limit > 0 && options->max_tokens &&
        *options->max_tokens > config.max_tokens_limit)
        return send_error(
            res, bad_request("'max_tokens' may be at most " +
                                 std::to_string(config.max_tokens_limit) + " on this server.",
                             "max_tokens"));
    const int32_t limit =
        config.max_tokens_limit > 0 ? std::min(config.max_tokens_limit, context) : context;
    const int32_t wanted = std::min(options->max_tokens.value_or(limit), limit);

    sched::Request request;
    if (chat) {
        chat::TurnInput turn;
        turn.messages = std::move(std::get<ChatRequest>(chat_req).messages);
        if (persona) {
            // The persona's prefix first, the request's own system message after it.
            turn.system_prompt = std::move(*persona);
            if (!turn.messages.empty() && turn.messages.front().role == chat::Role::System) {
                *turn.system_prompt += "\n\n" + turn.messages.front().text;
                turn.messages.erase(turn.messages.begin());
            }
        }
        turn.thinking = std::get<ChatRequest>(chat_req).thinking;
        turn.max_tokens = wanted;
        turn.policy = chat::ContextPolicy::Fail;
        auto planned = chat::plan_turn(*model->builder, context, turn);
        if (!planned)
            return send_error(res,
                              bad_request(planned.message(), "messages", planned.error().code));
        request.prompt = std::move(planned->prompt);
        request.max_tokens = planned->max_tokens;
    } else {
        // As llama-server: control-token text in the prompt is parsed (a client may send
        // a prompt it formatted itself).
        auto planned = chat::plan_text(model->engine->tokenizer(), context,
                                       std::get<CompletionRequest>(text_req).prompt, true, wanted);
        if (!planned)
            return send_error(res, bad_request(planned.message(), "prompt", planned.error().code));
        request.prompt = std::move(planned->prompt);
        request.max_tokens = planned->max_tokens;
    }
    request.conversation = next_conversation++;
    request.sampling = options->sampling;
    request.stop_strings = options->stop;
    request.stop_at_end_of_generation = !options->ignore_eos;
    request.park_at_end = false;  // stateless: the cache finds shared prefixes by content

    // A persona's answers carry its name as their model, as the client asked.
    AnswerHeader header{endpoint, new_id(chat ? "chatcmpl-" : "cmpl-"), unix_now(),
                        persona ? options->model : model->id};
    run_completion(res, std::move(model), std::move(request), std::move(header), options->stream,
                   options->include_usage, RunContext{stopping, cancelled, active});
}

Result<std::unique_ptr<ApiServer>> ApiServer::start(ServerConfig config, ModelSource models,
                                                    PersonaSource personas) {
    if (config.port < 0 || config.port > 65535)
        return make_error("the port must be between 0 and 65535");
    if (!is_loopback(config.host) && config.api_key.empty())
        return make_error("serving on '" + config.host +
                          "' (not this machine only) needs an API key (--api-key), so that "
                          "nobody else on the network can use the model");
    auto impl = std::make_unique<Impl>(std::move(config), std::move(models), std::move(personas));
    Impl& s = *impl;
    const ServerConfig& c = s.config;
    s.http.set_payload_max_length(c.max_body_bytes);
    s.http.set_read_timeout(5, 0);
    s.http.set_write_timeout(10, 0);
    s.routes();
    const std::string host = c.host == "localhost" ? "127.0.0.1" : c.host;
    if (c.port == 0) {
        s.port = s.http.bind_to_any_port(host);
        if (s.port < 0) return make_error("could not listen on " + c.host);
    } else {
        if (!s.http.bind_to_port(host, c.port))
            return make_error("could not listen on " + c.host + ":" + std::to_string(c.port) +
                              " (is another server using the port?)");
        s.port = c.port;
    }
    s.listener = std::thread([&s] { s.http.listen_after_bind(); });
    log::get("server")->info("OpenAI-compatible server on http://{}:{}{}", c.host, s.port,
                             c.api_key.empty() ? "" : " (API key required)");
    return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ApiServer::~ApiServer() {
    stop();
}

int ApiServer::port() const {
    return impl_->port;
}

std::string ApiServer::url() const {
    const std::string& h = impl_->config.host;
    const bool v6 = h.find(':') != std::string::npos && !h.starts_with('[');
    return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(impl_->port);
}

void ApiServer::stop() {
    if (impl_->stopping.exchange(true)) {
        if (impl_->listener.joinable()) impl_->listener.join();
        return;
    }
    impl_->http.shut_down();
    if (impl_->listener.joinable()) impl_->listener.join();
}

ServerStats ApiServer::stats() const {
    ServerStats s;
    s.requests = impl_->requests;
    s.errors = impl_->errors;
    s.cancelled = impl_->cancelled;
    s.active = impl_->active;
    s.connections_cut = impl_->http.cut_off();
    s.connections_refused = impl_->http.refused();
    return s;
}

}  // namespace hearth::server
