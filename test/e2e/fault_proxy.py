"""A controllable HTTPS proxy in front of kube-apiserver for the fault suite (stdlib only).

The proxy terminates TLS with a serving certificate signed by the cluster CA (so clients verify it
exactly as they verify the API server), reads each HTTP/1.1 request, and forwards it over its own
TLS connection to the API server. Because it sees every request, faults can be aimed at one path:

    proxy = FaultProxy(cp.dir, "127.0.0.1", apiserver_port, ca, ca_key)
    port = proxy.listen("replica-a")          # one listener per client; the tag is appended to the
                                              # User-Agent, so the audit log tells clients apart
    proxy.blackhole(match_watch("/api/v1/pods"), seconds=45)   # streams and new requests stall
    proxy.freeze(match_watch("/apis/resource.k8s.io/v1/resourceclaims"))  # open streams: no more
                                              # bytes, no FIN (one-shot: later watches pass)
    proxy.throttle(match_lease(...), seconds=20, retry_after=2, tag="replica-a")  # 429s
    proxy.reset(tag="replica-a")              # RST every open connection of that listener
    gate = proxy.hold(pred)                   # the next matching request waits until gate.set()
    proxy.close()

A predicate gets a Request (method, path, query dict, tag). Only HTTP/1.1 is offered (ALPN), so
every request is visible. Nothing is ever dropped silently: a stalled stream resumes with all its
bytes (a healed partition), a frozen one delivers nothing more until the client gives up.
"""

import os
import select
import socket
import ssl
import struct
import subprocess
import threading
import time
import urllib.parse
from collections import Counter


def make_serving_cert(pki_dir, name="fault-proxy"):
    """A serving certificate for 127.0.0.1/localhost signed by the cluster CA (ca.crt/ca.key in
    pki_dir); returns (cert, key) paths."""
    crt, key = os.path.join(pki_dir, name + ".crt"), os.path.join(pki_dir, name + ".key")
    if os.path.exists(crt):
        return crt, key
    csr, ext = os.path.join(pki_dir, name + ".csr"), os.path.join(pki_dir, name + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                    "-subj", "/CN=gantry-fault-proxy"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki_dir, "ca.crt"),
                    "-CAkey", os.path.join(pki_dir, "ca.key"), "-CAcreateserial", "-out", crt,
                    "-days", "2", "-sha256", "-extfile", ext], check=True, capture_output=True)
    os.remove(csr)
    os.remove(ext)
    return crt, key


class Request:
    def __init__(self, method, target, tag):
        self.method = method
        self.target = target
        parsed = urllib.parse.urlsplit(target)
        self.path = parsed.path
        self.query = dict(urllib.parse.parse_qsl(parsed.query))
        self.tag = tag

    @property
    def is_watch(self):
        return self.query.get("watch") in ("true", "1")

    def __repr__(self):
        return f"{self.tag}: {self.method} {self.target}"


def match_watch(collection):
    """Watches of a collection path (also its namespaced form, /api/v1/namespaces/X/pods)."""
    parts = collection.rstrip("/").rsplit("/", 1)

    def pred(r):
        if not r.is_watch:
            return False
        return r.path == collection or (r.path.startswith(parts[0] + "/namespaces/") and
                                        r.path.endswith("/" + parts[1]))
    return pred


def match_path(path, methods=None):
    return lambda r: r.path == path and (methods is None or r.method in methods)


def match_continue(collection):
    """A LIST page after the first one (a continue token) of a collection."""
    return lambda r: r.path == collection and r.method == "GET" and "continue" in r.query


class _Rule:
    def __init__(self, kind, pred, until=None, tag=None, **kw):
        self.kind, self.pred, self.until, self.tag = kind, pred, until, tag
        self.kw = kw
        self.hits = 0

    def active(self, now):
        return self.until is None or now < self.until

    def matches(self, req):
        return (self.tag is None or req.tag == self.tag) and self.pred(req)


class _Stream:
    """One forwarded response body that is still being relayed (e.g. a watch)."""

    def __init__(self, req):
        self.req = req
        self.frozen = False
        self.stalled_until = 0.0


