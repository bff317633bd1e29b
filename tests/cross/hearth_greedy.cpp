// hearth-greedy: a Qt-free console check of the engine on any platform. It loads a model,
// answers one chat prompt greedily through the engine (engine thread, scheduler, paged KV
// cache, worker pool at background priority, the disk tier), starts a second engine on the
// same disk tier and answers again from the blocks it reads back, asks the OpenAI-compatible
// server on a third engine the same question over loopback HTTP (once streamed, once not),
// and prints the prompt's last logits (a hash and the best five) from a plain forward pass.
// Everything on stdout is deterministic, so two builds of the same code (Linux, and Windows under
// Wine: scripts/windows-cross) must print the same bytes; timings go to stderr.
//
//   hearth-greedy MODEL [--prompt TEXT] [--max-tokens N] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "common/sha256.h"
#include "cpu/cpu_backend.h"
#include "engine.h"
#include "generation/generator.h"
#include "gguf/gguf_file.h"
#include "model/llama_model.h"
#include "server/api_server.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace hearth;

constexpr int32_t kContext = 2048;  // planned prompt and served model alike

struct Options {
    std::string model;
    std::string prompt = "Name three things a lighthouse keeper does every day.";
    int32_t max_tokens = 48;
    int threads = 0;
};

int usage() {
    std::fputs("usage: hearth-greedy MODEL [--prompt TEXT] [--max-tokens N] [--threads N]\n",
               stderr);
    return 2;
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--prompt" && has_value) {
            o.prompt = argv[++i];
        } else if (a == "--max-tokens" && has_value) {
            o.max_tokens = std::atoi(argv[++i]);
            if (o.max_tokens < 1 || o.max_tokens > 4096) return false;
        } else if (a == "--threads" && has_value) {
            o.threads = std::atoi(argv[++i]);
            if (o.threads < 0 || o.threads > 256) return false;
        } else if (a.starts_with("--") || !o.model.empty()) {
            return false;
        } else {
            o.model = a;
        }
    }
    return !o.model.empty();
}

void print_ids(const char* label, const std::vector<int32_t>& ids) {
    std::printf("%s (%zu):", label, ids.size());
    for (int32_t id : ids) std::printf(" %d", id);
    std::printf("\n");
}

