// plan_reply: the turn a conversation's reply asks for (chat_backend.h's TurnRequest),
// whichever backend answers it. Shared by every way a reply starts (send, regenerate,
// edit and resend, continue).
//
// The turn is the persona's system prompt with its documents and the conversation's
// (persona_prefix.h; chat::plan_turn puts it first unless the thread starts with a system
// message of its own), then the thread up to and including
// the message replied to (a message given passages of looked-up documents with them:
// document_lookup.h); a local backend fits it to the context (the oldest turns drop
// out). Stored token ids are passed on when the backend's tokenizer made them
// (`fingerprint`), so each turn extends the last one exactly and is served from the KV
// cache. Continuing a reply leaves that reply open (PromptEnd::ContinueReply): its prompt
// is the earlier one plus the sampled ids, all in the cache.
//
// Every setting is the conversation's when it has one, else the persona's, else the open
// model's own (ReplyDefaults::model, set on the Model page), else the app's:
// - Thinking, for models whose template can turn it off (Qwen3): on where none says.
// - Stop strings: a list (an empty one turns them off here).
// - Sampling: each set value overrides the one below it. The seed is the first fixed one
//   of those, else `fresh_seed` (the caller passes a new random number per request), so
//   a regenerated reply differs and the seed used is known (it is stored with the reply).
#pragma once

#include <QString>

#include <cstdint>
#include <optional>

#include "common/result.h"
#include "core/chat_backend.h"
#include "sampling/sampler.h"
#include "store/types.h"

namespace hearth::chat {
class PromptBuilder;
}
namespace hearth::store {
class Store;
}

// A conversation, its persona and its thread, read together from the store; for a fork,
// where it came from (while that message still exists).
struct ThreadSnapshot {
    struct ForkOrigin {
        hearth::store::Id conversation = 0;
        hearth::store::Id message = 0;
        QString title;
    };
    hearth::store::Conversation conversation;
    std::optional<hearth::store::Persona> persona;
    std::vector<hearth::store::ThreadEntry> thread;
    std::optional<ForkOrigin> fork_origin;
    // The conversation's own documents (the persona's are in `persona`), in order.
    std::vector<hearth::store::Document> documents;
};

// Reads them (on the store's thread). A deleted persona leaves `persona` empty.
hearth::Result<ThreadSnapshot> read_thread_snapshot(hearth::store::Store& store,
                                                    std::int64_t conversation);

struct ReplyDefaults {
    hearth::SamplingParams sampling;  // the app's settings (their seed is ignored)
    int max_tokens = 512;             // the longest reply, unless a layer above says
    // The open model's own settings (a layer over the app's; a remote backend has none).
    hearth::store::SamplingSettings model;
    bool stop_at_end_of_turn = true;
    bool speculate = true;  // AppSettings::speculate
    // A chat that outgrows the context (chat/turn_planner.h): the model's settings, or
    // what the user chose for this conversation when asked.
    hearth::chat::ContextPolicy overflow = hearth::chat::ContextPolicy::DropInSteps;
    double keep = hearth::chat::kDefaultKeep;
};

struct PlannedReply {
    TurnRequest request;
    bool seed_fixed = false;  // the seed came from the conversation or persona
};

// parent: the message replied to. continue_reply: instead, the assistant reply to take up
// again (its parent is the message it answers). fingerprint: the backend's
// (ChatBackend::fingerprint; empty: stored ids are not used). Errors: the message is not
// in the thread, or a reply to continue has no ids of this backend.
hearth::Result<PlannedReply> plan_reply(const ThreadSnapshot& snapshot, hearth::store::Id parent,
                                        std::optional<hearth::store::Id> continue_reply,
                                        const QString& fingerprint, const ReplyDefaults& defaults,
                                        std::uint64_t fresh_seed);

// The tokens a conversation's next turn starts with, as the engine computed them: after a
// reply, the prompt that asked for it and the reply's own ids (when this model made them);
// after an unanswered message, the prompt that answers it; and the KV lineage they are
// keyed in (a chat that shifted its context: kv/lineage.h). What to read back from the
// disk tier when the conversation is selected, and what to drop from it when it is
// deleted. Errors: an empty thread, a reply still streaming, a plan that fails.
struct ConversationKv {
    std::vector<std::int32_t> tokens;
    hearth::kv::Lineage lineage;
    std::size_t dropped = 0;  // thread messages out of the model's view
};
hearth::Result<ConversationKv> conversation_kv(const ThreadSnapshot& snapshot,
                                               const hearth::chat::PromptBuilder& builder,
                                               const QString& fingerprint, int context_length,
                                               const ReplyDefaults& defaults);

// Every branch of a conversation as a snapshot of its own (the thread from the first
// message to each leaf), for dropping all of a deleted conversation's KV.
hearth::Result<std::vector<ThreadSnapshot>> read_branch_snapshots(hearth::store::Store& store,
                                                                  std::int64_t conversation);

// The settings applied over params: each value that is set replaces the one in params.
void apply_sampling(const hearth::store::SamplingSettings& settings,
                    hearth::SamplingParams& params);
