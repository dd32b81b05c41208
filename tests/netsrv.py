"""Local HTTP(S) servers for the network tests (tests/python/test_pkg_net.py,
tests/integration/test_cli_net.py, tests/mcp/test_net_mcp.py).

Only loopback addresses (127.0.0.0/8). Paths: /echo (JSON of the method,
path, headers and body), /slow (0.3 s, then /echo; /peak says how many
were in /slow at once at most, and resets), /redir?to=URL (302),
/drip (a body that never ends: one byte every 0.1 s), /gzipbomb (8 MiB of
zeros, gzip-encoded: about 8 KiB on the wire), /csv, /big?n=N (N bytes),
/setcookie (sets a cookie)."""
import gzip
import http.server
import json
import os
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

BOMB = gzip.compress(b"\0" * (8 << 20))
_lock = threading.Lock()
_active = {"now": 0, "peak": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    name = "server"

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if u.path == "/slow":
            with _lock:
                _active["now"] += 1
                _active["peak"] = max(_active["peak"], _active["now"])
            time.sleep(0.3)
            with _lock:
                _active["now"] -= 1
        if u.path == "/peak":
            with _lock:
                peak, _active["peak"] = _active["peak"], 0
            return self.reply(200, str(peak).encode(), "text/plain")
        if u.path == "/redir":
            return self.reply(int(q.get("code", 302)), b"", extra=[("Location", q["to"])])
        if u.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            self.close_connection = True
            return
        if u.path == "/gzipbomb":
            return self.reply(200, BOMB, "text/plain", [("Content-Encoding", "gzip")])
        if u.path == "/setcookie":
            return self.reply(200, b"ok", "text/plain", [("Set-Cookie", "sid=secret; Path=/")])
        if u.path == "/csv":
            return self.reply(200, b"a,b\n1,2\n3,4\n", "text/csv")
        if u.path == "/big":
            return self.reply(200, b"y" * int(q["n"]), "text/plain")
        out = {"server": self.name, "method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body.decode("latin-1")}
        self.reply(200, json.dumps(out).encode())

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


class Server:
    """A threading HTTP server on addr (port chosen by the kernel)."""

    def __init__(self, addr="127.0.0.1", name=None, tls=None):
        handler = type("H", (Handler,), {"name": name or addr})
        server = type("S", (http.server.ThreadingHTTPServer,), {
            "request_queue_size": 256,
            "address_family": socket.AF_INET6 if ":" in addr else socket.AF_INET})
        self.httpd = server((addr, 0), handler)
        self.httpd.daemon_threads = True
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls[0], tls[1])
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.addr = addr
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path="/echo", host=None, scheme="http"):
        host = host or (f"[{self.addr}]" if ":" in self.addr else self.addr)
        return f"{scheme}://{host}:{self.port}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def make_ca(d, name):
    """A CA and a certificate for `name` signed by it, made with openssl in
    directory d. Returns (ca.pem, cert.pem, key.pem)."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=codecage test CA")
    run("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", f"/CN={name}")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write(f"subjectAltName=DNS:{name}\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext.cnf")
    return (os.path.join(d, "ca.pem"), os.path.join(d, "srv.pem"), os.path.join(d, "srv.key"))
