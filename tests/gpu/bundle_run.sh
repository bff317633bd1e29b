#!/usr/bin/env bash
# The runner inside a GPU bundle (made by `tests/gpu/run.sh --bundle`): runs every GPU test
# and the GPU benchmark from the bundle's own binaries and libraries, on a machine that has
# an NVIDIA driver but no Qt, spdlog or compiler setup of ours, and prints a short table.
#
#   tar xzf .gpu-bundle.tar.gz -C /tmp && /tmp/gpu-bundle/run [--out DIR] [--no-bench] [-R REGEX]
#
# Stages, in order of value, so that a run cut short still yields the most:
#   1. preflight: the driver against the runtime the bundle was built with (a clear stop);
#   2. every GPU test (ops, fp16 range, launch plans, models, graphs);
#   3. the benchmark, with asserted floors (bench_table.py --floors);
#   4. PTX-JIT: the kernel suites again with CUDA_FORCE_PTX_JIT=1 (what every non-Hopper
#      developer build runs), with the first launch's JIT time;
#   5. compute-sanitizer memcheck, racecheck, synccheck and initcheck over the kernel
#      suites' device tests and one model run with step graphs (when the tool is there).
# Every line printed also goes to DIR/summary.txt as it is printed (DIR: --out, else $OUT,
# else ./out beside the runner), with the tests' and tools' logs and gpu-bench.json.
# HEARTH_GPU_BUDGET_S (default 540): the whole run's seconds; each stage gets what is left
# (less 20 s for the summary), so a device command limit of 600 s is not hit.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/out}"
bench=1
filter=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) out="$2"; shift ;;
        --no-bench) bench=0 ;;
        -R) filter="$2"; shift ;;
        *) echo "usage: run [--out DIR] [--no-bench] [-R REGEX]"; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
say() { printf '%s\n' "$*" | tee -a "$summary"; }

# The bundle's libraries for its own programs only (not for nvidia-smi or python3).
libs="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_QPA_PLATFORM=offscreen HEARTH_REQUIRE_GPU=1
t_start=$SECONDS
budget=${HEARTH_GPU_BUDGET_S:-540}
left() { echo $((budget - (SECONDS - t_start) - 20)); }
status=0
results=()

say "== preflight"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 |
    tee -a "$summary" || true
# bundle.info: "runtime 13.0 needs R580" (written by run.sh --bundle).
need_branch="$(sed -n 's/.*needs R\([0-9]*\).*/\1/p' "$here/bundle.info" 2>/dev/null)"
[[ -f "$here/bundle.info" ]] && say "bundle: $(cat "$here/bundle.info")"
if [[ -z "$driver" ]]; then
    say "no NVIDIA driver answers (nvidia-smi): nothing can run"
    exit 1
fi
if [[ -n "$need_branch" && "${driver%%.*}" -lt "$need_branch" ]]; then
    say "the NVIDIA driver $driver is older than this bundle needs (R$need_branch): stopping"
    exit 1
fi

# run_suite NAME EXE ENVS ARGS [PREFIX...]: one test executable (under PREFIX, e.g. a
# sanitizer), its result line in the summary.
run_suite() {
    local name="$1" exe="$2" envs="$3" args="$4" log="$5"
    shift 5
    local env_list=() t0=$SECONDS rc
    if [[ "$envs" != "-" ]]; then IFS=';' read -ra env_list <<<"${envs//@BUNDLE@/$here/scratch}"; fi
    local limit
    limit=$(left)
    ((limit > 300)) && limit=300
    if ((limit < 10)); then
        results+=("$(printf '%-44s %-16s' "$name" "not run (budget)")")
        say "$(printf '%-44s %-16s' "$name" "not run (budget)")"
        return
    fi
    # shellcheck disable=SC2086  # the arguments are test function names
    LD_LIBRARY_PATH="$libs" timeout "$limit" env "${env_list[@]}" "$@" "$here/bin/$exe" $args \
        >>"$log" 2>&1
    rc=$?
    local result=Passed
    if ((rc != 0)); then result="FAILED (rc $rc)"; status=1; fi
    results+=("$(printf '%-44s %-16s %6ss' "$name" "$result" $((SECONDS - t0)))")
    say "$(printf '%-44s %-16s %6ss' "$name" "$result" $((SECONDS - t0)))"
}

