"""Dependencies on demand (README "Dependencies"): DependencyOptions, the
policy and cache of ``RuntimeConfig(dependencies=[...])``, and
:func:`script_dependencies`. The library installs (cc_options.dependencies,
include/codecage_deps.h): the host resolves with pip (wheels only) or npm
(no install scripts), caches by lock hash, and grants the folder
read-only; nothing here installs anything."""

from __future__ import annotations

import dataclasses
import os
from typing import Optional, Sequence

from . import _codecage


@dataclasses.dataclass(frozen=True)
class DependencyOptions:
    """How ``RuntimeConfig.dependencies`` are installed (every field
    optional; the library's defaults, ``cc_deps_options_init``):

    - ``cache_dir``: the cache folder; None = ``~/.cache/codecage/deps``
      (``$XDG_CACHE_HOME``), ``/var/cache/codecage/deps`` as root.
    - ``max_cache_bytes``: the cache's size, least recently used folders
      nobody uses removed first; 4 GiB. ``max_install_bytes``: one lock's
      installed files; 1 GiB.
    - ``timeout``: seconds to resolve and install; 300.
    - ``refresh``: seconds a resolved request is reused; 86400 (0: always
      ask the index).
    - ``allow``: package names that may be asked for (empty: any);
      ``deny``: names never installed, asked for or needed.
    - ``index_url``: pip's index (e.g. ``file:///DIR/simple``); None = pip's
      configuration. ``registry``: npm's registry; None = npm's.
    - ``lock_file``: pip requirements with ``--hash`` lines, or an npm
      ``package-lock.json``: what is installed, hashes checked.
    """

    cache_dir: Optional[str] = None
    max_cache_bytes: Optional[int] = None
    max_install_bytes: Optional[int] = None
    timeout: Optional[float] = None
    refresh: Optional[float] = None
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    index_url: Optional[str] = None
    registry: Optional[str] = None
    lock_file: Optional[str] = None

    def __post_init__(self) -> None:
        for f in ("allow", "deny"):
            v = getattr(self, f)
            if isinstance(v, (str, bytes)) or not all(isinstance(x, str) for x in v):
                raise TypeError(f"DependencyOptions.{f} must be a list of package names")
            object.__setattr__(self, f, tuple(v))
        for f in ("cache_dir", "lock_file"):
            v = getattr(self, f)
            if v is not None:
                object.__setattr__(self, f, os.fspath(v))

    def _native(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None}


def check_dependencies(deps: object, options: object) -> tuple:
    """RuntimeConfig's check of ``dependencies`` and ``deps``: the specs as a
    tuple of str. TypeError for wrong types."""
    if isinstance(deps, (str, bytes)) or not all(isinstance(d, str) for d in deps):
        raise TypeError("RuntimeConfig.dependencies must be a list of package specs, such "
                        "as ['polars==1.*', 'openpyxl'] or ['vega-lite@5']")
    if options is not None and not isinstance(options, DependencyOptions):
        raise TypeError("RuntimeConfig.deps must be a codecage.DependencyOptions")
    return tuple(deps)


def script_dependencies(code: str) -> list:
    """The ``dependencies`` of the PEP 723 ``# /// script`` block of Python
    ``code`` (``[]`` without one): ``RuntimeConfig(dependencies=
    script_dependencies(code))`` starts a runtime that has them. Raises
    ``InvalidInputError`` for a bad block (two blocks, bad TOML, a
    ``requires-python`` the guest's 3.11 does not meet)."""
    if not isinstance(code, str):
        raise TypeError("code must be str")
    return _codecage.script_dependencies(code)
