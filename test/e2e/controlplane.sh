#!/usr/bin/env bash
# A real, loopback-only Kubernetes control plane for tests and for trying Gantry:
# etcd + kube-apiserver (TLS, Node,RBAC) + kube-controller-manager (a few controllers),
# optionally upstream kube-scheduler. Nodes are plain Node objects (no kubelet).
#
#   test/e2e/controlplane.sh up       start (builds the binaries first if needed), wait for /readyz,
#                                     print the admin kubeconfig path
#   test/e2e/controlplane.sh down     stop everything (state is kept; GANTRY_PURGE=1 deletes it)
#   test/e2e/controlplane.sh status   what runs, where
#   test/e2e/controlplane.sh env      shell exports (eval "$(test/e2e/controlplane.sh env)")
#
# Environment:
#   GANTRY_CACHE              cache root (default $HOME/.cache/gantry)
#   GANTRY_CLUSTER_DIR        state dir (default $GANTRY_CACHE/dev-cluster); tests use a temp dir
#                             so several isolated instances can run at once
#   GANTRY_CONTROLPLANE_BIN   binaries (default $GANTRY_CACHE/controlplane/current/bin)
#   GANTRY_APISERVER_PORT, GANTRY_ETCD_PORT, GANTRY_ETCD_PEER_PORT, GANTRY_KCM_PORT,
#   GANTRY_SCHEDULER_PORT     fixed ports; unset = free loopback ports chosen at `up`
#   GANTRY_COMPONENTS         default "etcd kube-apiserver kube-controller-manager";
#                             add kube-scheduler to also run upstream kube-scheduler v1.37.2
#   GANTRY_FEATURE_GATES      override the gate list (comma separated Name=bool)
#   GANTRY_KCM_CONTROLLERS    override kube-controller-manager --controllers
#   GANTRY_KCM_EXTRA_ARGS     extra kube-controller-manager flags, space separated (e.g.
#                             "--kube-api-qps=5000 --kube-api-burst=5000" for benchmarks)
#   GANTRY_START_TIMEOUT      seconds to wait for readiness (default 90)
#   GANTRY_PURGE              1 = `down` also deletes the state dir
#   GANTRY_AUDIT_POLICY       audit policy file: kube-apiserver writes an audit log to logs/audit.log
#   GANTRY_APISERVER_PROFILING  true = kube-apiserver serves /debug/pprof (--profiling; default false)
#   GANTRY_NO_BUILD           1 = `up` fails (exit 3) instead of building missing binaries
#
# Flag and gate names below were checked against the built v1.37.2 / v3.7.3 binaries'
# `--help` output (see docs/e2e.md, "Verified flags and gates", for the list and how):
#  - etcd v3.7.3: --name --data-dir --listen-client-urls --advertise-client-urls --listen-peer-urls
#    --initial-advertise-peer-urls --initial-cluster --quota-backend-bytes
#    --auto-compaction-retention --unsafe-no-fsync --log-level; GET /health on the client URL.
#  - kube-apiserver v1.37.2: every flag used below is listed by --help (incl. --endpoint-reconciler-type
#    {master-count,lease,none}, --enable-priority-and-fairness, --max-*-requests-inflight,
#    --requestheader-*, --proxy-client-*); ServiceAccount and TaintNodesByCondition are in the
#    default admission list; --authorization-mode accepts Node,RBAC.
#  - kube-controller-manager v1.37.2: controller names taken from its --controllers list
#    (resourceclaim-controller, podgroup-protection-controller, ...).
#  - kube-scheduler v1.37.2: --config --feature-gates --bind-address --secure-port
#    --authentication-kubeconfig --authorization-kubeconfig --authorization-always-allow-paths.
#  - gates: each name and stage read from the `kube:<Gate>=true|false (STAGE - default=...)` lists of
#    all three components (same list except the kcm-only ControllerManagerReleaseLeaderElectionLockOnExit);
#    GangScheduling / WorkloadAwarePreemption do not exist in 1.37.2 (merged into GenericWorkload).
#  - runtime-config: with these gates, discovery serves scheduling.k8s.io v1, v1beta1, v1alpha3
#    and resource.k8s.io v1 (checked by test/e2e/smoke_test.py).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
DIR=${GANTRY_CLUSTER_DIR:-$CACHE/dev-cluster}
BIN=${GANTRY_CONTROLPLANE_BIN:-$CACHE/controlplane/current/bin}
TIMEOUT=${GANTRY_START_TIMEOUT:-90}
COMPONENTS=${GANTRY_COMPONENTS:-etcd kube-apiserver kube-controller-manager}

