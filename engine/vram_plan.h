// How the engine would use a GPU's memory: the weights (uploaded once, quantised formats
// kept), the activations of the largest step, a reserve for the CUDA context, library
// workspaces and graphs, and the KV cache in whole blocks from what is left (or from the
// user's budget). Pure arithmetic, so every case is tested without a GPU; choose_device()
// asks it whether a device can hold a model at all.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace hearth {

struct VramNeeds {
    std::uint64_t weight_bytes = 0;
    std::uint64_t activation_bytes = 0;  // LlamaModel::scratch_bytes of the largest step
    // The kernels' workspaces at their worst for the largest step and the configured
    // context and sequence count (matrix products, attention): allocated once when the
    // engine starts, so nothing is allocated after the plan (a failed allocation during a
    // graph capture turned graphs off for good).
    std::uint64_t workspace_bytes = 0;
    std::uint64_t kv_bytes_per_block = 0;  // KvStorage::bytes_per_block
    std::int64_t context_blocks = 0;       // blocks of one full context
    std::uint64_t kv_budget_bytes = 0;     // the user's KV budget; 0: automatic
};

struct VramPolicy {
    double usable_fraction = 0.90;  // of the free memory (the desktop and other programs)
    std::uint64_t reserve_bytes = std::uint64_t{768} << 20;  // context, workspaces, graphs
    std::int64_t max_blocks = std::int64_t{1} << 24;         // as on the CPU
};

struct VramPlan {
    std::int64_t kv_blocks = 0;
    std::uint64_t kv_bytes = 0;
    std::uint64_t total_bytes = 0;  // weights + activations + workspaces + reserve + KV
};

// Errors say what does not fit and by how much: the model without any KV cache, the model
// with one full context of KV, or the user's KV budget.
Result<VramPlan> plan_vram(std::uint64_t free_bytes, const VramNeeds& needs,
                           const VramPolicy& policy = {});

// The least free memory with which plan_vram() succeeds (one full context of KV when the
// budget is automatic): what choose_device() asks of a device.
std::uint64_t vram_bytes_needed(const VramNeeds& needs, const VramPolicy& policy = {});

}  // namespace hearth
