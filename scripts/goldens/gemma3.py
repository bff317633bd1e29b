#!/usr/bin/env python3
"""Records llama.cpp's greedy continuations and last-position logits on a real Gemma 3
model, Gemma 3 270M Q4_K_M (scripts/fetch-model --model gemma3-270m), for chat prompts
rendered through Gemma 3's chat template; the reference tests/engine/model/tst_gemma3_golden.cpp
compares Hearth against.

    .cache/reference-venv/bin/python scripts/goldens/gemma3.py \
        --model "$(scripts/fetch-model --model gemma3-270m --print)" --out tests/data/inference
    scripts/quant-models --gemma3 build/quant-models
    .cache/reference-venv/bin/python scripts/goldens/gemma3.py --f32 \
        --model build/quant-models/gemma3-270m-F32.gguf --out tests/data/inference

The file has no tokenizer.chat_template (it is the base model, converted by GGUF-my-repo),
so the template is Gemma 3's own, that of google/gemma-3-*-it
(tests/data/chat/templates/google-gemma-3-it.jinja), rendered as llama.cpp's Jinja path
renders it (chat_templates.py: trim_blocks, lstrip_blocks, bos_token <bos>, the leading
<bos> cut from the text because the vocabulary adds BOS; Gemma 3's template writes system
messages itself), then tokenized by llama.cpp with BOS and special tokens parsed.

Writes gemma3-goldens.json (per prompt the messages, the rendered text, its ids, 32
greedy tokens and the gap between llama.cpp's two best logits at every generated step) and
gemma3-logits.f16 (the logits at the last prompt position of the prompts the JSON's
logits_prompts lists, float16 little-endian, in that order: LOGITS_PROMPTS); with --f32,
for the same model dequantised to F32 by llama-quantize (every weight the Q4_K_M file's
value), gemma3-f32-goldens.json and gemma3-f32-logits.f16 (LOGITS_PROMPTS_F32, which adds
the prompt past the sliding window).

The Q4_K_M file's logits cannot be matched to 1e-3: llama.cpp's own equally valid paths
differ by more on it (activations are rounded to 8 bits before every quantised product,
so a last-bit difference upstream flips roundings that the 18 layers amplify). The JSON
records that spread: the relative L2 distance of llama.cpp's flash-attention path and of
its one-token-per-step path from its default one, per logits prompt. llama.cpp runs its default CPU path (no flash attention,
the prompt in one batch, then one token at a time) in setup-reference's AVX2-only build.
"""
import argparse
import hashlib
import json
import os
import random
import sys

import numpy as np
from llama_cpp import Llama

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_templates import jinja_env, template_uses_system  # noqa: E402
from inference import CHAT_USER, greedy_with_gaps  # noqa: E402
from tokenizer import write_lines  # noqa: E402

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                        "chat", "templates", "google-gemma-3-it.jinja")
SYSTEM = "You are a helpful, concise assistant."
N_PREDICT = 32
# The prompts whose last-position logits are kept: two short ones, and on F32 also the
# long one past the sliding window (index -1). All of them would be 512 KiB each.
LOGITS_PROMPTS = [0, 1]
LOGITS_PROMPTS_F32 = [0, 1, -1]


def long_notes():
    """About 620 tokens of deterministic prose: with the chat turns, a prompt longer than
    Gemma 3 270M's 512-token sliding window, so its local layers attend to a window that
    no longer starts at the prompt's beginning."""
    rng = random.Random(7)
    words = ("the sea is wide and deep ships sail over waves under a grey sky while gulls cry "
             "near the harbour wall and old sailors tell stories of storms").split()
    return " ".join(rng.choice(words) for _ in range(600))


