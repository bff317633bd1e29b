#include "core/conversation_list_model.h"

#include <QUrl>

#include <algorithm>
#include <map>

#include "common/log.h"
#include "core/error_text.h"

using namespace hearth;
namespace st = hearth::store;

namespace {

const QString kNewChatTitle = QStringLiteral("New chat");

// A file dialog's URL, or a path as it is.
QString local_path(const QString& file) {
    const QUrl url(file);
    return url.isLocalFile() ? url.toLocalFile() : file;
}

}  // namespace

ConversationListModel::ConversationListModel(QObject* parent) : RowListModel(parent) {
    undo_timer_.setSingleShot(true);
    connect(&undo_timer_, &QTimer::timeout, this, &ConversationListModel::commitDelete);
    reload_timer_.setSingleShot(true);
    reload_timer_.setInterval(0);
    connect(&reload_timer_, &QTimer::timeout, this, &ConversationListModel::reload);
}

ConversationListModel::~ConversationListModel() {
    commitDelete();
}

QObject* ConversationListModel::storeObject() const {
    return store_;
}
void ConversationListModel::setStoreObject(QObject* store) {
    setStore(qobject_cast<st::AsyncStore*>(store));
}

void ConversationListModel::setStore(st::AsyncStore* store) {
    if (store == store_) return;
    commitDelete();
    if (store_) store_->disconnect(this);
    store_ = store;
    if (store_) {
        connect(store_, &st::AsyncStore::conversationsChanged, &reload_timer_,
                qOverload<>(&QTimer::start));
    }
    emit storeChanged();
    reload();
}

void ConversationListModel::setShowArchived(bool show) {
    if (show == show_archived_) return;
    show_archived_ = show;
    emit showArchivedChanged();
    reload();
}

void ConversationListModel::setHoldOrder(bool hold) {
    if (hold == hold_order_) return;
    hold_order_ = hold;
    held_activity_.clear();
    if (hold)
        for (const Row& r : rows_)
            if (!r.hit) held_activity_[r.conversation.id] = r.conversation.updated_at;
    emit holdOrderChanged();
    if (!hold) reload();  // the order by last activity again
}

void ConversationListModel::setUndoTimeoutMs(int ms) {
    ms = std::max(0, ms);
    if (ms == undo_timeout_ms_) return;
    undo_timeout_ms_ = ms;
    emit undoChanged();
}

void ConversationListModel::set_error(const QString& error) {
    if (!error.isEmpty()) log::get("app")->warn("conversations: {}", error.toStdString());
    if (error == error_) return;
    error_ = error;
    emit errorStringChanged();
}

void ConversationListModel::search(const QString& text) {
    if (text == search_text_) return;
    search_text_ = text;
    emit searchTextChanged();
    reload();
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{ConversationIdRole, "conversationId"},
            {TitleRole, "title"},
            {PersonaIdRole, "personaId"},
            {PinnedRole, "pinned"},
            {ArchivedRole, "archived"},
            {CreatedAtRole, "createdAt"},
            {UpdatedAtRole, "updatedAt"},
            {IsSearchHitRole, "isSearchHit"},
            {MessageIdRole, "messageId"},
            {SnippetRole, "snippet"},
            {HighlightsRole, "highlights"},
            {SnippetHtmlRole, "snippetHtml"},
            {MessageRoleRole, "messageRole"},
            {ForkedRole, "forked"}};
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const st::Conversation& c = r.conversation;
    switch (role) {
        case ConversationIdRole:
            return QVariant::fromValue<qint64>(c.id);
        case Qt::DisplayRole:
        case TitleRole:
            return c.title;
        case PersonaIdRole:
            return QVariant::fromValue<qint64>(c.persona_id.value_or(-1));
        case PinnedRole:
            return c.pinned;
        case ArchivedRole:
            return c.archived;
        case CreatedAtRole:
            return c.created_at;
        case UpdatedAtRole:
            return c.updated_at;
        case IsSearchHitRole:
            return r.hit;
        case ForkedRole:
            return c.forked_from.has_value();
        case MessageIdRole:
            return QVariant::fromValue<qint64>(r.message_id);
        case SnippetRole:
            return r.snippet;
        case HighlightsRole: {
            QVariantList list;
            for (const auto& [start, length] : r.highlights)
                list.push_back(QVariantMap{{QStringLiteral("start"), start},
                                           {QStringLiteral("length"), length}});
            return list;
        }
        case SnippetHtmlRole: {
            QString html;
            int at = 0;
            for (const auto& [start, length] : r.highlights) {
                if (start < at || start + length > r.snippet.size()) continue;
                html += r.snippet.mid(at, start - at).toHtmlEscaped();
                html += QStringLiteral("<b>") + r.snippet.mid(start, length).toHtmlEscaped() +
                        QStringLiteral("</b>");
                at = start + length;
            }
            html += r.snippet.mid(at).toHtmlEscaped();
            return html;
        }
        case MessageRoleRole:
            return r.hit ? st::role_name(r.message_role) : QString();
        default:
            return {};
    }
}

