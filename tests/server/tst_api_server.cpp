// The OpenAI-compatible server (app/server) in-process on the default model, driven over
// real sockets: a corpus of malformed and hostile requests, each answered with its
// OpenAI-shaped error and status while the server keeps serving; the API key, web
// origins and the refusal to serve the network without a key; a client trickling its
// request in (slowloris) cut off at the deadline without delaying others; clients that
// disconnect (streaming or not) have their requests cancelled and blocks freed.
#include <QTest>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "engine.h"
#include "model/model_config.h"
#include "server/api_server.h"
#include "support/test_model.h"

using namespace hearth;
using nlohmann::json;
using server::ApiServer;
using server::ServerConfig;

namespace {

constexpr const char* kOrigin = "http://allowed.example";

// A raw connection, for what a well-behaved client library would never send.
struct RawSocket {
    int fd = -1;
    explicit RawSocket(int port) {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ~RawSocket() { close(); }
    void close() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    bool send(const std::string& s) const {
        return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
    }
    // Reads until `needle` appears, the peer closes, or the timeout passes.
    std::string read_until(const std::string& needle, int timeout_ms) const {
        timeval tv{0, 100'000};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        std::string got;
        QElapsedTimer t;
        t.start();
        char buf[4096];
        while (t.elapsed() < timeout_ms && got.find(needle) == std::string::npos) {
            const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
            if (n == 0) break;
            if (n > 0) got.append(buf, static_cast<size_t>(n));
        }
        return got;
    }
    // The server closed the connection (recv gives 0) within the timeout.
    bool closed_by_server(int timeout_ms) const {
        timeval tv{0, 100'000};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        QElapsedTimer t;
        t.start();
        char buf[4096];
        while (t.elapsed() < timeout_ms) {
            const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
        }
        return false;
    }
};

std::string chat_body(const std::string& model, const std::string& extra = {}) {
    return R"({"model":")" + model +
           R"(","messages":[{"role":"user","content":"Say hello."}],"max_tokens":4,"temperature":0)" +
           extra + "}";
}

}  // namespace

class TestApiServer : public QObject {
    Q_OBJECT

    std::shared_ptr<Engine> engine_;
    std::shared_ptr<chat::PromptBuilder> builder_;
    std::shared_ptr<server::ServedModel> model_;
    std::unique_ptr<ApiServer> server_;

    std::unique_ptr<ApiServer> start(ServerConfig c) {
        std::shared_ptr<const server::ServedModel> m = model_;
        auto s = ApiServer::start(std::move(c), [m] { return m; });
        if (!s) qFatal("server did not start: %s", s.message().c_str());
        return std::move(s).value();
    }
    httplib::Client client(const ApiServer& s) const {
        httplib::Client c("127.0.0.1", s.port());
        c.set_read_timeout(60, 0);
        return c;
    }
    // Waits until no request runs and nothing holds a block.
    bool settles(int timeout_ms = 10'000) const {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeout_ms) {
            const EngineStats s = engine_->stats();
            if (s.scheduler.running == 0 && s.scheduler.waiting == 0 && s.kv.blocks_used == 0 &&
                server_->stats().active == 0)
                return true;
            QTest::qWait(20);
        }
        return false;
    }

  private slots:
    void initTestCase() {
        HEARTH_REQUIRE_MODEL(path);
        EngineConfig c;
        c.model_path = path.toStdString();
        c.n_threads = 2;
        auto e = Engine::create(c);
        QVERIFY2(e.ok(), e.ok() ? "" : e.message().c_str());
        engine_ = std::move(e).value();
        builder_ = std::make_shared<chat::PromptBuilder>(
            engine_->tokenizer(), chat::ChatTemplate::from_gguf(engine_->file()));
        model_ = std::make_shared<server::ServedModel>();
        model_->engine = engine_.get();
        model_->builder = builder_.get();
        model_->id = "smol";
        model_->context_length = static_cast<int32_t>(engine_->model_config().context_length);
        ServerConfig c2;
        c2.port = 0;
        c2.max_body_bytes = 64 * 1024;
        c2.max_tokens_limit = 256;
        c2.request_deadline = std::chrono::milliseconds(1000);
        c2.cors_origins = {kOrigin};
        server_ = start(c2);
    }

