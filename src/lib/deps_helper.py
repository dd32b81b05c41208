"""codecage-deps: the host side of cc_options.dependencies (src/lib/deps.c).

libcodecage runs this program (installed beside the workers as
``codecage-deps``) with the guest's own interpreter, Debian's
``/usr/bin/python3.11 -I -S``, one request a run: a JSON object on stdin,
one JSON object on stdout. It never runs in a worker, and nothing it
installs runs while it installs.

- ``resolve``, kind ``python``: pip resolves the specs for this
  interpreter with ``--dry-run --report`` and ``--only-binary :all:``
  (wheels only: no package's code runs at install), against the guest's
  package set only (the standard library and Debian's dist-packages: what
  Debian already has is taken from there unless a version conflicts). The
  report's wheels, pinned with their sha256, are the lock; its hash is the
  cache key. A miss installs exactly that lock (``--no-deps
  --require-hashes --target``) into a temporary folder, renamed into place
  under the key's flock. With a lock file (pip requirements with
  ``--hash``), pip resolves that file under ``--require-hashes``.
- ``resolve``, kind ``javascript``: npm resolves a package.json of the
  specs into a package-lock.json (``--package-lock-only``), whose entries
  are the lock; a miss runs ``npm ci --ignore-scripts`` (no install
  script runs) in a temporary folder, renamed into place.
- ``script``: the PEP 723 ``# /// script`` block of a piece of code: its
  ``dependencies`` list (and its ``requires-python``, checked).

The cache (``cache_dir``): ``py-HASH/`` and ``js-HASH/`` (complete
installs; ``site/`` or ``node_modules/`` in each), ``locks/KEY.lock`` (the
key's flock: exclusive while it installs or is evicted, shared while a
runtime of the library uses it), ``requests/`` (what a request resolved to,
reused for ``refresh_s`` seconds), ``.tmp-*`` (installs under way). After
an install, the least recently used folders no process holds are removed
until the cache is under ``max_cache_bytes``.

Answers: ``{"ok": true, "key", "path", "cached", "log", "packages",
"debian", "requested", "load"}`` or ``{"ok": false, "kind", "message"}``;
a message names the package and pip's or npm's reason.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

#: pip, run by this interpreter with the guest's path only (no site.py:
#: neither /usr/local nor the user's site, which the guest does not see).
PIP_BOOT = ("import sys; sys.path.append(sys.argv.pop(1)); sys.argv[0] = 'pip'; "
            "from pip._internal.cli.main import main; sys.exit(main())")
PIP_COMMON = ["--disable-pip-version-check", "--no-input", "--no-color"]
PIP_INSTALL = ["--progress-bar", "off", "--root-user-action", "ignore"]
KEY_RE = re.compile(r"^(py|js)-[0-9a-f]{64}$")
# an npm name (optionally scoped) and a registry range: no ':', '/' or '#',
# so never a URL, a git repository, a file or an alias
NPM_SPEC = re.compile(r"^((?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)"
                      r"(?:@([A-Za-z0-9.*^~<>=| +-]*))?$")
STALE_TMP_S = 3600


class Refused(Exception):
    """A request that cannot be met: invalid_input, with its reason."""

    def __init__(self, message, kind="invalid_input"):
        super().__init__(message)
        self.kind = kind


def mib(n):
    return "%.1f MiB" % (n / 1048576)


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def tree_size(path):
    total = 0
    for root, dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".w-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


class Lock:
    """flock of the cache file NAME under locks/ (exclusive or shared)."""

    def __init__(self, cache, name, exclusive=True, wait=True):
        self.fd = os.open(os.path.join(cache, "locks", name + ".lock"),
                          os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        op = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(self.fd, op)
        except OSError:
            os.close(self.fd)
            raise

    def close(self):
        os.close(self.fd)


def run(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


# ---- PEP 723 ----

PEP723 = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


def script_block(code):
    """The PEP 723 ``script`` block of code as a dict, or None."""
    import tomllib
    found = [m for m in PEP723.finditer(code) if m.group("type") == "script"]
    if len(found) > 1:
        raise Refused("the code has %d '# /// script' blocks; PEP 723 allows one" % len(found))
    if not found:
        return None
    lines = found[0].group("content").splitlines(keepends=True)
    text = "".join(ln[2:] if ln.startswith("# ") else ln[1:] for ln in lines)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise Refused("the code's '# /// script' block is not valid TOML (%s)" % e) from None


def cmd_script(req):
    meta = script_block(req.get("code", "")) or {}
    deps = meta.get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise Refused("the '# /// script' block's dependencies must be a list of strings")
    rp = meta.get("requires-python")
    if rp is not None:
        from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
        try:
            ok = SpecifierSet(str(rp)).contains("%d.%d.%d" % sys.version_info[:3], prereleases=True)
        except InvalidSpecifier:
            raise Refused("the '# /// script' block's requires-python %r is not a version "
                          "specifier" % rp) from None
        if not ok:
            raise Refused("the '# /// script' block requires Python %s; the guest is CPython "
                          "%d.%d.%d" % ((rp,) + tuple(sys.version_info[:3])))
    names = [python_requirement(d)[0] for d in deps]
    return {"ok": True, "dependencies": deps, "names": names}


# ---- specs and policy ----

def python_requirement(spec):
    """(normalised name, spec) of a pip requirement: a name, extras and
    version specifiers; never a URL, a path or an environment marker."""
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.utils import canonicalize_name
    s = spec.strip()
    try:
        r = Requirement(s)
    except InvalidRequirement as e:
        raise Refused("dependency %r is not a package name with an optional version "
                      "(such as 'polars' or 'polars==1.*'): %s" % (spec, e)) from None
    if r.url or r.marker or s.startswith("-"):
        raise Refused("dependency %r: only a package name with optional extras and "
                      "versions is taken (no URL, path or environment marker)" % spec)
    return canonicalize_name(r.name), s


def npm_requirement(spec):
    m = NPM_SPEC.match(spec.strip())
    if not m:
        raise Refused("dependency %r is not an npm package name with an optional version "
                      "range (such as 'vega-lite' or 'vega-lite@5'; no URL, git, file or "
                      "alias)" % spec)
    return m.group(1), (m.group(2) or "").strip() or "latest"


def policy_name(kind, name):
    if kind == "python":
        from pip._vendor.packaging.utils import canonicalize_name
        return canonicalize_name(name)
    return name.lower()


def check_allowed(req, requested):
    kind = req["kind"]
    allow = {policy_name(kind, n) for n in req.get("allow") or []}
    deny = {policy_name(kind, n) for n in req.get("deny") or []}
    for n in requested:
        if allow and n not in allow:
            raise Refused("dependency '%s' is not on the allow-list of packages this host "
                          "installs (%s)" % (n, ", ".join(sorted(allow))))
        if n in deny:
            raise Refused("dependency '%s' is on the deny-list of packages this host never "
                          "installs" % n)


def check_denied(req, names, why):
    deny = {policy_name(req["kind"], n) for n in req.get("deny") or []}
    for n in names:
        if policy_name(req["kind"], n) in deny:
            raise Refused("package '%s' (%s) is on the deny-list of packages this host never "
                          "installs" % (n, why))


# ---- pip ----

def pip(req, *args):
    cmd = [sys.executable, "-I", "-S", "-c", PIP_BOOT, req["site_packages"], *args, *PIP_COMMON]
    if req.get("index_url"):
        cmd += ["--index-url", req["index_url"]]
    return run(cmd)


def pip_errors(err):
    return [ln[len("ERROR: "):] for ln in err.splitlines() if ln.startswith("ERROR: ")]


def explain_pip(req, err, specs):
    """pip's failure as a message naming the package and the reason."""
    errors = pip_errors(err)
    text = "\n".join(errors) or err.strip()[-2000:]
    if "ResolutionImpossible" in err or "conflicting dependencies" in err:
        cause = err[err.find("The conflict is caused by:"):] if "conflict is caused" in err else ""
        lines = [ln.strip() for ln in cause.splitlines()[1:] if ln.strip().startswith(
            tuple("abcdefghijklmnopqrstuvwxyz0123456789")) or " depends on " in ln]
        return ("conflicting versions: %s%s" % (
            (errors[0] if errors else "pip cannot satisfy them all together"),
            (" (" + "; ".join(lines[:8]) + ")") if lines else ""))
    m = re.search(r"No matching distribution found for (\S+)", err)
    if m:
        wanted = m.group(1)
        name = re.split(r"[\[<>=!~ ;]", wanted, 1)[0]
        vers = re.search(r"satisfies the requirement \S+ \(from versions: ([^)]*)\)", err)
        vers = vers.group(1).strip() if vers else "none"
        if vers not in ("", "none"):
            return ("dependency '%s': no version matches (wheels for this guest: %s)"
                    % (wanted, vers))
        rc, out, ierr = pip(req, "index", "versions", name)
        avail = re.search(r"Available versions: (.*)", out)
        if rc == 0 and avail:
            return ("dependency '%s' has no wheel for this guest (CPython %d.%d, Linux %s), "
                    "only source distributions (versions: %s), and codecage installs wheels "
                    "only (--only-binary :all:, so no package's code runs at install)"
                    % ((wanted,) + tuple(sys.version_info[:2]) + (os.uname().machine,
                                                                 avail.group(1))))
        return "dependency '%s': no package of that name on the index (pip: %s)" % (
            wanted, errors[-1] if errors else "not found")
    if "hash" in text.lower() and req.get("lock"):
        return "the lock file does not match what the index serves: %s" % text
    return "pip failed for %s: %s" % (", ".join(specs) or "the lock file", text)


