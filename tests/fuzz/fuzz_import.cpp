// libFuzzer target: the chat history's JSON import (a conversation exported by Hearth, or
// a file a person edited) into a real store. Every input is imported or refused with an
// error; a refused import leaves the store as it was (no conversation half written).
#include <QByteArray>
#include <QDir>
#include <QTemporaryDir>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "store/store.h"

namespace {

hearth::store::Store& store() {
    static QTemporaryDir dir;
    static std::optional<hearth::store::Store> s = [] {
        hearth::store::OpenOptions o;
        o.full_sync = false;
        auto opened = hearth::store::Store::open(dir.filePath(QStringLiteral("fuzz.sqlite3")), o);
        if (!opened) std::abort();
        return std::optional<hearth::store::Store>(std::move(opened).value());
    }();
    return *s;
}

// Every conversation, archived ones too.
std::size_t conversation_count(hearth::store::Store& s) {
    hearth::store::ConversationFilter all;
    all.archived = hearth::store::ConversationFilter::Archived::Include;
    auto list = s.conversations(all);
    if (!list) std::abort();
    return list->size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto& s = store();
    const std::size_t before = conversation_count(s);
    const QByteArray json(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    auto imported = s.import_json(json);
    if (imported) {
        // Readable back; then gone again, so that the store stays small.
        if (!s.active_thread(*imported)) std::abort();
        if (!s.delete_conversation(*imported)) std::abort();
    } else if (conversation_count(s) != before) {
        std::abort();  // a refused import must leave nothing behind
    }
    return 0;
}
