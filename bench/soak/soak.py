#!/usr/bin/env python3
"""Soak: Gantry under churn and faults for a long time against the real control plane.

Two replicas (leader election with deploy/'s lease timings) reach kube-apiserver through the fault
suite's proxy. For the whole run:

  * a wave of the fault suite's mix (plain pods, pods with a claim from a template, one gang) is
    created every WAVE_S seconds; the oldest wave is deleted (pods with grace 0, its PodGroup) once
    LIVE_WAVES waves are newer, so the cluster holds a steady amount of work;
  * every NODE_S seconds a node (with its ResourceSlice) is added and the oldest one cordoned; a
    cordoned node is deleted once no live pod is bound to it;
  * every FAULT_S seconds a fault of the fault suite's table is injected (the ones that depose the
    leader only in the first part of the run, so that one replica lives long enough to show its
    memory curve);
  * every SAMPLE_S seconds each replica's RSS, threads and open files (/proc) and its queue and
    cache gauges (/metrics) are sampled.

At the end the churn stops, the live waves settle, the fault suite's invariants are counted (all
must be 0), everything is deleted and the caches must drain back to empty. The report (JSON, and a
markdown summary on stdout) says whether growth stopped: the RSS of the longest-lived replica in the
last third of its life against the middle third.

    soak.py GANTRY [--minutes 30] [--report FILE]        (make soak)

Exit code 1 when an invariant is non-zero, a cache does not drain, or memory keeps growing.
"""

import argparse
import json
import os
import signal
import statistics
import sys
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "e2e"))
import fault_test as ft  # noqa: E402
from fault_proxy import FaultProxy, match_path, match_watch  # noqa: E402
from gantry_e2e import ApiError, log, run  # noqa: E402

NS = ft.NS
DEPLOY_LEASE = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}
LEASE_S = 15
WAVE_S, LIVE_WAVES, NODE_S, FAULT_S, SAMPLE_S = 20, 5, 240, 180, 15
# Allowed RSS growth of the longest-lived replica, last third of its life against the middle
# third: allocator noise and the caches of a cluster that is still being discovered.
GROWTH_LIMIT = 0.10

# Gauges sampled from /metrics: (metric, label that tells the series apart).
GAUGES = (("scheduler_pending_pods", "queue"), ("scheduler_cache_size", "type"),
          ("gantry_cache_size", "type"), ("gantry_status_patch_queue_length", None),
          ("gantry_event_queue_length", None))