# --- feature gates (v1.37.2) -------------------------------------------------------------------
# Workload-aware scheduling: GenericWorkload (beta, off by default; also covers gang scheduling and
# workload-aware preemption in 1.37), CompositePodGroup / TopologyAwareWorkloadScheduling /
# PodGroupPreemptionPolicy (alpha). DRA: DRAWorkloadResourceClaims (beta, off by default) and the
# alpha DRA API fields Gantry understands. Everything else stays at its 1.37 default
# (resource.k8s.io/v1 + GA/beta-on DRA gates are on by default).
DEFAULT_GATES="GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true"
DEFAULT_GATES+=",PodGroupPreemptionPolicy=true,DRAWorkloadResourceClaims=true"
DEFAULT_GATES+=",DRAListTypeAttributes=true,DRANodeAllocatableResources=true"
DEFAULT_GATES+=",DRADeviceCompatibilityGroups=true,DRADerivedAttributes=true"
DEFAULT_GATES+=",DRAFractionalCapacityRange=true"
GATES=${GANTRY_FEATURE_GATES:-$DEFAULT_GATES}
# Beta/alpha APIs are off by default; a gate explicitly enabled without its API served is a
# startup error (FeatureGateAPIRequirements), so the two lists go together.
RUNTIME_CONFIG="scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true"

# kube-controller-manager: only what a kubelet-less cluster needs. No node-lifecycle controller
# (it would taint/evict the fake nodes), no replication/deployment/job controllers.
DEFAULT_KCM_CONTROLLERS="resourceclaim-controller,garbage-collector-controller,namespace-controller"
DEFAULT_KCM_CONTROLLERS+=",serviceaccount-controller,root-ca-certificate-publisher-controller"
DEFAULT_KCM_CONTROLLERS+=",clusterrole-aggregation-controller,podgroup-protection-controller"
KCM_CONTROLLERS=${GANTRY_KCM_CONTROLLERS:-$DEFAULT_KCM_CONTROLLERS}

PKI="$DIR/pki"
LOGS="$DIR/logs"
RUN="$DIR/run"
ENVFILE="$DIR/cluster.env"

