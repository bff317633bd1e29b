// LM Studio's conversations (0.3 and newer): <LM Studio home>/conversations/**/
// <epoch ms>.conversation.json, one JSON file per chat. LM Studio is closed source and calls
// these files internal, so the layout is third-party evidence (docs/research/chat-files.md
// §3.2-3.3: the YorkieDev converter script.js, mikejoseph23/mac-resource-monitor's survey of
// real files, and lmstudio-js ProcessingUpdate.ts for the step and part vocabulary):
//   { name, createdAt (ms), systemPrompt, perChatPredictionConfig.fields[{key, value}]
//     (key "llm.prediction.systemPrompt"), lastUsedModel{identifier, indexedModelIdentifier},
//     messages: [ { versions: [...], currentlySelected } ] }
// A user or system version is {type:"singleStep", role, content:[{type:"text", text} |
// {type:"file", ...}]}; an assistant version {type:"multiStep", senderInfo, steps:[
// {type:"contentBlock", content:[{type:"text", text} | toolCallRequest | toolCallResult],
// style?:{type:"thinking"}, genInfo?:{stats}} | toolStatus | debugInfoBlock | status |
// citationBlock ]}.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>

#include "imports/chat_import.h"

namespace hearth::imports {

// The selected version of each message forms the thread; the other versions (regenerated
// or edited) are kept as branches beside it. `file_name` names the chat when it has no
// "name" and keys it ("lmstudio:<file name>:<createdAt>"); `modified` dates it when it has
// no "createdAt".
Result<ImportedChat> read_lmstudio_conversation(const QByteArray& json, const QString& file_name,
                                                const QDateTime& modified = {});
Result<ImportedChat> read_lmstudio_conversation(const QString& path);

}  // namespace hearth::imports
