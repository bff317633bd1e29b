#include "vram_plan.h"

#include <algorithm>
#include <string>

#include "device.h"

namespace hearth {

Result<VramPlan> plan_vram(std::uint64_t free_bytes, const VramNeeds& needs,
                           const VramPolicy& policy) {
    if (needs.kv_bytes_per_block == 0 || needs.context_blocks <= 0)
        return make_error("plan_vram: no KV block size or context");
    const auto usable = static_cast<std::uint64_t>(static_cast<double>(free_bytes) *
                                                   std::clamp(policy.usable_fraction, 0.0, 1.0));
    const std::uint64_t fixed =
        needs.weight_bytes + needs.activation_bytes + needs.workspace_bytes + policy.reserve_bytes;
    if (fixed > usable)
        return make_error("the model needs " + gib_text(fixed) + " before any KV cache (weights " +
                          gib_text(needs.weight_bytes) + "), and " + gib_text(usable) + " of " +
                          gib_text(free_bytes) + " free can be used");
    const std::uint64_t room = usable - fixed;
    const std::uint64_t one_context =
        static_cast<std::uint64_t>(needs.context_blocks) * needs.kv_bytes_per_block;
    std::uint64_t kv = room;
    if (needs.kv_budget_bytes > 0) {
        if (needs.kv_budget_bytes > room)
            return make_error("a KV cache of " + gib_text(needs.kv_budget_bytes) +
                              " does not fit: " + gib_text(room) + " is left after the model");
        kv = needs.kv_budget_bytes;
    } else if (room < one_context) {
        return make_error("one full context of KV cache needs " + gib_text(one_context) + ", and " +
                          gib_text(room) + " is left after the model");
    }
    VramPlan plan;
    plan.kv_blocks = std::min<std::int64_t>(
        static_cast<std::int64_t>(kv / needs.kv_bytes_per_block), policy.max_blocks);
    if (plan.kv_blocks < 2) return make_error("the KV budget holds fewer than 2 blocks");
    plan.kv_bytes = static_cast<std::uint64_t>(plan.kv_blocks) * needs.kv_bytes_per_block;
    plan.total_bytes = fixed + plan.kv_bytes;
    return plan;
}

std::uint64_t vram_bytes_needed(const VramNeeds& needs, const VramPolicy& policy) {
    const std::uint64_t kv =
        needs.kv_budget_bytes > 0
            ? needs.kv_budget_bytes
            : static_cast<std::uint64_t>(std::max<std::int64_t>(needs.context_blocks, 2)) *
                  needs.kv_bytes_per_block;
    const std::uint64_t used = needs.weight_bytes + needs.activation_bytes + needs.workspace_bytes +
                               policy.reserve_bytes + kv;
    const double fraction = std::clamp(policy.usable_fraction, 1e-6, 1.0);
    // The smallest free amount whose usable part (rounded down as plan_vram does) holds it.
    auto need = static_cast<std::uint64_t>(static_cast<double>(used) / fraction);
    while (static_cast<std::uint64_t>(static_cast<double>(need) * fraction) < used) ++need;
    return need;
}

}  // namespace hearth