log() { printf '[controlplane] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

free_port() {
  python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- process bookkeeping -----------------------------------------------------------------------
pid_of() { # prints the pid if the component runs (pid file + matching executable)
  local f="$RUN/$1.pid" pid exe
  [[ -f "$f" ]] || return 1
  pid=$(cat "$f")
  [[ -n "$pid" && -d "/proc/$pid" ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  [[ "$(basename "${exe% (deleted)}")" == "$1" ]] || return 1
  echo "$pid"
}

start() { # start NAME ARGS... ; logs to $LOGS/NAME.log, detached from the caller's session
  local name=$1; shift
  [[ -x "$BIN/$name" ]] || die "$BIN/$name missing"
  # setsid: survives the calling shell; stdin from /dev/null so ctest/make are not held open.
  setsid "$BIN/$name" "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  local pid=$! i
  echo "$pid" >"$RUN/$name.pid"
  # Wait (briefly) until setsid has exec'ed the binary, so pid_of recognises it.
  for ((i = 0; i < 50; i++)); do
    pid_of "$name" >/dev/null && return 0
    [[ -d "/proc/$pid" ]] || break
    sleep 0.05
  done
  pid_of "$name" >/dev/null || { log "$name failed to start:"; tail -n 20 "$LOGS/$name.log" >&2; exit 1; }
}

stop() {
  local name=$1 pid i
  pid=$(pid_of "$name") || { rm -f "$RUN/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [[ -d "/proc/$pid" ]] || break
    sleep 0.1
  done
  if [[ -d "/proc/$pid" ]]; then
    log "$name ($pid) did not stop in 10s; killing"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
  log "stopped $name"
}

# --- PKI ---------------------------------------------------------------------------------------
gen_cert() { # gen_cert NAME SUBJECT EXTFILE-CONTENT [CA-NAME]
  local name=$1 subj=$2 ext=$3 ca=${4:-ca}
  openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -out "$PKI/$name.csr" \
    -subj "$subj" 2>/dev/null
  printf '%s\n' "$ext" >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial \
    -out "$PKI/$name.crt" -days 365 -sha256 -extfile "$PKI/$name.ext" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

ensure_pki() {
  [[ -f "$PKI/.complete" ]] && return 0
  log "generating PKI in $PKI"
  rm -rf "$PKI"; mkdir -p "$PKI"; chmod 700 "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 365 \
    -sha256 -subj "/CN=gantry-dev-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  gen_cert apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # Identities: admin (system:masters bypasses RBAC); controller-manager and scheduler use their
  # upstream user names so the bootstrap RBAC roles apply exactly as in a real cluster.
  gen_cert admin "/O=system:masters/CN=gantry-admin" "$client"
  gen_cert kube-controller-manager "/CN=system:kube-controller-manager" "$client"
  gen_cert kube-scheduler "/CN=system:kube-scheduler" "$client"
  # Front proxy (aggregation layer): a separate CA, so the request-header authenticator is fully
  # configured (otherwise every component logs "missing content for CA bundle" forever).
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/front-proxy-ca.key" -out "$PKI/front-proxy-ca.crt" \
    -days 365 -sha256 -subj "/CN=gantry-dev-front-proxy-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  gen_cert front-proxy-client "/CN=front-proxy-client" "$client" front-proxy-ca
  # Service-account token signing key (kube-apiserver signs, kcm/apiserver verify).
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  chmod 600 "$PKI"/*.key
  touch "$PKI/.complete"
}

b64() { base64 -w0 <"$1"; }

write_kubeconfig() { # write_kubeconfig FILE CERTNAME
  local file=$1 user=$2
  umask 077
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gantry-dev
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(b64 "$PKI/$user.crt")
    client-key-data: $(b64 "$PKI/$user.key")
contexts:
- name: gantry-dev
  context:
    cluster: gantry-dev
    user: $user
current-context: gantry-dev
EOF
}

# --- readiness ---------------------------------------------------------------------------------
api_get() { # api_get PATH -> body; admin client certificate
  curl -sS --fail --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$APISERVER_PORT$1"
}

wait_for() { # wait_for WHAT COMPONENT CMD...
  local what=$1 comp=$2; shift 2
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! pid_of "$comp" >/dev/null; then
      log "$comp exited; last log lines ($LOGS/$comp.log):"
      tail -n 30 "$LOGS/$comp.log" | sed 's/^/    /' >&2
      return 1
    fi
    if ((SECONDS > deadline)); then
      log "timed out after ${TIMEOUT}s waiting for $what; last log lines:"
      tail -n 30 "$LOGS/$comp.log" | sed 's/^/    /' >&2
      return 1
    fi
    sleep 0.2
  done
}

load_env() {
  [[ -f "$ENVFILE" ]] || return 1
  # shellcheck disable=SC1090
  source "$ENVFILE"
}

has() { [[ " $COMPONENTS " == *" $1 "* ]]; }
ran() { [[ " ${RUN_COMPONENTS:-} " == *" $1 "* ]]; }

# --- commands ----------------------------------------------------------------------------------
cmd_up() {
  if (load_env && pid_of kube-apiserver >/dev/null); then
    log "already running (state $DIR); starting only missing components"
  fi
  if [[ ! -x "$BIN/kube-apiserver" || ! -x "$BIN/etcd" ]]; then
    if [[ -n "${GANTRY_CONTROLPLANE_BIN:-}" || "${GANTRY_NO_BUILD:-0}" == 1 ]]; then
      log "control-plane binaries not found in $BIN"; exit 3
    fi
    log "control-plane binaries not built yet; building them now (cold: ~8 min on 2 cores)"
    log "full build output: $CACHE/controlplane/build.log"
    mkdir -p "$CACHE/controlplane"
    local rc
    set +e
    "$HERE/build-controlplane.sh" 2>&1 >/dev/null | tee "$CACHE/controlplane/build.log" |
      grep --line-buffered '^\[build-controlplane\]' >&2
    rc=${PIPESTATUS[0]}
    set -e
    ((rc == 0)) || { log "building the control plane failed (exit $rc)"; exit "$rc"; }
  fi
  local t0=$SECONDS
  mkdir -p "$DIR" "$LOGS" "$RUN"
  ensure_pki

  # Ports: keep those recorded in a previous run (the kubeconfig points at them) unless overridden.
  load_env 2>/dev/null || true
  APISERVER_PORT=${GANTRY_APISERVER_PORT:-${APISERVER_PORT:-$(free_port)}}
  ETCD_PORT=${GANTRY_ETCD_PORT:-${ETCD_PORT:-$(free_port)}}
  ETCD_PEER_PORT=${GANTRY_ETCD_PEER_PORT:-${ETCD_PEER_PORT:-$(free_port)}}
  KCM_PORT=${GANTRY_KCM_PORT:-${KCM_PORT:-$(free_port)}}
  SCHEDULER_PORT=${GANTRY_SCHEDULER_PORT:-${SCHEDULER_PORT:-$(free_port)}}
  cat >"$ENVFILE" <<EOF
APISERVER_PORT=$APISERVER_PORT
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
KCM_PORT=$KCM_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
RUN_COMPONENTS="$COMPONENTS"
RUN_BIN="$BIN"
EOF
  write_kubeconfig "$DIR/admin.kubeconfig" admin
  write_kubeconfig "$DIR/kube-controller-manager.kubeconfig" kube-controller-manager
  write_kubeconfig "$DIR/kube-scheduler.kubeconfig" kube-scheduler

  # etcd: single member, loopback only, plain HTTP (never leaves 127.0.0.1).
  # --unsafe-no-fsync: test/benchmark data only; both schedulers see the same etcd.
  if ! pid_of etcd >/dev/null; then
    start etcd --name=gantry-dev --data-dir="$DIR/etcd" \
      --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
      --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster="gantry-dev=http://127.0.0.1:$ETCD_PEER_PORT" \
      --quota-backend-bytes=8589934592 --auto-compaction-retention=1 \
      --unsafe-no-fsync=true --log-level=warn
  fi
  wait_for "etcd /health" etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" ||
    die "etcd did not become healthy"

  # Admission: TaintNodesByCondition would add node.kubernetes.io/not-ready:NoSchedule to every
  # new Node and nothing (no kubelet / node-lifecycle controller) removes it; ServiceAccount admission
  # would reject pods in namespaces whose default ServiceAccount is not created yet (racy in tests).
  # Flow control and in-flight limits are off so the API server does not throttle the schedulers.
  local audit_args=()
  if [[ -n "${GANTRY_AUDIT_POLICY:-}" ]]; then
    audit_args=(--audit-policy-file="$GANTRY_AUDIT_POLICY" --audit-log-path="$LOGS/audit.log"
      --audit-log-format=json --audit-log-mode=blocking --audit-log-maxbackup=1)
  fi
  pid_of kube-apiserver >/dev/null || start kube-apiserver "${audit_args[@]}" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" --etcd-prefix=/registry \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --authorization-mode=Node,RBAC \
    --anonymous-auth=false \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --allow-privileged=true \
    --max-requests-inflight=0 --max-mutating-requests-inflight=0 --enable-priority-and-fairness=false \
    --runtime-config="$RUNTIME_CONFIG" \
    --feature-gates="$GATES" \
    --endpoint-reconciler-type=none --profiling="${GANTRY_APISERVER_PROFILING:-false}" --v=1
  wait_for "kube-apiserver /readyz" kube-apiserver api_get /readyz ||
    die "kube-apiserver did not become ready"

  if has kube-controller-manager && ! pid_of kube-controller-manager >/dev/null; then
    # shellcheck disable=SC2086 # GANTRY_KCM_EXTRA_ARGS is split into words on purpose
    start kube-controller-manager \
      --kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --authentication-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --authorization-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
      --controllers="$KCM_CONTROLLERS" \
      --use-service-account-credentials=true \
      --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
      --leader-elect=false \
      --feature-gates="$GATES" --v=1 ${GANTRY_KCM_EXTRA_ARGS:-}
    wait_for "kube-controller-manager /healthz" kube-controller-manager \
      curl -skf --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz" ||
      die "kube-controller-manager did not become healthy"
  fi

  if has kube-scheduler && ! pid_of kube-scheduler >/dev/null; then
    cat >"$DIR/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $DIR/kube-scheduler.kubeconfig
  qps: 5000     # default 50 would cap upstream near 50 binds/s
  burst: 5000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF
    start kube-scheduler --config="$DIR/kube-scheduler.yaml" \
      --feature-gates="$GATES" \
      --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" \
      --authentication-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
      --authorization-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --v=1
    wait_for "kube-scheduler /readyz" kube-scheduler \
      curl -skf --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/readyz" ||
      die "kube-scheduler did not become ready"
  fi

  log "ready in $((SECONDS - t0))s: https://127.0.0.1:$APISERVER_PORT ($COMPONENTS)"
  log "state: $DIR   logs: $LOGS"
  log "use it:  export KUBECONFIG=$DIR/admin.kubeconfig"
  echo "$DIR/admin.kubeconfig"
}

cmd_down() {
  local c
  for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done
  if [[ "${GANTRY_PURGE:-0}" == 1 ]]; then
    rm -rf "$DIR"
    log "deleted $DIR"
  fi
}

cmd_status() {
  local c pid rc=0
  load_env 2>/dev/null || { log "no cluster state in $DIR"; return 1; }
  for c in etcd kube-apiserver kube-controller-manager kube-scheduler; do
    if pid=$(pid_of "$c"); then
      printf '%-24s running (pid %s)\n' "$c" "$pid"
    elif [[ -f "$RUN/$c.pid" ]] || ran "$c"; then
      printf '%-24s not running\n' "$c"; rc=1
    fi
  done
  if api_get /readyz >/dev/null 2>&1; then
    printf '%-24s https://127.0.0.1:%s ready\n' apiserver "$APISERVER_PORT"
  else
    printf '%-24s https://127.0.0.1:%s NOT ready\n' apiserver "$APISERVER_PORT"; rc=1
  fi
  printf '%-24s %s\n' kubeconfig "$DIR/admin.kubeconfig"
  return $rc
}

cmd_env() {
  load_env || die "no cluster state in $DIR (run: $0 up)"
  cat <<EOF
export KUBECONFIG=$DIR/admin.kubeconfig
export GANTRY_CLUSTER_DIR=$DIR
export GANTRY_CONTROLPLANE_BIN=${RUN_BIN:-$BIN}
export GANTRY_APISERVER_URL=https://127.0.0.1:$APISERVER_PORT
export GANTRY_CLUSTER_CA=$PKI/ca.crt
EOF
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;
esac
