#include "cpu/kernel_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

#ifndef HEARTH_BUILD_VERSION
#define HEARTH_BUILD_VERSION "dev"
#endif

namespace hearth::kernels::cpu {

namespace {

namespace fs = std::filesystem;
using quant::TensorType;

constexpr const char* kHeader = "hearth kernel choices 1";
constexpr std::size_t kDecodeSweepBytes = std::size_t{64} << 20;
constexpr int kPrefillTokens = 256;
constexpr double kPrefillMacs = 1e9;
constexpr int kDecodeRounds = 5;
constexpr int kPrefillRounds = 3;
constexpr double kKeepDefaultWithin = 0.01;  // another candidate must win by more

fs::path program_path() {
#if defined(_WIN32)
    wchar_t buf[32768];
    const DWORD n = GetModuleFileNameW(nullptr, buf, 32768);
    return n > 0 && n < 32768 ? fs::path(std::wstring(buf, n)) : fs::path();
#elif defined(__linux__)
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : p;
#else
    return {};
#endif
}

std::string compiler() {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#elif defined(_MSC_VER)
    return "msvc " + std::to_string(_MSC_FULL_VER);
#else
    return "unknown compiler";
#endif
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Deterministic activations in [−1, 1): the kernels' speed does not depend on them.
std::vector<float> activations(std::size_t n) {
    std::vector<float> x(n);
    uint32_t s = 0x9e3779b9u;
    for (float& v : x) {
        s = s * 1664525u + 1013904223u;
        v = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
    }
    return x;
}

// The first `rows` rows of w (a multiple of 16, so that a packed copy's groups stay whole).
WeightView first_rows(const WeightView& w, int64_t rows) {
    WeightView v = w;
    rows = std::max<int64_t>(16, rows / 16 * 16);
    v.rows = std::min(w.rows, rows);
    return v;
}

// Runs `pass(variant index)` `rounds` times per candidate, alternating, after one untimed
// pass of the default.
template <typename Pass>
std::vector<double> time_candidates(std::size_t n, int rounds, Pass&& pass) {
    std::vector<double> best(n, INFINITY);
    pass(0);
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < n; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            pass(i);
            best[i] = std::min(best[i], seconds_since(t0));
        }
    return best;
}

std::string format_micros(const std::vector<std::pair<std::string, double>>& m) {
    std::string s;
    for (const auto& [name, us] : m) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s %.0f us", s.empty() ? "" : ", ", name.c_str(), us);
        s += buf;
    }
    return s;
}

}  // namespace

std::string build_identity() {
    std::string id = std::string("hearth ") + HEARTH_BUILD_VERSION + ", " + compiler();
    const fs::path exe = program_path();
    std::error_code ec;
    if (!exe.empty()) {
        const auto size = fs::file_size(exe, ec);
        if (!ec) {
            const auto time = fs::last_write_time(exe, ec);
            if (!ec)
                id += ", program " + std::to_string(size) + " bytes, modified " +
                      std::to_string(time.time_since_epoch().count());
        }
    }
    return id;
}

std::string kernel_choice_key(int n_threads) {
    std::string key =
        cpu_identity() + " | " + build_identity() + " | threads " + std::to_string(n_threads);
    std::replace(key.begin(), key.end(), '\n', ' ');
    return key;
}

KernelChoiceFile read_kernel_choices(const std::string& path, std::string* problem) {
    const auto fail = [&](const std::string& why) {
        if (problem) *problem = why;
        return KernelChoiceFile{};
    };
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail("no file");
    std::string line;
    if (!std::getline(in, line) || line != kHeader) return fail("not a kernel choice file");
    if (!std::getline(in, line) || line.rfind("key ", 0) != 0) return fail("no key line");
    KernelChoiceFile f;
    f.key = line.substr(4);
    int n = 2;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty()) continue;
        std::istringstream ls(line);
        std::string type_name, class_name;
        KernelChoiceEntry e;
        if (!(ls >> type_name >> class_name >> e.chosen))
            return fail("line " + std::to_string(n) + " does not parse");
        const auto type = quant::type_from_name(type_name);
        if (!type) return fail("line " + std::to_string(n) + ": no weight type " + type_name);
        e.type = *type;
        if (class_name == "decode") {
            e.cls = ShapeClass::Decode;
        } else if (class_name == "prefill") {
            e.cls = ShapeClass::Prefill;
        } else {
            return fail("line " + std::to_string(n) + ": no shape class " + class_name);
        }
        std::string name;
        double us = 0;
        while (ls >> name >> us) {
            if (!std::isfinite(us) || us < 0) return fail("line " + std::to_string(n) + ": time");
            e.micros.emplace_back(name, us);
        }
        if (!ls.eof()) return fail("line " + std::to_string(n) + " does not parse");
        f.entries.push_back(std::move(e));
    }
    return f;
}

bool write_kernel_choices(const std::string& path, const KernelChoiceFile& file) {
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const fs::path tmp = fs::path(path + ".tmp");
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return false;
        out << kHeader << "\n"
            << "key " << file.key << "\n";
        for (const KernelChoiceEntry& e : file.entries) {
            out << quant::type_name(static_cast<uint32_t>(e.type)) << ' ' << shape_class_name(e.cls)
                << ' ' << e.chosen;
            for (const auto& [name, us] : e.micros) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%.1f", us);
                out << ' ' << name << ' ' << buf;
            }
            out << "\n";
        }
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            return false;
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) fs::remove(tmp, ec);
    return !ec;
}

