#!/usr/bin/env bash
# Builds and runs test suites under a sanitizer, each in its own build folder.
#
# Usage: scripts/sanitize.sh asan|tsan [ci|all] [build|test|both]
#   asan  ASan + UBSan (-fno-sanitize-recover=all), folder $ASAN_DIR (build-asan):
#         clang 16 at -O0 with libFuzzer's coverage instrumentation, so the
#         same folder also builds the fuzz targets (`fuzz` scope)
#   tsan  TSan on the suites that run threads, folder $TSAN_DIR (build-tsan)
#   ci    the suites `make test` runs (default); all: every suite of the mode
#         (today the same sets); fuzz (asan only): the fuzz targets
#   build only builds, test only runs (after a build), both (default)
#
# Only the binaries of the selected suites are built (ctest's view of the
# test commands names them), never the benchmarks or the gantry binary.
# Uses ccache like the main build (the Makefile exports CCACHE_BASEDIR).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:?usage: scripts/sanitize.sh asan|tsan [ci|all]}
scope=${2:-ci}
phase=${3:-both}
jobs=${JOBS:-$(nproc)}

# Suites under TSan: every test binary that starts threads (queue, scheduler
# loop + binding pool, client: HTTP, reflector, event writer, leader
# election; health/metrics servers, parallel framework, interning).
tsan_suites='tsan_annotations_test|queue_test|scheduler_test|client_test|server_test|metrics_test|framework_test|api_intern_test'

case "$mode" in
  asan)
    dir=${ASAN_DIR:-build-asan}
    # clang at -O0: UBSan makes gcc's and clang's -O1 compiles 2-3x slower,
    # and the suites are short. GANTRY_FUZZ instruments every library for
    # ASan + UBSan (and coverage), so the fuzz targets build here too.
    compilers=(CC=clang-16 CXX=clang++-16)
    opt="-O0 -g1"
    cmake_flags=(-DGANTRY_FUZZ=ON)
    # Unit (incl. simulation) and conformance suites; the cli.* checks run the
    # gantry binary and stay in the plain build.
    select=(-L 'unit|conformance' -E '^cli\.')
    [ "$scope" = fuzz ] && select=(-L fuzz)
    ;;
  tsan)
    dir=${TSAN_DIR:-build-tsan}
    compilers=()
    opt="-O1 -g1"
    cmake_flags=(-DGANTRY_TSAN=ON)
    select=(-R "^(${tsan_suites})\$")
    ;;
  *)
    echo "sanitize.sh: unknown mode '$mode' (asan or tsan)" >&2
    exit 2
    ;;
esac
case "$scope" in
  ci | all) ;;
  fuzz) [ "$mode" = asan ] || {
    echo "sanitize.sh: the fuzz scope is asan only" >&2
    exit 2
  } ;;
  *)
    echo "sanitize.sh: unknown scope '$scope' (ci, all or fuzz)" >&2
    exit 2
    ;;
esac

if [ ! -f "$dir/build.ninja" ]; then
  # -g1: line numbers in reports at a fraction of -g's compile time;
  # assertions stay on (no NDEBUG).
  mkdir -p "$dir"
  env "${compilers[@]}" cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
    -DCMAKE_CXX_FLAGS_SANITIZE="$opt" -DCMAKE_C_FLAGS_SANITIZE="$opt" \
    -DGANTRY_BUILD_BENCH=OFF "${cmake_flags[@]}" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log"
    exit 1
  }
fi

# Each selected test runs the binary of the same name (gantry_add_test and the
# conformance drivers); those binaries are the targets to build.
targets=$(ctest --test-dir "$dir" "${select[@]}" --show-only=json-v1 | python3 -c '
import json, subprocess, sys
known = set()
for line in subprocess.run(["ninja", "-C", sys.argv[1], "-t", "targets", "all"],
                           capture_output=True, text=True, check=True).stdout.splitlines():
    known.add(line.split(":", 1)[0])
names = sorted({t["name"] for t in json.load(sys.stdin)["tests"]})
missing = [n for n in names if n not in known]
if missing:
    sys.exit("sanitize.sh: selected tests without a binary of their name: " + " ".join(missing))
print(" ".join(names))
' "$dir")
if [ -z "$targets" ]; then
  echo "sanitize.sh: no $mode suites selected" >&2
  exit 1
fi
echo "sanitize.sh: $mode ($scope) builds: $targets"
if [ "$phase" != test ]; then
  # shellcheck disable=SC2086  # one word per target
  cmake --build "$dir" -j "$jobs" --target $targets
fi
[ "$phase" = build ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
ctest --test-dir "$dir" "${select[@]}" --output-on-failure -j "$jobs"
