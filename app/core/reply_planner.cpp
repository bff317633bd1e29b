#include "core/reply_planner.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "chat/prompt_builder.h"
#include "chat/turn_planner.h"
#include "core/document_lookup.h"
#include "core/persona_prefix.h"
#include "store/store.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

chat::Role to_chat(st::Role r) {
    switch (r) {
        case st::Role::System:
            return chat::Role::System;
        case st::Role::User:
            return chat::Role::User;
        case st::Role::Assistant:
            return chat::Role::Assistant;
    }
    return chat::Role::User;
}

}  // namespace

Result<ConversationKv> conversation_kv(const ThreadSnapshot& snap,
                                       const chat::PromptBuilder& builder,
                                       const QString& fingerprint, int context_length,
                                       const ReplyDefaults& defaults) {
    if (snap.thread.empty()) return make_error("the conversation is empty");
    const st::Message& last = snap.thread.back().message;
    if (last.state == st::MessageState::Streaming) return make_error("a reply is streaming");
    const bool replied = last.role == st::Role::Assistant;
    if (replied && !last.parent_id) return make_error("a reply without a message before it");
    auto plan = plan_reply(snap, replied ? *last.parent_id : last.id, std::nullopt, fingerprint,
                           defaults, 0);
    if (!plan) return plan.error();
    // Ask refuses the turn of a step; the KV of the turn before it is still there.
    chat::TurnInput turn = plan->request.turn;
    if (turn.policy == chat::ContextPolicy::Ask) turn.policy = chat::ContextPolicy::DropInSteps;
    auto planned = chat::plan_turn(builder, context_length, turn);
    if (!planned) return planned.error();
    ConversationKv out{std::move(planned->prompt), planned->lineage, planned->dropped};
    if (replied && last.token_fingerprint == fingerprint)
        out.tokens.insert(out.tokens.end(), last.token_ids.begin(), last.token_ids.end());
    return out;
}

void apply_sampling(const st::SamplingSettings& ss, SamplingParams& sp) {
    if (ss.temperature) sp.temperature = static_cast<float>(*ss.temperature);
    if (ss.top_p) sp.top_p = static_cast<float>(*ss.top_p);
    if (ss.min_p) sp.min_p = static_cast<float>(*ss.min_p);
    if (ss.top_k) sp.top_k = *ss.top_k;
    if (ss.repeat_penalty) sp.repeat_penalty = static_cast<float>(*ss.repeat_penalty);
    if (ss.frequency_penalty) sp.frequency_penalty = static_cast<float>(*ss.frequency_penalty);
    if (ss.presence_penalty) sp.presence_penalty = static_cast<float>(*ss.presence_penalty);
}

