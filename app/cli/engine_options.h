// What the inference subcommands of hearth-cli (generate, chat, bench) share: options
// that configure the engine (--device, --cache, --kv-mb, --batch, --model, --threads,
// --kv-disk-mb, --kv-disk-dir, --context, --speculate),
// and the JSON form of a request's statistics.
#pragma once

#include <QJsonObject>

#include <functional>
#include <memory>
#include <vector>

#include "cli/cli_args.h"
#include "common/result.h"
#include "engine.h"

namespace hearth::cli {

std::vector<OptionSpec> engine_options();

// The engine configuration from --model, --device, --threads, --cache, --kv-mb, --batch,
// --kv-disk-mb, --kv-disk-dir, --context and --speculate.
Result<EngineConfig> engine_config(const Args& args);
// Loads the model and starts the engine; errors say how to get the default model.
Result<std::unique_ptr<Engine>> start_engine(const Args& args);
Result<std::unique_ptr<Engine>> start_engine(const EngineConfig& config, bool default_model);

// Follows a request to its end, passing streamed text to on_text; Ctrl+C cancels it.
// When Ctrl+C is seen on_stop (if given) is called once, and from then on on_text gets
// nothing more, not even tokens that were already on their way. Returns the last event
// (Finished or Error).
sched::Event follow(Engine& engine, RequestHandle& handle,
                    const std::function<void(const std::string&)>& on_text,
                    const std::function<void()>& on_stop = {});

// prompt_tokens, prompt_tokens_cached/computed, TTFT, prefill and decode tokens/s, ...
QJsonObject request_stats_json(const sched::RequestStats& s, StopReason stop);

}  // namespace hearth::cli
