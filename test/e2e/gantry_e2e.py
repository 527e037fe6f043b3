"""Harness for Gantry's end-to-end suites (Python 3 standard library only).

Starts an isolated control plane (test/e2e/controlplane.sh with its own state dir and free
loopback ports), gives a small JSON client authenticated with the admin client certificate, and
tears everything down afterwards.

    from gantry_e2e import run
    def main(cp):              # cp: ControlPlane
        cp.client.create_node("n1")
        ...
    run(main, components=["etcd", "kube-apiserver"])

Binaries: $GANTRY_CONTROLPLANE_BIN, else $GANTRY_CACHE/controlplane/current/bin (written by
scripts/prepare-e2e.sh / test/e2e/build-controlplane.sh). Missing binaries make the test SKIP
(exit code SKIP, registered with ctest's SKIP_RETURN_CODE) unless GANTRY_REQUIRE_E2E=1, in which
case the test FAILS.
"""

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
CONTROLPLANE_SH = os.path.join(HERE, "controlplane.sh")
REQUIRED_BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


def log(msg):
    print(f"[e2e {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cache_dir():
    return os.environ.get("GANTRY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gantry")


def binary_dir():
    return os.environ.get("GANTRY_CONTROLPLANE_BIN") or os.path.join(
        cache_dir(), "controlplane", "current", "bin")


def require_binaries():
    """Returns the binary dir, or exits with SKIP (or 1 when GANTRY_REQUIRE_E2E=1)."""
    d = binary_dir()
    missing = [b for b in REQUIRED_BINARIES if not os.access(os.path.join(d, b), os.X_OK)]
    if not missing:
        return d
    msg = (f"control-plane binaries missing in {d}: {', '.join(missing)} "
           "(build them with test/e2e/build-controlplane.sh or scripts/prepare-e2e.sh)")
    if os.environ.get("GANTRY_REQUIRE_E2E") == "1":
        log("FAIL: " + msg + "; GANTRY_REQUIRE_E2E=1 forbids skipping")
        sys.exit(1)
    log("SKIP: " + msg)
    sys.exit(SKIP)


class ApiError(Exception):
    def __init__(self, status, body, method, path):
        super().__init__(f"{method} {path}: HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


class Client:
    """Minimal Kubernetes REST client (JSON), mutual TLS with a client certificate."""

    def __init__(self, server, ca, cert=None, key=None, token=None, timeout=10):
        self.server = server.rstrip("/")
        self.timeout = timeout
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca)
        if cert:
            self.ctx.load_cert_chain(cert, key)

    def request(self, method, path, body=None, content_type="application/json", query=None):
        url = self.server + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace"), method, path) from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode(errors="replace")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def delete(self, path, grace_seconds=None):
        body = None if grace_seconds is None else {
            "kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace_seconds}
        return self.request("DELETE", path, body)

    def patch_merge(self, path, body):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    # --- convenience -------------------------------------------------------------------------
    def create_namespace(self, name):
        return self.post("/api/v1/namespaces",
                         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def create_node(self, name, cpu="4", memory="32Gi", pods="110", labels=None):
        """A fake node: just a Node object with Ready=True and capacity (no kubelet)."""
        lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        lab.update(labels or {})
        return self.post("/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": lab},
            "status": {
                "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "message": "fake node (no kubelet)"}],
                "phase": "Running",
            },
        })

    def create_pod(self, namespace, name, scheduler_name=None, cpu="100m", memory="64Mi", extra_spec=None):
        spec = {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            "terminationGracePeriodSeconds": 0,
        }
        if scheduler_name:
            spec["schedulerName"] = scheduler_name
        spec.update(extra_spec or {})
        return self.post(f"/api/v1/namespaces/{namespace}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})

    def service_account_token(self, namespace, name, seconds=3600):
        """Creates the ServiceAccount if needed and returns a token for it (TokenRequest API)."""
        try:
            self.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", {
                "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        except ApiError as e:
            if e.status != 409:
                raise
        tr = self.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds}})
        return tr["status"]["token"]

    def wait(self, what, fn, timeout=30, interval=0.2):
        """Polls fn() until it returns a truthy value; returns it or raises TimeoutError."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = fn()
                if last:
                    return last
            except ApiError as e:
                last = e
            time.sleep(interval)
        raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class ControlPlane:
    """An isolated control plane in a temp dir; use as a context manager."""

    def __init__(self, components=("etcd", "kube-apiserver", "kube-controller-manager"),
                 keep_on_failure=None, audit_policy=None):
        """audit_policy: an audit.k8s.io/v1 Policy (dict, written as JSON) that turns on the API
        server's audit log (<dir>/logs/audit.log, read with audit_events())."""
        self.bin = require_binaries()
        self.components = list(components)
        self.dir = tempfile.mkdtemp(prefix="gantry-e2e-")
        self.keep = (os.environ.get("GANTRY_E2E_KEEP") == "1") if keep_on_failure is None else keep_on_failure
        self.env = dict(os.environ)
        self.env.update({
            "GANTRY_CLUSTER_DIR": self.dir,
            "GANTRY_CONTROLPLANE_BIN": self.bin,
            "GANTRY_COMPONENTS": " ".join(self.components),
            "GANTRY_NO_BUILD": "1",
        })
        if audit_policy is not None:
            path = os.path.join(self.dir, "audit-policy.json")
            with open(path, "w") as f:
                json.dump(audit_policy, f)
            self.env["GANTRY_AUDIT_POLICY"] = path
        for k in ("GANTRY_APISERVER_PORT", "GANTRY_ETCD_PORT", "GANTRY_ETCD_PEER_PORT",
                  "GANTRY_KCM_PORT", "GANTRY_SCHEDULER_PORT"):
            self.env.pop(k, None)  # always free ports: several suites may run at once
        self.client = None
        self.kubeconfig = None

    def _sh(self, *args, check=True):
        return subprocess.run([CONTROLPLANE_SH, *args], env=self.env, check=check,
                              stdout=subprocess.PIPE, text=True)

    def _start_watchdog(self):
        """If this process dies without cleaning up (e.g. ctest kills it on timeout), stop the
        control plane and delete its state from a detached helper."""
        script = (
            'while kill -0 "$0" 2>/dev/null; do sleep 1; done; '
            '[ -d "$1" ] && [ ! -e "$1/.keep" ] || exit 0; '
            '"$2" down >/dev/null 2>&1; rm -rf "$1"'
        )
        subprocess.Popen(["sh", "-c", script, str(os.getpid()), self.dir, CONTROLPLANE_SH],
                         env=self.env, start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __enter__(self):
        t0 = time.monotonic()
        self._start_watchdog()
        try:
            out = self._sh("up")
        except subprocess.CalledProcessError:
            self.dump_logs()
            self._sh("down", check=False)
            raise
        self.kubeconfig = out.stdout.strip().splitlines()[-1]
        self.startup_seconds = time.monotonic() - t0
        envs = {}
        for line in self._sh("env").stdout.splitlines():
            if line.startswith("export "):
                k, _, v = line[len("export "):].partition("=")
                envs[k] = v
        self.server = envs["GANTRY_APISERVER_URL"]
        pki = os.path.join(self.dir, "pki")
        self.ca = os.path.join(pki, "ca.crt")
        self.client = self.client_for("admin")
        log(f"control plane up in {self.startup_seconds:.1f}s at {self.server} ({self.dir})")
        return self

    def client_for(self, identity):
        """A client with one of the generated client certificates: admin (system:masters),
        kube-scheduler (system:kube-scheduler) or kube-controller-manager."""
        pki = os.path.join(self.dir, "pki")
        return Client(self.server, self.ca, os.path.join(pki, identity + ".crt"),
                      os.path.join(pki, identity + ".key"))

    def token_client(self, token):
        return Client(self.server, self.ca, token=token)

    def write_kubeconfig(self, path, token, server=None):
        """A kubeconfig that authenticates with a bearer token (e.g. a ServiceAccount's); server
        defaults to the API server (the fault suite points it at its proxy)."""
        with open(path, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {{server: "{server or self.server}", certificate-authority: "{self.ca}"}}
users:
- name: e2e
  user: {{token: "{token}"}}
contexts:
- name: e2e
  context: {{cluster: e2e, user: e2e}}
current-context: e2e
""")
        os.chmod(path, 0o600)
        return path

    def cluster_env(self):
        """<dir>/cluster.env as a dict (APISERVER_PORT, ETCD_PORT, ...)."""
        out = {}
        with open(os.path.join(self.dir, "cluster.env")) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                out[k] = v.strip('"')
        return out

    def component_pid(self, name):
        """The pid of a running control-plane component (etcd, kube-apiserver, ...), or None."""
        try:
            with open(os.path.join(self.dir, "run", name + ".pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if os.path.exists(f"/proc/{pid}") else None

    def audit_events(self):
        """The API server's audit events so far (needs audit_policy); ResponseComplete stage only."""
        path = os.path.join(self.dir, "logs", "audit.log")
        events = []
        if not os.path.exists(path):
            return events
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if ev.get("stage") == "ResponseComplete":
                    events.append(ev)
        return events

    def dump_logs(self, lines=40):
        logs = os.path.join(self.dir, "logs")
        if not os.path.isdir(logs):
            return
        for name in sorted(os.listdir(logs)):
            if name == "audit.log":
                continue
            with open(os.path.join(logs, name), errors="replace") as f:
                tail = f.readlines()[-lines:]
            log(f"--- last {len(tail)} lines of {name} ---")
            sys.stdout.write("".join(tail))
        sys.stdout.flush()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.dump_logs()
        self._sh("down", check=False)
        if exc_type is not None and self.keep:
            open(os.path.join(self.dir, ".keep"), "w").close()
            log(f"kept state for inspection: {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def free_port():
    """A free TCP port on 127.0.0.1 (for --secure-port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GantryProcess:
    """The real `gantry` binary as a child process, serving HTTPS on a free loopback port.

        g = GantryProcess(binary, ["--config", cfg])   # adds --secure-port/--bind-address
        g.wait_ready(); g.metric("leader_election_master_status", name="gantry-scheduler")
        g.stop()     # SIGTERM, returns the exit code;  g.kill() = SIGKILL (a crash)

    Output (stdout and stderr) is collected in .lines and printed by dump().
    """

    def __init__(self, binary, args, name="gantry", log_path=None):
        """log_path: also write the output there (e.g. under ControlPlane.dir/logs, so that it
        is kept with GANTRY_E2E_KEEP=1)."""
        self.name = name
        self.log_file = open(log_path, "a") if log_path else None
        self.port = free_port()
        self.lines = []
        self.argv = [binary, *args, f"--secure-port={self.port}", "--bind-address=127.0.0.1"]
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE  # gantry's self-signed serving certificate

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if self.log_file:
                self.log_file.write(line)
                self.log_file.flush()

    def alive(self):
        return self.proc.poll() is None

    def http_get(self, path, timeout=5):
        """(status, body) of GET https://127.0.0.1:<port><path>; (None, error) if unreachable."""
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}{path}", context=self.ctx,
                                        timeout=timeout) as resp:
                return resp.status, resp.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except (OSError, urllib.error.URLError) as e:
            return None, str(e)

    def ready(self):
        return self.http_get("/readyz")[0] == 200

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise AssertionError(f"{self.name} exited ({self.proc.returncode}) before it was ready:\n"
                                     + self.dump())
            if self.ready():
                return
            time.sleep(0.2)
        raise TimeoutError(f"{self.name} not ready in {timeout}s:\n" + self.dump())

    def metrics(self):
        status, body = self.http_get("/metrics")
        if status != 200:
            raise AssertionError(f"{self.name} /metrics: {status} {body[:200]}")
        return body

    def metric(self, metric_name, **labels):
        """The value of one sample of /metrics (None if absent); labels must match exactly."""
        want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in self.metrics().splitlines():
            if line.startswith("#") or " " not in line:
                continue
            key, _, value = line.rpartition(" ")
            mname, _, rest = key.partition("{")
            if mname != metric_name:
                continue
            got = ",".join(sorted(p for p in rest.rstrip("}").split(",") if p)) if rest else ""
            if got == want:
                return float(value)
        return None

    def is_leader(self, lease="gantry-scheduler"):
        try:
            return self.metric("leader_election_master_status", name=lease) == 1
        except AssertionError:
            return False

    def dump(self, n=80):
        return f"--- last output of {self.name} ---\n" + "\n".join(self.lines[-n:])

    def stop(self, timeout=30):
        """SIGTERM and wait; returns the exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.thread.join(timeout=5)
        return self.proc.returncode

    def kill(self):
        """SIGKILL: a crash (no lease release, no flush)."""
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self.thread.join(timeout=5)
        return self.proc.returncode


def run(test, **kw):
    """Runs test(cp) against a fresh control plane; exits 0 on success, 1 on failure."""
    # SIGTERM/SIGINT unwind through ControlPlane.__exit__, which stops the control plane.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(f"killed by signal {signum}"))
    try:
        with ControlPlane(**kw) as cp:
            test(cp)
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - report any failure as a test failure
        traceback.print_exc()
        log("FAILED")
        sys.exit(1)
    log("PASSED")
    sys.exit(0)