def debian_versions(req, names, installed):
    """'name version' of requested packages pip took from the guest's set."""
    out = []
    import importlib.metadata as md
    for n in names:
        if n in installed:
            continue
        try:
            out.append("%s %s" % (n, md.version(n)))
        except Exception:
            pass
    return out


def python_lock(req, tmp):
    """(lock text, [name==version], requested names, from Debian) by pip."""
    specs = [python_requirement(s) for s in req.get("specs") or []]
    requested = [n for n, _ in specs]
    check_allowed(req, requested)
    args = ["install", "--dry-run", "--quiet", "--report", os.path.join(tmp, "report.json"),
            "--only-binary", ":all:", *PIP_INSTALL]
    if req.get("lock"):
        # the lock is what is installed: every name asked for must be in it
        in_lock = {policy_name("python", re.split(r"[\[=<>!~ ;]", ln.strip(), 1)[0])
                   for ln in req["lock"].splitlines()
                   if ln.strip() and not ln.lstrip().startswith(("#", "-"))}
        for n in requested:
            if n not in in_lock:
                raise Refused("dependency '%s' is not in the lock file; only what the lock "
                              "pins is installed" % n)
        lock = os.path.join(tmp, "lock-in.txt")
        with open(lock, "w") as f:
            f.write(req["lock"])
        args += ["--require-hashes", "-r", lock]
        specs = []
    rc, out, err = pip(req, *args, *[s for _, s in specs])
    if rc != 0:
        raise Refused(explain_pip(req, err, [s for _, s in specs]))
    with open(os.path.join(tmp, "report.json")) as f:
        report = json.load(f)
    pins, names = [], []
    for item in report.get("install", []):
        name = policy_name("python", item["metadata"]["name"])
        ver = item["metadata"]["version"]
        url = item.get("download_info", {}).get("url", "")
        h = item.get("download_info", {}).get("archive_info", {}).get("hashes", {})
        if not url.split("#")[0].endswith(".whl") or "sha256" not in h:
            raise Refused("package '%s' %s is not a wheel with a sha256 (%s); codecage installs "
                          "wheels only" % (name, ver, url))
        pins.append("%s==%s --hash=sha256:%s" % (name, ver, h["sha256"]))
        names.append(name)
    check_denied(req, names, "needed by %s" % (", ".join(requested) or "the lock file"))
    pins.sort()
    text = "".join(p + "\n" for p in pins)
    return text, sorted("%s==%s" % (p.split("==")[0], p.split("==")[1].split()[0])
                        for p in pins), requested, debian_versions(req, requested, set(names))


