#!/usr/bin/env bash
# Builds and runs every CTest test labelled `gpu`, for the GPU machine (H200, sm_90, no
# network). New GPU tests and benchmarks only need the `gpu` label to be picked up; the
# targets built are the tests' executables (CTest names them, as hearth_add_qtest does, or
# a label target=NAME does), so nothing else is compiled and the app is off.
#
#   tests/gpu/run.sh [extra ctest args, e.g. -R dequant]
#   tests/gpu/run.sh --bundle [FILE]
#
# The second form builds here and packs the GPU tests, hearth-gpu-bench and every library
# they load (Qt Core and Test, spdlog, ICU, ...) into FILE (default .gpu-bundle.tar.gz in
# the repository root, git-ignored): the GPU machine has the driver and CUDA but none of
# our build dependencies and no network. There:
#   tar xzf .gpu-bundle.tar.gz -C /tmp && /tmp/gpu-bundle/run
# runs the preflight, every test, the benchmark with its floors, the kernel suites under
# PTX-JIT and compute-sanitizer, and prints the same kind of table (tests/gpu/bundle_run.sh;
# /tmp/gpu-bundle/run --out DIR keeps every result there as it is printed). Both forms finish with the benchmark (hearth-gpu-bench).
#
# Environment:
#   HEARTH_GPU_BUILD_DIR  build directory (default: build-gpu in the repository root)
#   HEARTH_GPU_ARCH       CUDA architecture to compile for (default: 90)
#   HEARTH_GPU_DRY_RUN=1  check the script on a machine without a GPU: the tests may
#                         skip. Otherwise HEARTH_REQUIRE_GPU=1 is exported so that a
#                         test that finds no device fails instead of skipping.
set -euo pipefail

bundle=""
if [[ "${1:-}" == "--bundle" ]]; then
    bundle="${2:-}"
    [[ -z "$bundle" ]] && bundle=".gpu-bundle.tar.gz"
    export HEARTH_GPU_DRY_RUN=1  # built here: no device needed
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${HEARTH_GPU_BUILD_DIR:-$root/build-gpu}"
arch="${HEARTH_GPU_ARCH:-90}"
jobs="$(nproc 2>/dev/null || echo 4)"
log="$build/gpu-ctest.log"
t_start=$SECONDS

phase() { printf '\n== %s\n' "$*"; }
now() { echo $((SECONDS - t_start)); }

phase "device"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader || true
else
    echo "nvidia-smi not found"
fi
if [[ "${HEARTH_GPU_DRY_RUN:-0}" != "0" ]]; then
    echo "dry run: GPU tests may skip"
    unset HEARTH_REQUIRE_GPU
else
    export HEARTH_REQUIRE_GPU=1
fi

phase "configure ($build, sm_$arch)"
gen=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
mkdir -p "$build"
cmake -S "$root" -B "$build" "${gen[@]}" -DHEARTH_CUDA=ON -DHEARTH_BUILD_APP=OFF \
    -DHEARTH_BUILD_TESTS=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; echo "configure failed"; exit 1; }
t_configure=$(now)

