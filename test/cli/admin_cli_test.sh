#!/usr/bin/env bash
# Command-line checks of `gantry explain` and `gantry whatif` offline
# (--cluster): readable tables, --json, and exit codes for bad input.
# The live path (--server) is covered by test/e2e/admin_test.py explain.
set -u
gantry="$1"
here="$(cd "$(dirname "$0")" && pwd)/admin"
fail=0
passed=0
check() {  # name, want_rc, want_substring, args...
  local name="$1" want_rc="$2" want="$3"; shift 3
  local out rc
  out="$("$gantry" "$@" 2>&1)"; rc=$?
  if [ "$rc" != "$want_rc" ] || [[ "$out" != *"$want"* ]]; then
    echo "FAIL $name: rc=$rc (want $want_rc) output: $out"; fail=$((fail + 1))
  else
    echo "ok   $name"; passed=$((passed + 1))
  fi
}
c=(--cluster "$here/cluster.yaml")
check "reasons table" 0 $'3      NodeResourcesFit  Insufficient nvidia.com/gpu                          cpu-a, gpu-b, gpu-c\n  1      TaintToleration   node(s) had untolerated taint {dedicated: training}  gpu-a' \
  explain train-0 -n ml "${c[@]}"
check "candidates with scores" 0 $'NODE   TOTAL  TaintToleration' explain pod/infer-0 -n ml "${c[@]}"
check "json" 0 '"plugin": "TaintToleration"' explain train-0 -n ml "${c[@]}" --json
check "unknown pod" 1 'NOT_FOUND: Pod ml/nope not found' explain nope -n ml "${c[@]}"
check "unknown podgroup" 1 'NOT_FOUND: PodGroup ml/nope' explain podgroup/nope -n ml "${c[@]}"
check "bad kind" 2 'kind must be pod or podgroup' explain deploy/x -n ml "${c[@]}"
check "server and cluster" 2 'exactly one of --server ADDR and --cluster SNAPSHOT' explain x --server 127.0.0.1:1 "${c[@]}"
check "gang fits" 0 $'ml/small  yes' whatif -f "$here/small-job.yaml" "${c[@]}"
check "gang does not fit" 0 'pod group ml/job: 1 of minCount 2 members fit' whatif -f "$here/gang.yaml" "${c[@]}"
check "gang json" 0 '"scheduled": 2' whatif -f "$here/small-job.yaml" "${c[@]}" --json
check "malformed objects name file and line" 2 'bad.yaml:5:' whatif -f "$here/bad.yaml" "${c[@]}"
check "unreadable file" 2 'cannot read' whatif -f /nonexistent.yaml "${c[@]}"
check "no server" 1 'UNAVAILABLE' explain x -n ml --server 127.0.0.1:1 --timeout 2
if [ "$fail" -ne 0 ]; then echo "$fail failed"; exit 1; fi
echo "$passed passed, 0 failed"