    // A persona by name ("persona:NAME"): listed by /v1/models, its prefix the request's
    // system prompt (the prompt is the one the app plans for a chat of the persona), served
    // from the cache to the next client, with a request's own system message after it.
    void personasByName() {
        const std::string prefix =
            "You keep the lighthouse.\n\nDocuments for reference:\n\n<document name=\"log.md\">\n" +
            std::string(40, 'x') +
            " The lamp is lit at dusk and put out at dawn; the keeper "
            "writes the weather in the log every hour.\n</document>";
        server::PersonaSource personas;
        personas.find = [prefix](const std::string& name) -> std::optional<std::string> {
            return name == "Keeper" ? std::optional(prefix) : std::nullopt;
        };
        personas.names = [] { return std::vector<std::string>{"Keeper"}; };
        ServerConfig c;
        c.port = 0;
        c.strict_model = true;  // a persona is served by the loaded model all the same
        std::shared_ptr<const server::ServedModel> m = model_;
        auto s = ApiServer::start(
            std::move(c), [m] { return m; }, personas);
        QVERIFY2(s, s ? "" : s.message().c_str());
        auto cl = client(**s);

        auto models = cl.Get("/v1/models");
        QVERIFY(models);
        const json list = json::parse(models->body);
        QCOMPARE(list["data"].size(), std::size_t{2});
        QCOMPARE(list["data"][1]["id"].get<std::string>(), std::string("persona:Keeper"));

        // The prompt the app plans for a chat of this persona.
        chat::TurnInput turn;
        turn.system_prompt = prefix;
        turn.messages.push_back({chat::Role::User, "Say hello.", std::nullopt});
        turn.max_tokens = 4;
        auto planned = chat::plan_turn(*builder_, model_->context_length, turn);
        QVERIFY(planned);
        const auto prefix_ids = builder_->persona_prefix(prefix);
        for (int i = 0; i < 2; ++i) {
            auto r =
                cl.Post("/v1/chat/completions", chat_body("persona:Keeper"), "application/json");
            QVERIFY(r);
            QCOMPARE(r->status, 200);
            const json j = json::parse(r->body);
            QCOMPARE(j["model"].get<std::string>(), std::string("persona:Keeper"));
            QCOMPARE(j["usage"]["prompt_tokens"].get<std::size_t>(), planned->prompt.size());
            if (i == 1)  // the second client starts from the persona's cached prefix
                QVERIFY(j["usage"]["prompt_tokens_details"]["cached_tokens"].get<std::size_t>() >=
                        prefix_ids.size() / 16 * 16);
        }
        // The request's own system message follows the persona's prefix, which stays cached.
        auto own = cl.Post(
            "/v1/chat/completions",
            R"({"model":"persona:Keeper","messages":[{"role":"system","content":"Answer in French."},{"role":"user","content":"Say hello."}],"max_tokens":2})",
            "application/json");
        QVERIFY(own);
        QCOMPARE(own->status, 200);
        const json o = json::parse(own->body);
        QVERIFY(o["usage"]["prompt_tokens"].get<std::size_t>() > planned->prompt.size());
        // (Up to the end of its text: the system segment's end and the last few tokens of
        // the text, which the tokenizer may merge with what follows, differ.)
        const std::size_t cached = o["usage"]["prompt_tokens_details"]["cached_tokens"];
        QVERIFY2(cached >= (prefix_ids.size() - 8) / 16 * 16,
                 qPrintable(QStringLiteral("cached %1 of a %2-token prefix")
                                .arg(cached)
                                .arg(prefix_ids.size())));

        auto missing =
            cl.Post("/v1/chat/completions", chat_body("persona:Nobody"), "application/json");
        QVERIFY(missing);
        QCOMPARE(missing->status, 404);
        QVERIFY(missing->body.find("model_not_found") != std::string::npos);
        auto text =
            cl.Post("/v1/completions", R"({"model":"persona:Keeper","prompt":"Hi","max_tokens":2})",
                    "application/json");
        QVERIFY(text);
        QCOMPARE(text->status, 400);
        (*s)->stop();
    }