def conversations():
    """Nine single questions (every other one with a system message), a multi-turn chat, and
    one question longer than the sliding window."""
    convs = []
    for i, user in enumerate(CHAT_USER[:9]):
        msgs = [("system", SYSTEM)] if i % 2 == 0 else []
        convs.append(msgs + [("user", user)])
    convs.append([("system", SYSTEM), ("user", "What is 2 + 2?"), ("assistant", "2 + 2 = 4."),
                  ("user", "And 3 + 3? Answer with a number.")])
    convs.append([("user", "Summarise these notes in one sentence: " + long_notes())])
    return convs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--f32", action="store_true", help="the model dequantised to F32")
    args = ap.parse_args()
    name = "gemma3-f32" if args.f32 else "gemma3"

    with open(TEMPLATE, encoding="utf-8") as f:
        source = f.read()
    env = jinja_env()
    assert template_uses_system(env, source), "Gemma 3's template writes system messages"
    tmpl = env.from_string(source)

    llm = Llama(model_path=args.model, n_ctx=1024, n_batch=512, n_threads=args.threads,
                logits_all=True, seed=0, verbose=False)
    meta = llm.metadata
    assert meta["general.architecture"] == "gemma3", meta["general.architecture"]
    assert "tokenizer.chat_template" not in meta, "the file has a template of its own: use it"
    bos = llm.detokenize([llm.token_bos()], special=True).decode()
    assert bos == "<bos>" and meta["tokenizer.ggml.add_bos_token"] == "true"
    n_vocab = llm.n_vocab()

    records = []
    lasts = []  # every prompt's last-position logits
    for conv in conversations():
        text = tmpl.render(messages=[{"role": r, "content": c} for r, c in conv], bos_token=bos,
                           eos_token="<eos>", add_generation_prompt=True)
        prompt = text[len(bos):] if text.startswith(bos) else text
        ids = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        llm.reset()
        llm.eval(ids)
        lasts.append(np.array(llm.scores[len(ids) - 1], dtype=np.float32))
        generated, gaps = greedy_with_gaps(llm, ids, N_PREDICT)
        records.append({"messages": [[r, c] for r, c in conv], "text": text, "prompt_ids": ids,
                        "greedy": generated,
                        "greedy_text": llm.detokenize(generated).decode("utf-8", "replace"),
                        "top2_gap": gaps})

    kept = [i % len(records) for i in (LOGITS_PROMPTS_F32 if args.f32 else LOGITS_PROMPTS)]
    logits_out = b"".join(lasts[i].astype("<f2").tobytes() for i in kept)
    n_logits = len(kept)
    del llm
    spread = {}
    for path, kw in [("flash_attn", {"flash_attn": True}), ("one_token_per_step", {"n_batch": 1, "n_ubatch": 1})]:
        other = Llama(model_path=args.model, n_ctx=1024, n_threads=args.threads, logits_all=True,
                      seed=0, verbose=False, **kw)
        ref = np.frombuffer(bytes(logits_out), dtype="<f2").astype(np.float64).reshape(n_logits, n_vocab)
        spread[path] = []
        for i, want in zip(kept, ref):
            ids = records[i]["prompt_ids"]
            other.reset()
            other.eval(ids)
            got = np.array(other.scores[len(ids) - 1], dtype=np.float64)
            spread[path].append(float(np.linalg.norm(got - want) / np.linalg.norm(want)))
        del other
        print(f"llama.cpp's {path} path against its default one: relative L2",
              " ".join(f"{x:.2e}" for x in spread[path]))

    with open(args.model, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(args.out, exist_ok=True)
    head = {"generator": "scripts/goldens/gemma3.py", "model": os.path.basename(args.model),
            "model_sha256": sha, "n_vocab": n_vocab, "n_predict": N_PREDICT,
            "template": "tests/data/chat/templates/google-gemma-3-it.jinja",
            "logits_file": f"{name}-logits.f16", "logits_prompts": kept,
            "llama_cpp_self_spread": spread}
    write_lines(os.path.join(args.out, f"{name}-goldens.json"), head, "prompts", records)
    with open(os.path.join(args.out, f"{name}-logits.f16"), "wb") as f:
        f.write(logits_out)
    print(f"wrote {len(records)} prompts, logits {len(logits_out)} bytes")


if __name__ == "__main__":
    main()
