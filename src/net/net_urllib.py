# The guest's network for Python: urllib.request and requests routed
# through the host's broker. Run once in a Python runtime given a network
# policy (cc_runtime_set_net); embedded into libcodecage by net_guest.c.
# Every request is one call of the reserved host tool, which checks it and
# performs it on the host: nothing here is trusted by the host.
def __codecage_net_install(call):
    # Each module is patched when the guest first imports it (nothing is
    # imported here: a guest that never uses the network pays nothing).
    import sys

    # Set by the host itself (curl): a guest library's own are dropped.
    host_set = {"host", "content-length", "transfer-encoding", "connection", "te",
                "upgrade", "expect", "keep-alive", "trailer"}

    def send(method, url, headers, body):
        import io
        hs = [[str(k), str(v)] for k, v in headers
              if str(k).lower() not in host_set and not str(k).lower().startswith("proxy-")]
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif body is not None and not isinstance(body, (bytes, bytearray, memoryview)):
            if hasattr(body, "read"):
                body = body.read()
            else:
                body = b"".join(bytes(c) for c in body)
            if isinstance(body, str):
                body = body.encode("utf-8")
        if body is not None:
            body = bytes(body)
        return call({"method": method, "url": url, "headers": hs, "body": body})

    def patch_urllib(request):
        import http.client
        import io
        import urllib.error

        class BrokeredResponse(io.BytesIO):
            """What urlopen returns: the body, status, reason and headers."""

            def __init__(self, r):
                super().__init__(r["body"])
                self.status = self.code = r["status"]
                self.reason = self.msg = r["statusText"]
                self.url = r["url"]
                self.headers = http.client.HTTPMessage()
                for k, v in r["headers"]:
                    self.headers[k] = v

            def getcode(self):
                return self.status

            def geturl(self):
                return self.url

            def info(self):
                return self.headers

            def getheader(self, name, default=None):
                return self.headers.get(name, default)

            def getheaders(self):
                return list(self.headers.items())

        class BrokerHandler(request.BaseHandler):
            """http and https through the host (allow_net decides)."""
            handler_order = 50

            def _open(self, req):
                r = send(req.get_method(), req.full_url, req.header_items(), req.data)
                if "error" in r:
                    raise urllib.error.URLError(r["error"])
                return BrokeredResponse(r)

            http_open = https_open = _open

        request.install_opener(request.build_opener(BrokerHandler))
        request.BrokerHandler = BrokerHandler

    # What a socket of the guest's own meets, now that allow_net is set:
    # not "set allow_net" (the worker's explanation without a policy).
    why = ("the sandbox has no sockets of its own, even with allow_net: use urllib.request or "
           "requests (or urllib3; pip's vendored copies too), which reach the hosts allow_net "
           "lists through the host; a library that opens its own sockets cannot")

    def patch_socket(socket):
        import errno

        def create_connection(address, *args, **kwargs):
            raise OSError(errno.EPERM, f"{address!r} cannot be reached by a socket: {why}")
        socket.create_connection = create_connection

        def reworded(fn, make):
            def f(*args, **kwargs):
                try:
                    return fn(*args, **kwargs)
                except OSError as e:
                    raise make(e) from None
            f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
            return f

        def eperm(e):
            if e.errno != errno.EPERM:
                return e
            return OSError(errno.EPERM, f"Operation not permitted ({why})")

        def lookup(e):
            return socket.gaierror(e.errno, f"names are looked up by the host, not here ({why})")
        socket.socket.__init__ = reworded(socket.socket.__init__, eperm)
        for n in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
            setattr(socket, n, reworded(getattr(socket, n), lookup))

    def patch_requests(adapters, pkg="requests"):
        # pkg: the public requests, or pip's vendored copy (pip._vendor.requests)
        import importlib
        import io
        requests = importlib.import_module(pkg)
        CaseInsensitiveDict = importlib.import_module(pkg + ".structures").CaseInsensitiveDict
        get_encoding_from_headers = importlib.import_module(pkg + ".utils").get_encoding_from_headers

        def brokered_send(self, request, stream=False, timeout=None, verify=True, cert=None,
                          proxies=None):
            r = send(request.method, request.url, list(request.headers.items()), request.body)
            if "error" in r:
                raise requests.exceptions.ConnectionError(r["error"], request=request)
            resp = requests.models.Response()
            resp.status_code = r["status"]
            resp.reason = r["statusText"]
            resp.url = r["url"]
            h = CaseInsensitiveDict()
            for k, v in r["headers"]:
                h[k] = f"{h[k]}, {v}" if k in h else v
            resp.headers = h
            resp.encoding = get_encoding_from_headers(h)
            resp.raw = io.BytesIO(r["body"])
            resp._content = r["body"]
            resp.request = request
            resp.connection = self
            return resp

        adapters.HTTPAdapter.send = brokered_send

    def patch_urllib3(connectionpool, pkg="urllib3"):
        # Every request of a pool (PoolManager's too) through the host; the
        # host follows redirects and has already decoded the body.
        import importlib
        import io
        response = importlib.import_module(pkg + ".response")
        exceptions = importlib.import_module(pkg + ".exceptions")
        HTTPHeaderDict = importlib.import_module(pkg + "._collections").HTTPHeaderDict

        def urlopen(self, method, url, body=None, headers=None, retries=None, redirect=True,
                    assert_same_host=True, timeout=None, pool_timeout=None, release_conn=None,
                    chunked=False, body_pos=None, **response_kw):
            if not url.startswith(("http://", "https://")):
                host = f"[{self.host}]" if ":" in self.host else self.host
                url = f"{self.scheme}://{host}:{self.port}{url}"
            r = send(method, url, list((headers or {}).items()), body)
            if "error" in r:
                raise exceptions.NewConnectionError(None, r["error"])
            h = HTTPHeaderDict()
            for k, v in r["headers"]:
                if k.lower() != "content-encoding":  # decoded by the host
                    h.add(k, v)
            return response.HTTPResponse(
                body=io.BytesIO(r["body"]), headers=h, status=r["status"],
                reason=r["statusText"], preload_content=response_kw.get("preload_content", True),
                decode_content=False, request_method=method, request_url=r["url"],
                enforce_content_length=False)

        connectionpool.HTTPConnectionPool.urlopen = urlopen

    patches = {"urllib.request": patch_urllib, "requests.adapters": patch_requests,
               "pip._vendor.requests.adapters":
                   lambda m: patch_requests(m, "pip._vendor.requests"),
               "urllib3.connectionpool": patch_urllib3,
               "pip._vendor.urllib3.connectionpool":
                   lambda m: patch_urllib3(m, "pip._vendor.urllib3"),
               "socket": patch_socket}

    class PatchOnImport:
        """Patch a module of `patches` when it is first imported."""

        def find_spec(self, name, path, target=None):
            if name not in patches:
                return None
            for f in sys.meta_path:
                if f is self or not hasattr(f, "find_spec"):
                    continue
                spec = f.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                patches[name](module)
            spec.loader.exec_module = exec_module
            return spec

    for name, patch in patches.items():
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, PatchOnImport())


__codecage_net_install(tools.__codecage_net)
del __codecage_net_install, __codecage_net
delattr(tools, "__codecage_net")
if hasattr(atools, "__codecage_net"):
    delattr(atools, "__codecage_net")
