#include "core/engine_bridge.h"

#include <QFileInfo>
#include <QPointer>
#include <QThread>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include <mutex>

#include "chat/chat_template.h"
#include "chat/prompt_builder.h"
#include "common/log.h"
#include "common/mailbox.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_name.h"
#include "tokenizer/tokenizer.h"

using namespace hearth;

struct LoadedEngine {
    // Declared first, destroyed last: the builder refers to the engine's tokenizer.
    std::unique_ptr<Engine> engine;
    std::unique_ptr<chat::PromptBuilder> builder;
    QString path;
    QString name;
    QString architecture;
    QString quantisation;
    QString backend;
    QString device_note;  // why auto chose the CPU (empty when it did not)
    QString gpu_memory_note;
    QString fingerprint;
    int context_length = 0;   // served
    int trained_context = 0;  // what the model was trained for
    qint64 file_bytes = 0;
    qint64 kv_bytes = 0;
    int block_size = 0;
    QString error;  // set instead of engine when the load failed

    ~LoadedEngine() {
        builder.reset();
        engine.reset();
    }
};

// Posts engine events to the bridge. Engine threads call post(); the bridge's destructor
// calls detach() (under the same lock), after which nothing is posted, and what is queued
// already is dropped. Events travel through a Mailbox (common/mailbox.h), one wake-up per
// batch, not inside posted lambdas, so that ThreadSanitizer sees the hand-off.
struct EngineBridge::Relay {
    std::mutex mutex;
    EngineBridge* bridge = nullptr;
    Mailbox<sched::Event> events;

    void post(sched::Event event) {
        std::lock_guard lock(mutex);
        if (bridge && events.post(std::move(event)))
            QMetaObject::invokeMethod(bridge, "drain_events", Qt::QueuedConnection);
    }
    void detach() {
        std::lock_guard lock(mutex);
        bridge = nullptr;
        events.clear();
    }
};

void EngineBridge::drain_events() {
    for (const sched::Event& e : relay_->events.take()) deliver(e);
}

namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString to_local_path(const QString& path_or_url) {
    if (path_or_url.startsWith(QLatin1String("file:"))) return QUrl(path_or_url).toLocalFile();
    return path_or_url;
}

std::shared_ptr<LoadedEngine> load_engine(const QString& path, EngineConfig config) {
    auto loaded = std::make_shared<LoadedEngine>();
    loaded->path = path;
    if (path.isEmpty()) {
        loaded->error = QStringLiteral("No model file was given.");
        return loaded;
    }
    if (!QFileInfo::exists(path)) {
        loaded->error = QStringLiteral("%1: no such file").arg(path);
        return loaded;
    }
    config.model_path = path.toStdString();
    auto engine = Engine::create(config);
    if (!engine) {
        loaded->error = QString::fromStdString(engine.message());
        // An explicit GPU that cannot be used is an error, not a silent CPU; say where the
        // choice is made, or the user is left with a good model that will not open.
        if (config.device.rfind("cuda", 0) == 0 && engine.message().rfind("cuda", 0) == 0)
            loaded->error += QStringLiteral(
                "\n\nHearth is set to run on an NVIDIA GPU (Settings, Backend: cuda). Choose "
                "auto or cpu there to run on the CPU.");
        return loaded;
    }
    loaded->engine = std::move(engine).value();
    const Engine& e = *loaded->engine;
    const ModelConfig& mc = e.model_config();
    loaded->builder = std::make_unique<chat::PromptBuilder>(
        e.tokenizer(), chat::ChatTemplate::from_gguf(e.file()));
    loaded->name = QString::fromStdString(readable_model_name(e.file(), path.toStdString()));
    loaded->architecture = qs(mc.architecture);
    loaded->quantisation = QString::fromStdString(quantisation_label(e.file()));
    loaded->backend = QString::fromStdString(e.backend_name());
    loaded->device_note = QString::fromStdString(e.device().cpu_reason);
    if (const Engine::DeviceMemory m = e.device_memory(); m.held_bytes > 0) {
        const auto gib = [](std::uint64_t b) { return QString::fromStdString(gib_text(b)); };
        loaded->gpu_memory_note =
            QStringLiteral("%1 weights + %2 KV cache (%3 held, %4 free)")
                .arg(gib(m.weight_bytes), gib(m.kv_bytes), gib(m.held_bytes), gib(m.free_bytes));
    }
    loaded->fingerprint = QString::fromStdString(e.file().fingerprint());
    loaded->context_length = static_cast<int>(mc.context_length);
    loaded->trained_context = static_cast<int>(mc.trained_context);
    loaded->file_bytes = QFileInfo(path).size();
    loaded->kv_bytes = static_cast<qint64>(e.kv_bytes());
    loaded->block_size = e.config().block_size;
    return loaded;
}

