#include "cli/bench_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "cli/cli_args.h"
#include "engine.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {

TokenSource::TokenSource(const Engine& engine, uint64_t seed) : rng_(seed) {
    const Tokenizer& t = engine.tokenizer();
    for (int32_t id = 0; id < t.vocab_size(); ++id)
        if (t.token_attr(id) == TokenAttr::Normal) ordinary_.push_back(id);
}

std::vector<int32_t> TokenSource::take(int n) {
    std::uniform_int_distribution<std::size_t> pick(0, ordinary_.size() - 1);
    std::vector<int32_t> out(static_cast<std::size_t>(n));
    for (auto& t : out) t = ordinary_[pick(rng_)];
    return out;
}

std::string Table::render() const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_)
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], row[i].size());
        }
    std::ostringstream out;
    const auto line = [&](const std::vector<std::string>& row) {
        out << '|';
        for (std::size_t i = 0; i < width.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            out << ' ' << cell << std::string(width[i] - cell.size(), ' ') << " |";
        }
        out << '\n';
    };
    line(rows_.front());
    out << '|';
    for (std::size_t w : width) out << std::string(w + 2, '-') << '|';
    out << '\n';
    for (std::size_t r = 1; r < rows_.size(); ++r) line(rows_[r]);
    return out.str();
}

std::string fmt(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

Result<void> write_json(const std::string& path, const QJsonObject& json) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(QJsonDocument(json).toJson(QJsonDocument::Compact)) < 0)
        return make_error("cannot write " + path);
    return {};
}

Result<std::vector<double>> parse_numbers(const std::string& csv) {
    std::vector<double> out;
    std::stringstream ss(csv);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            std::size_t used = 0;
            const double v = std::stod(item, &used);
            if (used != item.size() || !(v > 0)) throw std::invalid_argument(item);
            out.push_back(v);
        } catch (const std::exception&) {
            return make_error("expected positive numbers separated by commas, got '" + csv + "'");
        }
    }
    if (out.empty()) return make_error("expected at least one number");
    return out;
}

Result<std::vector<PeerTtft>> PeerTtft::load(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return make_error("cannot read " + path.toStdString());
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    QJsonArray list = root.value("peers").toArray();
    if (!root.contains("peers")) list.append(root);
    std::vector<PeerTtft> peers;
    for (const auto& entry : list) {
        const QJsonObject o = entry.toObject();
        PeerTtft p;
        p.label = o.value("label").toString("peer").toStdString();
        p.resident = o.value("resident").toBool(false);
        for (const auto& v : o.value("ttft_ms").toArray()) p.ttft_ms.push_back(v.toDouble());
        if (p.ttft_ms.empty())
            return make_error(path.toStdString() + ": a peer without a ttft_ms array");
        peers.push_back(std::move(p));
    }
    if (peers.empty()) return make_error(path.toStdString() + ": no peers");
    return peers;
}

Result<std::vector<PeerTtft>> PeerTtft::from_args(const Args& args) {
    const auto path = args.value("peer");
    if (!path) return std::vector<PeerTtft>{};
    return load(QString::fromStdString(*path));
}

double mean(const std::vector<double>& v) {
    return v.empty() ? 0.0
                     : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

QJsonObject workload_json(const std::vector<int32_t>& persona,
                          const std::vector<std::vector<int32_t>>& histories,
                          const std::vector<std::vector<std::vector<int32_t>>>& rounds,
                          int reply_tokens) {
    const auto arr = [](const std::vector<int32_t>& v) {
        QJsonArray a;
        for (int32_t x : v) a.append(x);
        return a;
    };
    QJsonArray hs, ms;
    for (const auto& h : histories) hs.append(arr(h));
    for (const auto& round : rounds) {
        QJsonArray r;
        for (const auto& m : round) r.append(arr(m));
        ms.append(r);
    }
    return {{"persona", arr(persona)},
            {"histories", hs},
            {"messages", ms},
            {"reply_tokens", reply_tokens}};
}

sched::Request request(kv::SeqId conversation, std::vector<int32_t> prompt, int32_t max_tokens,
                       bool park) {
    sched::Request r;
    r.conversation = conversation;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.stop_at_end_of_generation = false;  // fixed output lengths
    r.park_at_end = park;
    return r;
}

}  // namespace hearth::cli
