#!/usr/bin/env python3
"""Records llama.cpp's greedy continuations and last-position logits on the default model,
the reference that tests/engine/model/tst_model_golden.cpp compares Hearth against.

    .cache/reference-venv/bin/python scripts/goldens/inference.py \
        --model ~/.local/share/Hearth/models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --out tests/data/inference

Writes smollm2-goldens.json (prompt ids, 64 greedy tokens, the gap between llama.cpp's
two best logits at every generated step) and smollm2-logits.f16 (the logits at the last
prompt position of every prompt, float16 little-endian, prompts in order).
"""
import argparse
import json
import os
import struct

import numpy as np
from llama_cpp import Llama

SYSTEM = "You are a helpful, concise assistant."
CHAT_USER = [
    "What is the capital of France?",
    "Write a haiku about autumn leaves.",
    "Explain what a hash table is in two sentences.",
    "List three primary colors.",
    "How do I reverse a list in Python?",
    "Translate 'good morning' into Spanish.",
    "What is 17 times 23?",
    "Give me a tip for learning to cook.",
    "Why is the sky blue?",
    "Summarize the plot of Romeo and Juliet in one sentence.",
    "Name a famous painting by Leonardo da Vinci.",
    "Wie spät ist es in Tokio, wenn es in Berlin Mittag ist?",
]
RAW = [
    "The quick brown fox",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n    ",
    "1, 2, 3, 5, 8, 13,",
    "The theory of relativity was developed by",
    "<html>\n<head>\n<title>",
    "In 2024, researchers found that",
    "SELECT name, age FROM users WHERE",
    "Les feuilles mortes se ramassent",
    "東京は日本の",
]
N_PREDICT = 64


def greedy_with_gaps(llm, ids, n):
    """llama.cpp's n greedy tokens after ids (not stopping at end-of-turn tokens), and the
    gap between its two best logits at every generated step, from one batched pass."""
    generated = []
    for tok in llm.generate(ids, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                            reset=True):
        generated.append(int(tok))
        if len(generated) == n:
            break
    llm.reset()
    llm.eval(ids + generated)
    gaps = []
    for i in range(n):
        row = np.array(llm.scores[len(ids) - 1 + i], dtype=np.float32)
        top2 = np.partition(row, -2)[-2:]
        gaps.append(float(abs(top2[1] - top2[0])))
    return generated, gaps


def chatml(user, system):
    text = ""
    if system:
        text += f"<|im_start|>system\n{system}<|im_end|>\n"
    return text + f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    prompts = []
    for i, user in enumerate(CHAT_USER):
        prompts.append({"kind": "chat", "text": chatml(user, SYSTEM if i % 2 == 0 else None)})
    for text in RAW:
        prompts.append({"kind": "raw", "text": text})

    llm = Llama(model_path=args.model, n_ctx=1024, n_batch=512, n_threads=args.threads,
                logits_all=True, seed=0, verbose=False)
    n_vocab = llm.n_vocab()
    records = []
    logits_out = bytearray()
    for p in prompts:
        ids = llm.tokenize(p["text"].encode(), add_bos=False, special=(p["kind"] == "chat"))
        llm.reset()
        llm.eval(ids)
        last = np.array(llm.scores[len(ids) - 1], dtype=np.float32)
        logits_out += last.astype("<f2").tobytes()

        # The test compares all 64 greedy tokens.
        generated, gaps = greedy_with_gaps(llm, ids, N_PREDICT)
        records.append({"kind": p["kind"], "text": p["text"], "prompt_ids": [int(t) for t in ids],
                        "greedy": generated, "top2_gap": gaps})

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "smollm2-goldens.json"), "w", encoding="utf-8") as f:
        json.dump({"model": os.path.basename(args.model), "n_vocab": n_vocab,
                   "generator": "llama-cpp-python", "n_predict": N_PREDICT,
                   "logits_file": "smollm2-logits.f16", "prompts": records},
                  f, ensure_ascii=False, indent=1)
    with open(os.path.join(args.out, "smollm2-logits.f16"), "wb") as f:
        f.write(logits_out)
    print(f"wrote {len(records)} prompts, logits {len(logits_out)} bytes")


if __name__ == "__main__":
    main()
