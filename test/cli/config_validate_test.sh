#!/usr/bin/env bash
# End-to-end checks of `gantry config validate` (output and exit codes).
set -u
gantry="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
check() {  # name, want_rc, want_substring, files...
  local name="$1" want_rc="$2" want="$3"; shift 3
  local out rc
  out="$("$gantry" config validate "$@" 2>&1)"; rc=$?
  if [ "$rc" != "$want_rc" ] || [[ "$out" != *"$want"* ]]; then
    echo "FAIL $name: rc=$rc (want $want_rc) output: $out"; fail=$((fail + 1))
  else
    echo "ok   $name"; pass=$((pass + 1))
  fi
}
cat > "$tmp/bad-arg.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: gantry-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Sideways
YAML
cat > "$tmp/two.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
- schedulerName: b
YAML
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n' > "$tmp/syntax.yaml"
check "the deployed configuration" 0 "deploy/config.yaml: valid: profiles [gantry-scheduler]" "$root/deploy/config.yaml"
check "its warnings are printed" 0 'warning: ' "$root/deploy/config.yaml"
check "two profiles" 0 "two.yaml: valid: profiles [a, b]" "$tmp/two.yaml"
check "a bad plugin arg names file, line and field" 1 \
  "bad-arg.yaml:9:15: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.type" "$tmp/bad-arg.yaml"
check "a YAML syntax error has line:column" 1 "syntax.yaml:4:1" "$tmp/syntax.yaml"
check "a missing file" 1 "error: /nonexistent.yaml" /nonexistent.yaml
check "one bad file fails the run, the good one is still reported" 1 "two.yaml: valid" "$tmp/bad-arg.yaml" "$tmp/two.yaml"
if [ "$fail" -ne 0 ]; then echo "$pass passed, $fail failed"; exit 1; fi
echo "$pass passed, 0 failed"
