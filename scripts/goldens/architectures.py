#!/usr/bin/env python3
"""Records llama.cpp's outputs on one small synthetic model per architecture, the reference
that tests/engine/model/tst_architecture_golden.cpp compares Hearth's forward pass against.

The models are Hearth's own synthetic random-weight models (engine/model/synthetic_model.h),
written by the hearth-synthetic-model tool with the specs below; the test builds the same
bytes in memory from the specs recorded here and checks their SHA-256 first.

    .cache/reference-venv/bin/python scripts/goldens/architectures.py \
        --tool build/tests/hearth-synthetic-model --out tests/data/inference/architectures.json

For every model: PROMPTS prompts of random token ids (a fixed seed; lengths 3 to 80), and
for each the logits at its last position (one batch, llama.cpp's default CPU path), its
N_PREDICT greedy tokens, and the gap between llama.cpp's two best logits at every
generated step (a near tie there makes a different token acceptable).
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import tempfile

import numpy as np
from llama_cpp import Llama

from inference import greedy_with_gaps  # scripts/goldens/inference.py

# name -> the tool's flags. Q4_1 weights (the default model's type): the CPU backend sums
# their products in llama.cpp's AVX2 order at every SIMD level, so the hidden states are
# llama.cpp's bits and what the goldens check is the architecture. (Q8_0's SIMD order is
# another one: last-bit differences that activation quantisation now and then amplifies
# to ~5e-3 relative L2 on these small models.) An output matrix of its own, so that
# greedy text does not just repeat the last token, as tied random embeddings make it;
# 2 layers; head_dim other than n_embd / n_head where the architecture's real models have
# one (Qwen3).
SPECS = [
    {"name": "llama", "arch": "llama", "seed": 11, "n_embd": 64, "n_layer": 2, "n_head": 4,
     "n_head_kv": 2, "head_dim": 0, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True},
    {"name": "qwen2", "arch": "qwen2", "seed": 12, "n_embd": 64, "n_layer": 2, "n_head": 4,
     "n_head_kv": 2, "head_dim": 0, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True},
    {"name": "qwen3", "arch": "qwen3", "seed": 13, "n_embd": 64, "n_layer": 2, "n_head": 4,
     "n_head_kv": 2, "head_dim": 32, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True},
    # Gemma 3: sliding windows of 8 positions on layers 0 and 2 (every 2nd layer global),
    # their RoPE base 10000 and the global layers' 1e6, one KV head for four query heads.
    {"name": "gemma3", "arch": "gemma3", "seed": 14, "n_embd": 64, "n_layer": 3, "n_head": 4,
     "n_head_kv": 1, "head_dim": 32, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True,
     "sliding_window": 8, "swa_period": 2, "rope_freq_base": 1000000.0, "rope_freq_base_swa": 10000.0,
     "embedding_std": 0.125},
    # Phi-3: Q, K and V fused in attn_qkv, gate and up in ffn_up.
    {"name": "phi3", "arch": "phi3", "seed": 16, "n_embd": 64, "n_layer": 2, "n_head": 4,
     "n_head_kv": 2, "head_dim": 0, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True},
    # Phi-3 128k's LongRoPE: long and short frequency factors, the long ones when the
    # context (llama.cpp's n_ctx 256 here; Hearth's, the model's 1024) is longer than
    # the original context (64), the short ones when it is not (1024); cos and sin times
    # the attention factor (1.19, Phi-3.5's).
    {"name": "phi3-longrope", "arch": "phi3", "seed": 17, "n_embd": 64, "n_layer": 2, "n_head": 4,
     "n_head_kv": 2, "head_dim": 0, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": True,
     "longrope_original_context": 64, "rope_attn_factor": 1.19},
    {"name": "phi3-longrope-short", "arch": "phi3", "seed": 18, "n_embd": 64, "n_layer": 2,
     "n_head": 4, "n_head_kv": 2, "head_dim": 0, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1",
     "untied": True, "longrope_original_context": 1024, "rope_attn_factor": 1.19},
    # Gemma 2: soft-capped attention scores (cap 1, about these models' scores) and logits
    # (cap 4, about their size), sliding windows of 8 on layers 0 and 2; its output is
    # token_embd. (Gemma's embeddings, small: see SyntheticModelSpec::embedding_std.)
    {"name": "gemma2", "arch": "gemma2", "seed": 15, "n_embd": 64, "n_layer": 3, "n_head": 4,
     "n_head_kv": 2, "head_dim": 32, "n_ff": 96, "type": "Q4_1", "embedding_type": "Q4_1", "untied": False,
     "sliding_window": 8, "swa_period": 2, "attn_softcap": 1.0, "final_softcap": 4.0,
     "embedding_std": 0.125},
]
PROMPTS = 10
N_PREDICT = 32
FIRST_ORDINARY_TOKEN = 3  # ids 0-2 are the synthetic vocabulary's control tokens


def write_model(tool, spec, path):
    cmd = [tool, "--arch", spec["arch"], "--seed", str(spec["seed"]), "--out", path]
    for key in ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff"):
        cmd += ["--" + key.replace("_", "-"), str(spec[key])]
    cmd += ["--type", spec["type"], "--embedding-type", spec["embedding_type"]]
    if spec["untied"]:
        cmd.append("--untied")
    for key in ("sliding_window", "swa_period", "rope_freq_base", "rope_freq_base_swa",
                "attn_softcap", "final_softcap", "embedding_std", "longrope_original_context",
                "rope_attn_factor"):
        if key in spec:
            cmd += ["--" + key.replace("_", "-"), str(spec[key])]
    subprocess.run(cmd, check=True)


def record(path, seed, threads):
    llm = Llama(model_path=path, n_ctx=256, n_batch=256, n_threads=threads, logits_all=True,
                seed=0, verbose=False)
    n_vocab = llm.n_vocab()
    rng = random.Random(seed)
    prompts = []
    for i in range(PROMPTS):
        n = 3 + (i * 77) // (PROMPTS - 1)
        ids = [rng.randrange(FIRST_ORDINARY_TOKEN, n_vocab) for _ in range(n)]
        llm.reset()
        llm.eval(ids)
        last = np.array(llm.scores[len(ids) - 1], dtype=np.float32)
        greedy, gaps = greedy_with_gaps(llm, ids, N_PREDICT)
        prompts.append({"ids": ids, "logits": [float(x) for x in last], "greedy": greedy,
                        "top2_gap": gaps})
    return n_vocab, prompts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, help="build/tests/hearth-synthetic-model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    models = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in SPECS:
            path = os.path.join(tmp, spec["name"] + ".gguf")
            write_model(args.tool, spec, path)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            n_vocab, prompts = record(path, spec["seed"], args.threads)
            models.append({"spec": spec, "sha256": digest, "n_vocab": n_vocab,
                           "prompts": prompts})
            print(f"{spec['name']}: {len(prompts)} prompts")
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"generator": "llama-cpp-python", "n_predict": N_PREDICT, "models": models},
                  f, indent=1)


if __name__ == "__main__":
    main()
