#include "store/schema.h"

#include <string>

#include "common/log.h"

namespace hearth::store {
namespace {

// Hearth has not shipped a release yet; the schema is still built in steps so that the
// ladder and its tests (which migrate real data from every earlier version) exist from the
// first day. A step that has been released must never change: add a new step instead.

// v1: the core records. Times are milliseconds since the epoch (UTC). Messages form a
// tree per conversation: parent_id is the previous message of the thread and siblings
// (same parent) are variants: edits of a user message or regenerated replies.
constexpr const char* kV1 = R"sql(
CREATE TABLE personas (
  id            INTEGER PRIMARY KEY,
  name          TEXT    NOT NULL,
  system_prompt TEXT    NOT NULL DEFAULT '',
  keep_warm     INTEGER NOT NULL DEFAULT 0 CHECK (keep_warm IN (0, 1)),
  color         TEXT    NOT NULL DEFAULT '',
  avatar        TEXT    NOT NULL DEFAULT '',
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE TABLE models (
  id           INTEGER PRIMARY KEY,
  path         TEXT    NOT NULL,
  fingerprint  TEXT    NOT NULL UNIQUE,
  display_name TEXT    NOT NULL DEFAULT '',
  added_at     INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE TABLE conversations (
  id             INTEGER PRIMARY KEY,
  title          TEXT    NOT NULL DEFAULT '',
  persona_id     INTEGER REFERENCES personas(id) ON DELETE SET NULL,
  model_id       INTEGER REFERENCES models(id) ON DELETE SET NULL,
  temperature    REAL,
  top_p          REAL,
  min_p          REAL,
  top_k          INTEGER,
  repeat_penalty REAL,
  seed           INTEGER,
  max_tokens     INTEGER,
  active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX conversations_persona ON conversations (persona_id);
CREATE INDEX conversations_model ON conversations (model_id);
CREATE INDEX conversations_leaf ON conversations (active_leaf_id);
CREATE TABLE messages (
  id                     INTEGER PRIMARY KEY,
  conversation_id        INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id              INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role                   TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content                TEXT    NOT NULL DEFAULT '',
  token_ids              BLOB,
  token_fingerprint      TEXT    NOT NULL DEFAULT '',
  state                  TEXT    NOT NULL DEFAULT 'complete'
                         CHECK (state IN ('complete', 'streaming', 'interrupted', 'failed')),
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  ttft_ms                REAL,
  tokens_per_second      REAL,
  prompt_tokens_cached   INTEGER,
  prompt_tokens_computed INTEGER,
  generated_tokens       INTEGER
);
CREATE INDEX messages_children ON messages (conversation_id, parent_id, id);
CREATE INDEX messages_parent ON messages (parent_id);
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
)sql";

// v2: full-text search over message text. An external-content FTS5 index (the text lives
// once, in messages) kept in step by triggers; 'rebuild' indexes existing messages.
// Prefix indexes for 2 and 3 characters make short prefix queries ("ca*") read one list
// instead of merging thousands; they roughly double the index (see docs/benchmarks.md).
constexpr const char* kV2 = R"sql(
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, content = 'messages', content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
)sql";

// v3: pinned and archived conversations, and the index behind the conversation list.
constexpr const char* kV3 = R"sql(
ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1));
ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1));
CREATE INDEX conversations_list ON conversations (archived, pinned, updated_at);
)sql";

// v4: each message remembers which of its children (variants) was last shown, so paging
// back to a branch restores the user's choices further down it. Backfilled from the
// active leaf of every conversation.
constexpr const char* kV4 = R"sql(
ALTER TABLE messages ADD COLUMN active_child_id INTEGER REFERENCES messages(id) ON DELETE SET NULL;
CREATE INDEX messages_active_child ON messages (active_child_id);
WITH RECURSIVE path (id, parent_id) AS (
  SELECT m.id, m.parent_id FROM conversations c JOIN messages m ON m.id = c.active_leaf_id
  UNION ALL
  SELECT m.id, m.parent_id FROM messages m JOIN path p ON m.id = p.parent_id
)
UPDATE messages SET active_child_id = (SELECT p.id FROM path p WHERE p.parent_id = messages.id)
WHERE id IN (SELECT parent_id FROM path WHERE parent_id IS NOT NULL);
)sql";