class FaultProxy:
    def __init__(self, state_dir, upstream_host, upstream_port, ca):
        self.upstream = (upstream_host, upstream_port)
        self.ca = ca
        cert, key = make_serving_cert(os.path.join(state_dir, "pki"))
        self.server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_ctx.load_cert_chain(cert, key)
        self.server_ctx.set_alpn_protocols(["http/1.1"])
        self.client_ctx = ssl.create_default_context(cafile=ca)
        self.client_ctx.set_alpn_protocols(["http/1.1"])
        self.lock = threading.Lock()
        self.rules = []
        self.streams = set()
        self.conns = {}  # downstream socket -> tag
        self.listeners = []
        self.closed = threading.Event()
        self.counts = Counter()  # what the proxy did: requests, throttled, stalled, frozen, resets
        self.log = []  # (time, text) of every fault action, for the report

    # --- control ------------------------------------------------------------------------------
    def listen(self, tag):
        """A new listener whose requests carry `tag`; returns its port."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        self.listeners.append(s)
        threading.Thread(target=self._accept, args=(s, tag), daemon=True).start()
        return s.getsockname()[1]

    def _note(self, what):
        self.log.append((time.time(), what))

    def blackhole(self, pred, seconds, tag=None):
        """For `seconds`: open matching streams stop moving (bytes wait, nothing is lost) and new
        matching requests are not forwarded until the time is up."""
        until = time.monotonic() + seconds
        with self.lock:
            self.rules.append(_Rule("blackhole", pred, until, tag))
            n = 0
            for st in self.streams:
                if (tag is None or st.req.tag == tag) and pred(st.req):
                    st.stalled_until = until
                    n += 1
        self.counts["blackholed_streams"] += n
        self._note(f"blackhole {seconds}s: {n} open streams stalled")
        return n

    def freeze(self, pred, tag=None):
        """Open matching streams deliver nothing more and are never closed by the proxy (no FIN)
        until the client closes them. Returns how many were frozen."""
        n = 0
        with self.lock:
            for st in self.streams:
                if (tag is None or st.req.tag == tag) and pred(st.req) and not st.frozen:
                    st.frozen = True
                    n += 1
        self.counts["frozen_streams"] += n
        self._note(f"freeze: {n} streams")
        return n

    def throttle(self, pred, seconds, retry_after=1, tag=None):
        """Answer matching requests 429 with Retry-After for `seconds`."""
        rule = _Rule("throttle", pred, time.monotonic() + seconds, tag, retry_after=retry_after)
        with self.lock:
            self.rules.append(rule)
        self._note(f"throttle {seconds}s retry-after {retry_after}s tag={tag}")
        return rule

    def hold(self, pred, tag=None):
        """The first matching request waits until the returned event is set (then forwarded).
        rule.kw['seen'] is set once it arrived."""
        gate, seen = threading.Event(), threading.Event()
        rule = _Rule("hold", pred, None, tag, gate=gate, seen=seen)
        with self.lock:
            self.rules.append(rule)
        return rule

    def reset(self, tag=None):
        """RST (SO_LINGER 0) every open downstream connection (of one listener)."""
        with self.lock:
            victims = [s for s, t in self.conns.items() if tag is None or t == tag]
        for s in victims:
            _rst(s)
        self.counts["resets"] += len(victims)
        self._note(f"reset {len(victims)} connections tag={tag}")
        return len(victims)

    def close(self):
        self.closed.set()
        for s in self.listeners:
            try:
                s.close()
            except OSError:
                pass
        with self.lock:
            for r in self.rules:
                if r.kind == "hold":
                    r.kw["gate"].set()
            conns = list(self.conns)
        for s in conns:
            _rst(s)

    # --- data path ----------------------------------------------------------------------------
    def _accept(self, lsock, tag):
        while not self.closed.is_set():
            try:
                s, _ = lsock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(s, tag), daemon=True).start()

    def _serve(self, raw, tag):
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            down = self.server_ctx.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        with self.lock:
            self.conns[down] = tag
        up = None
        try:
            rd = _Reader(down)
            while not self.closed.is_set():
                head = rd.read_head()
                if head is None:
                    return
                lines = head.split(b"\r\n")
                method, target, _ = lines[0].decode("latin-1").split(" ", 2)
                headers = [tuple(x.strip() for x in l.decode("latin-1").split(":", 1)) for l in lines[1:] if l]
                req = Request(method, target, tag)
                self.counts["requests"] += 1
                expect = any(k.lower() == "expect" for k, _ in headers)
                headers = [(k, v) for k, v in headers if k.lower() != "expect"]
                if expect:
                    down.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = rd.read_body(headers)
                action = self._decide(req, down)
                if action == "closed":
                    return
                if action is not None:  # a canned answer
                    down.sendall(action)
                    continue
                out = [f"{method} {target} HTTP/1.1"]
                for k, v in headers:
                    if k.lower() == "user-agent":
                        v = f"{v} fault-proxy/{tag}"
                    out.append(f"{k}: {v}")
                wire = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body
                if up is None:
                    up = self._connect()
                    if up is None:
                        return  # API server unreachable: the client sees its connection drop
                    upr = _Reader(up)
                try:
                    up.sendall(wire)
                    keep = self._relay_response(req, upr, down)
                except (OSError, ssl.SSLError, _Closed):
                    return
                if not keep:
                    return
        except (OSError, ssl.SSLError, ValueError, _Closed):
            return
        finally:
            with self.lock:
                self.conns.pop(down, None)
            for s in (down, up):
                if s is not None:
                    try:
                        s.close()
                    except OSError:
                        pass

    def _connect(self):
        try:
            s = socket.create_connection(self.upstream, timeout=5)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s = self.client_ctx.wrap_socket(s, server_hostname=self.upstream[0])
            s.settimeout(None)
            return s
        except (OSError, ssl.SSLError):
            return None

    def _decide(self, req, down):
        """None: forward; bytes: send that answer instead; "closed": the client went away."""
        while True:
            now = time.monotonic()
            wait_until, gate = 0.0, None
            with self.lock:
                for r in self.rules:
                    if not r.active(now) or not r.matches(req):
                        continue
                    if r.kind == "throttle":
                        r.hits += 1
                        self.counts["throttled"] += 1
                        ra = r.kw["retry_after"]
                        body = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                                '"message":"fault-proxy: too many requests","reason":"TooManyRequests",'
                                f'"details":{{"retryAfterSeconds":{ra}}},"code":429}}').encode()
                        return (f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: {ra}\r\n"
                                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                                ).encode() + body
                    if r.kind == "blackhole":
                        r.hits += 1
                        wait_until = max(wait_until, r.until)
                    if r.kind == "hold" and not r.kw["gate"].is_set():
                        if r.hits == 0:
                            r.hits = 1
                            r.kw["seen"].set()
                            r.kw["req"] = req
                            self.counts["held"] += 1
                        if r.kw.get("req") is req:
                            gate = r.kw["gate"]
            if not wait_until and gate is None:
                return None
            if wait_until:
                self.counts["blackholed_requests"] += 1
            # Wait, but notice a client that gives up.
            deadline = wait_until if wait_until else now + 0.5
            while time.monotonic() < deadline and not (gate and gate.is_set()):
                if self.closed.is_set() or _peer_closed(down, min(0.5, max(0.01, deadline - time.monotonic()))):
                    return "closed"
            if gate is not None and not gate.is_set():
                continue
            if gate is not None or wait_until:
                # Re-evaluate (another rule may apply now); a passed hold no longer matches.
                with self.lock:
                    for r in self.rules:
                        if r.kind == "hold" and r.kw.get("req") is req:
                            r.kw["req"] = None
                if gate is not None:
                    return None

    def _relay_response(self, req, upr, down):
        """Relays one response; returns whether both connections can carry another request."""
        head = upr.read_head()
        if head is None:
            raise _Closed()
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ")[1])
        hdrs = {}
        for l in lines[1:]:
            if l:
                k, _, v = l.decode("latin-1").partition(":")
                hdrs[k.strip().lower()] = v.strip()
        if "continue" in req.query:
            self.counts[f"continue_{status}"] += 1
        down.sendall(head + b"\r\n\r\n")
        keep = hdrs.get("connection", "").lower() != "close"
        if req.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return keep
        st = _Stream(req)
        with self.lock:
            self.streams.add(st)
            # A stream opened while a blackhole rule for it is active starts stalled (it could
            # only have got here after the rule expired, but be exact).
            now = time.monotonic()
            for r in self.rules:
                if r.kind == "blackhole" and r.active(now) and r.matches(req):
                    st.stalled_until = max(st.stalled_until, r.until)
        try:
            if "content-length" in hdrs:
                self._pump(st, upr, down, int(hdrs["content-length"]))
                return keep
            if "chunked" in hdrs.get("transfer-encoding", "").lower():
                while True:
                    line = upr.read_line()
                    self._send(st, upr, down, line + b"\r\n")
                    size = int(line.split(b";")[0].strip(), 16)
                    if size == 0:
                        while True:  # trailers, then the empty line
                            t = upr.read_line()
                            self._send(st, upr, down, t + b"\r\n")
                            if not t:
                                return keep
                    self._pump(st, upr, down, size)
                    crlf = upr.read_exact(2)
                    self._send(st, upr, down, crlf)
            self._pump(st, upr, down, None)  # until EOF
            return False
        finally:
            with self.lock:
                self.streams.discard(st)

    def _pump(self, st, upr, down, n):
        while n is None or n > 0:
            self._gate(st, down)
            data = upr.read_some(65536 if n is None else min(n, 65536))
            if not data:
                if n is None:
                    return
                raise _Closed()
            if n is not None:
                n -= len(data)
            self._send(st, upr, down, data)

    def _send(self, st, upr, down, data):
        self._gate(st, down)
        down.sendall(data)

    def _gate(self, st, down):
        """Blocks while the stream is stalled or frozen; raises _Closed when the client leaves."""
        while True:
            if self.closed.is_set():
                raise _Closed()
            now = time.monotonic()
            if st.frozen or st.stalled_until > now:
                wait = 0.5 if st.frozen else min(0.5, st.stalled_until - now)
                if _peer_closed(down, max(0.01, wait)):
                    raise _Closed()
                continue
            return


class _Closed(Exception):
    pass


def _peer_closed(sock, timeout):
    """Waits up to timeout; True if the peer closed (or reset) the connection. The client sends
    nothing while its response is pending (no pipelining), so whatever arrives is a close."""
    if sock.fileno() < 0:
        return True
    try:
        r, _, _ = select.select([sock], [], [], timeout)
    except (OSError, ValueError):
        return True
    if not r:
        return False
    sock.setblocking(False)
    try:
        data = sock.recv(1)
        if data:
            time.sleep(timeout)  # unexpected bytes: not a close; do not spin
            return False
        return True
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
        time.sleep(min(timeout, 0.05))
        return False
    except (OSError, ssl.SSLError):
        return True
    finally:
        try:
            sock.setblocking(True)
        except OSError:
            pass


def _rst(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Reader:
    """Buffered reads from a (TLS) socket."""

    MAX_HEAD = 1 << 20

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise _Closed()
        self.buf += data

    def read_head(self):
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > self.MAX_HEAD:
                raise ValueError("request head too large")
            try:
                self._fill()
            except _Closed:
                return None
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        return head

    def read_line(self):
        while b"\r\n" not in self.buf:
            if len(self.buf) > self.MAX_HEAD:
                raise ValueError("line too long")
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def read_exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_some(self, n):
        if not self.buf:
            try:
                self._fill()
            except _Closed:
                return b""
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_body(self, headers):
        h = {k.lower(): v for k, v in headers}
        if "content-length" in h:
            return self.read_exact(int(h["content-length"]))
        if "chunked" in h.get("transfer-encoding", "").lower():
            parts = []
            while True:
                line = self.read_line()
                parts.append(line + b"\r\n")
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:
                        t = self.read_line()
                        parts.append(t + b"\r\n")
                        if not t:
                            return b"".join(parts)
                parts.append(self.read_exact(size + 2))
        return b""