def python_install(req, lock_text, tmp):
    lock = os.path.join(tmp, "lock.txt")
    with open(lock, "w") as f:
        f.write(lock_text)
    rc, out, err = pip(req, "install", *PIP_INSTALL, "--no-deps", "--only-binary", ":all:",
                       "--require-hashes", "--target", os.path.join(tmp, "site"), "-r", lock)
    if rc != 0:
        raise Refused("installing the lock failed: %s" % ("\n".join(pip_errors(err))
                                                           or err.strip()[-2000:]))
    return out + err


# ---- npm ----

def npm(req, cwd, *args):
    cmd = [req.get("npm") or "npm", *args, "--ignore-scripts", "--no-audit", "--no-fund",
           "--loglevel=error", "--no-update-notifier"]
    if req.get("registry"):
        cmd += ["--registry", req["registry"]]
    env = dict(os.environ, npm_config_ignore_scripts="true")
    try:
        return run(cmd, cwd=cwd, env=env)
    except FileNotFoundError:
        raise Refused("npm is not installed on this host (it resolves JavaScript "
                      "dependencies); install Node.js and npm") from None


NPM_ERR = re.compile(r"^npm (?:ERR!|error) ?")


def explain_npm(err, specs):
    code = re.search(r"npm (?:ERR!|error) code (\S+)", err)
    code = code.group(1) if code else ""
    lines = [NPM_ERR.sub("", ln) for ln in err.splitlines()
             if NPM_ERR.match(ln) and "A complete log" not in ln and "/_logs/" not in ln]
    msg = "; ".join(ln.strip() for ln in lines if ln.strip())[:1500]
    if code == "E404":
        m = re.search(r"'([^']+)' is not in (this|the npm) registry", err) or re.search(
            r"404 Not Found - GET \S+/(\S+)", err)
        return "dependency '%s': no package of that name in the npm registry (npm: %s)" % (
            m.group(1) if m else ", ".join(specs), msg)
    if code == "ETARGET":
        m = re.search(r"No matching version found for (\S+)", err)
        return "dependency '%s': no version matches (npm: %s)" % (
            m.group(1).rstrip(".") if m else ", ".join(specs), msg)
    if code == "ERESOLVE":
        return "conflicting versions: %s" % msg
    return "npm failed for %s: %s" % (", ".join(specs) or "the lock file", msg)


