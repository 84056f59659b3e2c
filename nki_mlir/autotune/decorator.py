"""``@autotune(configs=[...], key=[...])``: pick a kernel's best config per key on first
call, like ``triton.autotune``, but by the cost model instead of timing hardware.

    @autotune(configs=[{"TILE": 128}, {"TILE": 256}, {"TILE": 512}], key=["a.shape"])
    @nki.jit
    def add(a, b, TILE=128): ...

    add(x, y)     # first call with this shape: tunes, remembers, then runs with the best

The key is the values of ``key`` (argument names, with attribute paths such as
``"a.shape"`` / ``"a.dtype"``); the choice per key is kept in memory and in
``<cache dir>/autotune.pick.<kernel>-<hash16>.json`` (hash of the kernel's source, the
configs and the options), so another process reuses it without tuning.
"""
from __future__ import annotations

import functools
import inspect
import json
import os
import tempfile
from typing import Any

import numpy as np

from ..errors import NKIError
from . import space as sp


def autotune(configs: list[dict], key: list[str] | tuple = (), *, check: bool = False,
             hazards: bool = True, workers: int | None = None, ray_address: str | None = None,
             target: str | None = None, schedule: str | None = None):
    """Decorate an ``@nki.jit`` kernel so each call runs it with the config the cost model
    estimates fastest for the call's key.

    Args:
        configs: the candidate keyword-parameter dicts.
        key: argument names (``"n"``) or attribute paths (``"a.shape"``); a new value of
            the key tunes again.
        check: also run every config on the ISA interpreter and reject configs whose
            outputs differ from the first valid config's (off by default: the configs are
            assumed correct, as in Triton).
        hazards / workers / ray_address / target / schedule: as for :func:`.tune`.

    The returned :class:`Autotuner` is called like the kernel; a call that passes a tuned
    parameter itself is an error.
    """
    opts = dict(check=check, hazards=hazards, workers=workers, ray_address=ray_address,
                target=target, schedule=schedule)

    def wrap(kernel: Any) -> Autotuner:
        return Autotuner(kernel, configs, key, opts)
    return wrap


class Autotuner:
    """A kernel with a config chosen per key (see :func:`autotune`).

    Attributes:
        kernel: the ``@nki.jit`` kernel.  configs / key: as given.
        picks: ``{key text: config}`` chosen so far.  results: ``{key text: TuneResult}`` of
            the sweeps this process ran.
    """

    def __init__(self, kernel: Any, configs: list[dict], key: Any, opts: dict):
        self.kernel = sp.as_kernel(kernel)
        fn = self.kernel.fn
        self.configs = sp.variants(list(configs), fn)
        self.key = [key] if isinstance(key, str) else list(key)
        self.opts = opts
        self.sig = inspect.signature(fn)
        for k in self.key:
            if k.split(".")[0] not in self.sig.parameters:
                raise sp._error(f"autotune key {k!r}: {k.split('.')[0]!r} is not a parameter of "
                                f"{fn.__name__}{self.sig}")
        self.picks: dict[str, dict] = {}
        self.results: dict = {}
        self._file = None
        functools.update_wrapper(self, fn)

    def key_of(self, args: tuple, kwargs: dict) -> str:
        bound = self.sig.bind_partial(*args, **kwargs)
        bound.apply_defaults()
        parts = []
        for k in self.key:
            name, *attrs = k.split(".")
            v = bound.arguments.get(name)
            for a in attrs:
                v = getattr(v, a)
            parts.append(str(v) if isinstance(v, np.dtype) else repr(v))
        return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"

    def __call__(self, *args: Any, **kwargs: Any):
        tuned = {n for c in self.configs for n in c}
        clash = sorted(tuned & set(kwargs))
        if clash:
            from ..diagnostics import caller_loc
            raise NKIError(f"{self.kernel.fn.__name__}(): {', '.join(clash)} is chosen by "
                           f"@autotune; do not pass it", caller_loc(), category="bad call")
        cfg = self.config_for(args, kwargs)
        return self.kernel(*args, **kwargs, **cfg)

    def config_for(self, args: tuple, kwargs: dict) -> dict:
        """The config for this call's key: remembered, from disk, or tuned now."""
        k = self.key_of(args, kwargs)
        if k in self.picks:
            return self.picks[k]
        disk = self._load().get(k)
        if isinstance(disk, dict) and isinstance(disk.get("index"), int) \
                and 0 <= disk["index"] < len(self.configs) \
                and sp.params_key(self.configs[disk["index"]]) == disk.get("config"):
            self.picks[k] = self.configs[disk["index"]]
            return self.picks[k]
        from .sweep import tune
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        bound = self.sig.bind_partial(*args, **kwargs)
        consts = {n: v for n, v in bound.arguments.items() if not isinstance(v, np.ndarray)}
        res = tune(self.kernel, arrays, self.configs, consts=consts, **self.opts)
        self.results[k] = res
        if res.best is None:
            raise NKIError(f"@autotune {self.kernel.fn.__name__}: no config is valid for key "
                           f"{k}:\n{res}", category="autotune")
        best = res.best.params
        idx = next(i for i, c in enumerate(self.configs) if sp.params_key(c) == sp.params_key(best))
        self.picks[k] = self.configs[idx]
        self._save(k, idx, res.best.latency_ns)
        return self.picks[k]

    # ------------------------------------------------------------------- disk
    def path(self):
        """The file the picks are kept in (None if the key has no stable form)."""
        if self._file is None:
            from ..version import __version__
            from ..frontend.source import FunctionSource, file_hash
            from ..runtime import cache
            fn = self.kernel.fn
            src = FunctionSource.of(fn)
            parts = {"source": file_hash(src.file) if src else "", "qualname": fn.__qualname__,
                     "compiler": __version__, "configs": [sp.params_key(c) for c in self.configs],
                     "options": {k: v for k, v in self.opts.items() if k not in ("workers", "ray_address")}}
            try:
                self._file = cache.cache_dir() / f"autotune.pick.{fn.__name__}-{cache.cache_key(parts)[:16]}.json"
            except cache.UnstableKey:
                self._file = False
        return self._file or None

    def _load(self) -> dict:
        p = self.path()
        try:
            return json.loads(p.read_text()) if p is not None and p.is_file() else {}
        except (OSError, ValueError):
            return {}

    def _save(self, k: str, idx: int, latency_ns: float) -> None:
        p = self.path()
        if p is None:
            return
        from ..runtime import cache
        data = self._load()
        data[k] = {"index": idx, "config": sp.params_key(self.configs[idx]), "latency_ns": latency_ns}
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=p.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        new = not p.exists()
        os.replace(tmp, p)
        if new:
            cache.added(p)

    def __repr__(self) -> str:
        return f"<autotune {self.kernel.fn.__name__}: {len(self.configs)} configs, key {self.key}>"
