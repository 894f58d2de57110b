"""Rank fusion for one query: several retrievers' runs (doc id -> score) in, one fused run out.

Modelled on ranx's ``fuse`` (Bassani & Romelli, "ranx.fuse: A Python Library for Metasearch",
CIKM 2022) and kept score-for-score equal to it for ``rrf`` and min-max ``wsum``, but for a single
query, in plain Python (ranx itself is not imported: numba makes it slow to load).

A run is a mapping ``doc_id -> score`` (higher is better); ``runs`` maps a run name (``"bm25"``,
``"dense"``) to its run. Methods live in ``FUSION_METHODS``, score normalisers in ``NORMALIZERS``.
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import TYPE_CHECKING, Any, Callable, Mapping

from searchkit.errors import InputError
from searchkit import registries

if TYPE_CHECKING:
    from searchkit.config import FusionConfig

Run = Mapping[str, float]


# --------------------------------------------------------------------------- normalisers


def minmax(run: Run) -> dict[str, float]:
    """Min-max normalisation: ``(s - min) / max(max - min, 1e-9)`` over the run's scores.

    As ranx's ``min-max`` norm: a run whose scores are all equal (a single document included)
    maps every document to 0.
    """
    if not run:
        return {}
    lo, hi = min(run.values()), max(run.values())
    den = max(hi - lo, 1e-9)
    return {doc: (s - lo) / den for doc, s in run.items()}


def zscore(run: Run) -> dict[str, float]:
    """Z-score normalisation: ``(s - mean) / max(std, 1e-9)`` with the population standard
    deviation (ddof=0), as ranx's ``zmuv`` norm (Montague & Aslam, CIKM 2001)."""
    if not run:
        return {}
    n = len(run)
    mean = math.fsum(run.values()) / n
    std = math.sqrt(math.fsum((s - mean) ** 2 for s in run.values()) / n)
    den = max(std, 1e-9)
    return {doc: (s - mean) / den for doc, s in run.items()}


def identity(run: Run) -> dict[str, float]:
    """No normalisation: the scores as given."""
    return dict(run)


NORMALIZERS: dict[str, Callable[[Run], dict[str, float]]] = {
    "minmax": minmax,
    "zscore": zscore,
    "none": identity,
}
registries.provide("fusion norm", NORMALIZERS)


def normalize(run: Run, norm: str) -> dict[str, float]:
    """Normalise one run with the normaliser called ``norm`` (see ``NORMALIZERS``)."""
    return _lookup(NORMALIZERS, norm, "normaliser")(run)


# --------------------------------------------------------------------------- ranks


def ranks(run: Run) -> dict[str, int]:
    """1-based ranks of a run: score descending, ties by doc id ascending.

    (ranx keeps tied documents in their insertion order instead; with distinct scores, or ties
    listed in id order, the two agree.)
    """
    ordered = sorted(run.items(), key=lambda item: (-item[1], item[0]))
    return {doc: i for i, (doc, _) in enumerate(ordered, start=1)}


def rank_fused(fused: Run) -> list[tuple[str, float]]:
    """A fused run as a list of ``(doc_id, score)``: score descending, then doc id ascending."""
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


# --------------------------------------------------------------------------- methods


def rrf(runs: Mapping[str, Run], k: float = 60) -> dict[str, float]:
    """Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms
    Condorcet and individual rank learning methods", SIGIR 2009).

    ``score(d) = sum over runs r containing d of 1 / (k + rank_r(d))``, ranks 1-based from the
    run's scores (ties by doc id, see :func:`ranks`); a run that lacks d adds nothing.

    Args:
        runs: run name -> (doc id -> score).
        k: the smoothing constant (>= 0; the paper's 60 by default).
    """
    if not _is_number(k) or k < 0:
        raise InputError(f"rrf parameter k must be a finite number >= 0, got {k!r}")
    fused: dict[str, float] = {}
    for run in runs.values():
        for doc, r in ranks(run).items():
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + r)
    return fused


def wsum(
    runs: Mapping[str, Run],
    weights: Mapping[str, float] | None = None,
    norm: str = "minmax",
) -> dict[str, float]:
    """Weighted sum (convex combination) of normalised scores (Fox & Shaw, "Combination of
    multiple searches", TREC-2 1994, CombSUM; weighted as in Bartell et al. 1994).

    ``score(d) = sum over runs r of w_r * norm_r(d)``, where ``norm_r`` is the run's scores after
    the normaliser ``norm`` (see ``NORMALIZERS``) and a run lacking d contributes 0, as in ranx's
    ``wsum``. Weights are divided by their sum, so they form a convex combination.

    Args:
        runs: run name -> (doc id -> score).
        weights: run name -> weight (>= 0, not all 0), one per run; equal weights if omitted.
        norm: ``minmax`` (default), ``zscore`` or ``none``.
    """
    normaliser = _lookup(NORMALIZERS, norm, "normaliser")
    w = _weights(runs, weights)
    fused: dict[str, float] = {}
    for name, run in runs.items():
        for doc, s in normaliser(run).items():
            fused[doc] = fused.get(doc, 0.0) + w[name] * s
    return fused


FUSION_METHODS: dict[str, Callable[..., dict[str, float]]] = {
    "rrf": rrf,
    "wsum": wsum,
}
registries.provide("fusion method", FUSION_METHODS)


