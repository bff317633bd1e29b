// The context shift's side of a chat turn (kv/lineage.h): the lineage a chat's KV is keyed
// in after the steps its window took (context_window.h) under the shift policy, and, on
// the turn of a step, where the kept history's KV is and where it goes.
//
// Each step j moved the kept history of the turn before it (the conversation's tokens then,
// `source`: the window before the step, up to the reply before the step's turn) into the
// new prompt: its lineage salt chains the lineage before it, the persona's end (where the
// kept history now starts) and every token the step dropped. So the lineage is a function
// of the history and the window, known to any caller without stored state.
//
// The move covers each kept message whose tokens are the same in the source and the new
// prompt, from the persona's end on. The first kept message may be written with other glue
// after the system message (Gemma, Llama 2): the end it shares with its source segment is
// moved, and glue the source lacks (Gemma's "\n\n") is the move's one gap, which the
// scheduler computes before the rows after it count. A message written differently (a
// reply whose reasoning the template leaves out of later turns) ends the move: the rest
// is computed.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "chat/context_window.h"
#include "chat/prompt_builder.h"
#include "common/result.h"
#include "kv/lineage.h"

namespace hearth::chat {

struct ShiftPlan {
    kv::Lineage lineage;               // the planned prompt's KV chain
    std::optional<kv::KvShift> shift;  // the planned prompt's own step's move
};

// `prompt`: the planned prompt (built by `builder` from messages with window.first_kept and
// `end`). With no steps, the plain chain and no move.
Result<ShiftPlan> plan_shift(const PromptBuilder& builder, std::span<const Message> messages,
                             const WindowPlan& window, const Prompt& prompt);

}  // namespace hearth::chat