def npm_lock(req, tmp):
    specs = [npm_requirement(s) for s in req.get("specs") or []]
    requested = [n for n, _ in specs]
    check_allowed(req, requested)
    pkg = {"name": "codecage-dependencies", "version": "0.0.0", "private": True,
           "dependencies": {n: r for n, r in specs}}
    if req.get("lock"):
        try:
            lock = json.loads(req["lock"])
            root = lock["packages"][""]
        except (ValueError, KeyError, TypeError):
            raise Refused("the lock file is not an npm package-lock.json (lockfileVersion 2 "
                          "or 3, with a \"packages\" map)") from None
        deps = root.get("dependencies") or {}
        for n in requested:
            if n not in deps:
                raise Refused("dependency '%s' is not in the lock file; only what the lock "
                              "pins is installed" % n)
        pkg["dependencies"] = deps
        if not requested:
            requested = list(deps)
        with open(os.path.join(tmp, "package-lock.json"), "w") as f:
            f.write(req["lock"])
    with open(os.path.join(tmp, "package.json"), "w") as f:
        json.dump(pkg, f, indent=2)
    if not req.get("lock"):
        rc, out, err = npm(req, tmp, "install", "--package-lock-only")
        if rc != 0:
            raise Refused(explain_npm(err, [s for s in req.get("specs") or []]))
    with open(os.path.join(tmp, "package-lock.json")) as f:
        lock = json.load(f)
    entries, names, peers = [], [], {}
    for path, e in sorted((lock.get("packages") or {}).items()):
        if not path:
            continue
        if not path.startswith("node_modules/") or e.get("link"):
            raise Refused("the lock names %r, which is not a registry package; codecage "
                          "installs registry packages only" % path)
        name = path.rsplit("node_modules/", 1)[1]
        if not e.get("integrity") and not e.get("inBundle"):
            raise Refused("package '%s' has no integrity hash in the lock" % name)
        entries.append("%s %s %s\n" % (path, e.get("version", ""), e.get("integrity", "bundled")))
        names.append(name)
        if path == "node_modules/" + name:
            peers[name] = list((e.get("peerDependencies") or {}).keys())
    check_denied(req, names, "needed by %s" % (", ".join(requested) or "the lock file"))
    load = []

    def visit(n, seen):
        if n in load or n in seen or n not in peers:
            return
        for p in peers[n]:
            visit(p, seen | {n})
        load.append(n)
    for n in requested:
        visit(n, set())
    versions = {p.rsplit("node_modules/", 1)[1]: e.get("version", "")
                for p, e in (lock.get("packages") or {}).items() if p}
    return ("".join(entries), sorted("%s@%s" % (n, versions[n]) for n in set(names)),
            requested, load)


