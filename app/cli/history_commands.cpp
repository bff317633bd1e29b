#include "cli/history_commands.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "store/search.h"
#include "store/store.h"

namespace hearth::cli {
namespace {

using store::Id;

constexpr const char* kUsage =
    "usage: hearth-cli history list   [--db PATH] [--json] [--archived | --all] [--limit N]\n"
    "       hearth-cli history show   ID [--db PATH] [--json]\n"
    "       hearth-cli history export ID --format md|json [--out PATH [--force]] [--db PATH]\n"
    "       hearth-cli history search QUERY... [--db PATH] [--json] [--limit N]\n"
    "The chat history is opened read-only (default: <data dir>/hearth.sqlite3).\n";

constexpr int kFailed = 1;
constexpr int kUsageError = 2;

struct Options {
    std::string command;
    std::vector<std::string> words;  // positional arguments after the command
    std::string db;
    std::string format;
    std::string out;
    bool json = false;
    bool force = false;
    bool archived = false;
    bool all = false;
    int limit = -1;
};

std::optional<long long> parse_number(const std::string& text) {
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Returns an error message for wrong usage, or nothing.
std::optional<std::string> parse(const std::vector<std::string>& args, Options& o) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        std::optional<std::string> inline_value;
        if (arg.rfind("--", 0) == 0) {
            if (const auto eq = arg.find('='); eq != std::string::npos) {
                inline_value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
            }
        }
        const auto value = [&](std::string& into) -> std::optional<std::string> {
            if (inline_value) {
                into = *inline_value;
            } else {
                if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
                    return arg + " needs a value";
                into = args[++i];
            }
            return std::nullopt;
        };
        std::optional<std::string> problem;
        if (arg == "--db")
            problem = value(o.db);
        else if (arg == "--format")
            problem = value(o.format);
        else if (arg == "--out")
            problem = value(o.out);
        else if (arg == "--limit") {
            std::string text;
            problem = value(text);
            const auto n = parse_number(text);
            if (!problem && (!n || *n < 0 || *n > 1'000'000))
                problem = "--limit needs a number from 0 to 1000000";
            if (!problem) o.limit = static_cast<int>(*n);
        } else if (arg == "--json")
            o.json = true;
        else if (arg == "--force")
            o.force = true;
        else if (arg == "--archived")
            o.archived = true;
        else if (arg == "--all")
            o.all = true;
        else if (arg == "--help" || arg == "-h")
            o.words.insert(o.words.begin(), "help");
        else if (arg == "--") {
            o.words.insert(o.words.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                           args.end());
            break;
        } else if (arg.size() > 1 && arg[0] == '-' && !parse_number(arg))
            problem = "unknown option " + arg;
        else
            o.words.push_back(args[i]);
        if (problem) return problem;
    }
    // The command is the first word that is not an option, so options may come first.
    if (o.words.empty()) return "missing command";
    o.command = o.words.front();
    o.words.erase(o.words.begin());
    return std::nullopt;
}

std::string utf8(const QString& s) {
    return s.toStdString();
}
std::string when(const QDateTime& t) {
    return utf8(t.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
}
QString iso(const QDateTime& t) {
    return t.toUTC().toString(Qt::ISODateWithMs);
}

void write_json(std::ostream& out, const QJsonValue& value) {
    const QJsonDocument doc =
        value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    out << doc.toJson(QJsonDocument::Indented).toStdString();
}

// Columns padded to their widest cell and two spaces apart, numbers right-aligned; the
// last column (a title) is not padded. Cells other than the last are ASCII, so bytes are
// columns. Scripts read --json instead.
void write_table(std::ostream& out, const std::array<std::string, 5>& header,
                 const std::vector<std::array<std::string, 5>>& rows) {
    constexpr std::array<bool, 5> right = {true, false, false, true, false};
    std::array<std::size_t, 5> width{};
    for (std::size_t i = 0; i < width.size(); ++i) {
        width[i] = header[i].size();
        for (const auto& r : rows) width[i] = std::max(width[i], r[i].size());
    }
    const auto line = [&](const std::array<std::string, 5>& cells) {
        for (std::size_t i = 0; i + 1 < cells.size(); ++i) {
            const std::string pad(width[i] - cells[i].size(), ' ');
            out << (right[i] ? pad + cells[i] : cells[i] + pad) << "  ";
        }
        out << cells.back() << '\n';
    };
    line(header);
    for (const auto& r : rows) line(r);
}

std::optional<Id> parse_id(const Options& o, std::ostream& err) {
    if (o.words.size() != 1) {
        err << "hearth-cli history " << o.command << ": give one conversation id\n" << kUsage;
        return std::nullopt;
    }
    const auto id = parse_number(o.words[0]);
    if (!id || *id <= 0) {
        err << "hearth-cli history " << o.command << ": \"" << o.words[0]
            << "\" is not a conversation id\n"
            << kUsage;
        return std::nullopt;
    }
    return *id;
}

int list(store::Store& db, const Options& o, std::ostream& out, std::ostream& err) {
    store::ConversationFilter filter;
    filter.archived = o.all        ? store::ConversationFilter::Archived::Include
                      : o.archived ? store::ConversationFilter::Archived::Only
                                   : store::ConversationFilter::Archived::Exclude;
    filter.limit = o.limit;
    auto conversations = db.conversations(filter);
    if (!conversations) {
        err << "hearth-cli history list: " << conversations.message() << "\n";
        return kFailed;
    }
    QJsonArray array;
    std::vector<std::array<std::string, 5>> rows;  // for people: a table under a header
    for (const store::Conversation& c : *conversations) {
        auto count = db.message_count(c.id);
        if (!count) {
            err << "hearth-cli history list: " << count.message() << "\n";
            return kFailed;
        }
        if (o.json) {
            QJsonObject j;
            j.insert(QLatin1String("id"), static_cast<qint64>(c.id));
            j.insert(QLatin1String("title"), c.title);
            j.insert(QLatin1String("created_at"), iso(c.created_at));
            j.insert(QLatin1String("updated_at"), iso(c.updated_at));
            j.insert(QLatin1String("pinned"), c.pinned);
            j.insert(QLatin1String("archived"), c.archived);
            j.insert(QLatin1String("messages"), *count);
            array.append(j);
        } else {
            const std::string flags = std::string(c.pinned ? "P" : "-") + (c.archived ? "A" : "-");
            rows.push_back({std::to_string(c.id), when(c.updated_at), flags, std::to_string(*count),
                            utf8(c.title.isEmpty() ? QStringLiteral("(untitled)") : c.title)});
        }
    }
    if (o.json)
        write_json(out, array);
    else
        write_table(out, {"ID", "UPDATED (UTC)", "FLAGS", "MESSAGES", "TITLE"}, rows);
    return 0;
}

int show(store::Store& db, const Options& o, std::ostream& out, std::ostream& err) {
    const auto id = parse_id(o, err);
    if (!id) return kUsageError;
    auto thread = db.active_thread(*id);
    if (!thread) {
        err << "hearth-cli history show: " << thread.message() << "\n";
        return kFailed;
    }
    QJsonArray array;
    for (const store::ThreadEntry& e : *thread) {
        const store::Message& m = e.message;
        if (o.json) {
            QJsonObject j;
            j.insert(QLatin1String("id"), static_cast<qint64>(m.id));
            j.insert(QLatin1String("parent"), m.parent_id
                                                  ? QJsonValue(static_cast<qint64>(*m.parent_id))
                                                  : QJsonValue::Null);
            j.insert(QLatin1String("role"), store::role_name(m.role));
            j.insert(QLatin1String("state"), store::state_name(m.state));
            j.insert(QLatin1String("text"), m.text);
            j.insert(QLatin1String("created_at"), iso(m.created_at));
            j.insert(QLatin1String("variant"), e.variant_index + 1);
            j.insert(QLatin1String("variants"), e.variant_count);
            array.append(j);
        } else {
            out << "[" << m.id << " " << utf8(store::role_name(m.role));
            if (e.variant_count > 1) out << " " << e.variant_index + 1 << "/" << e.variant_count;
            if (m.state != store::MessageState::Complete)
                out << " " << utf8(store::state_name(m.state));
            out << " " << when(m.created_at) << "]\n" << utf8(m.text) << "\n\n";
        }
    }
    if (o.json) write_json(out, array);
    return 0;
}

int export_one(store::Store& db, const Options& o, std::ostream& out, std::ostream& err) {
    const auto id = parse_id(o, err);
    if (!id) return kUsageError;
    store::ExportFormat format;
    if (o.format == "md" || o.format == "markdown")
        format = store::ExportFormat::Markdown;
    else if (o.format == "json")
        format = store::ExportFormat::Json;
    else {
        err << "hearth-cli history export: --format must be md or json\n" << kUsage;
        return kUsageError;
    }
    if (!o.out.empty()) {
        auto rc = db.export_to_file(*id, format, QString::fromStdString(o.out), o.force);
        if (!rc) {
            err << "hearth-cli history export: " << rc.message() << "\n";
            return kFailed;
        }
        return 0;
    }
    auto data = db.export_conversation(*id, format);
    if (!data) {
        err << "hearth-cli history export: " << data.message() << "\n";
        return kFailed;
    }
    out.write(data->constData(), data->size());
    return 0;
}

int search(store::Store& db, const Options& o, std::ostream& out, std::ostream& err) {
    if (o.words.empty()) {
        err << "hearth-cli history search: give something to search for\n" << kUsage;
        return kUsageError;
    }
    std::string query;
    for (const std::string& w : o.words) query += (query.empty() ? "" : " ") + w;
    store::SearchOptions options;
    options.limit = o.limit < 0 ? 20 : o.limit;
    auto hits = db.search(QString::fromStdString(query), options);
    if (!hits) {
        err << "hearth-cli history search: " << hits.message() << "\n";
        return kFailed;
    }
    QJsonArray array;
    for (const store::SearchHit& h : *hits) {
        if (o.json) {
            QJsonObject j;
            j.insert(QLatin1String("conversation"), static_cast<qint64>(h.conversation_id));
            j.insert(QLatin1String("message"), static_cast<qint64>(h.message_id));
            j.insert(QLatin1String("title"), h.conversation_title);
            j.insert(QLatin1String("role"), store::role_name(h.role));
            j.insert(QLatin1String("created_at"), iso(h.created_at));
            j.insert(QLatin1String("snippet"), h.snippet);
            QJsonArray ranges;
            for (const auto& [start, length] : h.highlights)
                ranges.append(QJsonArray{start, length});
            j.insert(QLatin1String("highlights"), ranges);
            array.append(j);
        } else {
            QString snippet = store::mark_highlights(h.snippet, h.highlights, QStringLiteral("["),
                                                     QStringLiteral("]"));
            snippet.replace(QLatin1Char('\n'), QLatin1Char(' '));
            out << h.conversation_id << '\t' << h.message_id << '\t'
                << utf8(store::role_name(h.role)) << '\t' << utf8(h.conversation_title) << '\t'
                << utf8(snippet) << '\n';
        }
    }
    if (o.json) write_json(out, array);
    return 0;
}

}  // namespace

const char* history_usage() {
    return kUsage;
}

int run_history_command(const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
    Options o;
    if (auto problem = parse(args, o)) {
        err << "hearth-cli history: " << *problem << "\n" << kUsage;
        return kUsageError;
    }
    if (o.command == "help") {
        out << kUsage;
        return 0;
    }
    if (o.command != "list" && o.command != "show" && o.command != "export" &&
        o.command != "search") {
        err << "hearth-cli history: unknown command \"" << o.command << "\"\n" << kUsage;
        return kUsageError;
    }
    if (o.command == "list" && !o.words.empty()) {
        err << "hearth-cli history list: unexpected argument \"" << o.words[0] << "\"\n" << kUsage;
        return kUsageError;
    }
    store::OpenOptions options;
    options.read_only = true;
    options.on_corrupt = store::OpenOptions::OnCorrupt::Fail;
    // The app checks at start-up; a script listing conversations should not pay for it.
    options.integrity_check = store::OpenOptions::IntegrityCheck::Never;
    const QString path = o.db.empty() ? store::Store::default_path() : QString::fromStdString(o.db);
    auto db = store::Store::open(path, std::move(options));
    if (!db) {
        err << "hearth-cli history: " << db.message() << "\n";
        return kFailed;
    }
    if (o.command == "list") return list(*db, o, out, err);
    if (o.command == "show") return show(*db, o, out, err);
    if (o.command == "export") return export_one(*db, o, out, err);
    return search(*db, o, out, err);
}

}  // namespace hearth::cli