TuneSummary tune_kernels(ThreadPool& pool, AlignedBuffer& scratch, KernelPlan& plan,
                         const std::vector<WeightView>& weights, const std::string& path) {
    TuneSummary summary;
    const std::string key = kernel_choice_key(pool.size());
    KernelChoiceFile file;
    if (!path.empty()) {
        file = read_kernel_choices(path);
        if (file.key != key) file = KernelChoiceFile{};  // another machine or build
    }
    // Every entry must name candidates this build has; otherwise measure everything anew.
    for (const KernelChoiceEntry& e : file.entries) {
        const auto v = kernel_variants(e.type, e.cls, plan.level());
        if (std::none_of(v.begin(), v.end(),
                         [&](const KernelVariant& k) { return k.name == e.chosen; })) {
            file = KernelChoiceFile{};
            break;
        }
    }
    file.key = key;

    // The weights of each type, in model order.
    std::map<TensorType, std::vector<const WeightView*>> by_type;
    for (const WeightView& w : weights) by_type[w.type].push_back(&w);

    std::vector<float> x, out;
    bool changed = false;
    for (const auto& [type, views] : by_type) {
        for (ShapeClass cls : {ShapeClass::Decode, ShapeClass::Prefill}) {
            const std::vector<KernelVariant> cands = kernel_variants(type, cls, plan.level());
            if (cands.size() < 2) continue;
            const std::string what = std::string(quant::type_name(static_cast<uint32_t>(type))) +
                                     " " + std::string(shape_class_name(cls));
            if (plan.forced(type, cls)) {
                ++summary.forced;
                summary.report += what + ": " + plan.get(type, cls).name + " (forced)\n";
                continue;
            }
            const auto known = std::find_if(
                file.entries.begin(), file.entries.end(),
                [&](const KernelChoiceEntry& e) { return e.type == type && e.cls == cls; });
            if (known != file.entries.end() && plan.set(type, cls, known->chosen)) {
                ++summary.from_file;
                summary.report += what + ": " + known->chosen + " (from the file)\n";
                continue;
            }

            // What to run: decode sweeps the type's matrices; prefill its largest one.
            std::vector<WeightView> run;
            int32_t tokens = 1;
            if (cls == ShapeClass::Decode) {
                std::size_t bytes = 0;
                for (const WeightView* w : views) {
                    const std::size_t left = kDecodeSweepBytes - bytes;
                    const std::size_t wb = static_cast<std::size_t>(w->rows) * w->row_bytes;
                    run.push_back(wb <= left
                                      ? *w
                                      : first_rows(*w, static_cast<int64_t>(left / w->row_bytes)));
                    bytes += static_cast<std::size_t>(run.back().rows) * w->row_bytes;
                    if (bytes >= kDecodeSweepBytes) break;
                }
            } else {
                const WeightView* big = *std::max_element(
                    views.begin(), views.end(), [](const WeightView* a, const WeightView* b) {
                        return a->rows * a->cols < b->rows * b->cols;
                    });
                const auto rows = static_cast<int64_t>(
                    kPrefillMacs / (static_cast<double>(big->cols) * kPrefillTokens));
                run.push_back(first_rows(*big, rows));
                tokens = kPrefillTokens;
            }
            int64_t max_rows = 0, max_cols = 0;
            for (const WeightView& w : run) {
                max_rows = std::max(max_rows, w.rows);
                max_cols = std::max(max_cols, w.cols);
            }
            x = activations(static_cast<std::size_t>(tokens * max_cols));
            out.assign(static_cast<std::size_t>(tokens * max_rows), 0.0f);

            KernelPlan trial = plan;
            const auto seconds = time_candidates(
                cands.size(), cls == ShapeClass::Decode ? kDecodeRounds : kPrefillRounds,
                [&](std::size_t i) {
                    trial.set(type, cls, cands[i].name);
                    for (const WeightView& w : run)
                        matmul(pool, trial, scratch, w, x.data(), tokens, out.data(), nullptr);
                });
            std::size_t best = 0;
            for (std::size_t i = 1; i < cands.size(); ++i)
                if (seconds[i] < seconds[best]) best = i;
            if (best != 0 && seconds[best] > seconds[0] * (1.0 - kKeepDefaultWithin)) best = 0;
            plan.set(type, cls, cands[best].name);

            KernelChoiceEntry e{type, cls, cands[best].name, {}};
            for (std::size_t i = 0; i < cands.size(); ++i)
                e.micros.emplace_back(cands[i].name, seconds[i] * 1e6);
            summary.report +=
                what + ": " + e.chosen + " (measured: " + format_micros(e.micros) + ")\n";
            std::erase_if(file.entries, [&](const KernelChoiceEntry& k) {
                return k.type == type && k.cls == cls;
            });
            file.entries.push_back(std::move(e));
            ++summary.measured;
            changed = true;
        }
    }
    if (changed && !path.empty()) summary.saved = write_kernel_choices(path, file);
    return summary;
}

}  // namespace hearth::kernels::cpu
