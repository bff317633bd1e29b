#!/usr/bin/env python3
"""Records llama.cpp's greedy continuations and last-position logits on the default model
re-quantised to every weight type (scripts/quant-models), the reference that Hearth's
forward pass on those types is compared against.

    scripts/quant-models build/quant-models
    .cache/reference-venv/bin/python scripts/goldens/quant_types.py \
        --models build/quant-models --out tests/data/inference

For every type, in scripts/quant-models' order: the file's SHA-256 and size, how many
tensors it holds of each type (llama.cpp falls back to 32-block types for the 576-column
matrices of the 256-block files), and for PROMPTS (inference.py's prompts and rendering:
6 chat, 4 raw) the N_PREDICT greedy tokens and the gap between llama.cpp's two best
logits at every generated step (greedy_with_gaps). Writes quant-types.json and
quant-types-logits.f16: the logits at the last prompt position of the first
LOGITS_PROMPTS prompts, float16 little-endian, types in order, then prompts in order.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import time

import numpy as np
from llama_cpp import Llama, __version__ as llama_cpp_version

# scripts/goldens/inference.py
from inference import CHAT_USER, RAW, SYSTEM, chatml, greedy_with_gaps

# (kind, index into inference.py's CHAT_USER or RAW); chat prompt i has the system prompt
# when i is even, as in inference.py. A chat and a raw prompt first: their logits are
# recorded (two prompts keep the logits file near 3 MB).
PROMPTS = [("chat", 0), ("raw", 0), ("chat", 1), ("raw", 1), ("chat", 2), ("chat", 3),
           ("chat", 4), ("chat", 5), ("raw", 2), ("raw", 3)]
LOGITS_PROMPTS = 2
N_PREDICT = 32

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# ggml_type ids -> names (as Hearth's quant::type_name spells them)
GGML_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0",
              9: "Q8_1", 10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K",
              15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S",
              20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS", 24: "I8", 25: "I16",
              26: "I32", 27: "I64", 28: "F64", 29: "IQ1_M", 30: "BF16", 34: "TQ1_0",
              35: "TQ2_0", 39: "MXFP4"}


def gguf_tensor_types(path):
    """{tensor name: type name} from a GGUF file's header (versions 2 and 3)."""
    with open(path, "rb") as f:
        def read(fmt):
            size = struct.calcsize(fmt)
            return struct.unpack("<" + fmt, f.read(size))

        def string():
            (n,) = read("Q")
            return f.read(n).decode("utf-8")

        scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                  10: "Q", 11: "q", 12: "d"}

        def skip_value(vtype):
            if vtype in scalar:
                f.seek(struct.calcsize(scalar[vtype]), 1)
            elif vtype == 8:
                string()
            elif vtype == 9:
                (etype,) = read("I")
                (n,) = read("Q")
                if etype in scalar:
                    f.seek(n * struct.calcsize(scalar[etype]), 1)
                else:
                    for _ in range(n):
                        skip_value(etype)
            else:
                raise ValueError(f"{path}: unknown GGUF value type {vtype}")

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        (version,) = read("I")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version}")
        n_tensors, n_kv = read("QQ")
        for _ in range(n_kv):
            string()
            (vtype,) = read("I")
            skip_value(vtype)
        types = {}
        for _ in range(n_tensors):
            name = string()
            (n_dims,) = read("I")
            read("Q" * n_dims)
            (ttype,) = read("I")
            read("Q")  # offset
            types[name] = GGML_TYPES.get(ttype, f"type{ttype}")
        return types


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def f32(x):
    """A float32 as the shortest decimal that reads back to it."""
    return float(str(np.float32(x)))


