"""A local package index and npm registry for the dependency tests
(issue 33: tests/integration/test_deps.py, tests/python/test_pkg_deps.py,
tests/mcp/test_mcp_deps.py, tests/security/test_deps_redteam.py), built
offline in a temporary folder, so those tests are deterministic.

pip: a "simple" index served from a folder (``file://.../simple``):
- ``ccdemo-pkg`` 1.0 and 2.0 (pure Python; ``ccdemo_pkg.VERSION``),
- ``ccneeds`` 1.0, which needs ``ccdemo-pkg==1.0`` (a conflict with 2.0),
- ``ccnative`` 1.0, a compiled extension module (built here with the
  guest's interpreter headers),
- ``ccsrconly`` 1.0, a source distribution only (no wheel),
- ``ccbig-a``/``ccbig-b`` 1.0, each about 3 MiB of data (eviction).

npm: a registry on 127.0.0.1 (``Registry``) with
- ``cc-lib`` 1.0.0, a UMD bundle defining the global ``ccLib``,
- ``cc-peer`` 1.0.0, which names cc-lib as a peerDependency and uses it,
- ``cc-scripted`` 1.0.0, whose preinstall/install/postinstall scripts
  would write a marker file (they must never run).
Only loopback addresses."""
import base64
import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import threading
import zipfile

import pytest


def _record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(folder, dist, version, files, requires=(), tag="py3-none-any"):
    """A wheel of files {path: bytes}, written with zipfile."""
    mod = dist.replace("-", "_")
    info = f"{mod}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = dict(files)
    files[f"{info}/METADATA"] = meta.encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: codecage-test\nRoot-Is-Purelib: "
                              f"{'true' if tag.startswith('py3') else 'false'}\n"
                              f"Tag: {tag}\n").encode()
    os.makedirs(os.path.join(folder, dist), exist_ok=True)
    path = os.path.join(folder, dist, f"{mod}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w") as z:
        lines = []
        for name, data in files.items():
            z.writestr(name, data)
            lines.append(_record(name, data))
        lines.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(lines) + "\n")
    return path


def sdist(folder, dist, version):
    os.makedirs(os.path.join(folder, dist), exist_ok=True)
    path = os.path.join(folder, dist, f"{dist}-{version}.tar.gz")
    with tarfile.open(path, "w:gz") as t:
        data = b"raise SystemExit('this must never run')\n"
        ti = tarfile.TarInfo(f"{dist}-{version}/setup.py")
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    return path


def native_module(build):
    """ccnative's extension module, compiled for the guest's CPython."""
    src = os.path.join(build, "ccnative.c")
    with open(src, "w") as f:
        f.write('#include <Python.h>\n'
                'static PyObject *twice(PyObject *s, PyObject *a)\n'
                '{ return PyLong_FromLong(2 * PyLong_AsLong(a)); }\n'
                'static PyMethodDef m[] = {{"twice", twice, METH_O, ""}, {0}};\n'
                'static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "ccnative", 0, -1, m};\n'
                'PyMODINIT_FUNC PyInit_ccnative(void) { return PyModule_Create(&d); }\n')
    so = os.path.join(build, "ccnative.so")
    inc = subprocess.run(["/usr/bin/python3.11", "-c",
                          "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-I", inc, src, "-o", so], check=True)
    with open(so, "rb") as f:
        return f.read()