class SoakWorkload(ft.Workload):
    """The fault suite's workload, with waves that can be deleted and nodes that come and go."""

    def __init__(self, c, nodes, gpus, node_cpu):
        super().__init__(c, nodes=nodes, gpus=gpus, node_cpu=node_cpu)
        self.gpus = gpus
        self.node_cpu = node_cpu
        self.waves = []  # (tag, pod names, group names), oldest first
        self.next_node = nodes
        self.retired_pods = 0
        self.lock = threading.Lock()

    def wave(self, tag):
        before_pods, before_groups = len(self.pods), set(self.groups)
        self.mixed(tag, plain=10, dra=4, gangs=1, gang_size=4)
        with self.lock:
            self.waves.append((tag, self.pods[before_pods:], [g for g in self.groups if g not in before_groups]))

    def retire_oldest(self):
        with self.lock:
            tag, pods, groups = self.waves.pop(0)
        for p in pods:
            self._retry(lambda p=p: self.c.delete(f"/api/v1/namespaces/{NS}/pods/{p}", grace_seconds=0))
        for g in groups:
            self._retry(lambda g=g: self.c.delete(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{g}"))
        with self.lock:
            gone = set(pods)
            self.pods = [p for p in self.pods if p not in gone]
            for g in groups:
                self.groups.pop(g, None)
            self.retired_pods += len(pods)
        return tag

    def add_node(self):
        name = f"n-{self.next_node}"
        self.next_node += 1
        self._retry(lambda: self.c.create_node(name, cpu=self.node_cpu, memory="64Gi"))
        self._retry(lambda: self.c.post("/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": ft.DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(self.gpus)]}}))
        self.nodes.append(name)
        return name

    def cordon(self, name):
        self._retry(lambda: self.c.patch_merge(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": True}}))

    def remove_node(self, name):
        self._retry(lambda: self.c.delete(f"/apis/resource.k8s.io/v1/resourceslices/{name}-gpus"))
        self._retry(lambda: self.c.delete(f"/api/v1/nodes/{name}"))
        self.nodes.remove(name)

    def _retry(self, fn, timeout=60):
        def once():
            try:
                fn()
                return True
            except ApiError as e:
                if e.status in (404, 409):
                    return True  # done by an earlier attempt whose answer was lost
                if e.status >= 500 or e.status == 429:
                    return None  # the API server is (re)starting: retry
                raise
            except OSError:
                return None  # API server down (apiserver kill): retry
        self.c.wait("api call", once, timeout=timeout, interval=0.5)


def proc_sample(pid):
    """RSS (KiB), threads and open files of a process (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            st = dict(line.split(":", 1) for line in f if ":" in line)
        return {"rss_kib": int(st["VmRSS"].split()[0]), "threads": int(st["Threads"]),
                "fds": len(os.listdir(f"/proc/{pid}/fd"))}
    except (OSError, KeyError, ValueError):
        return None


def gauges(g):
    """{metric or metric{label}: value} of GAUGES from one replica's /metrics."""
    out = {}
    try:
        body = g.metrics()
    except AssertionError:
        return out
    for line in body.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        key, _, value = line.rpartition(" ")
        name, _, rest = key.partition("{")
        for metric, label in GAUGES:
            if name != metric:
                continue
            labels = dict(p.split("=", 1) for p in rest.rstrip("}").split(",") if "=" in p)
            k = metric if label is None else f"{metric}{{{labels.get(label, '').strip(chr(34))}}}"
            out[k] = out.get(k, 0.0) + float(value)
    return out


class Soak:
    """The attributes fault_test's helpers expect of a scenario (cp, c, wl, proxy, fleet, faults,
    monitor, fault()), plus the churn and sampling threads."""

    def __init__(self, cp, binary, minutes, nodes=8, gpus=4):
        self.cp, self.c = cp, cp.client
        self.t0 = time.monotonic()
        self.deadline = self.t0 + minutes * 60
        self.depose_until = self.t0 + min(minutes * 60 * 0.25, 8 * 60)
        self.wl = SoakWorkload(cp.client, nodes=nodes, gpus=gpus, node_cpu="8")
        port = int(cp.cluster_env()["APISERVER_PORT"])
        self.proxy = FaultProxy(cp.dir, "127.0.0.1", port, cp.ca)
        self.fleet = ft.Fleet(cp, binary, self.proxy, leader_elect=True, lease=DEPLOY_LEASE)
        self.faults = []
        self.monitor = ft.Monitor(cp.client, interval=5.0)
        self.samples = []  # {"t", "replica", "incarnation", "pid", rss_kib, threads, fds, gauges...}
        self.events = []  # (t, what): waves, nodes, faults
        self.stop = threading.Event()
        self.errors = []
        self.waves_created = 0
        for name in "ab":
            self.fleet.start(name)
        for g in self.fleet.all_procs():
            g.wait_ready()
        self.fleet.wait_leader()

    def now(self):
        return round(time.monotonic() - self.t0, 1)

    def fault(self, what):
        log(f"FAULT: {what}")
        self.faults.append(what)
        self.events.append((self.now(), "fault: " + what))

    # --- threads -----------------------------------------------------------------------------
    def _thread(self, fn):
        def body():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported at the end
                log(f"soak thread {fn.__name__} failed: {e!r}")
                self.errors.append(f"{fn.__name__}: {e!r}")
                self.stop.set()
        t = threading.Thread(target=body, daemon=True, name=fn.__name__)
        t.start()
        return t

    def churn(self):
        i = 0
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            t = time.monotonic()
            tag = f"w{i}"
            self.wl.wave(tag)
            i += 1
            if len(self.wl.waves) > LIVE_WAVES:
                self.wl.retire_oldest()
            self.stop.wait(max(0, WAVE_S - (time.monotonic() - t)))
        self.waves_created = i

    def node_churn(self):
        cordoned = []
        next_at = time.monotonic() + NODE_S
        while not self.stop.wait(5) and time.monotonic() < self.deadline:
            for n in list(cordoned):
                try:
                    pods = self.c.get(f"/api/v1/namespaces/{NS}/pods", query={"fieldSelector": f"spec.nodeName={n}"})
                except (OSError, ApiError):
                    continue  # API server down or starting (apiserver kill): look again on the next round
                if not pods["items"]:
                    self.wl.remove_node(n)
                    cordoned.remove(n)
                    self.events.append((self.now(), f"node {n} removed"))
            if time.monotonic() >= next_at:
                next_at += NODE_S
                new = self.wl.add_node()
                old = next(n for n in self.wl.nodes if n not in cordoned)
                self.wl.cordon(old)
                cordoned.append(old)
                self.events.append((self.now(), f"node {new} added, {old} cordoned"))
                log(f"node {new} added, {old} cordoned")

    def faults_loop(self):
        plan_depose = [self.f_leader_pause, self.f_lease_throttled]
        plan = [self.f_watch_blackhole, self.f_binding_throttled, self.f_watch_freeze, self.f_reset,
                self.f_apiserver_kill]
        k = 0
        next_at = time.monotonic() + FAULT_S / 2
        while not self.stop.wait(1) and time.monotonic() < self.deadline - 90:
            if time.monotonic() < next_at:
                continue
            if plan_depose and time.monotonic() < self.depose_until:
                plan_depose.pop(0)()
            else:
                plan[k % len(plan)]()
                k += 1
            next_at = time.monotonic() + FAULT_S

    def sampler(self):
        while not self.stop.is_set():
            t = self.now()
            with self.fleet.lock:
                procs = [(n, self.fleet.tags[n], g) for n, g in self.fleet.procs.items()]
            for name, tag, g in procs:
                s = proc_sample(g.proc.pid) if g.alive() else None
                if s is None:
                    continue
                s.update({"t": t, "replica": name, "incarnation": tag, "pid": g.proc.pid,
                          "leader": name not in self.fleet.paused and g.is_leader(ft.LEASE_NAME)})
                s.update(gauges(g))
                self.samples.append(s)
            self.stop.wait(SAMPLE_S)

    # --- faults (the fault suite's table, sized for deploy/'s lease) --------------------------
    def f_leader_pause(self):
        name, g = self.fleet.leader()
        if not g:
            return
        tag = self.fleet.tags[name]
        os.kill(g.proc.pid, signal.SIGSTOP)
        self.fleet.paused.add(name)
        time.sleep(LEASE_S + 3)
        os.kill(g.proc.pid, signal.SIGCONT)
        self.fleet.paused.discard(name)
        self.fault(f"leader {tag} SIGSTOPped for {LEASE_S + 3} s")

    def f_lease_throttled(self):
        name, g = self.fleet.leader()
        if not g:
            return
        tag = self.fleet.tags[name]
        rule = self.proxy.throttle(match_path(ft.LEASE_PATH), seconds=25, retry_after=3, tag=tag)
        time.sleep(25)
        self.fault(f"429 on {tag}'s lease requests for 25 s ({rule.hits} answered)")

    def f_watch_blackhole(self):
        n = self.proxy.blackhole(match_watch("/api/v1/pods"), seconds=45)
        self.fault(f"pods watch blackholed 45 s ({n} stream(s))")
        time.sleep(46)

    def f_watch_freeze(self):
        n = self.proxy.freeze(match_watch("/apis/resource.k8s.io/v1/resourceclaims"))
        self.fault(f"resourceclaims watch frozen without FIN ({n} stream(s))")

    def f_binding_throttled(self):
        rule = self.proxy.throttle(lambda r: r.method == "POST" and r.path.endswith("/binding"), seconds=20,
                                   retry_after=2)
        time.sleep(20)
        self.fault(f"429 + Retry-After: 2 on every Binding for 20 s ({rule.hits} answered)")

    def f_reset(self):
        before = self.proxy.counts["resets"]
        self.proxy.reset()
        self.fault(f"every connection reset ({self.proxy.counts['resets'] - before})")

    def f_apiserver_kill(self):
        ft.kill_apiserver(self)

    # --- the run -------------------------------------------------------------------------------
    def run(self):
        threads = [self._thread(f) for f in (self.churn, self.node_churn, self.faults_loop, self.sampler)]
        for t in threads[:3]:
            t.join()
        log(f"churn over after {self.now()} s: {self.waves_created} waves, {self.wl.created} pods created, "
            f"{self.wl.retired_pods} deleted")
        ft.Scenario.settle(self, timeout=240)
        time.sleep(10)  # the resourceclaim controller clears reservedFor of the last deleted wave
        self.monitor.close()
        inv = ft.count_invariants(self.cp, self.wl, self.monitor, self.fleet)
        drained = self.drain()
        self.stop.set()
        threads[3].join(timeout=SAMPLE_S + 10)
        return inv, drained

    def drain(self):
        """Deletes every wave; returns each leader gauge that did not get back to 0 in time."""
        while self.wl.waves:
            self.wl.retire_oldest()
        must_empty = ("scheduler_cache_size{pods}", "scheduler_cache_size{assumed_pods}",
                      "gantry_cache_size{resourceclaims}", "gantry_cache_size{assumed_resourceclaims}",
                      "gantry_cache_size{in_flight_allocations}", "gantry_cache_size{podgroups}",
                      "gantry_cache_size{foreign_group_members}", "gantry_status_patch_queue_length")
        left = {}

        def empty():
            _, g = self.fleet.leader()
            if not g:
                return False
            gs = gauges(g)
            left.clear()
            left.update({k: gs.get(k) for k in must_empty if gs.get(k) != 0})
            return not left
        try:
            self.c.wait("the caches drain", empty, timeout=120, interval=2)
        except TimeoutError:
            log(f"caches not drained: {left}")
        _, g = self.fleet.leader()
        if g:
            self.final = gauges(g)
        return dict(left)


def growth(samples):
    """The longest-lived incarnation's RSS: middle third vs last third of its samples."""
    by = {}
    for s in samples:
        by.setdefault(s["incarnation"], []).append(s)
    if not by:
        return None
    inc, ss = max(by.items(), key=lambda kv: kv[1][-1]["t"] - kv[1][0]["t"])
    n = len(ss)
    if n < 6:
        return {"incarnation": inc, "samples": n, "growth": None}
    mid = statistics.mean(s["rss_kib"] for s in ss[n // 3:2 * n // 3])
    last = statistics.mean(s["rss_kib"] for s in ss[2 * n // 3:])
    return {"incarnation": inc, "samples": n, "lived_s": round(ss[-1]["t"] - ss[0]["t"]),
            "rss_first_mib": round(ss[0]["rss_kib"] / 1024, 1), "rss_mid_mib": round(mid / 1024, 1),
            "rss_last_mib": round(last / 1024, 1), "rss_max_mib": round(max(s["rss_kib"] for s in ss) / 1024, 1),
            "threads_max": max(s["threads"] for s in ss), "fds_first": ss[0]["fds"],
            "fds_max": max(s["fds"] for s in ss), "growth": round(last / mid - 1, 4)}


def summary(report):
    g = report["growth"] or {}
    lines = [f"Soak: {report['minutes']} min, {report['pods_created']} pods created "
             f"({report['pods_deleted']} deleted), {report['waves']} waves, {len(report['faults'])} faults, "
             f"{report['restarts']} replica restarts.", "",
             "| invariant | count |", "|---|---|"]
    lines += [f"| {k} | {report['invariants'][k]} |" for k in ft.INVARIANTS]
    lines += ["", f"Longest-lived replica {g.get('incarnation')}: {g.get('lived_s')} s, RSS first "
              f"{g.get('rss_first_mib')} MiB, middle third {g.get('rss_mid_mib')} MiB, last third "
              f"{g.get('rss_last_mib')} MiB (growth {g.get('growth')}), max {g.get('rss_max_mib')} MiB; "
              f"threads max {g.get('threads_max')}; open files {g.get('fds_first')} -> max {g.get('fds_max')}.",
              f"Caches not drained after the final delete: {report['not_drained'] or 'none'}.",
              f"Result: {'pass' if report['passed'] else 'FAIL'}"]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gantry")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--report", default="soak-report.json")
    args = ap.parse_args()
    os.environ.setdefault("GANTRY_KCM_EXTRA_ARGS", "--kube-api-qps=500 --kube-api-burst=1000")

    def test(cp):
        s = Soak(cp, args.gantry, args.minutes)
        try:
            inv, drained = s.run()
        finally:
            s.stop.set()
            s.fleet.stop()
            s.proxy.close()
        gr = growth(s.samples)
        report = {
            "minutes": args.minutes, "waves": getattr(s, "waves_created", 0), "pods_created": s.wl.created,
            "pods_deleted": s.wl.retired_pods, "faults": s.faults, "restarts": len(s.fleet.exits),
            "exits": s.fleet.exits, "proxy": dict(s.proxy.counts), "monitor_polls": s.monitor.polls,
            "invariants": {k: len(inv[k]) for k in ft.INVARIANTS},
            "invariant_details": {k: inv[k][:25] for k in ft.INVARIANTS if inv[k]},
            "not_drained": drained, "final_gauges": getattr(s, "final", {}), "growth": gr,
            "errors": s.errors, "events": s.events, "samples": s.samples,
        }
        # Everything left fits the cluster: a pod still Pending after the settle counts (unbound).
        failed = [k for k in ft.INVARIANTS if inv[k]]
        report["passed"] = (not failed and not drained and not s.errors and gr is not None
                            and gr.get("growth") is not None and gr["growth"] <= GROWTH_LIMIT)
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
        print(summary(report), flush=True)
        assert report["passed"], f"soak failed: invariants {failed}, not drained {drained}, errors {s.errors}, growth {gr}"
    run(test, audit_policy=ft.AUDIT_POLICY)


if __name__ == "__main__":
    main()
