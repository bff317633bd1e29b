#include "core/local_backend.h"

#include "chat/prompt_builder.h"
#include "common/log.h"
#include "core/reply_planner.h"

using namespace hearth;

LocalBackend::LocalBackend(QObject* parent) : ChatBackend(parent) {}

void LocalBackend::setBridge(EngineBridge* bridge) {
    if (bridge == bridge_) return;
    if (bridge_) bridge_->disconnect(this);
    bridge_ = bridge;
    if (bridge_) {
        connect(bridge_, &EngineBridge::requestEvent, this, &ChatBackend::requestEvent);
        connect(bridge_, &EngineBridge::modelChanged, this, &ChatBackend::readyChanged);
    }
    emit bridgeChanged();
    emit readyChanged();
}

bool LocalBackend::ready() const {
    return bridge_ && bridge_->loaded() && bridge_->promptBuilder();
}

QString LocalBackend::displayName() const {
    return bridge_ ? bridge_->modelName() : QString();
}

QString LocalBackend::fingerprint() const {
    return bridge_ ? bridge_->fingerprint() : QString();
}

int LocalBackend::context_length() const {
    return ready() ? bridge_->contextLength() : 0;
}

std::vector<int32_t> LocalBackend::encode_content(chat::Role role, const QString& text) const {
    if (!ready()) return {};
    return bridge_->promptBuilder()->encode_content(role, text.toStdString());
}

Result<ChatBackend::Started> LocalBackend::start(const TurnRequest& r) {
    if (!ready()) return make_error("No model is loaded.");
    auto planned = chat::plan_turn(*bridge_->promptBuilder(), bridge_->contextLength(), r.turn);
    if (!planned) return planned.error();
    sched::Request req;
    req.conversation = r.conversation;
    req.prompt = std::move(planned->prompt);
    req.sampling = r.sampling;
    req.max_tokens = planned->max_tokens;
    req.stop_at_end_of_generation = r.stop_at_end_of_turn;
    req.stop_strings = r.stop_strings;
    req.speculate = r.speculate;
    req.lineage = planned->lineage;
    req.shift = std::move(planned->shift);
    const RequestId id = bridge_->submit(std::move(req));
    if (id < 0) return make_error("No model is loaded.");
    return Started{id, static_cast<int>(planned->dropped), static_cast<int>(planned->dropped_now)};
}

void LocalBackend::cancel(RequestId id) {
    if (bridge_) bridge_->cancel(id);
}

int LocalBackend::prefetch(const ThreadSnapshot& snap, const ReplyDefaults& defaults) {
    if (!ready()) return -1;
    auto kv = conversation_kv(snap, *bridge_->promptBuilder(), bridge_->fingerprint(),
                              bridge_->contextLength(), defaults);
    if (!kv) {
        log::get("app")->debug("no prefetch for conversation {}: {}", snap.conversation.id,
                               kv.message());
        return -1;
    }
    bridge_->prefetch(std::move(kv->tokens), kv->lineage);
    return static_cast<int>(kv->dropped);
}

void LocalBackend::forget(const ThreadSnapshot& snap, const ReplyDefaults& defaults) {
    if (!ready()) return;
    auto kv = conversation_kv(snap, *bridge_->promptBuilder(), bridge_->fingerprint(),
                              bridge_->contextLength(), defaults);
    if (kv) bridge_->forget(std::move(kv->tokens), kv->lineage);
}
