#!/usr/bin/env bash
# `make test-upstream-e2e`: kube-scheduler's own e2e scheduling tests (e2e.test of Kubernetes
# v1.37.2, focus in focus.txt, skips with reasons in skip.txt), run twice on the same kind of
# loopback control plane with kwok as the kubelet of every node: once with upstream
# kube-scheduler v1.37.2 as the default scheduler, once with Gantry in its place. Then prints the
# side-by-side report (report.py) and writes it to <out>/report.md. See docs/conformance.md.
#
# Steps: build.sh (e2e.test + kwok, cached; builds the control plane too if needed), then
# run.py run --scheduler upstream, run.py run --scheduler gantry, report.py.
#
# Exit codes: 0 every test that passed with upstream passed with Gantry; 1 at least one did not
# (the report lists them); 2 a run did not complete; 3 Go/module proxy unavailable (nothing built).
#
# Environment:
#   GANTRY_BIN                    the gantry binary (default build/bin/gantry; copied before use)
#   GANTRY_UPSTREAM_E2E_OUT       result dir (default $GANTRY_CACHE/upstream-e2e/results/<UTC time>)
#   GANTRY_UPSTREAM_E2E_PARALLEL  1 = run both schedulers at the same time (two control planes;
#                                 faster, but on a small machine timing-sensitive tests suffer)
#   GANTRY_UPSTREAM_E2E_ONLY      upstream | gantry: run just one scheduler (no report)
#   GANTRY_CACHE, GANTRY_BUILD_JOBS: as for test/e2e/build-controlplane.sh
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
GANTRY_BIN=${GANTRY_BIN:-$REPO/build/bin/gantry}
OUT=${GANTRY_UPSTREAM_E2E_OUT:-$CACHE/upstream-e2e/results/$(date -u +%Y%m%dT%H%M%SZ)}
ONLY=${GANTRY_UPSTREAM_E2E_ONLY:-}

log() { printf '[upstream-e2e] %s\n' "$*" >&2; }

if [[ "$ONLY" != upstream && ! -x "$GANTRY_BIN" ]]; then
  log "no gantry binary at $GANTRY_BIN (run 'make build' or set GANTRY_BIN)"; exit 2
fi

set +e
"$HERE/build.sh" >/dev/null
rc=$?
set -e
((rc == 0)) || { log "building e2e.test / kwok failed (exit $rc)"; exit "$rc"; }

mkdir -p "$OUT"
log "results: $OUT"
SECONDS=0
run_one() { # run_one SCHEDULER
  python3 "$HERE/run.py" run --scheduler "$1" --out "$OUT/$1" --gantry-bin "$GANTRY_BIN" \
    >"$OUT/$1.log" 2>&1
}
schedulers=(upstream gantry)
[[ -n "$ONLY" ]] && schedulers=("$ONLY")
failed=0
if [[ "${GANTRY_UPSTREAM_E2E_PARALLEL:-0}" == 1 && ${#schedulers[@]} == 2 ]]; then
  log "running upstream and gantry at the same time"
  run_one upstream & p1=$!
  run_one gantry & p2=$!
  wait "$p1" || failed=1
  wait "$p2" || failed=1
else
  for s in "${schedulers[@]}"; do
    log "running with $s ($(date -u +%H:%M:%S) UTC)"
    run_one "$s" || failed=1
    tail -n 1 "$OUT/$s.log" >&2
  done
fi
log "runs took $((SECONDS / 60)) min $((SECONDS % 60)) s"
((failed == 0)) || { log "a run did not complete; see $OUT/<scheduler>.log"; exit 2; }
[[ -n "$ONLY" ]] && exit 0
python3 "$HERE/report.py" "$OUT/upstream" "$OUT/gantry" --markdown "$OUT/report.md" --json "$OUT/report.json"