// The text with control characters escaped, so that the line is one line everywhere.
std::string printable(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\\') {
            out += "\\\\";
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

struct Answer {
    sched::Event last;
    std::string error;
};

Answer answer(const EngineConfig& config, const std::vector<int32_t>& prompt, int32_t max_tokens) {
    auto engine = Engine::create(config);
    if (!engine) return {{}, engine.message()};
    sched::Request req;
    req.prompt = prompt;
    req.max_tokens = max_tokens;
    req.sampling = SamplingParams::greedy();
    auto handle = (*engine)->submit(std::move(req));
    for (;;) {
        auto e = handle->next(std::chrono::milliseconds(100));
        if (!e) continue;
        if (e->kind == sched::EventKind::Error) return {*e, e->error};
        if (e->kind == sched::EventKind::Finished) {
            (*engine)->wait_idle();  // the turn's blocks are written down before it ends
            return {*e, {}};
        }
    }
}

// The reply's text from the server: stream false gives one JSON object; stream true gives
// server-sent events whose deltas are joined. Empty with the reason in `error` on failure.
std::string ask_server(const std::string& url, const std::string& prompt, int32_t max_tokens,
                       bool stream, std::string& error) {
    httplib::Client client(url);
    client.set_read_timeout(120, 0);
    const nlohmann::json body = {
        {"model", "default"},       {"messages", {{{"role", "user"}, {"content", prompt}}}},
        {"max_tokens", max_tokens}, {"temperature", 0},
        {"stream", stream},
    };
    auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
    if (!res) return error = "no answer from the server: " + httplib::to_string(res.error()), "";
    if (res->status != 200) return error = "server status " + std::to_string(res->status), "";
    try {
        if (!stream) {
            return nlohmann::json::parse(res->body)["choices"][0]["message"]["content"];
        }
        std::string text;
        std::size_t pos = 0;
        while ((pos = res->body.find("data: ", pos)) != std::string::npos) {
            const std::size_t end = res->body.find('\n', pos);
            const std::string data = res->body.substr(pos + 6, end - pos - 6);
            pos = end;
            if (data == "[DONE]") break;
            const auto event = nlohmann::json::parse(data);
            if (event["choices"].empty()) continue;
            const auto& delta = event["choices"][0]["delta"];
            if (delta.contains("content") && delta["content"].is_string())
                text += delta["content"].get<std::string>();
        }
        return text;
    } catch (const std::exception& e) {
        return error = std::string("unreadable answer: ") + e.what(), "";
    }
}

int fail(const std::string& what) {
    std::fprintf(stderr, "hearth-greedy: %s\n", what.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    if (!parse(argc, argv, opt)) return usage();

    auto file = gguf::GgufFile::open(opt.model);
    if (!file) return fail(file.message());
    auto tokenizer = Tokenizer::from_gguf(**file);
    if (!tokenizer) return fail(tokenizer.message());

    chat::PromptBuilder builder(**tokenizer, chat::ChatTemplate::from_gguf(**file));
    chat::TurnInput turn;
    turn.messages.push_back({chat::Role::User, opt.prompt, std::nullopt});
    turn.policy = chat::ContextPolicy::Fail;
    turn.max_tokens = opt.max_tokens;
    auto planned = chat::plan_turn(builder, kContext, turn);
    if (!planned) return fail(planned.message());
    const std::vector<int32_t>& prompt = planned->prompt;
    print_ids("prompt", prompt);

    // The engine, twice over one disk tier: the second answer reads the prompt's blocks.
    const std::filesystem::path kv_dir =
        std::filesystem::temp_directory_path() /
        ("hearth-greedy-kv-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::error_code ec;
    std::filesystem::remove_all(kv_dir, ec);
    EngineConfig config;
    config.model_path = opt.model;
    config.device = "cpu";
    config.n_threads = opt.threads;
    config.kv_disk_dir = kv_dir.string();
    config.kv_disk_mb = 64;
    config.background_priority = true;
    const Answer first = answer(config, prompt, opt.max_tokens);
    if (!first.error.empty()) return fail(first.error);
    const Answer second = answer(config, prompt, opt.max_tokens);
    std::filesystem::remove_all(kv_dir, ec);
    if (!second.error.empty()) return fail(second.error);

    print_ids("greedy", first.last.tokens);
    std::printf("text: %s\n", printable(first.last.text).c_str());
    std::printf("stop: %s\n", stop_reason_name(first.last.stop));
    const sched::RequestStats& s2 = second.last.stats;
    std::printf("restart from disk: %d of %d prompt tokens read back, reply %s\n",
                s2.prompt_tokens_loaded, s2.prompt_tokens,
                second.last.tokens == first.last.tokens ? "identical" : "DIFFERENT");
    std::fprintf(stderr, "engine: %.1f tok/s decode, TTFT %.0f ms; after restart TTFT %.0f ms\n",
                 first.last.stats.decode_tokens_per_s(), first.last.stats.ttft_ms, s2.ttft_ms);

    bool same = second.last.tokens == first.last.tokens && s2.prompt_tokens_loaded > 0;
    // The same question through the HTTP server, on an engine without a disk tier.
    {
        EngineConfig server_config = config;
        server_config.kv_disk_dir.clear();
        auto engine = Engine::create(server_config);
        if (!engine) return fail(engine.message());
        auto served = std::make_shared<server::ServedModel>();
        served->engine = engine->get();
        served->builder = &builder;
        served->id = "default";
        served->context_length = kContext;
        server::ServerConfig sc;
        sc.port = 0;
        auto api = server::ApiServer::start(sc, [served] { return served; });
        if (!api) return fail(api.message());
        std::string error;
        const std::string whole =
            ask_server((*api)->url(), opt.prompt, opt.max_tokens, false, error);
        if (!error.empty()) return fail(error);
        const std::string streamed =
            ask_server((*api)->url(), opt.prompt, opt.max_tokens, true, error);
        if (!error.empty()) return fail(error);
        std::printf(
            "server: %s, streamed %s\n",
            whole == first.last.text ? "same text" : ("DIFFERENT: " + printable(whole)).c_str(),
            streamed == whole ? "the same" : ("DIFFERENT: " + printable(streamed)).c_str());
        (*api)->stop();
        same = same && whole == first.last.text && streamed == whole;
    }

    // The prompt's last logits from a plain forward pass (llama.cpp's orders of summation).
    kernels::CpuBackend backend(opt.threads);
    auto model = LlamaModel::load(**file, backend);
    if (!model) return fail(model.message());
    Generator generator(**model, **tokenizer);
    auto logits = generator.last_logits(prompt);
    if (!logits) return fail(logits.message());
    std::vector<int32_t> order(logits->size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(), [&](int32_t a, int32_t b) {
        return (*logits)[a] > (*logits)[b] || ((*logits)[a] == (*logits)[b] && a < b);
    });
    Sha256 hash;
    hash.update(logits->data(), logits->size() * sizeof(float));
    std::printf("logits: %zu values, sha256 %s, best", logits->size(), hash.finish_hex().c_str());
    for (int i = 0; i < 5; ++i) std::printf(" %d:%.6f", order[i], (*logits)[order[i]]);
    std::printf("\n");
    std::fprintf(stderr, "backend: %s\n", backend.name().c_str());
    return same ? 0 : 1;
}
