// run_completion: one planned request on the engine, answered over HTTP: streamed as
// server-sent events or as one JSON body. Cancels the engine request as soon as the
// client is gone (GuardedServer::peer_gone while waiting, or a failed write) or the
// server stops.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>

#include "api_error.h"
#include "api_server.h"
#include "openai_response.h"
#include "sched/scheduler.h"

namespace hearth::server {

struct RunContext {
    const std::atomic<bool>& stopping;
    std::atomic<int64_t>& cancelled;
    std::atomic<int32_t>& active;
};

// On the thread of the connection that asked (GuardedServer).
void run_completion(httplib::Response& res, std::shared_ptr<const ServedModel> model,
                    sched::Request request, AnswerHeader header, bool stream, bool include_usage,
                    RunContext ctx);

}  // namespace hearth::server