    void badRequests_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("param");  // or the code, prefixed "code:"
        const std::string chat = "/v1/chat/completions";
        auto row = [&](const char* name, const std::string& path, const std::string& body,
                       int status, const char* param) {
            QTest::newRow(name) << QString::fromStdString(path) << QByteArray::fromStdString(body)
                                << status << param;
        };
        const std::string ok_msgs = R"("messages":[{"role":"user","content":"hi"}])";
        row("malformed json", chat, "{\"model\":", 400, "");
        row("not an object", chat, "[1,2,3]", 400, "");
        row("empty body", chat, "", 400, "");
        row("NaN literal", chat, R"({"model":"smol","temperature":NaN})", 400, "");
        row("model missing", chat, "{" + ok_msgs + "}", 400, "model");
        row("model not a string", chat, R"({"model":5,)" + ok_msgs + "}", 400, "model");
        row("messages missing", chat, R"({"model":"smol"})", 400, "messages");
        row("messages not an array", chat, R"({"model":"smol","messages":"hi"})", 400, "messages");
        row("messages empty", chat, R"({"model":"smol","messages":[]})", 400, "messages");
        row("message not an object", chat, R"({"model":"smol","messages":[7]})", 400,
            "messages[0]");
        row("unknown role", chat, R"({"model":"smol","messages":[{"role":"tool","content":"x"}]})",
            400, "messages[0].role");
        row("content a number", chat,
            R"({"model":"smol","messages":[{"role":"user","content":3}]})", 400,
            "messages[0].content");
        row("image part", chat,
            R"({"model":"smol","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})",
            400, "messages[0].content");
        row("last message the assistant's", chat,
            R"({"model":"smol","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]})",
            400, "messages");
        row("temperature a string", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"temperature":"hot"})", 400, "temperature");
        row("temperature too high", chat, R"({"model":"smol",)" + ok_msgs + R"(,"temperature":5})",
            400, "temperature");
        row("top_p negative", chat, R"({"model":"smol",)" + ok_msgs + R"(,"top_p":-1})", 400,
            "top_p");
        row("max_tokens zero", chat, R"({"model":"smol",)" + ok_msgs + R"(,"max_tokens":0})", 400,
            "max_tokens");
        row("max_tokens over the limit", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"max_tokens":100000})", 400, "max_tokens");
        row("max_tokens fractional", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"max_tokens":1.5})", 400, "max_tokens");
        row("seed a string", chat, R"({"model":"smol",)" + ok_msgs + R"(,"seed":"x"})", 400,
            "seed");
        row("n = 2", chat, R"({"model":"smol",)" + ok_msgs + R"(,"n":2})", 400, "n");
        row("five stop strings", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"stop":["a","b","c","d","e"]})", 400, "stop");
        row("stop a number", chat, R"({"model":"smol",)" + ok_msgs + R"(,"stop":1})", 400, "stop");
        row("stream not a bool", chat, R"({"model":"smol",)" + ok_msgs + R"(,"stream":"yes"})", 400,
            "stream");
        row("stream_options without stream", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"stream_options":{"include_usage":true}})", 400,
            "stream_options");
        row("tools", chat, R"({"model":"smol",)" + ok_msgs + R"(,"tools":[{"type":"function"}]})",
            400, "tools");
        row("chat_template_kwargs not an object", chat,
            R"({"model":"smol",)" + ok_msgs + R"(,"chat_template_kwargs":true})", 400,
            "chat_template_kwargs");
        row("enable_thinking not a bool", chat,
            R"({"model":"smol",)" + ok_msgs +
                R"(,"chat_template_kwargs":{"enable_thinking":"no"}})",
            400, "chat_template_kwargs.enable_thinking");
        row("deep nesting", chat, std::string(60'000, '['), 400, "");
        row("invalid UTF-8", chat,
            "{\"model\":\"smol\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xc3\"}]}",
            400, "");
        row("body over the limit", chat,
            R"({"model":"smol","messages":[{"role":"user","content":")" +
                std::string(100'000, 'a') + R"("}]})",
            413, "");
        // 10,000 words in 50 KiB: more tokens than the context holds.
        std::string words;
        for (int i = 0; i < 10'000; ++i) words += "word ";
        row("context overflow", chat,
            R"({"model":"smol","messages":[{"role":"user","content":")" + words + R"("}]})", 400,
            "code:context_length_exceeded");
        row("completion without prompt", "/v1/completions", R"({"model":"smol"})", 400, "prompt");
        row("completion token array", "/v1/completions", R"({"model":"smol","prompt":[[1,2,3]]})",
            400, "prompt");
        row("unknown endpoint", "/v1/embeddings", R"({"model":"smol","input":"x"})", 404, "");
    }
    void badRequests() {
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, param);
        auto c = client(*server_);
        auto res = c.Post(path.toStdString(), body.toStdString(), "application/json");
        QVERIFY(res);
        QCOMPARE(res->status, status);
        const json j = json::parse(res->body, nullptr, false);
        QVERIFY2(j.is_object() && j.contains("error"), res->body.c_str());
        const json& e = j["error"];
        QVERIFY(e["message"].is_string() && !e["message"].get<std::string>().empty());
        QVERIFY(e["type"].is_string());
        if (param.startsWith("code:")) {
            QCOMPARE(QString::fromStdString(e["code"].get<std::string>()), param.mid(5));
        } else if (!param.isEmpty()) {
            QCOMPARE(QString::fromStdString(e["param"].get<std::string>()), param);
        }
        // And the server answers the next good request.
        auto good = c.Post("/v1/chat/completions", chat_body("smol"), "application/json");
        QVERIFY(good);
        QCOMPARE(good->status, 200);
    }

    // Any model name is served by the loaded model, whose id the reply gives (clients
    // that send a fixed name, as llama-server allows); a strict server refuses other
    // names with 404 model_not_found.
    void modelNames() {
        auto c = client(*server_);
        auto res = c.Post("/v1/chat/completions", chat_body("gpt-9"), "application/json");
        QVERIFY(res);
        QCOMPARE(res->status, 200);
        QCOMPARE(json::parse(res->body)["model"].get<std::string>(), std::string("smol"));
        ServerConfig strict;
        strict.port = 0;
        strict.strict_model = true;
        auto s = start(strict);
        auto sc = client(*s);
        auto refused = sc.Post("/v1/chat/completions", chat_body("gpt-9"), "application/json");
        QVERIFY(refused);
        QCOMPARE(refused->status, 404);
        QCOMPARE(json::parse(refused->body)["error"]["code"].get<std::string>(),
                 std::string("model_not_found"));
        auto ok = sc.Post("/v1/chat/completions", chat_body("smol"), "application/json");
        QVERIFY(ok);
        QCOMPARE(ok->status, 200);
    }

    // Speculative decoding's drafts, as OpenAI reports predicted outputs: a reply that
    // repeats its prompt keeps drafted tokens; the counts add up.
    void draftsAreReportedInUsage() {
        auto c = client(*server_);
        const json request = {{"model", "smol"},
                              {"temperature", 0},
                              {"max_tokens", 60},
                              {"messages",
                               {{{"role", "user"},
                                 {"content",
                                  "Repeat this list exactly, once: red, green, blue, yellow, red, "
                                  "green, blue, yellow, red, green, blue, yellow."}}}}};
        const std::string body = request.dump();
        auto res = c.Post("/v1/chat/completions", body, "application/json");
        QVERIFY(res);
        QCOMPARE(res->status, 200);
        const json u = json::parse(res->body)["usage"];
        const json d = u["completion_tokens_details"];
        const auto accepted = d["accepted_prediction_tokens"].get<int64_t>();
        const auto rejected = d["rejected_prediction_tokens"].get<int64_t>();
        qInfo("%lld of %lld completion tokens came from kept drafts (%lld rejected)",
              static_cast<long long>(accepted),
              static_cast<long long>(u["completion_tokens"].get<int64_t>()),
              static_cast<long long>(rejected));
        QVERIFY(accepted > 0);
        QVERIFY(accepted < u["completion_tokens"].get<int64_t>());
    }

    // A null field is an absent one (as OpenAI's clients send them).
    void nullFieldsAreAbsent() {
        auto c = client(*server_);
        auto res = c.Post("/v1/chat/completions",
                          chat_body("smol", R"(,"seed":null,"stop":null,"top_p":null,)"
                                            R"("chat_template_kwargs":{"enable_thinking":null})"),
                          "application/json");
        QVERIFY(res);
        QCOMPARE(res->status, 200);
    }

    void apiKeyOriginsAndNetwork() {
        ServerConfig c;
        c.port = 0;
        c.api_key = "sesame";
        c.cors_origins = {kOrigin};
        auto keyed = start(c);
        auto cl = client(*keyed);
        auto none = cl.Get("/v1/models");
        QVERIFY(none);
        QCOMPARE(none->status, 401);
        QVERIFY(none->body.find("invalid_api_key") != std::string::npos);
        auto wrong = cl.Get("/v1/models", {{"Authorization", "Bearer sesamE"}});
        QCOMPARE(wrong->status, 401);
        auto right = cl.Get("/v1/models", {{"Authorization", "Bearer sesame"}});
        QCOMPARE(right->status, 200);
        QCOMPARE(json::parse(right->body)["data"][0]["id"].get<std::string>(), "smol");
        QCOMPARE(cl.Get("/health")->status, 200);  // no key needed

        auto foreign = cl.Get("/health", {{"Origin", "http://evil.example"}});
        QCOMPARE(foreign->status, 403);
        auto allowed = cl.Get("/health", {{"Origin", kOrigin}});
        QCOMPARE(allowed->status, 200);
        QCOMPARE(allowed->get_header_value("Access-Control-Allow-Origin"), std::string(kOrigin));
        auto preflight =
            cl.Options("/v1/chat/completions",
                       {{"Origin", kOrigin}, {"Access-Control-Request-Method", "POST"}});
        QCOMPARE(preflight->status, 204);
        QVERIFY(preflight->get_header_value("Access-Control-Allow-Headers").find("Authorization") !=
                std::string::npos);

        ServerConfig open;
        open.host = "0.0.0.0";
        open.port = 0;
        auto refused = ApiServer::start(open, [] { return nullptr; });
        QVERIFY(!refused.ok());
        QVERIFY(refused.message().find("API key") != std::string::npos);
    }

    void slowClientIsCutOffWithoutStallingOthers() {
        const int64_t cut_before = server_->stats().connections_cut;
        RawSocket slow(server_->port());
        QVERIFY(slow.fd >= 0);
        QVERIFY(slow.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"));
        std::atomic<bool> done{false};
        std::thread trickle([&] {  // one header byte every 100 ms, for ever
            while (!done && slow.send("X"))
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        });
        // Others are served meanwhile.
        auto c = client(*server_);
        for (int i = 0; i < 3; ++i) {
            auto res = c.Post("/v1/chat/completions", chat_body("smol"), "application/json");
            QVERIFY(res);
            QCOMPARE(res->status, 200);
        }
        // The deadline (1 s) cuts the slow one off however steadily it sends.
        const bool cut = slow.closed_by_server(5000);
        done = true;
        trickle.join();
        QVERIFY(cut);
        QVERIFY(server_->stats().connections_cut > cut_before);
    }

    void disconnectedClientsAreCancelled_data() {
        QTest::addColumn<bool>("stream");
        QTest::newRow("streaming") << true;
        QTest::newRow("whole answer") << false;
    }
    void disconnectedClientsAreCancelled() {
        QFETCH(bool, stream);
        QVERIFY(settles());
        const int64_t before = server_->stats().cancelled;
        RawSocket s(server_->port());
        const std::string body =
            R"({"model":"smol","messages":[{"role":"user","content":"Count."}],)"
            R"("max_tokens":256,"ignore_eos":true,"stream":)" +
            std::string(stream ? "true" : "false") + "}";
        QVERIFY(
            s.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                   "application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body));
        if (stream) {
            const std::string got = s.read_until("\"content\":\"", 10'000);
            QVERIFY2(got.find("text/event-stream") != std::string::npos, got.c_str());
        } else {
            // Wait until it generates, then go.
            QElapsedTimer t;
            t.start();
            while (engine_->stats().decoding == 0 && t.elapsed() < 10'000) QTest::qWait(5);
        }
        s.close();
        QVERIFY(settles());
        QCOMPARE(server_->stats().cancelled, before + 1);
        QCOMPARE(engine_->stats().conversations_parked, 0);  // stateless: nothing parked
    }

    void cleanupTestCase() {
        if (server_) server_->stop();
    }
};

QTEST_MAIN(TestApiServer)
#include "tst_api_server.moc"
