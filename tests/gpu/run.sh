#!/usr/bin/env bash
# Builds and runs every CTest test labelled `gpu`, for the GPU machine (H200, sm_90, no
# network). New GPU tests and benchmarks only need the `gpu` label to be picked up; the
# targets built are the tests' executables (CTest names them, as hearth_add_qtest does),
# so nothing else is compiled and the app is off.
#
#   tests/gpu/run.sh [extra ctest args, e.g. -R dequant]
#
# Environment:
#   HEARTH_GPU_BUILD_DIR  build directory (default: build-gpu in the repository root)
#   HEARTH_GPU_ARCH       CUDA architecture to compile for (default: 90)
#   HEARTH_GPU_DRY_RUN=1  check the script on a machine without a GPU: the tests may
#                         skip. Otherwise HEARTH_REQUIRE_GPU=1 is exported so that a
#                         test that finds no device fails instead of skipping.
set -euo pipefail

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

# "  Test  #3: tst_cuda_dequant" → tst_cuda_dequant
mapfile -t tests < <(ctest --test-dir "$build" -L '^gpu$' -N | sed -n 's/^ *Test *#[0-9]*: *//p')
if [[ ${#tests[@]} -eq 0 ]]; then
    echo "no tests labelled gpu (is HEARTH_WITH_CUDA on? see $build/configure.log)"
    exit 1
fi
phase "build (${#tests[@]} test targets, -j$jobs): ${tests[*]}"
cmake --build "$build" --target "${tests[@]}" -j "$jobs"
t_build=$(now)

phase "test"
set +e
ctest --test-dir "$build" -L '^gpu$' --output-on-failure "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
t_test=$(now)

# " 1/2 Test #3: tst_cuda_dequant ......   Passed    1.23 sec"
#       → tst_cuda_dequant  Passed  1.23   (results: Passed, ***Failed, ***Skipped, ...)
phase "summary"
printf '%-40s %-22s %10s\n' test result seconds
sed -n 's/^ *[0-9]*\/[0-9]* *Test *#[0-9]*: *\([^ ]*\) *\.*\**\(.*[^ ]\) \+\([0-9.]\+\) sec$/\1\t\2\t\3/p' "$log" |
    while IFS=$'\t' read -r name result secs; do
        printf '%-40s %-22s %10s\n' "$name" "${result%% }" "$secs"
    done
printf '\nconfigure %ss, build %ss, tests %ss, total %ss; ctest exit %s\n' \
    "$t_configure" $((t_build - t_configure)) $((t_test - t_build)) "$(now)" "$status"
exit "$status"
