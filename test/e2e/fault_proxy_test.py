#!/usr/bin/env python3
"""Hermetic test of fault_proxy.FaultProxy (no control plane): a local TLS upstream with a plain
and a streaming (chunked, numbered lines) endpoint, a CA made with openssl; checks forwarding, the
User-Agent tag, throttling, blackhole (the stream stalls, then resumes without a gap), freeze (no
bytes, no EOF), hold and reset."""

import http.client
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fault_proxy import FaultProxy, match_path, match_watch, make_serving_cert  # noqa: E402


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        if "watch=true" in self.path:
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for i in range(100000):
                    line = f"{i}\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                return
            return
        body = f"ua={self.headers.get('User-Agent')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok: {what}", flush=True)


def main():
    d = tempfile.mkdtemp(prefix="fault-proxy-test-")
    try:
        pki = os.path.join(d, "pki")
        os.makedirs(pki)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        os.path.join(pki, "ca.key"), "-out", os.path.join(pki, "ca.crt"), "-days", "1",
                        "-subj", "/CN=test-ca", "-addext", "basicConstraints=critical,CA:TRUE",
                        "-addext", "keyUsage=critical,keyCertSign,cRLSign"], check=True, capture_output=True)
        ca = os.path.join(pki, "ca.crt")
        up_crt, up_key = make_serving_cert(pki, "upstream")
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        sctx.load_cert_chain(up_crt, up_key)
        srv.socket = sctx.wrap_socket(srv.socket, server_side=True)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()

        proxy = FaultProxy(d, "127.0.0.1", srv.server_address[1], ca)
        port = proxy.listen("t1")
        cctx = ssl.create_default_context(cafile=ca)

        def conn(timeout=10):
            return http.client.HTTPSConnection("127.0.0.1", port, context=cctx, timeout=timeout)

        c = conn()
        c.request("GET", "/plain", headers={"User-Agent": "me"})
        r = c.getresponse()
        check(r.status == 200 and r.read() == b"ua=me fault-proxy/t1", "forwarded over TLS, tag in User-Agent")
        c.request("GET", "/plain")  # same connection again (keep-alive)
        check(c.getresponse().read().startswith(b"ua=") and proxy.counts["requests"] == 2 and len(proxy.conns) == 1,
              "keep-alive: a second request on the connection")

        proxy.throttle(match_path("/plain"), seconds=1, retry_after=7)
        c.request("GET", "/plain")
        r = c.getresponse()
        r.read()
        check(r.status == 429 and r.getheader("Retry-After") == "7", "429 with Retry-After while throttled")
        time.sleep(1.1)
        c.request("GET", "/plain")
        r = c.getresponse()
        r.read()
        check(r.status == 200, "200 once the throttle expired")

        class Stream:
            """A raw watch client: the numbers of the lines received within a time."""

            def __init__(self):
                raw = socket.create_connection(("127.0.0.1", port))
                self.s = cctx.wrap_socket(raw, server_hostname="127.0.0.1")
                self.s.sendall(b"GET /pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
                self.buf, self.head = b"", False

            def numbers(self, seconds):
                got, end = [], time.monotonic() + seconds
                while time.monotonic() < end:
                    self.s.settimeout(max(0.01, end - time.monotonic()))
                    try:
                        data = self.s.recv(65536)
                    except (socket.timeout, TimeoutError):
                        break
                    if not data:
                        got.append("EOF")
                        break
                    self.buf += data
                    if not self.head and b"\r\n\r\n" in self.buf:
                        self.buf = self.buf.split(b"\r\n\r\n", 1)[1]
                        self.head = True
                    while self.head and b"\r\n" in self.buf:
                        size_line, rest = self.buf.split(b"\r\n", 1)
                        size = int(size_line, 16)
                        if len(rest) < size + 2:
                            break
                        got.append(int(rest[:size]))
                        self.buf = rest[size + 2:]
                return got

            def close(self):
                self.s.close()

        wr = Stream()
        first = wr.numbers(0.6)
        check(len(first) >= 3, f"stream flows ({len(first)} lines)")
        proxy.blackhole(match_watch("/pods"), seconds=1.5)
        time.sleep(0.2)
        stalled = wr.numbers(1.0)
        check(len(stalled) <= 3, f"blackholed stream stalls ({len(stalled)} lines in 1 s)")
        time.sleep(0.6)
        after = wr.numbers(0.5)
        seq = first + stalled + after
        check(after and seq == list(range(seq[0], seq[0] + len(seq))), "after the blackhole: resumes, no gap")

        n = proxy.freeze(match_watch("/pods"))
        check(n == 1, "one stream frozen")
        wr.numbers(0.3)  # what was in flight
        frozen = wr.numbers(1.5)
        check(frozen == [], f"frozen stream: no bytes and no EOF ({frozen})")
        wr.close()
        w2 = Stream()
        check(len(w2.numbers(0.5)) >= 3, "a new watch is not frozen (freeze is one-shot)")
        w2.close()

        rule = proxy.hold(match_path("/plain"))
        got = []
        t = threading.Thread(target=lambda: (c.request("GET", "/plain"), got.append(c.getresponse().status)))
        t.start()
        check(rule.kw["seen"].wait(5), "held request arrived")
        time.sleep(0.5)
        check(not got, "held request not answered")
        rule.kw["gate"].set()
        t.join(5)
        check(got == [200], "held request forwarded once released")

        c3 = conn()
        c3.request("GET", "/plain")
        c3.getresponse().read()
        check(proxy.reset(tag="t1") >= 1, "reset counts open connections")
        try:
            c3.sock.settimeout(2)
            data = c3.sock.recv(1)
            check(data == b"", "reset: connection closed")
        except (ConnectionError, ssl.SSLError, OSError):
            check(True, "reset: connection reset")
        proxy.close()
        srv.shutdown()
        print("PASSED")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
