// EngineBridge: the app's one inference engine, for QML and for the other view models.
//
// Threading: every member is called on the GUI thread (the thread that owns the bridge).
// Loading (Engine::create: GGUF checks, weights, KV cache) runs on the global thread pool;
// the result comes back through a QFutureWatcher. Engine events arrive on the engine's
// thread and are posted to the GUI thread (queued) through a Relay that the bridge
// detaches in its destructor, so an event racing the bridge's destruction is dropped and
// never touches a dead object. The stats are polled (~4 Hz) while a model is loaded.
//
// Request ids are the bridge's own (unique for the bridge's lifetime, across model
// switches), so a late event of a replaced engine never matches a request of the new one.
// Switching or unloading cancels everything (a Finished(Cancelled) arrives for each
// request) and destroys the old engine on the thread pool, never on the GUI thread.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVariantMap>

#include <QPointer>

#include <memory>
#include <unordered_map>
#include <vector>

#include "core/app_settings.h"
#include "engine.h"
#include "sampling/sampler.h"
#include "sched/scheduler.h"

namespace hearth {
class Tokenizer;
namespace chat {
class PromptBuilder;
}
}  // namespace hearth

// Everything that lives as long as one loaded model (engine, prompt builder, facts).
struct LoadedEngine;

class EngineBridge : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QString architecture READ architecture NOTIFY modelChanged)
    Q_PROPERTY(QString quantisation READ quantisation NOTIFY modelChanged)
    // The model's template can turn its reasoning blocks (<think>…</think>) off (Qwen3):
    // a reply setting then offers the switch.
    Q_PROPERTY(bool thinkingSwitch READ thinkingSwitch NOTIFY modelChanged)
    // The context served (AppSettings::contextLength, else the model's) and the one the
    // model was trained for (the most it can be given).
    Q_PROPERTY(int contextLength READ contextLength NOTIFY modelChanged)
    Q_PROPERTY(int trainedContextLength READ trainedContextLength NOTIFY modelChanged)
    Q_PROPERTY(QString backendName READ backendName NOTIFY modelChanged)
    // Why the engine runs on the CPU when the device setting was auto (no driver, no GPU,
    // not enough memory...); empty when it was not auto's fallback.
    Q_PROPERTY(QString deviceNote READ deviceNote NOTIFY modelChanged)
    // On a GPU: "1.2 GiB weights + 8.0 GiB KV cache (9.5 GiB held, 120.3 GiB free)"; empty
    // on the CPU.
    Q_PROPERTY(QString gpuMemoryNote READ gpuMemoryNote NOTIFY modelChanged)
    Q_PROPERTY(QString fingerprint READ fingerprint NOTIFY modelChanged)
    Q_PROPERTY(bool loaded READ loaded NOTIFY modelChanged)
    Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    // The last load failed because there is no file at its path (a first run before the
    // default model is fetched, or a model since moved): the path, else "".
    Q_PROPERTY(QString missingPath READ missingPath NOTIFY errorStringChanged)
    // Memory: the model file (mapped) and the KV cache allocated for it.
    Q_PROPERTY(qint64 modelFileBytes READ modelFileBytes NOTIFY modelChanged)
    Q_PROPERTY(qint64 kvCacheBytes READ kvCacheBytes NOTIFY modelChanged)
    Q_PROPERTY(int kvBlockSize READ kvBlockSize NOTIFY modelChanged)
    // Engine settings used by the next load(): the user's (settings: threads, KV cache,
    // pinned share), with threads / kvMegabytes overriding them where > 0 (tests, the
    // command line). Changing them does not reopen the model.
    Q_PROPERTY(AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY settingsChanged)
    Q_PROPERTY(int kvMegabytes READ kvMegabytes WRITE setKvMegabytes NOTIFY settingsChanged)
    // Live statistics (statsChanged at most ~4 times a second while loaded).
    // Decode speed: of the replies generating now, or (speedIsLast) of the last reply.
    Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(bool speedIsLast READ speedIsLast NOTIFY statsChanged)
    Q_PROPERTY(int kvBlocksTotal READ kvBlocksTotal NOTIFY statsChanged)
    Q_PROPERTY(int kvBlocksUsed READ kvBlocksUsed NOTIFY statsChanged)
    Q_PROPERTY(int kvBlocksCached READ kvBlocksCached NOTIFY statsChanged)
    Q_PROPERTY(int kvBlocksPinned READ kvBlocksPinned NOTIFY statsChanged)
    Q_PROPERTY(double prefixHitRate READ prefixHitRate NOTIFY statsChanged)
    Q_PROPERTY(int conversationsResident READ conversationsResident NOTIFY statsChanged)
    Q_PROPERTY(int requestsRunning READ requestsRunning NOTIFY statsChanged)
    Q_PROPERTY(int requestsWaiting READ requestsWaiting NOTIFY statsChanged)
    // The KV cache's disk tier: whether it is on, what it holds (all models), its budget,
    // and why it is off or not writing (empty when all is well).
    Q_PROPERTY(bool diskCacheOn READ diskCacheOn NOTIFY statsChanged)
    Q_PROPERTY(qint64 diskCacheBytes READ diskCacheBytes NOTIFY statsChanged)
    Q_PROPERTY(qint64 diskCacheBlocks READ diskCacheBlocks NOTIFY statsChanged)
    Q_PROPERTY(qint64 diskCacheModelBlocks READ diskCacheModelBlocks NOTIFY statsChanged)
    Q_PROPERTY(qint64 diskCacheBudget READ diskCacheBudget NOTIFY statsChanged)
    Q_PROPERTY(qint64 diskCacheLoadedBlocks READ diskCacheLoadedBlocks NOTIFY statsChanged)
    Q_PROPERTY(QString diskCacheStatus READ diskCacheStatus NOTIFY statsChanged)

  public:
    explicit EngineBridge(QObject* parent = nullptr);
    ~EngineBridge() override;  // cancels, waits for a load in flight, destroys the engine

    QString modelPath() const { return model_path_; }
    // The file of the last load() (loaded, loading or failed).
    QString requestedPath() const { return loading_path_; }
    QString modelName() const;
    QString architecture() const;
    bool thinkingSwitch() const;
    QString quantisation() const;
    int contextLength() const;
    int trainedContextLength() const;
    QString backendName() const;
    QString deviceNote() const;
    QString gpuMemoryNote() const;
    QString fingerprint() const;
    qint64 modelFileBytes() const;
    qint64 kvCacheBytes() const;
    int kvBlockSize() const;
    bool loaded() const { return loaded_ != nullptr; }
    // From load() until its result is handled (not the future's own state: that ends on the
    // loading thread, before loadFinished is delivered here).
    bool loading() const { return loading_; }
    QString errorString() const { return error_; }
    QString missingPath() const { return missing_path_; }
    int threads() const { return threads_; }
    void setThreads(int n);
    int kvMegabytes() const { return kv_mb_; }
    void setKvMegabytes(int mb);
    AppSettings* settings() const { return settings_; }
    void setSettings(AppSettings* settings);
    // The EngineConfig the next load() uses (model_path empty). Automatic threads (0
    // everywhere) leave one core for the UI on machines with more than two.
    hearth::EngineConfig nextEngineConfig() const;

    double tokensPerSecond() const { return stats_.decode_tokens_per_s; }
    bool speedIsLast() const { return stats_.speed_is_last; }
    int kvBlocksTotal() const { return stats_.kv.blocks_total; }
    int kvBlocksUsed() const { return stats_.kv.blocks_used; }
    int kvBlocksCached() const { return stats_.kv.blocks_cached; }
    int kvBlocksPinned() const { return stats_.kv.blocks_pinned; }
    double prefixHitRate() const { return stats_.prefix_hit_rate(); }
    int conversationsResident() const { return stats_.conversations_parked; }
    int requestsRunning() const { return stats_.scheduler.running; }
    int requestsWaiting() const { return stats_.scheduler.waiting; }
    bool diskCacheOn() const { return stats_.disk_on; }
    qint64 diskCacheBytes() const { return stats_.disk.bytes; }
    qint64 diskCacheBlocks() const { return stats_.disk.entries; }
    qint64 diskCacheModelBlocks() const { return stats_.disk.model_entries; }
    qint64 diskCacheBudget() const { return stats_.disk.budget_bytes; }
    qint64 diskCacheLoadedBlocks() const { return stats_.disk.loaded_blocks; }
    QString diskCacheStatus() const { return QString::fromStdString(stats_.disk.status); }

    // Loads a model (a path or a file:// URL) in the background, replacing the current one
    // once the new one is ready (the old one keeps serving until then). A load() while
    // another is in flight supersedes it. Failure: errorString, the old model stays.
    Q_INVOKABLE void load(const QString& pathOrUrl);
    Q_INVOKABLE void unload();
    Q_INVOKABLE void cancelAll();
    // "warming", "pinned", "failed" or "" (not pinned) for a pin key.
    Q_INVOKABLE QString pinState(qint64 key) const;
    Q_INVOKABLE void refreshStats();
    // Deletes every KV block the disk tier holds (every model's).
    Q_INVOKABLE void clearDiskCache();
    // Who holds each KV block (the Memory page): {blockSize, states: [int], owners: [int]}
    // with states 0 free, 1 cached, 2 pinned, 3 conversation, 4 shared (BlockCell::State)
    // and owners the conversation id or pin key (-1: none). Cheap: the engine's latest
    // snapshot (at most one step old); asking schedules a fresh one.
    Q_INVOKABLE QVariantMap blockMap() const;
    hearth::BlockMap blockMapSnapshot() const;  // the same, for C++ (empty when unloaded)

    // ---- C++ API for the other view models (GUI thread) ----
    using RequestId = qint64;
    // Queues a request; returns its id (> 0), or -1 when no model is loaded (then
    // requestEvent is not emitted). Errors of the engine arrive as an Error event.
    RequestId submit(qint64 conversation, std::vector<int32_t> prompt,
                     const hearth::SamplingParams& sampling, int max_tokens);
    // The full request (stop strings, ...); its conversation must be ≥ 0.
    RequestId submit(hearth::sched::Request request);
    void cancel(RequestId id);
    // Reads what the disk tier holds of this prompt into memory, in the background (a
    // conversation that was just selected); nothing when no model or no disk tier.
    void prefetch(std::vector<int32_t> prompt, hearth::kv::Lineage lineage = {});
    // Drops what the disk tier holds of this prompt (Engine::forget).
    void forget(std::vector<int32_t> prompt, hearth::kv::Lineage lineage = {});
    void pin(qint64 key, std::vector<int32_t> prefix_ids);
    void unpin(qint64 key);
    std::vector<hearth::PinStatus> pins() const;
    // Valid while loaded (until modelChanged / aboutToUnload).
    const hearth::Tokenizer* tokenizer() const;
    const hearth::chat::PromptBuilder* promptBuilder() const;
    hearth::Engine* engine() const;
    // Owns the engine and prompt builder above, for whoever serves them beside the app
    // (the local API server); holding it keeps them alive past a model switch until
    // dropped. nullptr when no model is loaded.
    std::shared_ptr<const void> keepAlive() const { return loaded_; }
    hearth::EngineStats stats() const { return stats_; }

  signals:
    void modelChanged();
    void loadingChanged();
    void errorStringChanged();
    void settingsChanged();
    void statsChanged();
    void pinsChanged();
    // Before the current model goes (unload or a switch): tokenizer()/promptBuilder()
    // are still valid here, and every request has just been cancelled.
    void aboutToUnload();
    // A load finished: ok, or failed (errorString says why).
    void loadFinished(bool ok);
    // An event of a request submitted here, on the GUI thread, with event.request set to
    // the bridge's request id. After Finished or Error no more events of that id come.
    void requestEvent(const hearth::sched::Event& event);

  private:
    struct Relay;
    void on_load_finished();
    // first: an engine to destroy (off the GUI thread) before the new one is made.
    void start_load(const QString& path, std::shared_ptr<LoadedEngine> first = nullptr);
    // The loaded engine, out of the bridge (as unload() leaves it), its requests cancelled.
    std::shared_ptr<LoadedEngine> take_loaded();
    void set_error(const QString& error, const QString& missing_path = QString());
    void retire(std::shared_ptr<LoadedEngine> old);  // cancel_all + destroy off the GUI thread
    void deliver(const hearth::sched::Event& event);
    Q_INVOKABLE void drain_events();  // delivers what the relay queued, on this thread

    QString model_path_;
    QString pending_path_;  // a load() that came while another was in flight
    QString loading_path_;
    QString error_;
    QString missing_path_;
    int threads_ = 0;
    int kv_mb_ = 0;
    QPointer<AppSettings> settings_;
    std::shared_ptr<LoadedEngine> loaded_;
    QFutureWatcher<std::shared_ptr<LoadedEngine>> watcher_;
    bool loading_ = false;
    std::shared_ptr<Relay> relay_;
    QTimer stats_timer_;
    hearth::EngineStats stats_;
    std::vector<hearth::PinStatus> pins_;
    RequestId next_id_ = 1;
    struct Running {
        hearth::sched::RequestId engine_id = 0;
        quint64 generation = 0;  // of the engine it runs on
    };
    std::unordered_map<RequestId, Running> running_;
    quint64 generation_ = 0;  // +1 per loaded engine
};
