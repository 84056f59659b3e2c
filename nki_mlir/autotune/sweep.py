"""``tune()``: sweep the compile-time parameters of a kernel on the cost model.

The driver: expand the space (or sample it with Optuna), answer what it can from the
results cache (:mod:`.store`), find the reference outputs (given, or those of the first
variant that compiles and runs), evaluate the rest on a runner (:mod:`.backends`) and rank.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import NKIError
from . import space as sp
from .backends import InlineRunner, make_runner, require_ref
from .result import Row, TuneResult, rank
from .store import ResultStore, array_digest, sweep_key
from .variant import Options, evaluate

SEARCHES = ("exhaustive", "optuna")


def tune(kernel: Any, args: Any, space: Any, *, reference: Any = None, check: bool = True,
         hazards: bool = True, workers: int | None = None, ray_address: str | None = None,
         search: str = "exhaustive", n_trials: int | None = None, consts: dict | None = None,
         target: str | None = None, schedule: str | None = None, rtol: float | None = None,
         atol: float | None = None, use_cache: bool = True, seed: int = 0) -> TuneResult:
    """Sweep the compile-time parameters of ``kernel`` on the cost model; returns the
    ranked :class:`~.result.TuneResult` (``.best``, ``str()`` is a table).

    Args:
        kernel: an ``@nki.jit`` kernel (or a plain kernel function).
        args: its tensor arguments, in order: NumPy arrays, ``(shape, dtype)`` pairs or
            ``"512x512xbf16"`` strings (specs get standard-normal data, seed 0).
        space: ``{name: [values]}`` -- every combination of these keyword parameters
            (tile sizes, loop orders, buffer counts, ...) -- or a list of config dicts.
        reference: the expected outputs (an array, a tuple of arrays, or a callable taking
            the arrays); default: the outputs of the first variant (in sweep order) that
            compiles and runs.
        check: run every variant on the ISA interpreter and reject those whose outputs
            differ from the reference (tolerance ``rtol`` / ``atol``, see
            :func:`.variant.compare`).  Without it only compile + estimate run.
        hazards: run with the engine-queue hazard checks (a hazard rejects the variant).
        workers: local worker processes (default ``os.cpu_count()``; 1: in this process).
        ray_address: run each variant as a Ray task instead: ``"local"`` (join or start a
            local instance), ``"auto"`` (an existing cluster) or an address.
        search: ``"exhaustive"`` (every variant) or ``"optuna"`` (``n_trials`` variants
            chosen by Optuna's TPE sampler; needs ``pip install optuna``).
        consts: fixed compile-time keyword arguments of every variant.
        target / schedule: compiler options (see :func:`nki_mlir.compile`).
        use_cache: answer variants from (and store them in) the results cache.
        seed: the Optuna sampler's seed.

    A variant that fails is reported, never raised: its row has ``status`` ``compile
    error`` / ``run error`` / ``mismatch`` / ``internal error`` and the located message.

    Raises:
        NKIError: a bad ``space`` (unknown parameter, empty list), search or option.
    """
    t0 = time.perf_counter()
    if search not in SEARCHES:
        raise sp._error(f"search={search!r}: expected one of {', '.join(map(repr, SEARCHES))}")
    k = sp.as_kernel(kernel)
    fn = k.fn
    ref = sp.locate(kernel)
    if ray_address:
        require_ref(ref)
    # optuna samples the space: it is never expanded (it may be far too large to)
    variants = sp.variants(space, fn) if search == "exhaustive" else None
    size = len(variants) if variants is not None else sp.space_size(space, fn)
    opts = Options(sp.tensor_args(args), dict(consts or {}), target, schedule, check, hazards, rtol, atol)
    store = ResultStore(fn.__name__, sweep_key(fn, opts) if use_cache else None)
    sweep = _Sweep(k, ref, opts, store, workers, ray_address)
    if check and reference is not None:
        sweep.set_reference(_given_reference(reference, opts.arrays), None)
    try:
        if search == "exhaustive":
            rows = sweep.run(variants)
        else:
            from .optuna_search import optuna_sweep
            rows = optuna_sweep(sweep, space, size, n_trials, seed)
    finally:
        sweep.close()
        store.save()
    backend = sweep.backend if sweep.evaluated else "the results cache"
    return TuneResult(fn.__name__, rank(rows), backend, time.perf_counter() - t0,
                      sweep.evaluated, sweep.reference_text, search, size)


def _given_reference(reference: Any, arrays: list) -> tuple:
    outs = reference(*arrays) if callable(reference) else reference
    return tuple(np.asarray(o) for o in (outs if isinstance(outs, (tuple, list)) else (outs,)))


class _Sweep:
    """The state of one sweep: cache, reference, runner and counters."""

    def __init__(self, kernel, ref, opts: Options, store: ResultStore, workers, ray_address):
        self.kernel, self.ref, self.opts, self.store = kernel, ref, opts, store
        self.workers, self.ray_address = workers, ray_address
        self.reference: tuple | None = None
        self.ref_id: str | None = None
        self.ref_params: dict | None = None
        self.reference_text = ""
        self.runner = None
        self.backend = "inline"
        self.evaluated = 0
        self.rows: dict[str, Row] = {}      # params key -> row, this sweep

    def set_reference(self, outs: tuple, params: dict | None) -> None:
        self.reference = outs
        if params is None:
            self.ref_id = "given:" + array_digest(outs)
            self.reference_text = "the given reference"
        else:
            self.ref_id = "variant:" + sp.params_key(params)
            self.reference_text = f"the first valid variant ({_fmt(params)})"
        self.ref_params = params

    # ------------------------------------------------------------------ cache
    def cached(self, params: dict) -> Row | None:
        """The row of ``params`` from the results cache, if complete for this sweep."""
        pk = sp.params_key(params)
        base = self.store.variant(pk)
        if base is None:
            return None
        row = Row.from_dict({**base, "params": dict(params), "cached": True, "seconds": 0.0})
        if row.ok and self.opts.check:
            if self.ref_id is None:
                return None
            known, why = self.store.check(self.ref_id, pk)
            if not known:
                return None
            row.checked = True
            if why:
                row.status, row.reason = "mismatch", why
        return row

    def record(self, params: dict, d: dict) -> Row:
        self.store.put(sp.params_key(params), d, self.ref_id)
        self.evaluated += 1
        d = {**d, "params": dict(params)}
        d.pop("outputs", None)
        return Row.from_dict(d)

    # -------------------------------------------------------------- reference
    def find_reference(self, candidates: list[dict]) -> list[Row]:
        """Without a given reference: walk ``candidates`` in order until one compiles and
        runs; its outputs are the reference.  Returns the rows evaluated on the way (the
        reference's own row is ``ok``, checked against itself)."""
        out = []
        for p in candidates:
            base = self.store.variant(sp.params_key(p))
            if base is not None and base["status"] != "ok":
                out.append(Row.from_dict({**base, "params": dict(p), "cached": True, "seconds": 0.0}))
                continue
            d = evaluate(self.kernel, p, self.opts, None, want_outputs=True)
            if d["status"] == "ok" and "outputs" in d:
                self.set_reference(d["outputs"], p)
                d["checked"] = True
            if base is not None:           # cached: only the outputs were needed
                row = self.cached(p) or Row.from_dict({**base, "params": dict(p), "cached": True})
                row.seconds = 0.0
                out.append(row)
            else:
                out.append(self.record(p, d))
            if self.reference is not None:
                break
        return out

    # ------------------------------------------------------------------- run
    def run(self, variants: list[dict], desc: str | None = None) -> list[Row]:
        """Rows of ``variants`` (in their order): from the cache, else evaluated."""
        rows: dict[int, Row] = {}
        todo: list[int] = []
        if self.opts.check and self.reference is None:
            self._ensure_ref_from_cache(variants)
        for i, p in enumerate(variants):
            pk = sp.params_key(p)
            hit = self.rows.get(pk) or self.cached(p)
            if hit is not None:
                rows[i] = hit
            else:
                todo.append(i)
        if todo and self.opts.check and self.reference is None:
            if self.ref_params is not None:    # known from the cache: recompute its outputs
                d = evaluate(self.kernel, self.ref_params, self.opts, None, want_outputs=True)
                if d["status"] != "ok" or "outputs" not in d:
                    raise NKIError(f"internal error: the cached reference variant "
                                   f"({_fmt(self.ref_params)}) now fails: {d['reason']}")
                self.set_reference(d["outputs"], self.ref_params)
            else:                              # the first variant that compiles and runs
                for r in self.find_reference(variants):
                    rows[variants.index(r.params)] = r
                todo = [i for i in todo if i not in rows]
        if todo:
            runner = self._runner(len(todo))
            batch = [variants[i] for i in todo]
            for j, d in runner.map(batch, desc or f"tune {self.kernel.fn.__name__}"):
                rows[todo[j]] = self.record(batch[j], d)
        out = [rows[i] for i in range(len(variants))]
        for r in out:
            self.rows[sp.params_key(r.params)] = r
        return out

    def _ensure_ref_from_cache(self, variants: list[dict]) -> None:
        """If the cache says which variant is the first valid one and holds every check
        against it, nothing needs to run: set the reference id (outputs stay unknown)."""
        for p in variants:
            base = self.store.variant(sp.params_key(p))
            if base is None:
                return
            if base["status"] == "ok":
                rid = "variant:" + sp.params_key(p)
                if all(self._settled(rid, q) for q in variants):
                    self.ref_id, self.ref_params = rid, p
                    self.reference_text = f"the first valid variant ({_fmt(p)})"
                return

    def _settled(self, rid: str, params: dict) -> bool:
        base = self.store.variant(sp.params_key(params))
        return base is not None and (base["status"] != "ok" or self.store.check(rid, sp.params_key(params))[0])

    def _runner(self, n: int):
        if self.runner is None or isinstance(self.runner, InlineRunner) and n > 1:
            if self.runner is not None:
                self.runner.close()
            self.runner = make_runner(self.kernel, self.ref, self.opts, self.reference,
                                      self.workers, self.ray_address, n)
            self.backend = self.runner.name
        return self.runner

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()


def _fmt(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())
