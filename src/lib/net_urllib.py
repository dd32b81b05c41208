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

    def patch_socket(socket):
        import errno

        def create_connection(address, *args, **kwargs):
            raise OSError(errno.EPERM, f"the sandbox has no network of its own, so {address!r} "
                          "cannot be reached by a socket; use urllib.request or requests, "
                          "which the host performs for hosts allow_net lists")
        socket.create_connection = create_connection

    def patch_requests(adapters):
        import io
        import requests
        from requests.structures import CaseInsensitiveDict
        from requests.utils import get_encoding_from_headers

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

    patches = {"urllib.request": patch_urllib, "requests.adapters": patch_requests,
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
