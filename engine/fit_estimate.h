// Will a model run on this computer, and how fast, before it is downloaded or opened:
// the weights (mapped from the file), the KV cache the engine would allocate for the
// context asked (exactly: Engine::load sizes it with kv_cache_sizing), the activations of
// its largest step (LlamaModel::scratch_bytes), and the rest of the app, against the free
// memory; decode speed from the memory bandwidth measured here, since decoding a token
// reads every weight once (bandwidth-bound). Pure arithmetic apart from reading a header,
// so every case is tested without a big machine.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "kv/kv_storage.h"

namespace hearth {

namespace gguf {
class GgufFile;
}

// The engine's KV cache on the CPU: blocks of per_block bytes. kv_mb 0 is automatic: two
// full contexts, at most 1 GiB. (Fewer than two blocks: the engine refuses to load.)
struct KvSizing {
    std::size_t per_block = 0;
    std::size_t n_blocks = 0;
    std::size_t bytes() const { return per_block * n_blocks; }
};
KvSizing kv_cache_sizing(const KvShape& shape, std::int64_t context_length, std::size_t kv_mb);

// What a model file needs, from its header (or, before download, a catalog entry).
struct ModelNeeds {
    std::uint64_t weight_bytes = 0;  // tensor data in the file (mapped, read as needed)
    std::uint64_t decode_bytes = 0;  // read per generated token: all but the unused rows
                                     // of an untied embedding table
    std::int32_t n_layer = 0, n_head_kv = 0, head_dim = 0;
    std::int64_t context_length = 0;     // the model's own
    std::uint64_t activation_bytes = 0;  // the largest step's scratch, and the tokenizer's
                                         // tables (kTokenizerBytesPerToken each)
};
// What the tokenizer keeps per vocabulary entry (its pieces, their index, the merges):
// measured on SmolLM2's 49,152 entries and Gemma 3's 262,144.
inline constexpr std::uint64_t kTokenizerBytesPerToken = 160;
// From the header: a model Hearth cannot run gives the engine's reason.
Result<ModelNeeds> model_needs(const gguf::GgufFile& file, std::int32_t max_step_tokens = 256);

struct MachineFacts {
    std::uint64_t ram_total = 0;
    std::uint64_t ram_available = 0;  // what can be used without swapping (MemAvailable)
    double read_bytes_per_s = 0;      // measured with the threads inference uses; 0: unknown
};

// Beyond the model: the app itself (Qt, the window, fonts, the history store), measured as
// the resident set of the app with no model open (141 MiB, Linux, software rendering).
inline constexpr std::uint64_t kAppOverheadBytes = std::uint64_t{150} << 20;
// A chat of this many tokens so far: the KV that decoding reads for each token besides the
// weights, in the speed estimate.
inline constexpr std::int64_t kTypicalChatTokens = 1000;

enum class FitVerdict {
    Fits,    // in RAM with room to spare: runs on the CPU at about tokens_per_s
    Tight,   // fits only by taking most of the free memory: other programs may swap
    TooBig,  // more than the free memory
};

struct FitEstimate {
    std::uint64_t weight_bytes = 0;
    std::uint64_t kv_bytes = 0;
    std::uint64_t activation_bytes = 0;
    std::uint64_t overhead_bytes = 0;
    std::uint64_t total_bytes = 0;
    std::int64_t context = 0;  // the context estimated for
    FitVerdict verdict = FitVerdict::TooBig;
    double tokens_per_s = 0;  // 0: the bandwidth is unknown
};

// context 0: the model's own. kv_mb as the engine's setting (0: automatic).
FitEstimate estimate_fit(const ModelNeeds& model, std::int64_t context, std::size_t kv_mb,
                         const MachineFacts& machine, std::int32_t block_size = 16);

// Share of the free memory a model may take and still count as fitting with room to spare.
inline constexpr double kComfortableShare = 0.8;

}  // namespace hearth