bool same_pins(const std::vector<PinStatus>& a, const std::vector<PinStatus>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].key != b[i].key || a[i].state != b[i].state ||
            a[i].pinned_tokens != b[i].pinned_tokens)
            return false;
    return true;
}

}  // namespace

EngineBridge::EngineBridge(QObject* parent) : QObject(parent), relay_(std::make_shared<Relay>()) {
    relay_->bridge = this;
    connect(&watcher_, &QFutureWatcherBase::finished, this, &EngineBridge::on_load_finished);
    stats_timer_.setInterval(250);
    connect(&stats_timer_, &QTimer::timeout, this, &EngineBridge::refreshStats);
}

EngineBridge::~EngineBridge() {
    relay_->detach();
    stats_timer_.stop();
    // A load in flight finishes (its engine is then destroyed with the future's result).
    watcher_.disconnect(this);
    watcher_.waitForFinished();
    if (loaded_) {
        loaded_->engine->cancel_all();
        loaded_.reset();  // joins the engine thread: nothing calls back after this
    }
}

QString EngineBridge::modelName() const {
    return loaded_ ? loaded_->name : QString();
}
QString EngineBridge::architecture() const {
    return loaded_ ? loaded_->architecture : QString();
}
bool EngineBridge::thinkingSwitch() const {
    const chat::PromptBuilder* b = promptBuilder();
    return b && b->chat_template().reasoning().switchable;
}
QString EngineBridge::quantisation() const {
    return loaded_ ? loaded_->quantisation : QString();
}
int EngineBridge::contextLength() const {
    return loaded_ ? loaded_->context_length : 0;
}
int EngineBridge::trainedContextLength() const {
    return loaded_ ? loaded_->trained_context : 0;
}
QString EngineBridge::backendName() const {
    return loaded_ ? loaded_->backend : QString();
}

QString EngineBridge::gpuMemoryNote() const {
    return loaded_ ? loaded_->gpu_memory_note : QString();
}

QString EngineBridge::deviceNote() const {
    return loaded_ ? loaded_->device_note : QString();
}
QString EngineBridge::fingerprint() const {
    return loaded_ ? loaded_->fingerprint : QString();
}
qint64 EngineBridge::modelFileBytes() const {
    return loaded_ ? loaded_->file_bytes : 0;
}
qint64 EngineBridge::kvCacheBytes() const {
    return loaded_ ? loaded_->kv_bytes : 0;
}
int EngineBridge::kvBlockSize() const {
    return loaded_ ? loaded_->block_size : 0;
}

BlockMap EngineBridge::blockMapSnapshot() const {
    return loaded_ ? loaded_->engine->block_map() : BlockMap{};
}

QVariantMap EngineBridge::blockMap() const {
    const BlockMap map = blockMapSnapshot();
    QVariantList states, owners;
    states.reserve(static_cast<qsizetype>(map.blocks.size()));
    owners.reserve(static_cast<qsizetype>(map.blocks.size()));
    for (const BlockCell& c : map.blocks) {
        states.append(static_cast<int>(c.state));
        owners.append(QVariant::fromValue<qint64>(c.owner));
    }
    return {{QStringLiteral("blockSize"), map.block_size},
            {QStringLiteral("states"), states},
            {QStringLiteral("owners"), owners}};
}

void EngineBridge::setThreads(int n) {
    if (n == threads_) return;
    threads_ = std::max(0, n);
    emit settingsChanged();
}

void EngineBridge::setKvMegabytes(int mb) {
    if (mb == kv_mb_) return;
    kv_mb_ = std::max(0, mb);
    emit settingsChanged();
}

void EngineBridge::setSettings(AppSettings* settings) {
    if (settings == settings_) return;
    settings_ = settings;
    emit settingsChanged();
}

