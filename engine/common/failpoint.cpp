#include "common/failpoint.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/log.h"

namespace hearth {

namespace {

struct Point {
    const char* name;
    std::atomic<int> left{0};  // passes until it fails; 0: unarmed
};

Point g_points[] = {{"forward"}, {"disk.write"}};
std::atomic<bool> g_any{false};
std::once_flag g_env_once;

Point* find(std::string_view name) {
    for (Point& p : g_points)
        if (name == p.name) return &p;
    return nullptr;
}

void read_environment() {
    const char* env = std::getenv("HEARTH_FAILPOINTS");
    if (!env) return;
    std::string_view rest(env);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const std::size_t eq = item.find('=');
        Point* p = find(item.substr(0, eq));
        const int n =
            eq == std::string_view::npos ? 1 : std::atoi(std::string(item.substr(eq + 1)).c_str());
        if (!p || n < 1) {
            log::get("engine")->warn("HEARTH_FAILPOINTS: ignoring '{}'", std::string(item));
            continue;
        }
        p->left.store(n);
        g_any.store(true);
        log::get("engine")->warn("failpoint {} armed: pass {} fails", p->name, n);
    }
}

}  // namespace

bool failpoint(std::string_view name) {
    std::call_once(g_env_once, read_environment);
    if (!g_any.load(std::memory_order_relaxed)) return false;
    Point* p = find(name);
    if (!p) return false;
    int left = p->left.load();
    while (left > 0)
        if (p->left.compare_exchange_weak(left, left - 1)) {
            if (left != 1) return false;
            log::get("engine")->warn("failpoint {} fired", p->name);
            return true;
        }
    return false;
}

void arm_failpoint(std::string_view name, int n) {
    std::call_once(g_env_once, read_environment);
    Point* p = find(name);
    if (!p) return;
    p->left.store(n > 0 ? n : 0);
    if (n > 0) g_any.store(true);
}

}  // namespace hearth