def line(obj):
    return json.dumps(obj, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "quant-models"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "inference"))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    types = subprocess.check_output([os.path.join(ROOT, "scripts", "quant-models"), "--types"],
                                    text=True).split()
    prompts = []
    for kind, i in PROMPTS:
        text = chatml(CHAT_USER[i], SYSTEM if i % 2 == 0 else None) if kind == "chat" else RAW[i]
        prompts.append({"kind": kind, "text": text})

    records = []
    logits_out = bytearray()
    n_vocab = None
    for qtype in types:
        path = os.path.join(args.models, f"smollm2-{qtype}.gguf")
        if not os.path.exists(path):
            raise SystemExit(f"{path} is missing: run scripts/quant-models {args.models}")
        start = time.time()
        hist = {}
        tensor_types = gguf_tensor_types(path)
        for t in tensor_types.values():
            hist[t] = hist.get(t, 0) + 1
        hist = dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))
        llm = Llama(model_path=path, n_ctx=1024, n_batch=512, n_threads=args.threads,
                    logits_all=True, seed=0, verbose=False)
        if n_vocab is None:
            n_vocab = llm.n_vocab()
        assert llm.n_vocab() == n_vocab
        results = []
        for k, p in enumerate(prompts):
            ids = [int(t) for t in llm.tokenize(p["text"].encode(), add_bos=False,
                                                special=(p["kind"] == "chat"))]
            if "prompt_ids" in p:
                assert p["prompt_ids"] == ids, f"{qtype}: other prompt ids"
            else:
                p["prompt_ids"] = ids
            if k < LOGITS_PROMPTS:
                llm.reset()
                llm.eval(ids)
                last = np.array(llm.scores[len(ids) - 1], dtype=np.float32)
                logits_out += last.astype("<f2").tobytes()
            generated, gaps = greedy_with_gaps(llm, ids, N_PREDICT)
            results.append({"greedy": generated, "top2_gap": [f32(g) for g in gaps]})
        del llm
        records.append({"type": qtype, "file": os.path.basename(path),
                        "size": os.path.getsize(path), "sha256": sha256_of(path),
                        "tensor_types": hist,
                        "token_embd_type": tensor_types["token_embd.weight"],
                        "results": results})
        print(f"{qtype}: {time.time() - start:.1f} s", flush=True)

    os.makedirs(args.out, exist_ok=True)
    # One prompt, one type's scalars, one prompt's results per line.
    with open(os.path.join(args.out, "quant-types.json"), "w", encoding="utf-8") as f:
        f.write("{\n")
        f.write(f' "generator": "llama-cpp-python {llama_cpp_version}",\n')
        f.write(' "quantizer": "llama-quantize --allow-requantize --pure (scripts/quant-models)",\n')
        f.write(f' "n_vocab": {n_vocab},\n "n_predict": {N_PREDICT},\n')
        f.write(' "logits_file": "quant-types-logits.f16",\n')
        f.write(f' "logits_prompts": {LOGITS_PROMPTS},\n')
        f.write(' "prompts": [\n')
        f.write(",\n".join("  " + line(p) for p in prompts) + "\n ],\n")
        f.write(' "types": [\n')
        for r_i, r in enumerate(records):
            f.write("  {\n")
            for key in ("type", "file", "size", "sha256", "tensor_types", "token_embd_type"):
                f.write(f"   {line(key)}: {line(r[key])},\n")
            f.write('   "results": [\n')
            f.write(",\n".join("    " + line(x) for x in r["results"]) + "\n   ]\n")
            f.write("  }" + ("," if r_i + 1 < len(records) else "") + "\n")
        f.write(" ]\n}\n")
    with open(os.path.join(args.out, "quant-types-logits.f16"), "wb") as f:
        f.write(logits_out)

    # For information: how far each type's greedy text follows F32's, and its nearest tie.
    f32_results = records[0]["results"]
    for r in records:
        same = total = 0
        prefix = []
        for a, b in zip(r["results"], f32_results):
            same += sum(x == y for x, y in zip(a["greedy"], b["greedy"]))
            total += len(a["greedy"])
            n = next((i for i, (x, y) in enumerate(zip(a["greedy"], b["greedy"])) if x != y),
                     len(a["greedy"]))
            prefix.append(n)
        min_gap = min(min(x["top2_gap"]) for x in r["results"])
        print(f"{r['type']:7s} tokens equal to F32's {same}/{total}, common prefixes {prefix}, "
              f"min top-2 gap {min_gap:.3g}, {r['tensor_types']}")
    print(f"wrote {len(records)} types x {len(prompts)} prompts, logits {len(logits_out)} bytes")


if __name__ == "__main__":
    main()
