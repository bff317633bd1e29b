// hearth-cli serve: the OpenAI-compatible server (app/server/api_server.h) on one model,
// until Ctrl+C or SIGTERM.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "chat/prompt_builder.h"
#include "cli/cancel_signal.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "model/model_config.h"
#include "server/api_server.h"

namespace hearth::cli {
namespace {

std::vector<OptionSpec> serve_options() {
    std::vector<OptionSpec> o = {
        {"host", true, "address to listen on (default 127.0.0.1: this machine only)"},
        {"port", true, "port (default 8080; 0: any free port)"},
        {"api-key", true,
         "key clients must send (Authorization: Bearer KEY); required unless the host is "
         "loopback (default: $HEARTH_API_KEY)"},
        {"cors-origin", true,
         "web origin allowed to call the server from a browser, e.g. http://localhost:3000 "
         "(comma-separated for several; default: none)"},
        {"alias", true, "the model's name in /v1/models (default: the file name)"},
        {"strict-model", false,
         "refuse requests naming another model (404 model_not_found); by default any name is "
         "served by the loaded model, and replies give its real name"},
        {"max-body-kb", true, "largest request body in KiB (default 8192)"},
        {"max-tokens-limit", true,
         "most tokens a request may ask for; more is an error (default: no limit but the context)"},
        {"request-timeout", true, "seconds a client has to send its whole request (default 10)"},
        {"help", false, "show this help"},
    };
    const auto e = engine_options();
    o.insert(o.end(), e.begin(), e.end());
    return o;
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t end = std::min(s.find(',', start), s.size());
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::atomic<bool> g_terminate{false};

}  // namespace

int run_serve(const CommandArgs& argv) {
    const auto options = serve_options();
    auto args = Args::parse(argv, options);
    if (!args) return fail(2, args.message());
    if (args->flag("help") || !args->positionals().empty()) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli serve [options]\n"
                     "An OpenAI-compatible server: GET /health, GET /v1/models, POST "
                     "/v1/chat/completions, POST /v1/completions.\n%s",
                     usage_of(options).c_str());
        return args->flag("help") ? 0 : 2;
    }
    server::ServerConfig sc;
    sc.host = args->value("host").value_or("127.0.0.1");
    auto port = args->integer("port", 8080, 0, 65535);
    if (!port) return fail(2, port.message());
    sc.port = static_cast<int>(*port);
    if (auto key = args->value("api-key")) {
        sc.api_key = *key;
    } else if (const char* env = std::getenv("HEARTH_API_KEY")) {
        sc.api_key = env;
    }
    if (auto origins = args->value("cors-origin")) sc.cors_origins = split_commas(*origins);
    auto body_kb = args->integer("max-body-kb", 8192, 1, 1 << 20);
    if (!body_kb) return fail(2, body_kb.message());
    sc.max_body_bytes = static_cast<size_t>(*body_kb) * 1024;
    auto limit = args->integer("max-tokens-limit", 0, 1, 1 << 24);
    if (!limit) return fail(2, limit.message());
    sc.max_tokens_limit = args->value("max-tokens-limit") ? static_cast<int32_t>(*limit) : 0;
    sc.strict_model = args->flag("strict-model");
    auto timeout = args->integer("request-timeout", 10, 1, 3600);
    if (!timeout) return fail(2, timeout.message());
    sc.request_deadline = std::chrono::seconds(*timeout);
    if (!server::is_loopback(sc.host) && sc.api_key.empty())
        return fail(2, "--host " + sc.host +
                           " serves other machines: give an --api-key (or HEARTH_API_KEY)");

    auto config = engine_config(*args);
    if (!config) return fail(2, config.message());
    auto started = start_engine(*config, !args->value("model"));
    if (!started) return fail(1, started.message());
    std::shared_ptr<Engine> engine = std::move(started).value();

    auto served = std::make_shared<server::ServedModel>();
    auto builder = std::make_shared<chat::PromptBuilder>(
        engine->tokenizer(), chat::ChatTemplate::from_gguf(engine->file()));
    served->engine = engine.get();
    served->builder = builder.get();
    served->id =
        args->value("alias").value_or(std::filesystem::path(config->model_path).stem().string());
    served->context_length = static_cast<int32_t>(engine->model_config().context_length);
    served->keep_alive =
        std::make_shared<std::pair<std::shared_ptr<Engine>, std::shared_ptr<chat::PromptBuilder>>>(
            engine, builder);
    std::shared_ptr<const server::ServedModel> model = served;

    auto server = server::ApiServer::start(sc, [model] { return model; });
    if (!server) return fail(1, server.message());
    std::fprintf(stderr, "hearth-cli: serving %s (%s, context %d) — listening on %s\n",
                 model->id.c_str(), engine->backend_name().c_str(), model->context_length,
                 (*server)->url().c_str());
    std::fflush(stderr);

    std::atomic<bool>& interrupted = cancel_on_interrupt();
    std::signal(SIGTERM, [](int) { g_terminate.store(true); });
    while (!interrupted.load() && !g_terminate.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::fprintf(stderr, "hearth-cli: stopping the server\n");
    (*server)->stop();
    const server::ServerStats s = (*server)->stats();
    std::fprintf(stderr, "hearth-cli: %lld requests answered (%lld errors, %lld cancelled)\n",
                 static_cast<long long>(s.requests), static_cast<long long>(s.errors),
                 static_cast<long long>(s.cancelled));
    return 0;
}

}  // namespace hearth::cli