def write_index(simple):
    """index.html files for every project folder under simple/."""
    projects = sorted(d for d in os.listdir(simple) if os.path.isdir(os.path.join(simple, d)))
    for p in projects:
        links = []
        for fn in sorted(os.listdir(os.path.join(simple, p))):
            if fn.endswith((".whl", ".tar.gz")):
                with open(os.path.join(simple, p, fn), "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
                links.append(f'<a href="{fn}#sha256={h}">{fn}</a>')
        with open(os.path.join(simple, p, "index.html"), "w") as f:
            f.write("<html><body>" + "<br>".join(links) + "</body></html>\n")
    with open(os.path.join(simple, "index.html"), "w") as f:
        f.write("<html><body>" + "".join(f'<a href="{p}/">{p}</a>' for p in projects) +
                "</body></html>\n")


def build_pypi(root):
    """The simple index under root/simple; returns its file:// URL."""
    simple = os.path.join(root, "simple")
    os.makedirs(simple, exist_ok=True)
    for v in ("1.0", "2.0"):
        wheel(simple, "ccdemo-pkg", v, {"ccdemo_pkg/__init__.py": f"VERSION = '{v}'\n".encode()})
    wheel(simple, "ccneeds", "1.0", {"ccneeds/__init__.py": b"import ccdemo_pkg\n"},
          requires=["ccdemo-pkg==1.0"])
    tag = "cp311-cp311-linux_" + os.uname().machine
    wheel(simple, "ccnative", "1.0", {"ccnative.so": native_module(root)}, tag=tag)
    sdist(simple, "ccsrconly", "1.0")
    for n in ("a", "b"):
        wheel(simple, f"ccbig-{n}", "1.0",
              {f"ccbig_{n}/__init__.py": b"", f"ccbig_{n}/blob.bin": os.urandom(3 << 20)})
    write_index(simple)
    return "file://" + simple


# ---- npm ----

UMD_LIB = """(function (root, factory) {
  if (typeof define === 'function' && define.amd) define([], factory);
  else if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.ccLib = factory();
}(typeof self !== 'undefined' ? self : this, function () {
  return { version: '1.0.0', twice: function (x) { return 2 * x; } };
}));
"""
UMD_PEER = """(function (root, factory) {
  if (typeof define === 'function' && define.amd) define([], factory);
  else root.ccPeer = factory(root.ccLib);
}(typeof self !== 'undefined' ? self : this, function (lib) {
  return { quadruple: function (x) { return lib.twice(lib.twice(x)); } };
}));
"""


def npm_tarball(pkg, files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in {"package.json": json.dumps(pkg).encode(), **files}.items():
            ti = tarfile.TarInfo("package/" + name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


class Registry:
    """An npm registry on 127.0.0.1: GET /NAME (the packument) and
    /-/NAME-VERSION.tgz. ``marker`` is where cc-scripted's scripts would
    write."""

    def __init__(self, marker):
        self.marker = marker
        self.packages = {}
        self.tarballs = {}
        sh = f"echo ran > {marker}"
        self.add({"name": "cc-lib", "version": "1.0.0", "unpkg": "dist/cc-lib.js"},
                 {"dist/cc-lib.js": UMD_LIB.encode()})
        self.add({"name": "cc-peer", "version": "1.0.0", "unpkg": "dist/cc-peer.js",
                  "peerDependencies": {"cc-lib": "^1.0.0"}},
                 {"dist/cc-peer.js": UMD_PEER.encode()})
        self.add({"name": "cc-scripted", "version": "1.0.0", "unpkg": "index.js",
                  "scripts": {"preinstall": sh, "install": sh, "postinstall": sh}},
                 {"index.js": b"(function(){ this.ccScripted = 1; })();\n"})
        reg = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                path = self.path.split("?")[0].lstrip("/").replace("%2f", "/").replace(
                    "%2F", "/")
                body, ctype = None, "application/json"
                if path.startswith("-/"):
                    body, ctype = reg.tarballs.get(path[2:]), "application/octet-stream"
                elif path in reg.packages:
                    body = json.dumps(reg.packument(path)).encode()
                if body is None:
                    self.send_response(404)
                    body = b'{"error":"Not found"}'
                else:
                    self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, pkg, files):
        self.packages[pkg["name"]] = (pkg, npm_tarball(pkg, files))

    def packument(self, name):
        pkg, tgz = self.packages[name]
        tarname = f"{name}-{pkg['version']}.tgz"
        self.tarballs[tarname] = tgz
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
        ver = dict(pkg, dist={"tarball": self.url + "-/" + tarname, "integrity": integrity,
                              "shasum": hashlib.sha1(tgz).hexdigest()})
        return {"name": name, "dist-tags": {"latest": pkg["version"]},
                "versions": {pkg["version"]: ver}}

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Index:
    """Both, in a fresh folder: .pypi (file:// URL), .registry (npm), and
    .cache (an empty dependency cache the worker's user can reach)."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="cc-deps-")
        os.chmod(self.root, 0o755)
        self.pypi = build_pypi(self.root)
        self.marker = os.path.join(self.root, "install-script-ran")
        self.npm = Registry(self.marker)
        self.cache = os.path.join(self.root, "cache")

    def flags(self, cache=None):
        """The CLI's and codecage mcp's flags for this index."""
        return ["--deps-cache", cache or self.cache, "--deps-index-url", self.pypi,
                "--deps-registry", self.npm.url]

    def fresh_cache(self):
        """A new, empty cache folder the worker's user can reach (a pytest
        tmp_path is under a folder closed to nobody, the worker's user on a
        root host)."""
        d = tempfile.mkdtemp(dir=self.root)
        os.chmod(d, 0o755)
        return os.path.join(d, "c")

    def close(self):
        import shutil
        self.npm.close()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def ix():
    """An Index for a test module (import this name into it)."""
    i = Index()
    yield i
    i.close()


if __name__ == "__main__":  # python3 tests/deps_index.py: build one and print it
    ix = Index()
    print(ix.pypi, ix.npm.url, ix.cache)
    sys.stdin.read()
