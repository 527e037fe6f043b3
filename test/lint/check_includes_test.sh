#!/usr/bin/env bash
# The module-map check (scripts/check-includes.py) passes on the repository
# and fails, naming file, line and rule, on trees that break the map.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check="$root/scripts/check-includes.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$check" "$root" >/dev/null || { echo "FAIL: the repository breaks its module map"; python3 "$check" "$root"; exit 1; }

# case name | file | its contents | expected exit | expected text
run_case() {
  local name=$1 file=$2 body=$3 want_rc=$4 want_text=$5
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree/$(dirname "$file")"
  printf '%s\n' "$body" >"$tmp/tree/$file"
  set +e
  out=$(python3 "$check" "$tmp/tree" 2>&1)
  rc=$?
  set -e
  if [[ $rc -ne $want_rc ]] || [[ "$out" != *"$want_text"* ]]; then
    echo "FAIL $name: exit $rc (want $want_rc), output:"
    echo "$out"
    exit 1
  fi
  echo "ok   $name"
}

run_case "a leaf library includes the server" src/cel/x.cc '#include "src/server/health_server.h"' 1 \
  'src/cel/x.cc:1: src/cel may not include src/server/health_server.h (src/server)'
run_case "the plugin API includes the state" include/gantry/x.h '#include "src/state/cluster_state.h"' 1 \
  'include/gantry/x.h:1: api may not include src/state/cluster_state.h'
run_case "a plugin includes another plugin" plugins/a/a.h '#include "plugins/b/b.h"' 1 \
  "a plugin includes another plugin's header plugins/b/b.h"
run_case "client includes the scheduler" src/client/y.cc $'#include "src/api/pod.h"\n#include "src/scheduler/scheduler.h"' 1 \
  'src/client/y.cc:2: src/client may not include src/scheduler/scheduler.h'
run_case "an unknown module" src/newthing/z.cc '#include "src/api/pod.h"' 1 \
  'module src/newthing is not in the module map'
run_case "tests may include anything" src/cel/x_test.cc '#include "src/server/health_server.h"' 0 \
  'files follow the module map'
run_case "a downward include" src/scheduler/s.cc $'#include "src/state/cluster_state.h"\n#include "gantry/plugin.h"\n#include <vector>' 0 \
  '1 files follow the module map'
run_case "the known DRA-state exception" plugins/dra/p.cc '#include "src/state/dra_state.h"' 0 \
  'files follow the module map'
echo "check-includes: all cases pass"
