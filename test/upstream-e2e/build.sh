#!/usr/bin/env bash
# Builds the two upstream binaries the upstream scheduling e2e run needs, from the Go module proxy
# only (no prebuilt downloads, no git clones):
#   e2e.test  `go test -c` of k8s.io/kubernetes/test/e2e at v1.37.2, resolved with the same
#             module graph as the control plane (test/e2e/build-controlplane.sh: k8s.io/kubernetes
#             v1.37.2, every staging module pinned to its published v0.37.2)
#   kwok      sigs.k8s.io/kwok/cmd/kwok v0.8.0 (its own module graph; it is a separate program)
#
# Output (outside the repo; never committed):
#   ${GANTRY_CACHE:-$HOME/.cache/gantry}/upstream-e2e/<versions>/bin/{e2e.test,kwok,.complete}
#   ${GANTRY_CACHE}/upstream-e2e/current -> <versions>
# Go caches are shared with the control-plane build (go-build/, gomod/ under the cache root).
# The control plane itself is built first (test/e2e/build-controlplane.sh; a no-op when warm).
#
# Idempotent: with a warm cache it checks the stamp file, prints the bin dir and exits 0.
# Exit codes: 0 ok (stdout: the bin dir); 3 Go missing / module proxy unreachable; else failure.
#
# Environment: GANTRY_CACHE, GANTRY_BUILD_JOBS (go -p, default 2), GANTRY_FORCE_REBUILD=1,
#              GANTRY_BUILD_NICE (nice level for the go commands, default 10).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
K8S_VERSION=v1.37.2
KWOK_VERSION=v0.8.0
RECIPE=1
CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
TAG="k8s-${K8S_VERSION}_kwok-${KWOK_VERSION}"
ROOT="$CACHE/upstream-e2e/$TAG"
BIN="$ROOT/bin"
SRC="$ROOT/src"
STAMP="$BIN/.complete"
JOBS=${GANTRY_BUILD_JOBS:-2}
NICE=${GANTRY_BUILD_NICE:-10}

log() { printf '[upstream-e2e build] %s\n' "$*" >&2; }
want_stamp() { printf 'recipe=%s k8s=%s kwok=%s\n' "$RECIPE" "$K8S_VERSION" "$KWOK_VERSION"; }
link_current() {
  ln -sfn "$TAG" "$CACHE/upstream-e2e/current.tmp.$$"
  mv -T "$CACHE/upstream-e2e/current.tmp.$$" "$CACHE/upstream-e2e/current"
}

if [[ "${GANTRY_FORCE_REBUILD:-0}" != 1 && -f "$STAMP" && "$(cat "$STAMP")" == "$(want_stamp)" &&
      -x "$BIN/e2e.test" && -x "$BIN/kwok" ]]; then
  link_current
  log "up to date: $BIN"
  echo "$BIN"
  exit 0
fi

# The control plane first: its wrapper module is the module graph e2e.test is resolved from.
CP_BIN=$("$REPO/test/e2e/build-controlplane.sh")
CP_MOD="$CP_BIN/../src/k8s"
[[ -f "$CP_MOD/go.mod" && -f "$CP_MOD/go.sum" ]] || { log "no control-plane wrapper module at $CP_MOD"; exit 1; }

mkdir -p "$BIN" "$SRC" "$CACHE/go-build" "$CACHE/gomod"
export GOCACHE="$CACHE/go-build" GOMODCACHE="$CACHE/gomod"
export GOFLAGS="-trimpath -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
GOPROXY=$(go env GOPROXY); GOPROXY=${GOPROXY%[,|]direct}
[[ "$GOPROXY" == off ]] && { log "UNAVAILABLE: GOPROXY=off"; exit 3; }
[[ -n "$GOPROXY" && "$GOPROXY" != direct ]] || GOPROXY=https://proxy.golang.org
export GOPROXY GONOSUMDB="" GOPRIVATE=""
GO() { nice -n "$NICE" go "$@"; }

exec 9>"$ROOT/.lock"
flock 9
rm -f "$STAMP"
SECONDS=0
took() { printf '%dm%02ds' $((SECONDS / 60)) $((SECONDS % 60)); }

# --- e2e.test ---------------------------------------------------------------------------------
# Start from the control plane's go.mod/go.sum (same requirements, same staging replaces) and
# add the imports of test/e2e's test main so `go mod tidy` keeps its test-only dependencies.
d="$SRC/e2e"
rm -rf "$d"; mkdir -p "$d"
cp "$CP_MOD/go.mod" "$CP_MOD/go.sum" "$d/"
sed -i 's#^module .*#module example.local/gantry-upstream-e2e#' "$d/go.mod"
E2E_DIR=$(cd "$d" && GO list -m -f '{{.Dir}}' k8s.io/kubernetes)
{
  echo '//go:build tools'
  echo
  echo 'package tools'
  echo
  echo 'import ('
  # Every import of the e2e test main (module-internal and external) that a consumer must resolve.
  GO list -C "$d" -mod=mod -f '{{join .TestImports "\n"}}' k8s.io/kubernetes/test/e2e | sort -u |
    while read -r p; do
      case $p in flag|fmt|os|path/filepath|testing) continue ;; esac
      printf '\t_ "%s"\n' "$p"
    done
  echo ')'
} >"$d/tools.go.tmp"
mv "$d/tools.go.tmp" "$d/tools.go"
(cd "$d" && GO mod tidy)
# The k8s.io/kubernetes requirement must not move (same graph as the control plane).
got=$(cd "$d" && GO list -m -f '{{.Version}}' k8s.io/kubernetes)
[[ "$got" == "$K8S_VERSION" ]] || { log "module graph drifted: k8s.io/kubernetes $got"; exit 1; }
ldf="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
done
ldf+=" -X k8s.io/component-base/version.gitTreeState=clean"
log "building e2e.test $K8S_VERSION (go test -c, -p $JOBS, nice $NICE; 10-25 min cold) ..."
(cd "$d" && GO test -c -vet=off -p "$JOBS" -ldflags "$ldf" -o "$BIN/e2e.test.new" k8s.io/kubernetes/test/e2e)
mv -f "$BIN/e2e.test.new" "$BIN/e2e.test"
log "e2e.test done at $(took)"

# --- kwok -------------------------------------------------------------------------------------
# sigs.k8s.io/kwok has no replace directives, so `go install module@version` builds it as released.
log "building kwok $KWOK_VERSION ..."
rm -rf "$SRC/kwok-gobin"; mkdir -p "$SRC/kwok-gobin"
GOBIN="$SRC/kwok-gobin" GO install -p "$JOBS" -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
mv -f "$SRC/kwok-gobin/kwok" "$BIN/kwok"
log "kwok done at $(took)"

log "e2e.test: $("$BIN/e2e.test" --version 2>&1 | head -1)"
log "kwok: $("$BIN/kwok" --version 2>&1 | head -1)"
want_stamp >"$STAMP"
link_current
log "complete in $(took): $BIN"
echo "$BIN"
