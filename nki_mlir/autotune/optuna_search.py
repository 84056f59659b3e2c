"""``search="optuna"``: sample a large space with Optuna's TPE sampler instead of
sweeping it all (Optuna is optional: ``pip install optuna``).

Each parameter is a categorical choice among its values (by index, so any value type
works).  Trials are asked in batches of the runner's width, evaluated like any variant
(results cache, reference, workers or Ray), and told their estimated latency; rejected
variants are told as failed trials.  A variant Optuna proposes again is not re-evaluated.
"""
from __future__ import annotations

from typing import Any

from . import space as sp


def optuna_sweep(sweep: Any, space: dict, total: int, n_trials: int | None, seed: int) -> list:
    """The rows of up to ``n_trials`` distinct variants (default: ``min(total, 64)``)."""
    try:
        import optuna
    except ImportError:
        raise sp._error("search='optuna' needs Optuna: pip install optuna") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = list(space)
    values = {k: list(space[k]) for k in names}
    dists = {k: optuna.distributions.CategoricalDistribution(list(range(len(values[k]))))
             for k in names}
    want = min(total, n_trials or 64)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    import os
    width = max(1, sweep.workers or os.cpu_count() or 1) if not sweep.ray_address else 8
    done: dict[str, Any] = {}
    asks = 0
    while len(done) < want and asks < 20 * want:
        batch_trials, batch = [], []
        for _ in range(min(width, want - len(done))):
            t = study.ask(dists)
            asks += 1
            p = {k: values[k][t.params[k]] for k in names}
            batch_trials.append((t, p))
            if sp.params_key(p) not in done and p not in batch:
                batch.append(p)
        for r in sweep.run(batch, f"tune {sweep.kernel.fn.__name__} (optuna)") if batch else []:
            done[sp.params_key(r.params)] = r
        for t, p in batch_trials:
            r = done[sp.params_key(p)]
            if r.ok:
                study.tell(t, r.latency_ns)
            else:
                study.tell(t, state=optuna.trial.TrialState.FAIL)
    return list(done.values())