EngineConfig EngineBridge::nextEngineConfig() const {
    EngineConfig config = settings_ ? settings_->engineConfig() : EngineConfig{};
    config.model_path.clear();
    if (threads_ > 0) config.n_threads = threads_;
    if (kv_mb_ > 0) config.kv_mb = static_cast<std::size_t>(kv_mb_);
    if (config.n_threads <= 0) {
        const int cores = QThread::idealThreadCount();
        config.n_threads = cores > 2 ? cores - 1 : 0;  // 0: the engine's default, all cores
    }
    // Inference threads are background threads: the GUI thread gets a core at once when it
    // wakes, and a busy GUI still cannot starve inference (thread_pool.h).
    config.background_priority = true;
    return config;
}

void EngineBridge::set_error(const QString& error, const QString& missing_path) {
    if (error == error_ && missing_path == missing_path_) return;
    error_ = error;
    missing_path_ = missing_path;
    emit errorStringChanged();
}

void EngineBridge::load(const QString& pathOrUrl) {
    const QString path = to_local_path(pathOrUrl);
    if (loading_) {
        pending_path_ = path;  // started when the current load finishes
        return;
    }
    start_load(path);
}

void EngineBridge::start_load(const QString& path, std::shared_ptr<LoadedEngine> first) {
    loading_path_ = path;
    set_error(QString());
    EngineConfig config = nextEngineConfig();
    // The context this model file is served with (its own setting, whichever model was
    // open last).
    if (settings_) config.context_length = settings_->contextLengthFor(path);
    log::get("app")->info("opening {} with {} threads, KV cache {} MB, pinned share {}",
                          path.toStdString(), config.n_threads, config.kv_mb,
                          config.max_pinned_share);
    // On a GPU the engine being replaced holds most of the device's memory (its KV cache
    // takes what its model leaves, engine/vram_plan.h): it is unloaded, and gone, before
    // the new one plans its memory. On the CPU it serves on until the new one is ready.
    if (loaded_ && loaded_->engine->device().kind == DeviceKind::Cuda && config.device != "cpu") {
        log::get("app")->info("unloading {} first: it holds the GPU's memory",
                              model_path_.toStdString());
        first = take_loaded();
    }
    loading_ = true;
    watcher_.setFuture(QtConcurrent::run([path, config, first = std::move(first)]() mutable {
        first.reset();  // joins its engine thread: its memory is free after this
        return load_engine(path, config);
    }));
    emit loadingChanged();
}

void EngineBridge::on_load_finished() {
    std::shared_ptr<LoadedEngine> result = watcher_.future().result();
    if (!pending_path_.isEmpty()) {  // superseded: throw this one away, load the newer one
        const QString next = std::exchange(pending_path_, QString());
        // Gone before the next one plans its memory (it served nothing: no requests).
        start_load(next, result->engine ? std::move(result) : nullptr);
        return;
    }
    const bool ok = result->engine != nullptr;
    loading_ = false;
    if (!ok) {
        log::get("app")->warn("loading {} failed: {}", loading_path_.toStdString(),
                              result->error.toStdString());
        set_error(result->error, QFileInfo::exists(loading_path_) ? QString() : loading_path_);
        emit loadingChanged();
        emit loadFinished(false);
        return;
    }
    if (loaded_) {
        emit aboutToUnload();
        retire(std::exchange(loaded_, nullptr));
    }
    loaded_ = std::move(result);
    ++generation_;
    model_path_ = loaded_->path;
    pins_.clear();
    stats_ = loaded_->engine->stats();
    stats_timer_.start();
    log::get("app")->info("loaded {} ({}, {}, context {}, backend {})", model_path_.toStdString(),
                          loaded_->architecture.toStdString(), loaded_->quantisation.toStdString(),
                          loaded_->context_length, loaded_->backend.toStdString());
    emit loadingChanged();
    emit modelChanged();
    emit statsChanged();
    emit pinsChanged();
    emit loadFinished(true);
}

void EngineBridge::retire(std::shared_ptr<LoadedEngine> old) {
    if (!old) return;
    // Finished(Cancelled) events of its requests still reach us through the relay.
    if (old->engine) old->engine->cancel_all();
    (void)QtConcurrent::run([old = std::move(old)]() mutable { old.reset(); });
}

