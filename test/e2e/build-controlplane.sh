#!/usr/bin/env bash
# Builds the upstream control plane used by the end-to-end suites and `make dev-cluster`:
#   etcd v3.7.3, kube-apiserver / kube-controller-manager / kube-scheduler v1.37.2
# from the Go module proxy only (no prebuilt binaries, no git clones).
#
# Output (outside the repo):
#   ${GANTRY_CACHE:-$HOME/.cache/gantry}/controlplane/<versions>/bin/{etcd,kube-apiserver,...}
#   ${GANTRY_CACHE}/controlplane/current -> <versions>   (symlink, updated after a complete build)
# Go caches live under the same cache dir (go-build/, gomod/), wrapper modules under
# controlplane/<versions>/src/ (generated here, never committed).
#
# Idempotent: with a warm cache it only checks the stamp file and exits.
#
# Exit codes: 0 ok; 3 Go missing or module proxy unreachable (callers may skip e2e suites);
#             anything else: a real build failure.
#
# Environment:
#   GANTRY_CACHE          cache root (default $HOME/.cache/gantry)
#   GANTRY_BUILD_JOBS     go build -p (default 2)
#   GANTRY_BUILD_KUBECTL  1 = also build kubectl (handy for users; not needed by the tests)
#   GANTRY_FORCE_REBUILD  1 = ignore the stamp file
set -euo pipefail

ETCD_VERSION=v3.7.3
K8S_VERSION=v1.37.2
STAGING_VERSION=v0.${K8S_VERSION#v1.}   # v0.37.2: staging modules are tagged v0.<minor>.<patch>
# Bump RECIPE when the way binaries are built changes, so stale caches are rebuilt.
RECIPE=1

CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
TAG="etcd-${ETCD_VERSION}_k8s-${K8S_VERSION}"
ROOT="$CACHE/controlplane/$TAG"
BIN="$ROOT/bin"
SRC="$ROOT/src"
STAMP="$BIN/.complete"
JOBS=${GANTRY_BUILD_JOBS:-2}

BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler)
if [[ "${GANTRY_BUILD_KUBECTL:-0}" == 1 ]]; then BINARIES+=(kubectl); fi

log() { printf '[build-controlplane] %s\n' "$*" >&2; }
unavailable() { log "UNAVAILABLE: $*"; exit 3; }

want_stamp() {
  printf 'recipe=%s etcd=%s k8s=%s binaries=%s\n' "$RECIPE" "$ETCD_VERSION" "$K8S_VERSION" "${BINARIES[*]}"
}

all_present() {
  [[ -f "$STAMP" ]] || return 1
  # A stamp written for a superset (e.g. with kubectl) is fine too.
  local have; have=$(cat "$STAMP")
  [[ "$have" == "$(want_stamp)" ]] || {
    [[ "$have" == *"recipe=$RECIPE etcd=$ETCD_VERSION k8s=$K8S_VERSION"* ]] || return 1
  }
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done
  return 0
}

link_current() {
  ln -sfn "$TAG" "$CACHE/controlplane/current.tmp.$$"
  mv -T "$CACHE/controlplane/current.tmp.$$" "$CACHE/controlplane/current"
}

if [[ "${GANTRY_FORCE_REBUILD:-0}" != 1 ]] && all_present; then
  link_current
  log "up to date: $BIN"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || unavailable "Go toolchain not found on PATH; cannot build the upstream control plane"

mkdir -p "$BIN" "$SRC" "$CACHE/go-build" "$CACHE/gomod"
export GOCACHE="$CACHE/go-build"
export GOMODCACHE="$CACHE/gomod"
export GOFLAGS="-trimpath -buildvcs=false"
export GOTOOLCHAIN=local          # never download a toolchain; a too-new `go` line is a clear error
export CGO_ENABLED=0
export GOWORK=off
# The module proxy is the only network source: never fall back to direct VCS fetches.
GOPROXY=$(go env GOPROXY); GOPROXY=${GOPROXY%[,|]direct}
[[ "$GOPROXY" == off ]] && unavailable "GOPROXY=off: the Go module proxy is disabled"
[[ -n "$GOPROXY" && "$GOPROXY" != direct ]] || GOPROXY=https://proxy.golang.org
export GOPROXY
export GONOSUMDB="" GOPRIVATE=""

log "go: $(go version)  GOPROXY=$GOPROXY"
log "cache: $CACHE (go build cache: $GOCACHE, modules: $GOMODCACHE)"

# Lock so two concurrent callers (e.g. make test and make dev-cluster) do not build twice.
exec 9>"$ROOT/.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
  if all_present; then link_current; log "up to date: $BIN"; echo "$BIN"; exit 0; fi
fi