def npm_install(req, lock_text, tmp):
    rc, out, err = npm(req, tmp, "ci")
    if rc != 0:
        raise Refused("installing the lock failed: %s" % explain_npm(err, []))
    return out + err


# ---- the cache ----

def evict(cache, keep, cap, log):
    """Remove the least recently used installs no process holds until the
    cache is under cap bytes; stale temporary folders too."""
    gl = Lock(cache, ".evict")
    try:
        now = time.time()
        entries = []
        for n in os.listdir(cache):
            p = os.path.join(cache, n)
            if n.startswith((".tmp-", ".trash-")):
                try:
                    if now - os.stat(p).st_mtime > STALE_TMP_S:
                        shutil.rmtree(p, ignore_errors=True)
                except OSError:
                    pass
                continue
            if not KEY_RE.match(n):
                continue
            try:
                used = os.stat(os.path.join(p, "used")).st_mtime
                with open(os.path.join(p, "size")) as f:
                    size = int(f.read().strip() or 0)
            except (OSError, ValueError):
                used, size = 0, tree_size(p)
            entries.append((used, size, n))
        total = sum(e[1] for e in entries)
        for used, size, n in sorted(entries):
            if total <= cap:
                break
            if n == keep:
                continue
            try:
                lk = Lock(cache, n, wait=False)
            except OSError:
                continue  # a runtime uses it, or it is being installed
            try:
                trash = os.path.join(cache, ".trash-%s-%d" % (n, os.getpid()))
                os.rename(os.path.join(cache, n), trash)
                shutil.rmtree(trash, ignore_errors=True)
                total -= size
                log.append("evicted %s (%s, least recently used) to keep the cache under %s"
                           % (n, mib(size), mib(cap)))
            finally:
                lk.close()
    finally:
        gl.close()


def touch(path):
    with open(path, "a"):
        pass
    os.utime(path)


def entry_result(req, key, final, cached, log, meta):
    kind = req["kind"]
    sub = "site" if kind == "python" else "node_modules"
    return {"ok": True, "key": key, "path": os.path.join(final, sub) if final else None,
            "cached": cached, "log": log, "packages": meta["packages"],
            "debian": meta.get("debian", []), "requested": meta["requested"],
            "load": meta.get("load", [])}