Result<PlannedReply> plan_reply(const ThreadSnapshot& snap, st::Id parent,
                                std::optional<st::Id> continue_reply, const QString& fingerprint,
                                const ReplyDefaults& defaults, std::uint64_t fresh_seed) {
    const auto& thread = snap.thread;
    const st::Id last_id = continue_reply.value_or(parent);
    const auto at = std::find_if(thread.begin(), thread.end(),
                                 [&](const st::ThreadEntry& e) { return e.message.id == last_id; });
    if (at == thread.end()) return make_error("The message to reply to is no longer shown.");
    if (continue_reply && at->message.role != st::Role::Assistant)
        return make_error("Only a reply can be continued.");

    PlannedReply plan;
    chat::TurnInput& turn = plan.request.turn;
    turn.system_prompt =
        hearth::app::persona_prefix(
            snap.persona ? snap.persona->system_prompt : QString(),
            snap.persona ? std::span(snap.persona->documents) : std::span<const st::Document>(),
            snap.documents)
            .toStdString();
    for (auto it = thread.begin(); it != std::next(at); ++it) {
        const st::Message& msg = it->message;
        // A message given passages of looked-up documents reads them with it.
        chat::Message cm{to_chat(msg.role),
                         hearth::app::with_passages(msg.text, msg.sources).toStdString(),
                         std::nullopt};
        // Ids are reused only when this model's tokenizer made them.
        if (!fingerprint.isEmpty() && msg.token_fingerprint == fingerprint &&
            (msg.role == st::Role::Assistant || !msg.token_ids.empty()))
            cm.ids = std::vector<int32_t>(msg.token_ids.begin(), msg.token_ids.end());
        turn.messages.push_back(std::move(cm));
    }
    if (continue_reply && !turn.messages.back().ids)
        return make_error("This reply was written with another model; regenerate it instead.");

    // The layers, the first that sets a value wins: the conversation, the persona, the model.
    const st::SamplingSettings& conv = snap.conversation.sampling;
    const st::SamplingSettings* persona = snap.persona ? &snap.persona->sampling : nullptr;
    const st::SamplingSettings& model = defaults.model;
    const auto first = [&](auto field) {
        if ((conv.*field)) return conv.*field;
        if (persona && (persona->*field)) return persona->*field;
        return model.*field;
    };
    turn.max_tokens = first(&st::SamplingSettings::max_tokens).value_or(defaults.max_tokens);
    // Thinking (models with a switch, Qwen3): unset is on.
    turn.thinking = first(&st::SamplingSettings::thinking);
    turn.continue_reply = continue_reply.has_value();
    turn.policy = defaults.overflow;
    turn.keep = defaults.keep;

    SamplingParams sp = defaults.sampling;
    apply_sampling(model, sp);
    if (persona) apply_sampling(*persona, sp);
    apply_sampling(conv, sp);
    const std::optional<std::int64_t> fixed_seed = first(&st::SamplingSettings::seed);
    plan.seed_fixed = fixed_seed.has_value();
    sp.seed = fixed_seed ? static_cast<std::uint64_t>(*fixed_seed) : fresh_seed;

    plan.request.conversation = snap.conversation.id;
    plan.request.sampling = sp;
    plan.request.stop_at_end_of_turn = defaults.stop_at_end_of_turn;
    plan.request.speculate = defaults.speculate;
    // Stop strings: the first list set (an empty list: none).
    if (const auto stop = first(&st::SamplingSettings::stop))
        for (const QString& text : *stop) plan.request.stop_strings.push_back(text.toStdString());
    return plan;
}

hearth::Result<std::vector<ThreadSnapshot>> read_branch_snapshots(hearth::store::Store& s,
                                                                  std::int64_t conversation) {
    auto base = read_thread_snapshot(s, conversation);
    if (!base) return base.error();
    auto all = s.all_messages(conversation);
    if (!all) return all.error();
    std::unordered_map<st::Id, const st::Message*> by_id;
    std::unordered_set<st::Id> parents;
    for (const st::Message& m : *all) {
        by_id[m.id] = &m;
        if (m.parent_id) parents.insert(*m.parent_id);
    }
    std::vector<ThreadSnapshot> out;
    for (const st::Message& leaf : *all) {
        if (parents.contains(leaf.id)) continue;
        ThreadSnapshot snap = *base;
        snap.thread.clear();
        for (const st::Message* m = &leaf; m;) {
            snap.thread.insert(snap.thread.begin(), st::ThreadEntry{*m, 0, 1});
            const auto up = m->parent_id ? by_id.find(*m->parent_id) : by_id.end();
            m = up == by_id.end() ? nullptr : up->second;
        }
        out.push_back(std::move(snap));
    }
    return out;
}

hearth::Result<ThreadSnapshot> read_thread_snapshot(hearth::store::Store& s,
                                                    std::int64_t conversation) {
    auto c = s.conversation(conversation);
    if (!c) return c.error();
    ThreadSnapshot snap;
    snap.conversation = *c;
    if (c->persona_id) {
        if (auto p = s.persona(*c->persona_id)) snap.persona = *p;  // may be deleted
    }
    auto thread = s.active_thread(conversation);
    if (!thread) return thread.error();
    snap.thread = std::move(*thread);
    auto documents = s.conversation_documents(conversation);
    if (!documents) return documents.error();
    snap.documents = std::move(*documents);
    if (c->forked_from) {
        if (auto m = s.message(*c->forked_from)) {
            if (auto origin = s.conversation(m->conversation_id))
                snap.fork_origin = ThreadSnapshot::ForkOrigin{origin->id, m->id, origin->title};
        }
    }
    return snap;
}