say ""
say "== tests"
log="$out/gpu-tests.log"
: >"$log"
# tests.tsv: name, executable, environment (;-separated, "-" for none; @BUNDLE@ is a
# folder of the bundle's), arguments (tab-separated), from CTest's list of gpu tests.
mkdir -p "$here/scratch"
while IFS=$'\t' read -r name exe envs args; do
    [[ -n "$filter" && ! "$name" =~ $filter ]] && continue
    run_suite "$name" "$exe" "$envs" "$args" "$log"
done <"$here/tests.tsv"
grep -E '^(FAIL!|QWARN|QINFO)' "$log" | head -60 | tee -a "$summary"

if [[ $bench -eq 1 && $(left) -lt 30 ]]; then
    say ""
    say "== benchmark skipped: $(left)s of the budget left"
elif [[ $bench -eq 1 ]]; then
    say ""
    say "== benchmark (hearth-gpu-bench, at most $(left)s)"
    LD_LIBRARY_PATH="$libs" timeout "$(left)" "$here/bin/hearth-gpu-bench" >"$out/gpu-bench.json" \
        2>"$out/gpu-bench.log"
    brc=$?
    grep -v '^\[' "$out/gpu-bench.log" | tail -40 | tee -a "$summary"
    [[ $brc -ne 0 ]] && say "hearth-gpu-bench exited with $brc" && status=1
    if [[ -s "$out/gpu-bench.json" ]] && command -v python3 >/dev/null; then
        python3 "$here/bench_table.py" --floors "$out/gpu-bench.json" 2>&1 | tee -a "$summary"
        [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
    fi
fi

# The kernel suites: their executables from tests.tsv (tst_cuda_*, not the models).
mapfile -t kernel_suites < <(awk -F'\t' '$2 ~ /^tst_cuda_(dequant|matmul|matmul_range|elementwise|attention_device|top_k)$/ && !seen[$2]++ {print $2}' "$here/tests.tsv")

say ""
say "== PTX-JIT (CUDA_FORCE_PTX_JIT=1: the driver compiles the kernels' PTX)"
jit_log="$out/gpu-jit.log"
: >"$jit_log"
for exe in "${kernel_suites[@]}"; do
    [[ -n "$filter" && ! "$exe" =~ $filter ]] && continue
    run_suite "jit $exe" "$exe" "CUDA_FORCE_PTX_JIT=1;CUDA_CACHE_DISABLE=1" "" "$jit_log"
done
# The first launch's JIT time: one small device test, cache off, against the same with SASS.
t0=$SECONDS
LD_LIBRARY_PATH="$libs" CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 timeout 120 \
    "$here/bin/tst_cuda_matmul" kernelChoice deviceBatchInvariance >>"$jit_log" 2>&1
jit_s=$((SECONDS - t0))
t0=$SECONDS
LD_LIBRARY_PATH="$libs" timeout 120 "$here/bin/tst_cuda_matmul" kernelChoice \
    deviceBatchInvariance >>"$jit_log" 2>&1
say "first launch of tst_cuda_matmul's device tests: ${jit_s}s with PTX-JIT, $((SECONDS - t0))s with SASS"

sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)"
say ""
if [[ -z "$sanitizer" ]]; then
    say "== compute-sanitizer: not found on this machine (skipped)"
else
    say "== compute-sanitizer ($sanitizer)"
    san_log="$out/gpu-sanitizer.log"
    : >"$san_log"
    for tool in memcheck racecheck synccheck initcheck; do
        for exe in "${kernel_suites[@]}"; do
            [[ -n "$filter" && ! "$exe" =~ $filter ]] && continue
            run_suite "$tool $exe" "$exe" "-" "" "$san_log" "$sanitizer" --tool "$tool" \
                --error-exitcode 9 --print-limit 20
        done
    done
    # One model run with step graphs (decode steps captured and replayed).
    if awk -F'\t' '$2 == "tst_cuda_model"' "$here/tests.tsv" | grep -q .; then
        run_suite "memcheck tst_cuda_model graphs" tst_cuda_model "-" "stepGraphsOnTheGpu" \
            "$san_log" "$sanitizer" --tool memcheck --error-exitcode 9 --print-limit 20
    fi
    grep -E '^========= (Invalid|Race|Barrier|Uninitialized|ERROR)' "$san_log" | head -20 |
        tee -a "$summary"
fi

say ""
say "== summary ($((SECONDS - t_start))s)"
printf '%s\n' "${results[@]}" | tee -a "$summary"
exit "$status"
