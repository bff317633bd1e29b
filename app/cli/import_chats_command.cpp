// hearth-cli import-chats: the chats GPT4All, Jan and LM Studio saved on this computer (or
// in the files and folders given), imported into Hearth's history once each, with a report
// of what was found, imported, already there or skipped and why (imports/chat_import.h).
//
//   hearth-cli import-chats [--from gpt4all|jan|lmstudio|all] [--dry-run] [--db PATH]
//                           [--verbose] [PATH...]
//
// The history is the app's (<data dir>/hearth.sqlite3, as `hearth-cli history` reads) unless
// --db names another. --dry-run only reads: the history is opened read-only, when it exists,
// to tell what is already imported. Exit status: 0 done (skipped chats are in the report),
// 1 the history could not be opened or written, 2 wrong usage.
#include <iostream>

#include <QFileInfo>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "imports/chat_import.h"
#include "store/store.h"

namespace hearth::cli {
namespace {

constexpr const char* kUsage =
    "usage: hearth-cli import-chats [--from gpt4all|jan|lmstudio|all] [--dry-run] [--db PATH]\n"
    "                               [--verbose] [PATH...]\n"
    "Imports the chats GPT4All, Jan and LM Studio saved on this computer (or in the PATHs:\n"
    "GPT4All .chat files or folders, Jan data, threads or thread folders, LM Studio homes,\n"
    "conversations folders or .conversation.json files) into Hearth's history. A chat\n"
    "imported before is not imported again.\n";

std::vector<OptionSpec> specs() {
    return {{"from", true, "gpt4all, jan, lmstudio or all (default all)"},
            {"dry-run", false, "read and report, write nothing"},
            {"db", true, "the history database (default <data dir>/hearth.sqlite3)"},
            {"verbose", false, "list every chat, not only those skipped or partly imported"},
            {"help", false, "show this help"}};
}

void list_all(const imports::ImportReport& report, std::ostream& out) {
    for (const imports::SourceReport& s : report.sources)
        for (const imports::ChatOutcome& c : s.chats) {
            const char* what = c.outcome == imports::Outcome::Imported
                                   ? (report.dry_run ? "to import" : "imported")
                               : c.outcome == imports::Outcome::AlreadyImported ? "already imported"
                                                                                : "skipped";
            out << "  " << imports::source_label(s.source).toStdString() << " " << what << " "
                << c.file.toStdString();
            if (!c.title.isEmpty()) out << " \"" << c.title.toStdString() << "\"";
            if (c.conversation_id) out << " (conversation " << c.conversation_id << ")";
            out << "\n";
        }
}

}  // namespace

int run_import_chats(const CommandArgs& raw, std::ostream& out, std::ostream& err) {
    const std::vector<OptionSpec> options = specs();
    auto args = Args::parse(raw, options);
    if (!args) {
        err << "hearth-cli import-chats: " << args.message() << "\n" << kUsage;
        return 2;
    }
    if (args->flag("help")) {
        out << kUsage << usage_of(options);
        return 0;
    }
    imports::ImportOptions o;
    const std::string from = args->value("from").value_or("all");
    if (from != "all") {
        const auto source = imports::source_from_id(QString::fromStdString(from));
        if (!source) {
            err << "hearth-cli import-chats: --from must be gpt4all, jan, lmstudio or all, not \""
                << from << "\"\n";
            return 2;
        }
        o.sources = {*source};
    }
    o.dry_run = args->flag("dry-run");
    for (const std::string& p : args->positionals()) o.paths << QString::fromStdString(p);
    o.context = models::this_computer({}, {});

    const QString path = args->value("db") ? QString::fromStdString(*args->value("db"))
                                           : store::Store::default_path();
    store::OpenOptions open;
    // Never set the user's history aside from the command line: report instead.
    open.on_corrupt = store::OpenOptions::OnCorrupt::Fail;
    open.read_only = o.dry_run;
    std::optional<store::Store> db;
    if (!o.dry_run || QFileInfo::exists(path)) {
        auto opened = store::Store::open(path, open);
        if (!opened) {
            err << "hearth-cli import-chats: " << opened.message() << "\n";
            return 1;
        }
        db.emplace(std::move(*opened));
    }
    const imports::ImportReport report = imports::import_chats(db ? &*db : nullptr, o);
    out << report.text().toStdString();
    if (args->flag("verbose")) list_all(report, out);
    return report.errors.isEmpty() ? 0 : 1;
}

int run_import_chats(const CommandArgs& args) {
    return run_import_chats(args, std::cout, std::cerr);
}

}  // namespace hearth::cli
