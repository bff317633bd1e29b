#!/usr/bin/env bash
# The runner inside a GPU bundle (made by `tests/gpu/run.sh --bundle`): runs every GPU test
# and the GPU benchmark from the bundle's own binaries and libraries, on a machine that has
# an NVIDIA driver but no Qt, spdlog or compiler setup of ours, and prints a short table.
#
#   tar xzf .gpu-bundle.tar.gz -C /tmp && /tmp/gpu-bundle/run [--no-bench] [-R REGEX]
#
# Results also go to $OUT (when set) as gpu-tests.log and gpu-bench.json.
# HEARTH_GPU_BUDGET_S (default 540): the whole run's seconds; the benchmark gets what the
# tests leave (less 20 s for the summary), so a device command limit of 600 s is not hit.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
bench=1
filter=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --no-bench) bench=0 ;;
        -R) filter="$2"; shift ;;
        *) echo "usage: run [--no-bench] [-R REGEX]"; exit 2 ;;
    esac
    shift
done

# The bundle's libraries for its own programs only (not for nvidia-smi or python3).
libs="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_QPA_PLATFORM=offscreen HEARTH_REQUIRE_GPU=1
t_start=$SECONDS

printf '== device\n'
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 || true

printf '\n== tests\n'
log="$out/gpu-tests.log"
: >"$log"
results=()
status=0
# tests.tsv: name, executable, environment (;-separated, "-" for none; @BUNDLE@ is a
# folder of the bundle's), arguments (tab-separated), from CTest's list of gpu tests.
mkdir -p "$here/scratch"
while IFS=$'\t' read -r name exe envs args; do
    [[ -n "$filter" && ! "$name" =~ $filter ]] && continue
    env_list=()
    if [[ "$envs" != "-" ]]; then IFS=';' read -ra env_list <<<"${envs//@BUNDLE@/$here/scratch}"; fi
    t0=$SECONDS
    # shellcheck disable=SC2086  # the arguments are test function names
    LD_LIBRARY_PATH="$libs" timeout 300 env "${env_list[@]}" "$here/bin/$exe" $args >>"$log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    if [[ $rc -eq 0 ]]; then result=Passed; else result="FAILED (rc $rc)"; status=1; fi
    results+=("$(printf '%-36s %-16s %6ss' "$name" "$result" "$secs")")
    printf '%-36s %-16s %6ss\n' "$name" "$result" "$secs"
done <"$here/tests.tsv"
grep -E '^(FAIL!|QWARN|QINFO)' "$log" | head -60

left=$(( ${HEARTH_GPU_BUDGET_S:-540} - (SECONDS - t_start) - 20 ))
if [[ $bench -eq 1 && $left -lt 30 ]]; then
    printf '\n== benchmark skipped: %ss of the budget left\n' "$left"
elif [[ $bench -eq 1 ]]; then
    printf '\n== benchmark (hearth-gpu-bench, at most %ss)\n' "$left"
    LD_LIBRARY_PATH="$libs" timeout "$left" "$here/bin/hearth-gpu-bench" >"$out/gpu-bench.json" \
        2>"$out/gpu-bench.log"
    brc=$?
    grep -v '^\[' "$out/gpu-bench.log" | tail -40
    [[ $brc -ne 0 ]] && echo "hearth-gpu-bench exited with $brc" && status=1
    if [[ -s "$out/gpu-bench.json" ]] && command -v python3 >/dev/null; then
        python3 "$here/bench_table.py" "$out/gpu-bench.json" || true
    fi
fi

printf '\n== summary (%ss)\n' $((SECONDS - t_start))
printf '%s\n' "${results[@]}"
exit "$status"