int ConversationListModel::rowOf(qint64 conversationId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].conversation.id == conversationId) return static_cast<int>(i);
    return -1;
}

const st::Conversation* ConversationListModel::find(qint64 id) const {
    for (const Row& r : rows_)
        if (r.conversation.id == id && !r.hit) return &r.conversation;
    return nullptr;
}

QVariantMap ConversationListModel::get(int row) const {
    QVariantMap map;
    if (row < 0 || row >= count()) return map;
    const auto names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        map.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
    return map;
}

void ConversationListModel::reload() {
    reload_timer_.stop();
    if (!store_ || !store_->isOpen()) return;  // conversationsChanged() follows the open
    const int serial = ++reload_serial_;
    QPointer<ConversationListModel> self(this);
    const QString query = search_text_.trimmed();
    if (!query.isEmpty()) {
        st::SearchOptions options;
        options.include_archived = true;
        // The hits, each with its conversation's persona (its badge in the list).
        using Hits = std::vector<std::pair<st::SearchHit, std::optional<st::Id>>>;
        store_->run<Hits>(
            [query, options](st::Store& s) -> Result<Hits> {
                auto hits = s.search(query, options);
                if (!hits) return hits.error();
                std::map<st::Id, std::optional<st::Id>> persona_of;
                Hits out;
                for (st::SearchHit& h : *hits) {
                    auto known = persona_of.find(h.conversation_id);
                    if (known == persona_of.end()) {
                        auto c = s.conversation(h.conversation_id);
                        known =
                            persona_of.emplace(h.conversation_id, c ? c->persona_id : std::nullopt)
                                .first;
                    }
                    out.emplace_back(std::move(h), known->second);
                }
                return out;
            },
            [self, serial](Result<Hits> r) {
                if (!self || serial != self->reload_serial_) return;
                if (!r) return self->set_error(error_text(r.error()));
                // Grouped by conversation (the list shows each chat once, its matching
                // messages under it): chats in the order of their best hit, hits in rank
                // order within each.
                std::map<st::Id, size_t> group_of;
                for (auto& [h, persona] : *r)
                    group_of.try_emplace(h.conversation_id, group_of.size());
                std::stable_sort(r->begin(), r->end(), [&](const auto& a, const auto& b) {
                    return group_of[a.first.conversation_id] < group_of[b.first.conversation_id];
                });
                std::vector<Row> rows;
                for (auto& [h, persona] : *r) {
                    if (self->pending_ && h.conversation_id == self->pending_->id) continue;
                    Row row;
                    row.hit = true;
                    row.conversation.id = h.conversation_id;
                    row.conversation.title = h.conversation_title;
                    row.conversation.persona_id = persona;
                    row.conversation.updated_at = h.created_at;
                    row.message_id = h.message_id;
                    row.message_role = h.role;
                    row.snippet = std::move(h.snippet);
                    row.highlights = std::move(h.highlights);
                    rows.push_back(std::move(row));
                }
                self->apply(std::move(rows));
            });
        return;
    }
    st::ConversationFilter filter;
    filter.archived = show_archived_ ? st::ConversationFilter::Archived::Only
                                     : st::ConversationFilter::Archived::Exclude;
    store_->conversations(filter, [self, serial](Result<std::vector<st::Conversation>> r) {
        if (!self || serial != self->reload_serial_) return;
        if (!r) return self->set_error(error_text(r.error()));
        std::vector<Row> rows;
        for (st::Conversation& c : *r) {
            if (self->pending_ && c.id == self->pending_->id) continue;
            Row row;
            row.conversation = std::move(c);
            rows.push_back(std::move(row));
        }
        self->apply(std::move(rows));
    });
}