// v5: a reply remembers its sampling seed (the 64 bits of the engine's unsigned seed, as a
// signed INTEGER) and why it ended; conversations gain the frequency and presence
// penalties; personas get sampling settings of their own (NULL: the app's default), in
// the same columns as conversations.
constexpr const char* kV5 = R"sql(
ALTER TABLE messages ADD COLUMN seed INTEGER;
ALTER TABLE messages ADD COLUMN finish_reason TEXT
  CHECK (finish_reason IN ('stop', 'length', 'cancelled', 'error'));
ALTER TABLE conversations ADD COLUMN frequency_penalty REAL;
ALTER TABLE conversations ADD COLUMN presence_penalty REAL;
ALTER TABLE personas ADD COLUMN temperature REAL;
ALTER TABLE personas ADD COLUMN top_p REAL;
ALTER TABLE personas ADD COLUMN min_p REAL;
ALTER TABLE personas ADD COLUMN top_k INTEGER;
ALTER TABLE personas ADD COLUMN repeat_penalty REAL;
ALTER TABLE personas ADD COLUMN frequency_penalty REAL;
ALTER TABLE personas ADD COLUMN presence_penalty REAL;
ALTER TABLE personas ADD COLUMN seed INTEGER;
ALTER TABLE personas ADD COLUMN max_tokens INTEGER;
)sql";

// v6: reasoning models (Qwen3): conversations and personas turn thinking on or off (NULL:
// on), and a reply remembers how long its reasoning took.
constexpr const char* kV6 = R"sql(
ALTER TABLE conversations ADD COLUMN thinking INTEGER CHECK (thinking IN (0, 1));
ALTER TABLE personas ADD COLUMN thinking INTEGER CHECK (thinking IN (0, 1));
ALTER TABLE messages ADD COLUMN reasoning_ms REAL;
)sql";

// v7: a failed reply keeps the reason it failed, as the chat showed it.
constexpr const char* kV7 = R"sql(
ALTER TABLE messages ADD COLUMN error TEXT;
)sql";

// v8: a long chat's reply says what happened to the context on its turn: how many of the
// oldest messages left the model's view, and how many prompt tokens a context shift moved
// instead of computing.
constexpr const char* kV8 = R"sql(
ALTER TABLE messages ADD COLUMN messages_dropped INTEGER;
ALTER TABLE messages ADD COLUMN prompt_tokens_shifted INTEGER;
)sql";

// v9: stop strings in conversations' and personas' reply settings (a JSON array of
// strings; NULL: the level below's), where a reply's cached prompt came from (the disk
// tier's share of prompt_tokens_cached), and forks: the message a conversation was copied
// up to.
constexpr const char* kV9 = R"sql(
ALTER TABLE conversations ADD COLUMN stop TEXT;
ALTER TABLE personas ADD COLUMN stop TEXT;
ALTER TABLE messages ADD COLUMN prompt_tokens_loaded INTEGER;
ALTER TABLE conversations ADD COLUMN forked_from INTEGER REFERENCES messages(id) ON DELETE SET NULL;
CREATE INDEX conversations_fork ON conversations (forked_from);
)sql";

// v10: documents a persona or a single conversation holds (their text is part of the
// prompt's prefix), in order, with the file they were read from as it was then.
constexpr const char* kV10 = R"sql(
CREATE TABLE documents (
  id              INTEGER PRIMARY KEY,
  persona_id      INTEGER REFERENCES personas(id) ON DELETE CASCADE,
  conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE,
  position        INTEGER NOT NULL,
  name            TEXT    NOT NULL,
  source_path     TEXT    NOT NULL DEFAULT '',
  format          TEXT    NOT NULL,
  language        TEXT    NOT NULL DEFAULT '',
  content         TEXT    NOT NULL,
  file_size       INTEGER,
  file_modified   INTEGER,
  added_at        INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  CHECK ((persona_id IS NULL) <> (conversation_id IS NULL))
);
CREATE INDEX documents_persona ON documents (persona_id, position);
CREATE INDEX documents_conversation ON documents (conversation_id, position);
)sql";

// v11: looking up passages of documents too long to read whole. Each document is cut into
// passages (store/chunking.h) indexed with FTS5 (Porter stemming: "refunds" finds
// "refund"); a document says whether it is looked up, and a user message keeps the
// passages it was given (JSON). Documents from v10 are indexed by Store::open.
constexpr const char* kV11 = R"sql(
ALTER TABLE documents ADD COLUMN lookup INTEGER NOT NULL DEFAULT 0 CHECK (lookup IN (0, 1));
ALTER TABLE messages ADD COLUMN sources TEXT;
CREATE TABLE document_chunks (
  id          INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  heading     TEXT    NOT NULL DEFAULT '',
  start       INTEGER NOT NULL,
  length      INTEGER NOT NULL,
  content     TEXT    NOT NULL
);
CREATE INDEX document_chunks_document ON document_chunks (document_id, position);
CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
  heading, content, content = 'document_chunks', content_rowid = 'id',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (rowid, heading, content) VALUES (new.id, new.heading, new.content);