def fuse(runs: Mapping[str, Run], method: str = "rrf", **params: object) -> dict[str, float]:
    """Fuse several runs of one query into one run (doc id -> fused score).

    Args:
        runs: run name -> (doc id -> score), higher is better. Empty runs are fine.
        method: a name in ``FUSION_METHODS`` (``rrf``, ``wsum``).
        **params: the method's own parameters (``rrf``: k; ``wsum``: weights, norm).

    Returns:
        doc id -> fused score, over every document of every run. Order it with
        :func:`rank_fused`.
    """
    fn = _lookup(FUSION_METHODS, method, "fusion method")
    accepted = [p for p in inspect.signature(fn).parameters if p != "runs"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(
            f"fusion method {method!r} got unknown parameter(s) {', '.join(unknown)}; "
            f"it accepts: {', '.join(accepted)}"
        )
    return fn(_check_runs(runs), **params)


def fuse_runs(
    runs: Mapping[str, Mapping[Any, float]],
    cfg: FusionConfig,
    *,
    fill: Callable[[str, list[Any]], Mapping[Any, float]] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[Any, float]]:
    """Fuse one query's runs as a ``FusionConfig`` says; ``(key, fused score)`` best first.

    ``runs`` maps a retriever name to its run (record key -> score, keys ints or strings); empty
    runs are dropped and a single run is ranked as it is. For a weighted sum with
    ``fill_missing``, ``fill(name, keys)`` gives that retriever's exact scores for the candidates it
    did not return, so normalised scores compare like with like. Weights come from ``weights``
    when given (this query's, ``searchkit.rank.adaptive``), else from ``cfg.weights``, by retriever
    name (a missing name weighs 0). Ties break by key (integers in numeric order).
    """
    own = {name: dict(run) for name, run in runs.items() if run}  # filled below: copies
    if not own:
        return []
    keys = set().union(*own.values())
    plain = all(type(k) is int and k >= 0 for k in keys)  # these sort as their _tie_key strings would
    if cfg.method != "rrf" and cfg.fill_missing and fill is not None and len(own) > 1:
        union = sorted(keys) if plain else sorted(keys, key=_tie_key)
        for name, run in own.items():
            missing = [k for k in union if k not in run]
            if missing:
                run.update(fill(name, missing))  # fills keys of the union only: ``plain`` holds
    if plain:
        back = None
        keyed = own
    else:
        back = {_tie_key(k): k for run in own.values() for k in run}
        keyed = {name: {_tie_key(k): s for k, s in run.items()} for name, run in own.items()}
    if len(keyed) == 1:
        (fused,) = keyed.values()
    elif cfg.method == "rrf":
        fused = fuse(keyed, "rrf", k=cfg.rrf_k)
    else:
        w = cfg.weights if weights is None else weights
        fused = fuse(keyed, cfg.method, weights={n: w.get(n, 0.0) for n in keyed}, norm=cfg.norm)
    if back is None:
        return [(k, float(s)) for k, s in rank_fused(fused)]
    return [(back[k], float(s)) for k, s in rank_fused(fused)]


def _tie_key(key: object) -> str:
    """A string key that sorts like the key: zero-padded for non-negative integers ("10" must not
    come before "9")."""
    if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
        return f"{key:020d}"
    return str(key)


# --------------------------------------------------------------------------- validation


def _is_number(x: object) -> bool:
    """A finite real number (Python or NumPy), not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _lookup(registry: Mapping[str, Callable], name: str, what: str) -> Callable:
    try:
        return registry[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown {what} {name!r}; valid: {', '.join(sorted(registry))}") from None


def _check_runs(runs: Mapping[str, Run]) -> dict[str, dict[str, float]]:
    """The runs with every score as a Python float; ValueError naming a bad run or score."""
    if not isinstance(runs, Mapping):
        raise ValueError(f"runs must map a run name to {{doc_id: score}}, got {type(runs).__name__}")
    clean: dict[str, dict[str, float]] = {}
    for name, run in runs.items():
        if not isinstance(run, Mapping):
            raise ValueError(f"run {name!r} must map doc_id -> score, got {type(run).__name__}")
        for doc, s in run.items():
            if not _is_number(s):
                raise ValueError(f"run {name!r}: score of {doc!r} must be a finite number, got {s!r}")
        clean[name] = {doc: float(s) for doc, s in run.items()}
    return clean


def _weights(runs: Mapping[str, Run], weights: Mapping[str, float] | None) -> dict[str, float]:
    if weights is None:
        return {name: 1.0 / len(runs) for name in runs} if runs else {}
    if not isinstance(weights, Mapping):
        raise InputError(f"wsum weights must map run name -> weight, got {type(weights).__name__}")
    missing = sorted(set(runs) - set(weights))
    extra = sorted(set(weights) - set(runs))
    if missing or extra:
        raise InputError(
            f"wsum weights must name exactly the runs {sorted(runs)}; "
            f"missing {missing}, unknown {extra}"
        )
    for name, w in weights.items():
        if not _is_number(w) or w < 0:
            raise InputError(f"wsum weight of run {name!r} must be a finite number >= 0, got {w!r}")
    total = math.fsum(weights.values())
    if runs and total <= 0:
        raise InputError("wsum weights are all 0; give at least one run a positive weight")
    return {name: w / total for name, w in weights.items()}
