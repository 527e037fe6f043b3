#!/usr/bin/env bash
# End-to-end checks of `gantry selector eval` (output lines and exit codes).
set -u
gantry="$1"
here="$(cd "$(dirname "$0")" && pwd)"
fail=0
check() {  # name, want_rc, want_substring, args... (--slices defaults to the shipped file)
  local name="$1" want_rc="$2" want="$3"; shift 3
  local out rc slices=(--slices "$here/slices.yaml")
  [[ " $* " == *" --slices "* ]] && slices=()
  out="$("$gantry" selector eval "${slices[@]}" "$@" 2>&1)"; rc=$?
  if [ "$rc" != "$want_rc" ] || [[ "$out" != *"$want"* ]]; then
    echo "FAIL $name: rc=$rc (want $want_rc) output: $out"; fail=$((fail + 1))
  else
    echo "ok   $name"
  fi
}
check "class then selector" 0 $'node-1/gpu-0 true\nnode-1/gpu-1 false' --class gpu.example.com \
  --expr 'device.attributes["gpu.example.com"].model == "H100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
check "unqualified attribute in the driver's domain" 0 'node-1/gpu-1 true' --expr 'device.attributes["gpu.example.com"].model == "A100" || device.driver != "gpu.example.com"'
check "missing key is an evaluation error" 1 'error: no such key: nope' --expr 'device.attributes["gpu.example.com"].nope == 1'
check "syntax error with line:column" 2 '<input>:1:17' --expr 'device.driver =='
check "unknown class" 2 'DeviceClass "nope"' --class nope --expr 'true'
check "unreadable file" 2 'no such file' --slices /nonexistent.yaml --expr 'true'
if [ "$fail" -ne 0 ]; then echo "$fail failed"; exit 1; fi
echo "6 passed, 0 failed"