END;
CREATE TRIGGER document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (document_chunks_fts, rowid, heading, content)
    VALUES ('delete', old.id, old.heading, old.content);
END;
)sql";

// v12: a reply's speculative decoding: draft tokens checked and kept.
constexpr const char* kV12 = R"sql(
ALTER TABLE messages ADD COLUMN draft_tokens INTEGER;
ALTER TABLE messages ADD COLUMN draft_accepted INTEGER;
)sql";

// Runs one step: its SQL and the version bump commit together or not at all.
Result<void> step(Database& db, int to, int target, const char* sql) {
    if (to > target) return {};
    auto tx = Transaction::begin(db);
    if (!tx) return make_error("upgrading the chat history failed: " + tx.message());
    // Another process may have migrated between our read and our write lock.
    auto current = db.user_version();
    if (!current) return make_error("upgrading the chat history failed: " + current.message());
    if (*current >= to) return {};
    if (*current != to - 1)
        return make_error("upgrading the chat history failed: expected schema version " +
                          std::to_string(to - 1) + ", found " + std::to_string(*current));
    if (auto rc = db.exec(sql); !rc)
        return make_error("upgrading the chat history to version " + std::to_string(to) +
                          " failed: " + rc.message());
    if (auto rc = db.set_user_version(to); !rc)
        return make_error("upgrading the chat history failed: " + rc.message());
    if (auto rc = tx->commit(); !rc)
        return make_error("upgrading the chat history failed: " + rc.message());
    hearth::log::get("store")->info("chat history schema upgraded to version {}", to);
    return {};
}

}  // namespace

Error newer_version_error(const QString& path, int version) {
    return make_error(path.toStdString() + " was written by a newer version of Hearth (schema " +
                      std::to_string(version) + "; this version knows up to " +
                      std::to_string(kSchemaVersion) +
                      "). Update Hearth to open it; the file was left untouched.");
}

Result<void> migrate(Database& db, int target) {
    auto version = db.user_version();
    if (!version) return make_error("reading the schema version failed: " + version.message());
    if (*version > kSchemaVersion) return newer_version_error(db.path(), *version);
    if (target > kSchemaVersion || target < *version)
        return make_error("internal error: cannot migrate from version " +
                          std::to_string(*version) + " to " + std::to_string(target));

    // Each case upgrades by one version and falls through to the next.
    switch (*version) {
        case 0:
            if (auto rc = step(db, 1, target, kV1); !rc) return rc;
            [[fallthrough]];
        case 1:
            if (auto rc = step(db, 2, target, kV2); !rc) return rc;
            [[fallthrough]];
        case 2:
            if (auto rc = step(db, 3, target, kV3); !rc) return rc;
            [[fallthrough]];
        case 3:
            if (auto rc = step(db, 4, target, kV4); !rc) return rc;
            [[fallthrough]];
        case 4:
            if (auto rc = step(db, 5, target, kV5); !rc) return rc;
            [[fallthrough]];
        case 5:
            if (auto rc = step(db, 6, target, kV6); !rc) return rc;
            [[fallthrough]];
        case 6:
            if (auto rc = step(db, 7, target, kV7); !rc) return rc;
            [[fallthrough]];
        case 7:
            if (auto rc = step(db, 8, target, kV8); !rc) return rc;
            [[fallthrough]];
        case 8:
            if (auto rc = step(db, 9, target, kV9); !rc) return rc;
            [[fallthrough]];
        case 9:
            if (auto rc = step(db, 10, target, kV10); !rc) return rc;
            [[fallthrough]];
        case 10:
            if (auto rc = step(db, 11, target, kV11); !rc) return rc;
            [[fallthrough]];
        case 11:
            if (auto rc = step(db, 12, target, kV12); !rc) return rc;
            [[fallthrough]];
        case kSchemaVersion:
            break;
        default:
            return make_error("internal error: unknown schema version " + std::to_string(*version));
    }
    return {};
}

}  // namespace hearth::store
