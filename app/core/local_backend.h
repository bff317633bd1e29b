// LocalBackend: replies from this machine's engine (EngineBridge). Plans each turn with
// chat::plan_turn on the loaded model's prompt builder, so stored ids are reused and the
// history is served from the KV cache; prefetch/forget drive the disk tier.
#pragma once

#include <QPointer>

#include "core/chat_backend.h"
#include "core/engine_bridge.h"

class LocalBackend : public ChatBackend {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(EngineBridge* bridge READ bridge WRITE setBridge NOTIFY bridgeChanged)

  public:
    explicit LocalBackend(QObject* parent = nullptr);

    EngineBridge* bridge() const { return bridge_; }
    void setBridge(EngineBridge* bridge);

    bool ready() const override;
    QString displayName() const override;
    bool remote() const override { return false; }
    QString fingerprint() const override;
    std::vector<int32_t> encode_content(hearth::chat::Role role,
                                        const QString& text) const override;
    int context_length() const override;
    hearth::Result<Started> start(const TurnRequest& request) override;
    void cancel(RequestId id) override;
    bool has_kv_cache() const override { return true; }
    int prefetch(const ThreadSnapshot& snapshot, const ReplyDefaults& defaults) override;
    void forget(const ThreadSnapshot& snapshot, const ReplyDefaults& defaults) override;

  signals:
    void bridgeChanged();

  private:
    QPointer<EngineBridge> bridge_;
};
