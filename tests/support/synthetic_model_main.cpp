// hearth-synthetic-model: writes one of the synthetic random-weight models
// (engine/model/synthetic_model.h) to a file, so that llama.cpp can run the very bytes a
// test builds in memory (scripts/goldens/architectures.py records its outputs on them).
//
//   hearth-synthetic-model --arch qwen3 --seed 13 --out m.gguf [--n-embd 64] [--n-layer 2]
//       [--n-head 4] [--n-head-kv 2] [--head-dim 0] [--n-ff 96] [--type Q8_0]
//       [--embedding-type Q8_0] [--untied] [--sliding-window N --swa-period N]
//       [--rope-freq-base F] [--rope-freq-base-swa F] [--attn-softcap F] [--final-softcap F]
//       [--embedding-std F] [--longrope-original-context N --rope-attn-factor F]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "model/synthetic_model.h"

namespace {

int usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s --arch A --seed N --out FILE [--n-embd N] [--n-layer N] [--n-head N] "
                 "[--n-head-kv N] [--head-dim N] [--n-ff N] [--type T] [--embedding-type T] "
                 "[--untied] [--sliding-window N] [--swa-period N] [--rope-freq-base F] "
                 "[--rope-freq-base-swa F] [--attn-softcap F] [--final-softcap F] "
                 "[--embedding-std F] [--longrope-original-context N] [--rope-attn-factor F]\n",
                 argv0);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    hearth::SyntheticModelSpec s;
    std::string out;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--untied") {
            s.tied_embeddings = false;
            continue;
        }
        if (i + 1 >= argc) return usage(argv[0]);
        const std::string v = argv[++i];
        const auto num = [&] { return static_cast<int32_t>(std::strtol(v.c_str(), nullptr, 10)); };
        if (a == "--arch") {
            s.architecture = v;
        } else if (a == "--seed") {
            s.seed = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
        } else if (a == "--out") {
            out = v;
        } else if (a == "--n-embd") {
            s.n_embd = num();
        } else if (a == "--n-layer") {
            s.n_layer = num();
        } else if (a == "--n-head") {
            s.n_head = num();
        } else if (a == "--n-head-kv") {
            s.n_head_kv = num();
        } else if (a == "--head-dim") {
            s.head_dim = num();
        } else if (a == "--n-ff") {
            s.n_ff = num();
        } else if (a == "--sliding-window") {
            s.sliding_window = num();
        } else if (a == "--swa-period") {
            s.swa_period = num();
        } else if (a == "--rope-freq-base") {
            s.rope_freq_base = std::strtof(v.c_str(), nullptr);
        } else if (a == "--rope-freq-base-swa") {
            s.rope_freq_base_swa = std::strtof(v.c_str(), nullptr);
        } else if (a == "--embedding-std") {
            s.embedding_std = std::strtof(v.c_str(), nullptr);
        } else if (a == "--attn-softcap") {
            s.attn_softcap = std::strtof(v.c_str(), nullptr);
        } else if (a == "--final-softcap") {
            s.final_softcap = std::strtof(v.c_str(), nullptr);
        } else if (a == "--longrope-original-context") {
            s.longrope_original_context = std::atoi(v.c_str());
        } else if (a == "--rope-attn-factor") {
            s.rope_attn_factor = std::strtof(v.c_str(), nullptr);
        } else if (a == "--type" || a == "--embedding-type") {
            const auto t = hearth::quant::type_from_name(v);
            if (!t) {
                std::fprintf(stderr, "unknown weight type %s\n", v.c_str());
                return 2;
            }
            (a == "--type" ? s.weight_type : s.embedding_type) = *t;
        } else {
            return usage(argv[0]);
        }
    }
    if (out.empty()) return usage(argv[0]);
    auto bytes = hearth::make_synthetic_model(s);
    if (!bytes) {
        std::fprintf(stderr, "%s\n", bytes.message().c_str());
        return 1;
    }
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes->data()),
            static_cast<std::streamsize>(bytes->size()));
    if (!f.flush()) {
        std::fprintf(stderr, "cannot write %s\n", out.c_str());
        return 1;
    }
    return 0;
}
