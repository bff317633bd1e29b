#include "chat/context_shift.h"

#include <algorithm>

namespace hearth::chat {

namespace {

const SegmentSpan* message_span(const Prompt& p, std::size_t index) {
    for (const SegmentSpan& s : p.segments)
        if (s.kind == SegmentKind::Message && s.message == static_cast<int64_t>(index)) return &s;
    return nullptr;
}

int32_t to_i32(std::size_t n) {
    return static_cast<int32_t>(n);
}

// The step's move from `source` into `prompt` (see context_shift.h).
kv::KvShift move_of(const Prompt& source, const kv::Lineage& source_lineage, const Prompt& prompt,
                    const WindowStep& step) {
    kv::KvShift shift;
    shift.source = source.ids;
    shift.source_lineage = source_lineage;
    const std::size_t persona = std::min(prompt.persona_prefix, source.persona_prefix);
    const auto add = [&shift](const kv::ShiftRange& r) {
        if (r.count <= 0) return;
        if (!shift.ranges.empty()) {
            kv::ShiftRange& last = shift.ranges.back();
            if (last.src + last.count == r.src && last.dst + last.count == r.dst) {
                last.count += r.count;
                return;
            }
        }
        shift.ranges.push_back(r);
    };
    add({0, 0, to_i32(persona)});
    std::size_t at = persona;  // the next position of the prompt to fill
    for (std::size_t i = step.to; i < step.turn; ++i) {
        const SegmentSpan* d = message_span(prompt, i);
        const SegmentSpan* s = message_span(source, i);
        if (!d || !s || d->begin != at) break;
        const auto dst = std::span(prompt.ids).subspan(d->begin, d->size);
        const auto src = std::span(source.ids).subspan(s->begin, s->size);
        if (i == step.to) {
            // The first kept message is written after the persona now: with less glue
            // (Gemma, Llama 2), or other glue (Gemma's "\n\n" that continues the persona's
            // open user turn). Its content and what follows are the same: the common end is
            // moved, and glue the source lacks is a gap the scheduler computes first.
            std::size_t common = 0;
            while (common < dst.size() && common < src.size() &&
                   dst[dst.size() - 1 - common] == src[src.size() - 1 - common])
                ++common;
            if (common == 0) break;
            add({to_i32(s->begin + s->size - common), to_i32(d->begin + d->size - common),
                 to_i32(common)});
        } else {
            if (!std::ranges::equal(dst, src)) break;
            add({to_i32(s->begin), to_i32(d->begin), to_i32(d->size)});
        }
        at += d->size;
    }
    return shift;
}

}  // namespace

Result<ShiftPlan> plan_shift(const PromptBuilder& builder, std::span<const Message> messages,
                             const WindowPlan& window, const Prompt& prompt) {
    ShiftPlan out;
    const auto persona = to_i32(prompt.persona_prefix);
    for (std::size_t j = 0; j < window.steps.size(); ++j) {
        const WindowStep& step = window.steps[j];
        // The conversation's tokens before the step's turn: the window then, up to the reply
        // before the turn, closed.
        auto source = builder.build_from(messages.first(step.turn), step.from, PromptEnd::None);
        if (!source) return source.error();
        std::size_t keep_from = source->ids.size();
        if (const SegmentSpan* kept = message_span(*source, step.to)) keep_from = kept->begin;
        const kv::Lineage next{
            persona, kv::shift_salt(out.lineage, persona, std::span(source->ids).first(keep_from))};
        if (j + 1 == window.steps.size() && window.dropped_now)
            out.shift = move_of(*source, out.lineage, prompt, step);
        out.lineage = next;
    }
    return out;
}

}  // namespace hearth::chat