void ConversationListModel::apply(std::vector<Row> rows) {
    if (hold_order_ && !searching()) {
        // The store's order (pinned first, newest first), with each known row at the
        // activity it had when the hold began; new rows by their own.
        const auto activity = [this](const Row& r) {
            auto it = held_activity_.find(r.conversation.id);
            return it != held_activity_.end() ? it->second : r.conversation.updated_at;
        };
        std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
            if (a.conversation.pinned != b.conversation.pinned) return a.conversation.pinned;
            return activity(a) > activity(b);
        });
    }
    const bool count_changed = merge_rows(
        rows_, std::move(rows),
        [](const Row& a, const Row& b) {
            return a.hit == b.hit &&
                   (a.hit ? a.message_id == b.message_id : a.conversation.id == b.conversation.id);
        },
        [](const Row& a, const Row& b) {
            return a.conversation.title == b.conversation.title &&
                   a.conversation.pinned == b.conversation.pinned &&
                   a.conversation.archived == b.conversation.archived &&
                   a.conversation.updated_at == b.conversation.updated_at &&
                   a.conversation.persona_id == b.conversation.persona_id &&
                   a.snippet == b.snippet && a.highlights == b.highlights;
        });
    if (count_changed) emit countChanged();
    emit loaded();
}

void ConversationListModel::createConversation(qint64 personaId, const QString& title) {
    if (!store_) return;
    st::Conversation draft;
    const bool untitled = title.trimmed().isEmpty();
    draft.title = untitled ? kNewChatTitle : title.trimmed();
    if (personaId >= 0) draft.persona_id = personaId;
    QPointer<ConversationListModel> self(this);
    QPointer<st::AsyncStore> store = store_;
    store_->run<st::Conversation>(
        [draft, untitled](st::Store& s) -> Result<st::Conversation> {
            // An untitled chat with this persona that has no message yet is opened again
            // rather than another one made: empty "New chat" rows do not pile up.
            if (untitled) {
                auto list = s.conversations({});
                if (!list) return list.error();
                for (const st::Conversation& c : *list) {
                    if (c.title != draft.title || c.persona_id != draft.persona_id) continue;
                    auto n = s.message_count(c.id);
                    if (!n) return n.error();
                    if (*n == 0) return c;
                }
            }
            return s.create_conversation(draft);
        },
        [self, store](Result<st::Conversation> r) {
            if (!self) return;
            if (!r) return self->set_error(error_text(r.error()));
            self->set_error(QString());
            if (store) emit store->conversationsChanged();  // reloads the list
            emit self->conversationCreated(r->id);
        });
}

void ConversationListModel::change(qint64 id, std::function<Result<void>(st::Store&)> job) {
    if (!store_) return;
    QPointer<ConversationListModel> self(this);
    QPointer<st::AsyncStore> store = store_;
    store_->run<void>(std::move(job), [self, store, id](Result<void> r) {
        if (!self) return;
        if (!r) self->set_error(error_text(r.error()));
        (void)id;
        // Other views (the chat's title) follow the store's signal.
        if (store) emit store->conversationsChanged();
    });
}

void ConversationListModel::rename(qint64 conversationId, const QString& title) {
    const QString t = title.trimmed();
    if (t.isEmpty()) return;
    change(conversationId,
           [conversationId, t](st::Store& s) { return s.rename_conversation(conversationId, t); });
}

void ConversationListModel::setPinned(qint64 conversationId, bool pinned) {
    change(conversationId,
           [conversationId, pinned](st::Store& s) { return s.set_pinned(conversationId, pinned); });
}

