#!/usr/bin/env python3
"""Prints hearth-gpu-bench's JSON (engine/bench/gpu_bench.h) as a short table."""
import json
import sys


def main(path):
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
    p = r.get("shared_persona")
    if p:
        for run in p["runs"]:
            print(f"shared persona ({p['model']}), {run['conversations']} conversations: "
                  f"{run['shared_tokens_per_s']:.0f} vs {run['unshared_tokens_per_s']:.0f} "
                  f"tokens/s unshared ({run['ratio']:.2f}x)")


if __name__ == "__main__":
    main(sys.argv[1])
