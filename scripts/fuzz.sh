#!/usr/bin/env bash
# Runs libFuzzer targets of a fuzz build (see test/fuzz/CMakeLists.txt).
#
# Usage: scripts/fuzz.sh BUILD_DIR [TARGET...]
#   No TARGET: every target built in BUILD_DIR/fuzz, one after the other.
#   FUZZ_SECONDS (default 10): run time of each target.
#   FUZZ_RSS_MB (default 2048), FUZZ_TIMEOUT (default 10 s per input).
#
# Inputs come from the seed corpus test/fuzz/corpus/TARGET (read only), the
# generated seeds BUILD_DIR/fuzz/seeds/TARGET and the working corpus
# BUILD_DIR/fuzz/corpus/TARGET, where new inputs are kept between runs.
# A crash leaves its input in BUILD_DIR/fuzz/artifacts/ and fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: scripts/fuzz.sh BUILD_DIR [TARGET...]}" && pwd)
shift
seconds=${FUZZ_SECONDS:-10}
rss_mb=${FUZZ_RSS_MB:-2048}
timeout_s=${FUZZ_TIMEOUT:-10}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$build"/fuzz/*_fuzz; do
    [ -x "$f" ] && targets+=("$(basename "$f")")
  done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets in $build/fuzz" >&2
  exit 1
fi

# Longest input worth trying, per target.
max_len() {
  case "$1" in
    quantity_fuzz) echo 64 ;;
    cel_fuzz | status_fuzz) echo 2048 ;;
    *) echo 8192 ;;
  esac
}

# Symbolized stacks in reports (clang-16's runtime does not find it by itself).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-16 llvm-symbolizer; do
    if command -v "$s" >/dev/null 2>&1; then
      export ASAN_SYMBOLIZER_PATH
      ASAN_SYMBOLIZER_PATH=$(command -v "$s")
      break
    fi
  done
fi

mkdir -p "$build/fuzz/artifacts"
failed=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: $bin is not built" >&2
    exit 1
  fi
  work="$build/fuzz/corpus/$t"
  mkdir -p "$work"
  dirs=("$work")
  [ -d "$root/test/fuzz/corpus/$t" ] && dirs+=("$root/test/fuzz/corpus/$t")
  [ -d "$build/fuzz/seeds/$t" ] && dirs+=("$build/fuzz/seeds/$t")
  args=(-max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout="$timeout_s"
    -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -print_final_stats=1
    -artifact_prefix="$build/fuzz/artifacts/$t-")
  dict="$root/test/fuzz/dict/${t%_fuzz}.dict"
  [ -f "$dict" ] && args+=(-dict="$dict")
  echo "fuzz.sh: $t for ${seconds}s"
  if ! "$bin" "${args[@]}" "${dirs[@]}" 2>"$build/fuzz/$t.log"; then
    tail -n 60 "$build/fuzz/$t.log" >&2
    echo "fuzz.sh: $t FAILED (log: $build/fuzz/$t.log)" >&2
    failed=1
  else
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done ' "$build/fuzz/$t.log" || true
  fi
done
exit $failed
