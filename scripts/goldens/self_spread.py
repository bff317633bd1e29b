#!/usr/bin/env python3
"""How far llama.cpp moves from itself on the re-quantised models (scripts/quant-models):
the relative L2 distance between its default path's logits and its flash-attention path's
at the last position of the prompts quant-types.json records logits for, per type. The measure behind
tst_quant_golden's bound for types summed in another order than llama.cpp's.

    .cache/reference-venv/bin/python scripts/goldens/self_spread.py [--models build/quant-models]
"""
import argparse
import json
import os

import numpy as np
from llama_cpp import Llama

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "quant-models"))
    args = ap.parse_args()
    goldens = json.load(open(os.path.join(ROOT, "tests", "data", "inference", "quant-types.json")))
    prompts = goldens["prompts"][:goldens["logits_prompts"]]
    worst = 0.0
    for entry in goldens["types"]:
        runs = []
        for flash in (False, True):
            llm = Llama(model_path=os.path.join(args.models, entry["file"]), n_ctx=512,
                        n_batch=512, logits_all=True, verbose=False, n_threads=2,
                        flash_attn=flash)
            last = []
            for p in prompts:
                ids = p["prompt_ids"]
                llm.reset()
                llm.eval(ids)
                last.append(np.array(llm.scores[len(ids) - 1], dtype=np.float64))
            runs.append(last)
            del llm
        rel = [np.linalg.norm(a - b) / np.linalg.norm(a) for a, b in zip(*runs)]
        worst = max(worst, max(rel))
        print(entry["type"], " ".join(f"{x:.2e}" for x in rel), flush=True)
    print(f"largest: {worst:.3f}")


if __name__ == "__main__":
    main()
