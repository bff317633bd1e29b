#include "cli/engine_options.h"

#include <filesystem>

#include "cli/cancel_signal.h"
#include "common/paths.h"

namespace hearth::cli {

std::vector<OptionSpec> engine_options() {
    return {
        {"model", true, "GGUF model file (default: $HEARTH_MODEL or the default model)"},
        {"device", true, "auto (default), cpu, cuda or cuda:N (hearth-cli info --devices)"},
        {"threads", true, "CPU threads (default: all cores)"},
        {"cache", true, "prefix caching: on (default) or off"},
        {"kv-mb", true, "KV cache size in MiB (default: two full contexts, at most 1024)"},
        {"batch", true, "most tokens per forward step (default 512)"},
        {"kv-disk-mb", true,
         "KV blocks kept on disk across runs, in MiB, all models (default 2048; 0: none)"},
        {"kv-disk-dir", true, "where (default: the user's cache folder, Hearth/kv)"},
        {"kv-host-mb", true,
         "KV blocks kept in RAM under a GPU's KV cache, in MiB (default 2048; 0: none)"},
        {"context", true,
         "context to serve, in tokens (default: the model's own; less saves KV memory)"},
        {"speculate", true,
         "speculative decoding: auto (default), off or ngram (drafts from the conversation's "
         "own text; the same tokens either way)"},
        {"kernel-choices", true,
         "the CPU kernels measured fastest here (default: the user's cache folder, "
         "Hearth/kernel-choices.txt; none: each type's default kernel)"},
    };
}

Result<EngineConfig> engine_config(const Args& args) {
    EngineConfig c;
    c.model_path = args.value("model").value_or(paths::default_model_path());
    c.device = args.value("device").value_or("auto");
    if (auto device = parse_device(c.device); !device)
        return make_error("--device: " + device.message());
    auto threads = args.integer("threads", 0, 0, 1024);
    if (!threads) return threads.error();
    c.n_threads = static_cast<int>(*threads);
    const std::string cache = args.value("cache").value_or("on");
    if (cache != "on" && cache != "off")
        return make_error("--cache expects on or off, got '" + cache + "'");
    c.prefix_caching = cache == "on";
    auto kv = args.integer("kv-mb", 0, 1, 1 << 20);
    if (!kv) return kv.error();
    c.kv_mb = args.value("kv-mb") ? static_cast<std::size_t>(*kv) : 0;
    auto batch = args.integer("batch", 512, 1, 1 << 16);
    if (!batch) return batch.error();
    c.scheduler.max_batch_tokens = static_cast<int32_t>(*batch);
    auto disk = args.integer("kv-disk-mb", 2048, 0, 1 << 24);
    if (!disk) return disk.error();
    c.kv_disk_mb = static_cast<std::size_t>(*disk);
    c.kv_disk_dir = args.value("kv-disk-dir").value_or(paths::kv_cache_dir());
    auto host = args.integer("kv-host-mb", 2048, 0, 1 << 24);
    if (!host) return host.error();
    c.kv_host_mb = static_cast<std::size_t>(*host);
    auto context = args.integer("context", 0, 2, 1 << 24);
    if (!context) return context.error();
    c.context_length = *context;
    const std::string speculate = args.value("speculate").value_or("auto");
    if (speculate == "off")
        c.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Off;
    else if (speculate == "auto" || speculate == "ngram")
        c.scheduler.speculation.mode = sched::SpeculationConfig::Mode::Ngram;
    else
        return make_error("--speculate expects auto, off or ngram, got '" + speculate + "'");
    const std::string choices = args.value("kernel-choices").value_or(paths::kernel_choice_file());
    c.kernel_choice_file = choices == "none" ? std::string() : choices;
    return c;
}

Result<std::unique_ptr<Engine>> start_engine(const EngineConfig& config, bool default_model) {
    auto engine = Engine::create(config);
    if (!engine && default_model && !std::filesystem::exists(config.model_path))
        return make_error(engine.message() + " (run scripts/fetch-model to get the default model)");
    return engine;
}

Result<std::unique_ptr<Engine>> start_engine(const Args& args) {
    auto config = engine_config(args);
    if (!config) return config.error();
    return start_engine(*config, !args.value("model"));
}

sched::Event follow(Engine& engine, RequestHandle& handle,
                    const std::function<void(const std::string&)>& on_text,
                    const std::function<void()>& on_stop) {
    std::atomic<bool>& interrupted = cancel_on_interrupt();
    bool cancelled = false;
    for (;;) {
        auto e = handle.next(std::chrono::milliseconds(50));
        // Looked at after every wait, right before anything is shown: tokens sampled
        // before the engine took the cancel (and the text the cancel flushes) still
        // arrive, but none of them may follow the ^C on screen.
        if (!cancelled && interrupted.load()) {
            engine.cancel(handle.id());
            cancelled = true;
            if (on_stop) on_stop();
        }
        if (!e) continue;
        if (e->kind == sched::EventKind::Finished || e->kind == sched::EventKind::Error) return *e;
        if (!cancelled && e->kind == sched::EventKind::Token && !e->text.empty() && on_text)
            on_text(e->text);
    }
}

QJsonObject request_stats_json(const sched::RequestStats& s, StopReason stop) {
    QJsonObject o;
    const double prefill_ms = s.ttft_ms - s.queue_ms;
    o["prompt_tokens"] = s.prompt_tokens;
    o["prompt_tokens_cached"] = s.prompt_tokens_cached;
    o["prompt_tokens_computed"] = s.prompt_tokens_computed;
    o["prompt_tokens_loaded"] = s.prompt_tokens_loaded;
    o["prompt_tokens_shifted"] = s.prompt_tokens_shifted;
    o["generated_tokens"] = s.generated_tokens;
    o["queue_ms"] = s.queue_ms;
    o["prefill_ms"] = prefill_ms;
    o["prefill_tokens_per_s"] =
        prefill_ms > 0 ? s.prompt_tokens_computed * 1000.0 / prefill_ms : 0.0;
    o["ttft_ms"] = s.ttft_ms;
    o["decode_ms"] = s.decode_ms;
    o["decode_tokens_per_s"] = s.decode_tokens_per_s();
    o["preemptions"] = s.preemptions;
    o["draft_tokens"] = s.draft_tokens;
    o["draft_accepted"] = s.draft_accepted;
    o["stop_reason"] = stop_reason_name(stop);
    return o;
}

}  // namespace hearth::cli
