"""WEB_POLYFILLS: browser basics for JavaScript runtimes, as bootstrap code.

``RuntimeConfig(bootstrap=WEB_POLYFILLS)`` gives a JavaScript runtime
``setTimeout``/``setInterval``/``clearTimeout``/``clearInterval``,
``queueMicrotask``, ``TextEncoder``, ``TextDecoder`` (UTF-8,
windows-1252/latin1, UTF-16LE/BE), ``structuredClone``, ``atob``/``btoa``,
``Date``/``performance.now`` on the timers' virtual clock, ``Event``,
``CustomEvent``, ``EventTarget``, ``AbortController``/``AbortSignal``,
``Blob``/``File``/``FileReader``/``ProgressEvent``,
``crypto.getRandomValues``/``crypto.randomUUID``, ``URL``/``URLSearchParams``
and a ``globalThis.self``; never ``window`` or ``document`` (code that looks
for them still knows it is not in a browser). The text is the C library's
(``cc_web_polyfills``: the pieces of the repository's ``src/polyfills/``
joined in name order), the one the JavaScript worker has built in and the
C library, CLI and MCP server run with their ``web_polyfills`` option.

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

``Date.now()``, ``new Date()`` and ``performance.now()`` are the real time
plus how far the timers have moved the virtual clock, so code that waits
for ``Date.now()`` to pass a mark (``lodash.debounce``) sees it pass when
its timer fires. ``crypto`` draws its bytes from the host kernel
(``getrandom``) at every call, so every session, forked ones included, has
its own. ``URL`` follows the WHATWG URL Standard; a non-ASCII host name
gets NFKC, lower case and punycode, not UTS #46's full mapping table. ``FileReader``
finishes a read in a later Promise job, firing ``loadstart``, ``progress``,
``load`` and ``loadend``.
"""

from . import _codecage


class Bootstrap(str):
    """Start-up code for a runtime: a ``str`` that also says its
    ``language`` (``"javascript"`` or ``"python"``), so a runtime of the
    other language refuses it with ``InvalidInputError``."""

    language: str

    def __new__(cls, source: str, language: str) -> "Bootstrap":
        self = super().__new__(cls, source)
        self.language = language
        return self


WEB_POLYFILLS = Bootstrap(_codecage.WEB_POLYFILLS, "javascript")

__all__ = ["WEB_POLYFILLS", "Bootstrap"]
