// The JSON exchange format for one conversation (export_conversation / import_json):
//
//   { "format": "hearth.conversation", "version": 1, "exported_at": ISO-8601,
//     "conversation": { "title", "created_at", "updated_at", "pinned", "archived",
//                       "sampling": { "temperature", "top_p", "min_p", "top_k",
//                                     "repeat_penalty", "frequency_penalty",
//                                     "presence_penalty", "seed", "max_tokens",
//                                     "thinking": true|false } },
//     "persona": null | { "name", "system_prompt", "keep_warm", "color", "avatar",
//                         "sampling": { as the conversation's } },
//     "model": null | { "fingerprint", "display_name" },
//     "messages": [ { "parent": null | index of an earlier message, "role", "state",
//                     "text", "created_at", "updated_at",
//                     "tokens": { "fingerprint", "ids": [int32...] },        (optional)
//                     "stats": { "ttft_ms", "tokens_per_second", "prompt_tokens_cached",
//                                "prompt_tokens_computed", "generated_tokens",
//                                "seed": "decimal string",
//                                "finish_reason": "stop"|"length"|"cancelled"|"error",
//                                "reasoning_ms", "messages_dropped",
//                                "prompt_tokens_shifted", "prompt_tokens_loaded",
//                                "draft_tokens", "draft_accepted",
//                                "error": "why a failed reply failed" } } ],
//                                                                               (optional)
//     "active_leaf": null | index }
//
// Times are UTC with milliseconds ("2024-05-01T10:00:00.123Z"). Database ids never appear.
// Every field inside "sampling" and "stats" is optional, so the penalties, a persona's
// sampling and a reply's seed and finish reason (added with schema v5), the thinking switch
// a reply's reasoning time (v6) and a failed reply's error (v7) are additions within version 1:
// older exports import as before, and older Hearths skip them.
#pragma once

namespace hearth::store {

inline constexpr const char* kExchangeFormat = "hearth.conversation";
inline constexpr int kExchangeVersion = 1;
inline constexpr int kMaxImportMessages = 100'000;

}  // namespace hearth::store
