// Chooses the matmul kernels (kernel_choice.h) by timing them on this machine, with the
// model's own weights, and keeps the choice in a small file so that later loads read it.
//
// For each weight type a model uses and each shape class that has more than one
// candidate (and that the environment did not force):
//   decode  — one token through the type's matrices in model order, as a decode step
//             streams them, up to 64 MiB of weights (more than a last-level cache), once
//             per candidate per round;
//   prefill — 256 tokens through the type's largest matrix (cut to at most 1 G
//             multiply-adds).
// Rounds alternate the candidates (5 for decode, 3 for prefill, after one untimed warm-up
// pass); a candidate's time is its fastest round, which the machine's other work can
// only slow. The default stays unless another candidate is more than 1 % faster.
// Well under a second per type on a 2-core machine, once per processor, build and thread
// count.
//
// The file: a header line, a key line (the processor, cpu_identity(); the build; the
// thread count), then one line per type and class: the choice and each candidate's time
// in microseconds. A file for another key, or one that does not parse (a line for a type
// or candidate this build does not have included), is ignored and written anew.
#pragma once

#include <string>
#include <vector>

#include "cpu/aligned_buffer.h"
#include "cpu/kernel_choice.h"
#include "cpu/matmul.h"
#include "cpu/thread_pool.h"

namespace hearth::kernels::cpu {

// The build the choices were measured with: the version, the compiler and the running
// program's file (size and modification time), so that a rebuilt program measures again.
std::string build_identity();

// The key a choice file must carry to be used here.
std::string kernel_choice_key(int n_threads);

struct KernelChoiceEntry {
    quant::TensorType type = quant::TensorType::F32;
    ShapeClass cls = ShapeClass::Decode;
    std::string chosen;
    std::vector<std::pair<std::string, double>> micros;  // per candidate, as measured
};

struct KernelChoiceFile {
    std::string key;
    std::vector<KernelChoiceEntry> entries;
};

// Reads a choice file; nullopt-like empty result (no key) when it is missing or does not
// parse (then `problem` says why, when not null).
KernelChoiceFile read_kernel_choices(const std::string& path, std::string* problem = nullptr);
// Writes it whole (to a temporary file, then renamed over the old one); false on failure.
bool write_kernel_choices(const std::string& path, const KernelChoiceFile& file);

struct TuneSummary {
    int measured = 0;    // type/class pairs timed now
    int from_file = 0;   // taken from the file
    int forced = 0;      // left as the environment forced them
    bool saved = false;  // the file was (re)written
    std::string report;  // one line per pair: "Q4_K decode: avx2+pf3k (measured: ...)"
};

// Fills `plan` for the weights' types: from the file at `path` when it holds this key's
// choice, else by timing (and then saves the file). An empty path times without saving.
TuneSummary tune_kernels(ThreadPool& pool, AlignedBuffer& scratch, KernelPlan& plan,
                         const std::vector<WeightView>& weights, const std::string& path);

}  // namespace hearth::kernels::cpu
