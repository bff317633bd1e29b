// hearth-cli cache (stats | clear) [--kv-disk-dir DIR] [--json]: what the KV cache's disk
// tier holds (per model key: blocks and bytes), or deleting all of it. Clearing refuses
// while a running Hearth uses the folder; the app clears it from Settings instead.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "common/paths.h"
#include "kv/disk_tier.h"

namespace hearth::cli {
namespace {

const std::vector<OptionSpec> kCacheOptions = {
    {"kv-disk-dir", true, "the disk tier's folder (default: the user's cache folder, Hearth/kv)"},
    {"json", false, "JSON output"},
    {"help", false, "show this help"},
};

// "numerics=cpu AVX2 batch-invariant" → the value of one key.txt line.
std::string field(const std::string& description, const std::string& name) {
    const std::string key = name + "=";
    for (std::size_t at = 0; at < description.size();) {
        const std::size_t end = description.find('\n', at);
        const std::string line =
            description.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (line.rfind(key, 0) == 0) return line.substr(key.size());
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return "?";
}

std::string mib(int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return text;
}

}  // namespace

int run_cache(const CommandArgs& argv) {
    auto args = Args::parse(argv, kCacheOptions);
    if (!args) return fail(2, args.message());
    const auto& pos = args->positionals();
    if (args->flag("help") || pos.size() != 1 || (pos[0] != "stats" && pos[0] != "clear")) {
        std::fprintf(args->flag("help") ? stdout : stderr,
                     "usage: hearth-cli cache (stats | clear) [options]\n%s",
                     usage_of(kCacheOptions).c_str());
        return args->flag("help") ? 0 : 2;
    }
    const std::string dir = args->value("kv-disk-dir").value_or(paths::kv_cache_dir());
    if (pos[0] == "clear") {
        auto removed = kv::clear_disk_tier(dir);
        if (!removed) return fail(1, removed.message());
        if (args->flag("json"))
            std::printf("{\"dir\":\"%s\",\"removed_blocks\":%lld}\n",
                        QJsonValue(QString::fromStdString(dir)).toString().toStdString().c_str(),
                        static_cast<long long>(*removed));
        else
            std::printf("removed %lld KV blocks from %s\n", static_cast<long long>(*removed),
                        dir.c_str());
        return 0;
    }
    auto folders = kv::inspect_disk_tier(dir);
    if (!folders) return fail(1, folders.message());
    int64_t entries = 0, bytes = 0;
    QJsonArray list;
    for (const kv::TierFolder& f : *folders) {
        entries += f.entries;
        bytes += f.bytes;
        list.append(
            QJsonObject{{"id", QString::fromStdString(f.id)},
                        {"model", QString::fromStdString(field(f.description, "model"))},
                        {"numerics", QString::fromStdString(field(f.description, "numerics"))},
                        {"block_size", QString::fromStdString(field(f.description, "block_size"))},
                        {"blocks", static_cast<qint64>(f.entries)},
                        {"bytes", static_cast<qint64>(f.bytes)}});
    }
    if (args->flag("json")) {
        const QJsonObject o{{"dir", QString::fromStdString(dir)},
                            {"blocks", static_cast<qint64>(entries)},
                            {"bytes", static_cast<qint64>(bytes)},
                            {"keys", list}};
        std::fputs(QJsonDocument(o).toJson(QJsonDocument::Compact).append('\n').constData(),
                   stdout);
        return 0;
    }
    std::printf("%s: %lld KV blocks, %s\n", dir.c_str(), static_cast<long long>(entries),
                mib(bytes).c_str());
    for (const kv::TierFolder& f : *folders)
        std::printf("  model %.12s  %-28s block size %-4s %6lld blocks  %s\n",
                    field(f.description, "model").c_str(), field(f.description, "numerics").c_str(),
                    field(f.description, "block_size").c_str(), static_cast<long long>(f.entries),
                    mib(f.bytes).c_str());
    return 0;
}

}  // namespace hearth::cli