void ConversationListModel::setArchived(qint64 conversationId, bool archived) {
    change(conversationId, [conversationId, archived](st::Store& s) {
        return s.set_archived(conversationId, archived);
    });
}

void ConversationListModel::remove(qint64 conversationId) {
    if (!store_) return;
    commitDelete();  // one undo at a time: an earlier delete goes through now
    st::Conversation c;
    if (const st::Conversation* found = find(conversationId)) {
        c = *found;
    } else {
        c.id = conversationId;
        const int row = rowOf(conversationId);
        if (row >= 0) c.title = rows_[static_cast<size_t>(row)].conversation.title;
    }
    pending_ = c;
    // Hide its rows now.
    for (int i = count() - 1; i >= 0; --i) {
        if (rows_[static_cast<size_t>(i)].conversation.id != conversationId) continue;
        beginRemoveRows({}, i, i);
        rows_.erase(rows_.begin() + i);
        endRemoveRows();
        emit countChanged();
    }
    undo_timer_.start(undo_timeout_ms_);
    emit undoChanged();
}

void ConversationListModel::undo() {
    if (!pending_) return;
    undo_timer_.stop();
    pending_.reset();
    emit undoChanged();
    reload();
}

void ConversationListModel::commitDelete() {
    undo_timer_.stop();
    if (!pending_) return;
    const st::Id id = pending_->id;
    pending_.reset();
    emit undoChanged();
    if (!store_) return;
    emit aboutToDelete(id);  // jobs its handlers give the store run before the delete
    QPointer<ConversationListModel> self(this);
    store_->delete_conversation(id, [self, id](Result<void> r) {
        if (!self) return;
        if (!r) {
            self->set_error(error_text(r.error()));
            self->reload();
            return;
        }
        emit self->deleted(id);
    });
}

void ConversationListModel::exportConversation(qint64 conversationId, const QString& format,
                                               const QString& file) {
    if (!store_) return;
    const QString path = local_path(file);
    const st::ExportFormat f = format.compare(QLatin1String("json"), Qt::CaseInsensitive) == 0
                                   ? st::ExportFormat::Json
                                   : st::ExportFormat::Markdown;
    QPointer<ConversationListModel> self(this);
    store_->run<void>(
        [conversationId, f, path](st::Store& s) {
            return s.export_to_file(conversationId, f, path, /*overwrite=*/true);
        },
        [self, path](Result<void> r) {
            if (!self) return;
            if (!r) return self->set_error(error_text(r.error()));
            self->set_error(QString());
            emit self->exported(path);
        });
}

void ConversationListModel::forkConversation(qint64 messageId) {
    if (!store_) return;
    QPointer<ConversationListModel> self(this);
    QPointer<st::AsyncStore> store = store_;
    //: The title of a chat forked from another one ("fork from here"); %1 is its title.
    const QString pattern = tr("%1 (fork)");
    store_->run<st::Conversation>(
        [messageId, pattern](st::Store& s) -> Result<st::Conversation> {
            auto m = s.message(messageId);
            if (!m) return m.error();
            auto c = s.conversation(m->conversation_id);
            if (!c) return c.error();
            return s.fork_conversation(messageId, pattern.arg(c->title).left(500));
        },
        [self, store](Result<st::Conversation> r) {
            if (!self) return;
            if (!r) return self->set_error(error_text(r.error()));
            self->set_error(QString());
            if (store) emit store->conversationsChanged();
            emit self->conversationCreated(r->id);
        });
}

void ConversationListModel::importConversation(const QString& file) {
    if (!store_) return;
    const QString path = local_path(file);
    QPointer<ConversationListModel> self(this);
    QPointer<st::AsyncStore> store = store_;
    store_->run<st::Id>([path](st::Store& s) { return s.import_file(path); },
                        [self, store](Result<st::Id> r) {
                            if (!self) return;
                            if (!r) return self->set_error(error_text(r.error()));
                            self->set_error(QString());
                            if (store) emit store->conversationsChanged();
                            emit self->imported(*r);
                        });
}