# The executables of the gpu tests: a test's name, or its label target=NAME when it runs
# another suite's executable with arguments (tst_kv_tiers_cuda).
mapfile -t tests < <(ctest --test-dir "$build" -L '^gpu$' --show-only=json-v1 | python3 -c '
import json, sys
seen = []
for t in json.load(sys.stdin).get("tests", []):
    target = t["name"]
    for p in t.get("properties", []):
        if p["name"] == "LABELS":
            target = next((l[7:] for l in p["value"] if l.startswith("target=")), target)
    if target not in seen:
        seen.append(target)
print("\n".join(seen))')
if [[ ${#tests[@]} -eq 0 ]]; then
    echo "no tests labelled gpu (is HEARTH_WITH_CUDA on? see $build/configure.log)"
    exit 1
fi
phase "build (${#tests[@]} test targets and hearth-gpu-bench, -j$jobs): ${tests[*]}"
cmake --build "$build" --target "${tests[@]}" hearth-gpu-bench -j "$jobs"
t_build=$(now)

if [[ -n "$bundle" ]]; then
    phase "bundle ($bundle)"
    stage="$(mktemp -d)/gpu-bundle"
    mkdir -p "$stage/bin" "$stage/lib"
    # tests.tsv: name, executable, environment, arguments, from CTest's own list of the gpu
    # tests. The environment (CTest's ENVIRONMENT property, e.g. the KV tiers test's device)
    # is ;-separated, "-" when none; paths into this build tree become @BUNDLE@, which the
    # runner makes a folder of its own.
    ctest --test-dir "$build" -L '^gpu$' --show-only=json-v1 | python3 -c '
import json, os, shutil, sys
stage, build = sys.argv[1], sys.argv[2]
for t in json.load(sys.stdin)["tests"]:
    cmd = t["command"]
    exe = os.path.basename(cmd[0])
    shutil.copy2(cmd[0], os.path.join(stage, "bin", exe))
    env = []
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env = [e.replace(build, "@BUNDLE@") for e in p["value"]]
    print("\t".join([t["name"], exe, ";".join(env) or "-", " ".join(cmd[1:])]))
' "$stage" "$build" >"$stage/tests.tsv"
    cp "$build/engine/hearth-gpu-bench" "$stage/bin/"
    strip --strip-unneeded "$stage"/bin/*
    # Every library the programs load except the C and C++ runtimes, which the GPU
    # machine's newer system has.
    for exe in "$stage"/bin/*; do ldd "$exe"; done |
        awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
        grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' |
        while read -r lib; do cp -L "$lib" "$stage/lib/"; done
    # The runtime the kernels were built with and the driver branch it needs (the
    # runner's preflight stops on an older driver with that said).
    cuda_release="$(nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')"
    case "${cuda_release%%.*}" in
        13) need=580 ;; 12) need=525 ;; *) need=0 ;;
    esac
    echo "runtime $cuda_release needs R$need, built for sm_$arch" >"$stage/bundle.info"
    cp "$root/tests/gpu/bundle_run.sh" "$stage/run"
    cp "$root/tests/gpu/bench_table.py" "$stage/"
    chmod +x "$stage/run"
    case "$bundle" in /*) ;; *) bundle="$root/$bundle" ;; esac
    tar czf "$bundle" -C "$(dirname "$stage")" gpu-bundle
    rm -rf "$(dirname "$stage")"
    printf '%s: %s, %s tests\n' "$bundle" "$(du -h "$bundle" | cut -f1)" \
        "$(tar xzf "$bundle" -O gpu-bundle/tests.tsv | wc -l)"
    exit 0
fi

phase "test"
set +e
ctest --test-dir "$build" -L '^gpu$' --output-on-failure "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
t_test=$(now)

phase "benchmark (hearth-gpu-bench)"
bench_args=()
model="$("$root/scripts/fetch-model" --print 2>/dev/null || true)"
[[ -n "$model" && -f "$model" ]] && bench_args=(--model "$model")
set +e
timeout 420 "$build/engine/hearth-gpu-bench" "${bench_args[@]}" >"$build/gpu-bench.json" \
    2>"$build/gpu-bench.log"
bench_status=$?
set -e
grep -v '^\[' "$build/gpu-bench.log" | tail -40
if [[ $bench_status -eq 0 ]]; then
    python3 "$root/tests/gpu/bench_table.py" --floors "$build/gpu-bench.json" ||
        { [[ "${HEARTH_GPU_DRY_RUN:-0}" == "0" ]] && status=1; }
else
    echo "hearth-gpu-bench exited with $bench_status (dry run: expected without a GPU)"
    [[ "${HEARTH_GPU_DRY_RUN:-0}" == "0" ]] && status=1
fi
t_bench=$(now)

# " 1/2 Test #3: tst_cuda_dequant ......   Passed    1.23 sec"
#       → tst_cuda_dequant  Passed  1.23   (results: Passed, ***Failed, ***Skipped, ...)
phase "summary"
printf '%-40s %-22s %10s\n' test result seconds
sed -n 's/^ *[0-9]*\/[0-9]* *Test *#[0-9]*: *\([^ ]*\) *\.*\**\(.*[^ ]\) \+\([0-9.]\+\) sec$/\1\t\2\t\3/p' "$log" |
    while IFS=$'\t' read -r name result secs; do
        printf '%-40s %-22s %10s\n' "$name" "${result%% }" "$secs"
    done
printf '\nconfigure %ss, build %ss, tests %ss, benchmark %ss, total %ss; exit %s\n' \
    "$t_configure" $((t_build - t_configure)) $((t_test - t_build)) $((t_bench - t_test)) \
    "$(now)" "$status"
exit "$status"
