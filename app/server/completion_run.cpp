#include "completion_run.h"

#include "engine.h"
#include "guarded_server.h"

namespace hearth::server {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);

// One request's life between the handler and httplib's stream writer (which may call the
// provider many times, then the releaser once).
struct Run {
    std::shared_ptr<const ServedModel> model;  // holds the engine while the request lives
    std::shared_ptr<RequestHandle> handle;
    AnswerHeader header;
    bool include_usage = false;
    bool opened = false;
    bool ended = false;  // the last event was taken
    RunContext ctx;

    Run(std::shared_ptr<const ServedModel> m, AnswerHeader h, bool usage, RunContext c)
        : model(std::move(m)), header(std::move(h)), include_usage(usage), ctx(c) {
        ++ctx.active;
    }
    ~Run() {
        if (!ended) {  // the client went, or the server stops: free the blocks now
            model->engine->cancel(handle->id());
            ++ctx.cancelled;
        }
        --ctx.active;
    }
    bool should_give_up() const { return ctx.stopping.load() || GuardedServer::peer_gone(); }
};

}  // namespace

void run_completion(httplib::Response& res, std::shared_ptr<const ServedModel> model,
                    sched::Request request, AnswerHeader header, bool stream, bool include_usage,
                    RunContext ctx) {
    auto run = std::make_shared<Run>(std::move(model), std::move(header), include_usage, ctx);
    run->handle = run->model->engine->submit(std::move(request));

    if (!stream) {
        auto next_check = std::chrono::steady_clock::now();
        for (;;) {
            // Whether the client is still there, checked every poll interval whether or not
            // tokens keep coming.
            if (std::chrono::steady_clock::now() >= next_check) {
                if (run->should_give_up()) return;  // nobody to answer; ~Run cancels
                next_check = std::chrono::steady_clock::now() + kPoll;
            }
            auto e = run->handle->next(kPoll);
            if (!e) continue;
            if (e->kind == sched::EventKind::Error) {
                run->ended = true;
                const ApiError err = server_error(500, e->error);
                res.status = err.status;
                res.set_content(error_json(err), "application/json");
                return;
            }
            if (e->kind == sched::EventKind::Finished) {
                run->ended = true;
                res.set_content(answer_json(run->header, e->text, e->stop, e->stats),
                                "application/json");
                return;
            }
        }
    }

    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [run](size_t, httplib::DataSink& sink) {
            if (!run->opened) {
                run->opened = true;
                const std::string out = open_event(run->header);
                return sink.write(out.data(), out.size());
            }
            // Wait for events a while, writing what comes; return to let httplib call
            // again (and so notice a server stop) when nothing does.
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
            while (std::chrono::steady_clock::now() < until) {
                auto e = run->handle->next(kPoll);
                if (!e) {
                    if (run->should_give_up()) return false;
                    continue;
                }
                std::string out;
                switch (e->kind) {
                    case sched::EventKind::PrefillProgress:
                        continue;
                    case sched::EventKind::Token:
                        if (e->text.empty()) continue;
                        out = text_event(run->header, e->text);
                        break;
                    case sched::EventKind::Finished:
                        run->ended = true;
                        out = finish_event(run->header, e->stop);
                        if (run->include_usage) out += usage_event(run->header, e->stats);
                        out += kDoneEvent;
                        break;
                    case sched::EventKind::Error:
                        run->ended = true;
                        out = error_event(error_json(server_error(500, e->error)));
                        out += kDoneEvent;
                        break;
                }
                if (!sink.write(out.data(), out.size())) return false;
                if (run->ended) {
                    sink.done();
                    return true;
                }
            }
            return true;
        },
        [run](bool) {});
}

}  // namespace hearth::server
