"""WEB_POLYFILLS: browser basics for JavaScript runtimes, as bootstrap code.

``RuntimeConfig(bootstrap=WEB_POLYFILLS)`` gives a JavaScript runtime
``setTimeout``/``setInterval``/``clearTimeout``/``clearInterval``,
``queueMicrotask``, ``TextEncoder``/``TextDecoder`` (UTF-8),
``structuredClone``, ``atob``/``btoa`` and a ``globalThis.self``; never
``window`` or ``document`` (code that looks for them still knows it is not
in a browser). The source is ``web_polyfills.js`` beside this file.

Timers have no real clock: QuickJS has no event loop, so callbacks run
through Promise jobs in delay order (then in the order they were set) on a
virtual clock that jumps to each timer's due time. ``await new
Promise(r => setTimeout(r, 1000))`` therefore resolves at once. Two
differences from a browser follow: a timer callback is a Promise job, so it
may run before Promise callbacks queued after the ``setTimeout`` call (a
browser runs those first), and due timers run before the replies of pending
host tool calls are waited for. A ``setInterval`` that is never cleared runs
until the eval's deadline. An exception in a callback is reported on
stderr (``console.error``) and the other timers go on.
"""

import os


class Bootstrap(str):
    """Start-up code for a runtime: a ``str`` that also says its
    ``language`` (``"javascript"`` or ``"python"``), so a runtime of the
    other language refuses it with ``InvalidInputError``."""

    language: str
    #: the file the source was read from, or None: with
    #: ``RuntimeConfig(libraries=...)`` such a bootstrap loads first, as
    #: a library (so the libraries find what it defines, and a fork
    #: server's template holds it for every session).
    file: "str | None"

    def __new__(cls, source: str, language: str, file: "str | None" = None) -> "Bootstrap":
        self = super().__new__(cls, source)
        self.language = language
        self.file = file
        return self


_PATH = os.path.join(os.path.dirname(__file__), "web_polyfills.js")
with open(_PATH, encoding="utf-8") as _f:
    WEB_POLYFILLS = Bootstrap(_f.read(), "javascript", _PATH)

__all__ = ["WEB_POLYFILLS", "Bootstrap"]
