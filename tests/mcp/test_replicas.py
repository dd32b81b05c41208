"""Replicas behind nginx (DEPLOY.md): three `codecage mcp --http` processes
and nginx routing on Mcp-Session-Id (`hash $http_mcp_session_id
consistent`; an initialize, which has none, goes round-robin), all on
loopback and all started and stopped here by pid. 30 sessions through the
official TypeScript SDK; one replica is killed: its sessions get the spec's
404 and continue after re-initializing, the others keep their state, and
the new sessions land on the live replicas."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import CLI
from mcp_util import HERE, need_node

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# The same upstream and location blocks as DEPLOY.md's nginx configuration.
NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream codecage {{
        hash $http_mcp_session_id consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://codecage;
            proxy_http_version 1.1;
            proxy_set_header Host 127.0.0.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 3600s;
            proxy_next_upstream error timeout;
            client_max_body_size 4m;
        }}
    }}
}}
"""


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def owner(ports, sid):
    """The replica (index) that knows the session: 200 there, 404 elsewhere."""
    found = []
    for i, port in enumerate(ports):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                      {"Content-Type": "application/json", "Accept": "application/json",
                       "Mcp-Session-Id": sid})
            if c.getresponse().status == 200:
                found.append(i)
        except OSError:
            pass  # a dead replica
        finally:
            c.close()
    assert len(found) <= 1, (sid, found)
    return found[0] if found else None


@pytest.fixture
def cluster(tmp_path):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed (scripts/install-deps installs Debian's nginx)")
    need_node()
    *ports, front = free_ports(4)
    peers = ",".join("127.0.0.1:%d" % p for p in ports)
    procs = []
    try:
        for p in ports:
            procs.append(subprocess.Popen(
                [CLI, "mcp", "--http", "127.0.0.1:%d" % p, "--route-self", "127.0.0.1:%d" % p,
                 "--route-peers", peers, "--pool", "1", "--scratch", "0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        for p in procs:
            assert "listening on" in p.stderr.readline()
        conf = tmp_path / "nginx.conf"
        conf.write_text(NGINX_CONF.format(
            tmp=tmp_path, port=front,
            servers="\n".join("        server 127.0.0.1:%d;" % p for p in ports)))
        nginx = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(tmp_path)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(nginx)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", front), timeout=1).close()
                break
            except OSError:
                assert nginx.poll() is None, nginx.stderr.read()
                time.sleep(0.05)
        yield "http://127.0.0.1:%d/mcp" % front, ports, procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_sessions_follow_their_replica_and_survive_losing_one(cluster):
    url, ports, procs = cluster
    client = subprocess.Popen(["node", os.path.join(HERE, "replicas_client.mjs"), url, "30"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=HERE)
    try:
        line = client.stdout.readline()
        assert line, client.stderr.read()
        sids = json.loads(line)["sessions"]
        where = [owner(ports, s) for s in sids]
        assert None not in where, where
        # an initialize goes anywhere: every replica got some of the 30
        assert sorted(set(where)) == [0, 1, 2], where
        victim = where[0]
        procs[victim].kill()
        procs[victim].wait(30)
        client.stdin.write("go\n")
        client.stdin.flush()
        out = client.stdout.readline()
        assert out, client.stderr.read()
        results = json.loads(out)["results"]
        assert client.wait(120) == 0, client.stderr.read()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    for i, (r, w) in enumerate(zip(results, where)):
        assert r["value"] == i, r  # state kept, or set again after re-initializing
        if w == victim:
            assert r["status"] == 404 and r["retried"], r
            assert owner(ports, r["id"]) not in (None, victim), r  # new session: a live replica
        else:
            assert r["status"] == 200 and not r["retried"], r  # never noticed


def test_route_flags_are_checked():
    for args in (["--route-self", "127.0.0.1:1"],
                 ["--route-self", "127.0.0.1:9", "--route-peers", "127.0.0.1:1,127.0.0.1:2"],
                 ["--route-self", "127.0.0.1:1", "--route-peers", "127.0.0.1:1,,x:2"]):
        r = subprocess.run([CLI, "mcp", "--http", "127.0.0.1:0", *args], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 2 and "--route-" in r.stderr, r.stderr