# --- reachability check (cheap; hits the local module cache when warm) ----------------------
probe_json=$(cd "$SRC" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" 2>&1) || {
  printf '%s\n' "$probe_json" | sed 's/^/    /' >&2
  unavailable "cannot fetch k8s.io/kubernetes@$K8S_VERSION from the Go module proxy ($GOPROXY):" \
    "$(printf '%s' "$probe_json" | grep -m1 -iE 'error|dial|timeout|refused|not found' | tr -s ' \t' ' ' | cut -c1-200)"
}
K8S_GOMOD=$(printf '%s' "$probe_json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f "$K8S_GOMOD" ]] || { log "could not locate k8s.io/kubernetes go.mod"; exit 1; }

SECONDS=0
stamp_time() { printf '%dm%02ds' $((SECONDS / 60)) $((SECONDS % 60)); }

# --- etcd -------------------------------------------------------------------------------------
# go.etcd.io/etcd/server/v3 has local replace directives, so `go install ...@v3.7.3` is rejected;
# build its module-root package main (server/main.go, checked at v3.7.3) from a wrapper module.
build_etcd() {
  local d="$SRC/etcd"
  rm -rf "$d"; mkdir -p "$d"
  (
    cd "$d"
    go mod init example.local/gantry-etcdbin >/dev/null 2>&1
    go mod edit -go=1.26.0
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    local etcd_mod; etcd_mod=$(go mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" |
      sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
    grep -E '^godebug' "$etcd_mod" >>go.mod || true
    # Build only what is needed; `go build` may add a few missing go.sum lines.
    go build -mod=mod -p "$JOBS" -ldflags "-s -w" -o "$BIN/etcd.new" "go.etcd.io/etcd/server/v3"
  )
  mv -f "$BIN/etcd.new" "$BIN/etcd"
}

# --- kubernetes -------------------------------------------------------------------------------
build_k8s_module() {
  local d="$SRC/k8s"
  rm -rf "$d"; mkdir -p "$d"
  cd "$d"
  go mod init example.local/gantry-k8sbin >/dev/null 2>&1
  # Our `go` line must be >= k8s.io/kubernetes' own; copy its godebug default verbatim so GODEBUG
  # behaviour matches the official binaries (dependencies' godebug lines are ignored).
  local goline; goline=$(awk '$1 == "go" {print $2; exit}' "$K8S_GOMOD")
  go mod edit -go="$goline"
  grep -E '^godebug' "$K8S_GOMOD" >>go.mod || true
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging paths
  # in its own go.mod, which a consumer does not inherit; point each at its published v0.37.2.
  local m staging
  staging=$( {
    grep -E '^[[:space:]]*k8s\.io/[A-Za-z0-9._-]+ v0\.0\.0([[:space:]]|$)' "$K8S_GOMOD" | awk '{print $1}'
    grep -Eo 'k8s\.io/[A-Za-z0-9._-]+ => \./staging' "$K8S_GOMOD" | awk '{print $1}'
  } | sort -u)
  for m in $staging; do go mod edit -replace="$m=$m@$STAGING_VERSION"; done
  log "k8s wrapper: go $goline, $(wc -w <<<"$staging") staging replaces -> $STAGING_VERSION"
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  {
    echo '//go:build tools'
    echo
    echo 'package tools'
    echo
    echo 'import ('
    for b in "${BINARIES[@]}"; do
      [[ "$b" == etcd ]] && continue
      echo "	_ \"k8s.io/kubernetes/cmd/$b\""
    done
    echo ')'
  } >tools.go
  go mod tidy
}

build_k8s_binary() {
  local b=$1 ldf
  ldf="-s -w"
  ldf+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ldf+=" -X k8s.io/component-base/version.gitMajor=1"
  ldf+=" -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
  ldf+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  ldf+=" -X k8s.io/client-go/pkg/version.gitMajor=1"
  ldf+=" -X k8s.io/client-go/pkg/version.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
  (cd "$SRC/k8s" && go build -p "$JOBS" -ldflags "$ldf" -o "$BIN/$b.new" "k8s.io/kubernetes/cmd/$b")
  mv -f "$BIN/$b.new" "$BIN/$b"
}

version_of() { # version_of BINARY -> first line of its version output
  case $1 in
    kubectl) "$BIN/kubectl" version --client 2>&1 | head -1 ;;
    *) "$BIN/$1" --version 2>&1 | head -1 ;;
  esac
}

rm -f "$STAMP"
if [[ -x "$BIN/etcd" && "${GANTRY_FORCE_REBUILD:-0}" != 1 ]] && "$BIN/etcd" --version 2>/dev/null | grep -q "${ETCD_VERSION#v}"; then
  log "etcd $ETCD_VERSION already built"
else
  log "building etcd $ETCD_VERSION (go.etcd.io/etcd/server/v3) ..."
  build_etcd || { log "etcd build failed"; exit 1; }
  log "etcd done at $(stamp_time)"
fi

log "resolving k8s.io/kubernetes $K8S_VERSION module graph ..."
(build_k8s_module) || { log "resolving the k8s wrapper module failed"; exit 1; }

for b in "${BINARIES[@]}"; do
  [[ "$b" == etcd ]] && continue
  if [[ -x "$BIN/$b" && "${GANTRY_FORCE_REBUILD:-0}" != 1 ]] && version_of "$b" | grep -q "$K8S_VERSION"; then
    log "$b $K8S_VERSION already built"
    continue
  fi
  log "building $b $K8S_VERSION (sequential, -p $JOBS; the first one takes the longest) ..."
  build_k8s_binary "$b" || { log "$b build failed"; exit 1; }
  log "$b done at $(stamp_time)"
done

for b in "${BINARIES[@]}"; do
  log "  $b: $(version_of "$b")"
done
want_stamp >"$STAMP"
link_current
log "complete in $(stamp_time): $BIN"
echo "$BIN"
