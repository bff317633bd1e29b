// Jan's threads: <Jan data folder>/threads/<thread id>/thread.json (the thread: title,
// times, assistants[0] with its instructions and model) and messages.jsonl (one message per
// line). Three generations wrote them (docs/research/chat-files.md §2):
//  - 0.4/early 0.5, Electron (extensions/conversational-extension/src/index.ts saveThread,
//    addNewMessage): "created"/"updated" in milliseconds, status "ready", assistants with
//    assistant_id/assistant_name, legacy image/pdf parts with a file path in annotations;
//  - 0.5 cortex (cortex.cpp engine/common/thread.h Thread::ToJson, message.h
//    Message::ToJson): "created_at" in seconds, status "completed", title and metadata.title;
//  - 0.6 and newer, Tauri (src-tauri/src/core/threads/commands.rs; web-app
//    services/threads/default.ts, lib/completion.ts): UUID thread ids, "created"/"updated" in
//    seconds (fractional), message "created_at" in milliseconds, <think> in the text or
//    "reasoning" parts, tool calls in metadata.tool_calls or "tool_call" parts.
// Times are told apart by size (over 1e12: milliseconds), so one reader takes all three.
#pragma once

#include <QString>

#include "imports/chat_import.h"

namespace hearth::imports {

// Reads the thread in `thread_folder` (its thread.json and messages.jsonl). A malformed file
// or line, or a missing messages.jsonl, is an error: nothing of the thread is imported.
Result<ImportedChat> read_jan_thread(const QString& thread_folder);

}  // namespace hearth::imports
