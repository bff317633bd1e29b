// ChatBackend: what the chat view model talks to for replies, whichever machine runs
// them. Two implementations: LocalBackend (this machine's engine, through EngineBridge)
// and RemoteBackend (an OpenAI-compatible endpoint: vLLM, SGLang, llama-server, another
// Hearth). The view model plans a turn as a chat::TurnInput (reply_planner.h) and never
// learns which one answers it.
//
// Events are sched::Event on the GUI thread with `request` set to the backend's id:
// PrefillProgress (local only), Token (text; token ids only where the backend has them),
// then exactly one Finished (all text; the sampled ids where known; the stop reason;
// stats: TTFT, decode speed, prompt tokens cached when the backend knows them) or Error.
// Cancelling gives Finished with StopReason::Cancelled.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QString>

#include <vector>

#include "chat/turn_planner.h"
#include "common/result.h"
#include "sampling/sampler.h"
#include "sched/scheduler.h"

struct ThreadSnapshot;
struct ReplyDefaults;

// One reply to run: the turn, how to sample it, and the conversation it belongs to.
struct TurnRequest {
    qint64 conversation = 0;
    hearth::chat::TurnInput turn;
    hearth::SamplingParams sampling;
    bool stop_at_end_of_turn = true;
    // Texts that end the reply where they appear (left out of it), UTF-8.
    std::vector<std::string> stop_strings;
    bool speculate = true;  // speculative decoding, where the backend has it (local)
};

class ChatBackend : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ChatBackend is an interface: use LocalBackend or RemoteBackend")
    Q_PROPERTY(bool ready READ ready NOTIFY readyChanged)
    Q_PROPERTY(QString displayName READ displayName NOTIFY readyChanged)
    Q_PROPERTY(bool remote READ remote CONSTANT)

  public:
    using QObject::QObject;
    using RequestId = qint64;

    // It can take a turn now (a model is loaded; an endpoint and model are chosen).
    virtual bool ready() const = 0;
    virtual QString displayName() const = 0;
    virtual bool remote() const = 0;
    // Whose token ids a stored message's ids are: they are reused only when they match
    // (so a history continues from the KV cache). Empty: this backend has none (it sends
    // text), and stored ids are never reused.
    virtual QString fingerprint() const = 0;
    // The content ids to store with a message the user writes (empty without ids).
    virtual std::vector<int32_t> encode_content(hearth::chat::Role role,
                                                const QString& text) const = 0;
    // The model's context in tokens (0: not known, a remote endpoint).
    virtual int context_length() const { return 0; }
    struct Started {
        RequestId id = -1;
        int dropped = 0;      // thread messages left out of the prompt (the context is full)
        int dropped_now = 0;  // of those, the ones that left on this turn
    };
    // Plans and queues the turn. Errors: not ready, or the turn does not fit.
    virtual hearth::Result<Started> start(const TurnRequest& request) = 0;
    virtual void cancel(RequestId id) = 0;

    // The KV cache's hints, for backends that have one (has_kv_cache): read back what the
    // disk tier holds of a conversation about to be continued (returns how many of its
    // messages are out of the model's view now, -1 when not known); drop what it holds of
    // a deleted one.
    virtual bool has_kv_cache() const { return false; }
    virtual int prefetch(const ThreadSnapshot&, const ReplyDefaults&) { return -1; }
    virtual void forget(const ThreadSnapshot&, const ReplyDefaults&) {}

  signals:
    void readyChanged();
    void requestEvent(const hearth::sched::Event& event);
};