def cmd_resolve(req):
    cache, kind = req["cache_dir"], req["kind"]
    os.umask(0o022)
    for d in (cache, os.path.join(cache, "locks"), os.path.join(cache, "requests")):
        os.makedirs(d, mode=0o755, exist_ok=True)
    memo = dict(req)
    memo.pop("allow", None), memo.pop("deny", None), memo.pop("max_cache_bytes", None)
    try:
        memo["guest_set"] = os.stat(req["site_packages"]).st_mtime_ns
    except OSError:
        pass
    memo["python"] = sys.version
    memo_path = os.path.join(cache, "requests", sha256(json.dumps(memo, sort_keys=True)))
    # a request resolved lately is not resolved again (refresh_s)
    try:
        with open(memo_path) as f:
            m = json.load(f)
        final = os.path.join(cache, m["key"]) if m.get("key") else None
        if (time.time() - m["time"] < float(req.get("refresh_s") or 0) and
                (final is None or os.path.isdir(final))):
            requested = [python_requirement(s)[0] if kind == "python" else npm_requirement(s)[0]
                         for s in req.get("specs") or []]
            check_allowed(req, requested)
            check_denied(req, [p.split("==")[0].rsplit("@", 1)[0] if kind == "python"
                               else p.rsplit("@", 1)[0] for p in m["packages"]], "in the lock")
            if final:
                touch(os.path.join(final, "used"))
            log = "cached (%s): %s" % (m["key"] or "nothing to install",
                                       ", ".join(m["packages"]) or "nothing beyond the guest's")
            if m.get("debian"):
                log += "; from Debian: " + ", ".join(m["debian"])
            return entry_result(req, m["key"], final, True, log, m)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix=".tmp-resolve-", dir=cache)
    try:
        if kind == "python":
            lock_text, packages, requested, debian = python_lock(req, tmp)
            meta = {"packages": packages, "requested": requested, "debian": debian}
            tag = "%s %s %s" % (sys.implementation.cache_tag, sys.platform, os.uname().machine)
        else:
            lock_text, packages, requested, load = npm_lock(req, tmp)
            meta = {"packages": packages, "requested": requested, "load": load}
            tag = "npm"
        log = ["resolved %s in %.1f s: %s" % (", ".join(req.get("specs") or []) or "the lock",
                                              time.time() - t0,
                                              ", ".join(packages) or "nothing to install")]
        if meta.get("debian"):
            log.append("from Debian (already in the guest): " + ", ".join(meta["debian"]))
        key = ("py-" if kind == "python" else "js-") + sha256(tag + "\n" + lock_text) \
            if lock_text else None
        final = os.path.join(cache, key) if key else None
        cached = final is None or os.path.isdir(final)
        if not cached:
            cached = install(req, key, final, lock_text, tmp, meta, log)
        if final:
            touch(os.path.join(final, "used"))
        write_atomic(memo_path, json.dumps(dict(meta, key=key, time=time.time())))
        if key and not cached:
            evict(cache, key, int(req.get("max_cache_bytes") or 0), log)
        if cached and key:
            log.append("cached (%s)" % key)
        return entry_result(req, key, final, cached, "\n".join(log), meta)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install(req, key, final, lock_text, rtmp, meta, log):
    """Install lock_text as final (under key's flock); False when this
    process installed it, True when another one did meanwhile."""
    cache = req["cache_dir"]
    lk = Lock(cache, key)
    try:
        if os.path.isdir(final):
            return True
        t0 = time.time()
        tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % key, dir=cache)
        os.chmod(tmp, 0o755)
        try:
            if req["kind"] == "python":
                out = python_install(req, lock_text, tmp)
            else:
                for f in ("package.json", "package-lock.json"):
                    shutil.copy(os.path.join(rtmp, f), os.path.join(tmp, f))
                out = npm_install(req, lock_text, tmp)
            size = tree_size(tmp)
            cap = int(req.get("max_install_bytes") or 0)
            if cap and size > cap:
                raise Refused("the dependencies (%s) take %s installed, over the cap of %s "
                              "(max_install_bytes, --deps-max-install MIB)"
                              % (", ".join(meta["requested"]) or "the lock", mib(size), mib(cap)))
            with open(os.path.join(tmp, "lock.txt"), "w") as f:
                f.write(lock_text)
            with open(os.path.join(tmp, "size"), "w") as f:
                f.write(str(size))
            log.append(out.strip())
            log.append("installed %s in %.1f s (%s)" % (key, time.time() - t0, mib(size)))
            with open(os.path.join(tmp, "install.log"), "w") as f:
                f.write("\n".join(log) + "\n")
            os.rename(tmp, final)
            tmp = None
            return False
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        lk.close()


def main():
    try:
        req = json.load(sys.stdin)
        # pip's own modules (and the guest's set) are Debian's
        sys.path.append(req.get("site_packages") or "/usr/lib/python3/dist-packages")
        if req.get("command") == "script":
            ans = cmd_script(req)
        elif req.get("command") == "resolve" and req.get("kind") in ("python", "javascript"):
            ans = cmd_resolve(req)
        else:
            raise Refused("unknown request", "internal")
    except Refused as e:
        ans = {"ok": False, "kind": e.kind, "message": str(e)}
    except OSError as e:
        ans = {"ok": False, "kind": "invalid_input",
               "message": "the dependency cache: %s: %s" % (e.filename or "", e.strerror)}
    json.dump(ans, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