void EngineBridge::unload() {
    if (loaded_) retire(take_loaded());
}

std::shared_ptr<LoadedEngine> EngineBridge::take_loaded() {
    emit aboutToUnload();
    std::shared_ptr<LoadedEngine> old = std::exchange(loaded_, nullptr);
    // Finished(Cancelled) events of its requests still reach us through the relay.
    old->engine->cancel_all();
    stats_timer_.stop();
    stats_ = EngineStats{};
    pins_.clear();
    model_path_.clear();
    emit modelChanged();
    emit statsChanged();
    emit pinsChanged();
    return old;
}

void EngineBridge::cancelAll() {
    if (loaded_) loaded_->engine->cancel_all();
}

QString EngineBridge::pinState(qint64 key) const {
    for (const PinStatus& p : pins_)
        if (p.key == key) return QString::fromLatin1(pin_state_name(p.state));
    return QString();
}

void EngineBridge::refreshStats() {
    if (!loaded_) return;
    EngineStats now = loaded_->engine->stats();
    if (now != stats_) {  // every field, so none is left out of the UI
        stats_ = now;
        emit statsChanged();
    }
    std::vector<PinStatus> pins = loaded_->engine->pins();
    if (!same_pins(pins, pins_)) {
        pins_ = std::move(pins);
        emit pinsChanged();
    }
}

EngineBridge::RequestId EngineBridge::submit(qint64 conversation, std::vector<int32_t> prompt,
                                             const SamplingParams& sampling, int max_tokens) {
    sched::Request r;
    r.conversation = conversation;
    r.prompt = std::move(prompt);
    r.sampling = sampling;
    r.max_tokens = max_tokens;
    return submit(std::move(r));
}

EngineBridge::RequestId EngineBridge::submit(sched::Request request) {
    if (!loaded_) return -1;
    const RequestId id = next_id_++;
    std::weak_ptr<Relay> relay = relay_;
    auto handle = loaded_->engine->submit(std::move(request), [relay, id](const sched::Event& e) {
        auto r = relay.lock();
        if (!r) return;
        sched::Event copy = e;
        copy.request = id;
        r->post(std::move(copy));
    });
    running_[id] = Running{handle->id(), generation_};
    return id;
}

void EngineBridge::deliver(const sched::Event& event) {
    if (event.kind == sched::EventKind::Finished || event.kind == sched::EventKind::Error)
        running_.erase(event.request);
    emit requestEvent(event);
}

void EngineBridge::cancel(RequestId id) {
    auto it = running_.find(id);
    // A request of a replaced engine was cancelled with it.
    if (it == running_.end() || !loaded_ || it->second.generation != generation_) return;
    loaded_->engine->cancel(it->second.engine_id);
}

void EngineBridge::prefetch(std::vector<int32_t> prompt, kv::Lineage lineage) {
    if (loaded_) loaded_->engine->prefetch(std::move(prompt), lineage);
}

void EngineBridge::forget(std::vector<int32_t> prompt, kv::Lineage lineage) {
    if (loaded_) loaded_->engine->forget(std::move(prompt), lineage);
}

void EngineBridge::clearDiskCache() {
    if (!loaded_) return;
    loaded_->engine->clear_disk_cache();
    QTimer::singleShot(200, this, &EngineBridge::refreshStats);
}

void EngineBridge::pin(qint64 key, std::vector<int32_t> prefix_ids) {
    if (!loaded_ || prefix_ids.empty()) return;
    loaded_->engine->pin(key, std::move(prefix_ids));
    refreshStats();
}

void EngineBridge::unpin(qint64 key) {
    if (!loaded_) return;
    loaded_->engine->unpin(key);
    refreshStats();
}

std::vector<PinStatus> EngineBridge::pins() const {
    return pins_;
}

const Tokenizer* EngineBridge::tokenizer() const {
    return loaded_ ? &loaded_->engine->tokenizer() : nullptr;
}

const chat::PromptBuilder* EngineBridge::promptBuilder() const {
    return loaded_ ? loaded_->builder.get() : nullptr;
}

Engine* EngineBridge::engine() const {
    return loaded_ ? loaded_->engine.get() : nullptr;
}
