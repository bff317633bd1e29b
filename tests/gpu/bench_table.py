#!/usr/bin/env python3
"""Prints hearth-gpu-bench's JSON (engine/bench/gpu_bench.h) as a short table.

    bench_table.py [--floors] RESULTS.json

With --floors, also checks the floors the GPU work is held to and exits 1 when one fails:
batch-1 decode (batch-invariant numerics, the engine's default) reads the weights at 50 %
or more of the copy bandwidth measured in the same run on the llama-1b and llama-8b shapes;
the engine thread's CPU time stays under 10 % of its steps' wall time at batch 1 (it
sleeps while the GPU works); top-64 of a 262,144 vocabulary for 32 rows under 50 us; a
shared persona serves more tokens per second than unshared ones.
"""
import json
import sys

FLOOR_BANDWIDTH = 0.50
CEILING_ENGINE_CPU = 0.10
CEILING_TOP_K_US = 50.0


def floors(r):
    failed = 0
    top_k = r.get("top_k")
    if top_k:
        us = top_k["us_per_step"]["32"]
        ok = us < CEILING_TOP_K_US
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} top-{top_k['k']} of {top_k['vocab']} for 32 rows: "
              f"{us:.1f} us (ceiling {CEILING_TOP_K_US})")
    for m in r["models"]:
        inv = m["invariant"]
        name = f"{m['model']} {m['type']}"
        if m["model"] in ("llama-1b", "llama-8b"):
            bw = inv.get("decode_b1_bandwidth_fraction", 0)
            ok = bw >= FLOOR_BANDWIDTH
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name}: batch-1 decode at {bw:.3f} of the "
                  f"bandwidth (floor {FLOOR_BANDWIDTH})")
        cpu = inv.get("engine_thread_cpu_fraction", {}).get("1")
        if cpu is not None:
            ok = cpu < CEILING_ENGINE_CPU
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name}: engine thread busy {cpu:.3f} of its "
                  f"batch-1 steps (ceiling {CEILING_ENGINE_CPU})")
    p = r.get("shared_persona")
    if p:
        for run in p["runs"]:
            ok = run["ratio"] > 1.0
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} shared persona, {run['conversations']} "
                  f"conversations: {run['ratio']:.2f}x unshared (floor > 1)")
    return failed


def main(path, check_floors=False):
    with open(path) as f:
        r = json.load(f)
    d = r["device"]
    print(f"{d['name']} (sm {d['compute_capability']}): copy bandwidth "
          f"{d['copy_bandwidth_gb_per_s']:.0f} GB/s, nominal fp16 tensor "
          f"{d['nominal_fp16_tensor_tflops']:.0f} TFLOP/s")
    print(f"{'model':10} {'type':5} {'prefill t/s':>11} {'peak':>6} "
          f"{'b1 t/s':>8} {'bw':>6} {'b8 t/s':>8} {'b32 t/s':>8} {'b1 fast':>8} "
          f"{'b1 nograph':>10} {'b32 nograph':>11} {'b1 serial':>9} {'b32 serial':>10} "
          f"{'host us b1/b32':>14} {'cpu b1':>6}")
    for m in r["models"]:
        inv, fast = m["invariant"], m["fastest"]
        dec, fdec = inv["decode_tokens_per_s"], fast["decode_tokens_per_s"]
        ndec = m.get("invariant_no_graphs", {}).get("decode_tokens_per_s", {})
        sdec = m.get("invariant_no_overlap", {}).get("decode_tokens_per_s", {})
        print(f"{m['model']:10} {m['type']:5} {inv.get('prefill_tokens_per_s', 0):11.0f} "
              f"{inv.get('prefill_peak_fraction', 0):6.3f} {dec['1']:8.1f} "
              f"{inv.get('decode_b1_bandwidth_fraction', 0):6.3f} {dec['8']:8.1f} "
              f"{dec['32']:8.1f} {fdec['1']:8.1f} {ndec.get('1', 0):10.1f} "
              f"{ndec.get('32', 0):11.1f} {sdec.get('1', 0):9.1f} {sdec.get('32', 0):10.1f} "
              f"{inv.get('host_us_per_step', {}).get('1', 0):6.1f}/"
              f"{inv.get('host_us_per_step', {}).get('32', 0):<7.1f} "
              f"{inv.get('engine_thread_cpu_fraction', {}).get('1', 0):6.3f}")
    if r.get("top_k"):
        t = r["top_k"]
        print(f"top-{t['k']} of {t['vocab']}: " +
              ", ".join(f"{rows} rows {us:.1f} us" for rows, us in t["us_per_step"].items()))
    p = r.get("shared_persona")
    if p:
        for run in p["runs"]:
            print(f"shared persona ({p['model']}), {run['conversations']} conversations: "
                  f"{run['shared_tokens_per_s']:.0f} vs {run['unshared_tokens_per_s']:.0f} "
                  f"tokens/s unshared ({run['ratio']:.2f}x)")


    if check_floors and floors(r):
        sys.exit(1)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--floors"]
    main(args[0], check_floors="--floors" in sys.argv[1:])
