"""Tuning fusion (SPEC E4): the default grid over the running retrievers, ``--grid`` points checked,
the grid's edges, each point scored on the tune half of every dataset, and the winner tested against
the base config.

Split out of ``searchkit.evaluate.tune`` (which re-exports every name; the weak-match fitting stays
there) so that no module is over 600 lines (issue 29 item 5).
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from searchkit import retrievers
from searchkit.config import ConfigError, SearchConfig
from searchkit.evaluate.compare import SEED, paired_test
from searchkit.evaluate.halves import SALT as SALT  # re-exported: callers import these from tune
from searchkit.evaluate.halves import half_of
from searchkit.evaluate.halves import run_shape as run_shape
from searchkit.evaluate.metrics import per_query_metrics
from searchkit.evaluate.run import evaluate_dataset, summarize
from searchkit.errors import InputError
from searchkit.index.engine import using
from searchkit.searcher import Searcher

if TYPE_CHECKING:
    from searchkit.evaluate.datasets import Dataset
    from searchkit.index.engine import EmbeddingEngine

log = logging.getLogger("searchkit.evaluate.tune")

RRF_KS: tuple[int, ...] = (10, 30, 60)
NORMS: tuple[str, ...] = ("minmax", "zscore")
SHARES: tuple[int, ...] = (2, 3, 4, 5, 6)
"""The weights (in tenths) a retriever takes in the default grid's weighted sums."""


def fusion_grid(names: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """The fusion settings ``tune_fusion`` tries by default for the retrievers ``names`` (query-time
    knobs only): RRF at each of ``RRF_KS``, then for each norm of ``NORMS`` every weighted sum whose
    weights are tenths of ``SHARES`` adding up to 1, all but the last retriever's taken from ``SHARES``
    in order (with two retrievers: the first's 0.2, 0.3, ... 0.6, the second's the rest)."""
    names = list(names)
    points: list[dict[str, Any]] = [{"fusion.method": "rrf", "fusion.rrf_k": k} for k in RRF_KS]
    if len(names) < 2:
        return tuple(points)
    for norm in NORMS:
        for head in itertools.product(SHARES, repeat=len(names) - 1):
            last = 10 - sum(head)
            if len(names) > 2 and last not in SHARES:
                continue
            weights = [round(t / 10, 2) for t in head] + [round(1 - sum(t / 10 for t in head), 2)]
            points.append({"fusion.method": "wsum", "fusion.norm": norm, "fusion.weights": dict(zip(names, weights))})
    return tuple(points)


def default_grid(base: SearchConfig) -> tuple[dict[str, Any], ...]:
    """``fusion_grid`` of the retrievers ``base`` runs (``FUSION_GRID`` for the shipped ones, and
    for a config that runs one retriever, where no point changes its ranking)."""
    names = retrievers.enabled(base)
    return fusion_grid(names) if len(names) > 1 else FUSION_GRID


FUSION_GRID: tuple[dict[str, Any], ...] = fusion_grid(retrievers.enabled(SearchConfig()))
"""The fusion settings ``tune_fusion`` tries by default for the shipped retrievers."""


BASE_POINT: Mapping[str, Any] = {}
"""The grid point that changes nothing: the base config as it is, query-adaptive model
(``fusion.adaptive``) included, which every grid point with ``fusion.weights`` drops. ``searchkit
tune fusion`` scores it beside the grid as the reference the winner is compared with, never picks it."""
MAX_GRID = 1000
"""The most points a grid given by the user may hold (each one is an eval of every dataset)."""


def parse_grid(data: object, base: SearchConfig) -> tuple[dict[str, Any], ...]:
    """A fusion grid given by the user: a JSON list of ``{dotted config key: value}`` objects, each
    checked against ``base`` (``SearchConfig.replace``) before any index is built. A point that is
    not an object, is empty (the base config is always compared), names an unknown key or a bad
    value, changes what the index stores (the grid runs on one index per dataset), or gives the
    base config or the same config as an earlier point is a :class:`InputError` naming the point and the bad key or
    value (issue 31 item 5)."""
    if not isinstance(data, list) or not data:
        got = "an empty list" if isinstance(data, list) else f"a JSON {_json_type(data)}"
        raise InputError(f'a grid is a non-empty JSON list of settings objects, e.g. [{{"fusion.method": "rrf", '
                        f'"fusion.rrf_k": 30}}, {{"fusion.weights": {{"bm25": 0.5, "dense": 0.5}}}}]; got {got}')
    if len(data) > MAX_GRID:
        raise InputError(f"a grid holds at most {MAX_GRID} points; got {len(data)}")
    points: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, point in enumerate(data, 1):
        if not isinstance(point, dict):
            raise InputError(f"point {i} is a JSON {_json_type(point)}, not an object of {{dotted config key: value}}")
        if not point:
            raise InputError(f"point {i} is empty: the base config itself is always compared; give the keys to change")
        try:
            cfg = base.replace(**point)
            index_keys = [k for k in point if base.replace(**{k: point[k]}).index_fingerprint()
                          != base.index_fingerprint()]
        except ConfigError as exc:
            raise InputError(f"point {i}: {exc}") from None
        if index_keys:
            raise InputError(f"point {i} changes what the index stores ({', '.join(index_keys)}): the grid runs on "
                            "one index per dataset, so it takes query-time settings only (fusion, depths, ...)")
        fp = cfg.fingerprint()
        if fp == base.fingerprint():
            raise InputError(f"point {i} changes nothing: it gives the base config, which is always compared")
        if fp in seen:
            raise InputError(f"point {i} gives the same config as point {seen[fp]}")
        seen[fp] = i
        points.append(dict(point))
    return tuple(points)


def _json_type(value: object) -> str:
    for kind, name in ((bool, "boolean"), (str, "string"), ((int, float), "number"), (dict, "object"),
                       (list, "list")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _axes(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A grid point as axes: a number as itself, a two-retriever weight mapping as the share of its
    first retriever in the registry's order (``fusion.weights (bm25 share)``), anything else
    as an opaque value (a category)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, Mapping) and len(value) == 2 and all(_number(v) for v in value.values()) \
                and sum(value.values()) > 0:
            first = next((n for n in retrievers.names() if n in value), sorted(value)[0])
            out[f"{key} ({first} share)"] = round(float(value[first]) / float(sum(value.values())), 9)
        elif _number(value):
            out[key] = round(float(value), 9)
        else:
            import json

            out[key] = json.dumps(value, sort_keys=True, default=str)
    return out


def _hard_bounds(axis: str, base: SearchConfig) -> tuple[float | None, float | None]:
    """The smallest and largest value a setting can take (a share: 0 and 1; a config knob: its
    ``lo`` / ``hi``); a winner there cannot be beaten by going further."""
    import dataclasses

    if axis.endswith(" share)"):
        return 0.0, 1.0
    section_name, _, name = axis.partition(".")
    section = getattr(base, section_name, None)
    if not dataclasses.is_dataclass(section) or not name or "." in name:
        return None, None
    meta: Mapping[str, Any] = next((f.metadata for f in dataclasses.fields(section) if f.name == name), {})
    return meta.get("lo"), meta.get("hi")


def grid_edges(winner: Mapping[str, Any], grid: Sequence[Mapping[str, Any]],
               base: SearchConfig | None = None) -> list[str]:
    """One line for each numeric setting of ``winner`` that sits at the smallest or largest value
    the grid tried along it (among the points that differ from the winner in that setting only),
    unless that is as far as the setting goes (``_hard_bounds``): the best may lie beyond the grid,
    so its pick is a bound, not an optimum (issue 31 item 5). Empty when the winner is inside."""
    base = base if base is not None else SearchConfig()
    mine = _axes(winner)
    others = [_axes(p) for p in grid]
    lines = []
    for axis, value in mine.items():
        if not isinstance(value, float):
            continue
        along = sorted({a[axis] for a in others
                        if a.keys() == mine.keys() and all(a[k] == mine[k] for k in mine if k != axis)})
        if len(along) < 2:
            continue
        lo, hi = _hard_bounds(axis, base)
        if value == along[0] and value != lo:
            side = "smallest"
        elif value == along[-1] and value != hi:
            side = "largest"
        else:
            continue
        lines.append(f"the winner's {axis} {value:g} is the {side} value the grid tried along it "
                     f"({', '.join(f'{v:g}' for v in along)}): the best may lie beyond; extend --grid past it")
    return lines


@dataclass(frozen=True)
class FusionTrial:
    """One grid point: its settings, the mean metric per half and per dataset, and the metric
    of every judged query (``per_query``: ``{"dataset:query_id": value}``; ``half_of`` that
    key says which half the query is in)."""

    settings: Mapping[str, Any]
    tune: Mapping[str, float]
    report: Mapping[str, float]
    per_query: Mapping[str, float] = field(default_factory=dict)

    def half(self, which: str) -> dict[str, float]:
        """The per-query values of one half (``tune`` or ``report``)."""
        return {q: v for q, v in self.per_query.items() if half_of(q) == which}

    @property
    def tune_mean(self) -> float:
        return float(np.mean(list(self.tune.values())))

    @property
    def report_mean(self) -> float:
        return float(np.mean(list(self.report.values())))


def tune_fusion(
    datasets: Sequence[Dataset],
    base: SearchConfig | None = None,
    grid: Sequence[Mapping[str, Any]] = FUSION_GRID,
    *,
    metric: str = "nDCG@10",
    show_progress: bool = True,
    engine: EmbeddingEngine | None = None,
) -> list[FusionTrial]:
    """Evaluate every grid point on every dataset (one index per dataset, reused across the
    grid), scoring the tune and report halves separately. Pick on ``tune_mean`` only; the
    report half is what may be quoted. Returns the trials sorted by ``tune_mean``, best first.
    Progress: a tqdm bar over the grid (``show_progress``) and one INFO log line per grid point.

    ``engine`` (``searchkit.scale.ray_engine.RayEngine``): the indexes are embedded on it and the
    grid × datasets cells run as parallel tasks there (``engine.fusion_cells``); the trials are
    the same as the sequential loop's."""
    import contextlib

    base = base or SearchConfig()
    with using(engine) if engine is not None else contextlib.nullcontext():
        searchers = [Searcher.build(ds.records, base, show_progress=show_progress) for ds in datasets]
        configs = [base.replace(**settings) for settings in grid]
        if engine is not None and hasattr(engine, "fusion_cells"):
            cells: Iterable[Sequence[tuple[float, float, Mapping[str, float]]]] = engine.fusion_cells(
                datasets, searchers, configs, metric=metric, show_progress=show_progress)
        else:
            cells = _cells_here(datasets, searchers, configs, metric, show_progress)
        trials = []
        for settings, row in zip(grid, cells):
            tune_m, report_m, per_q = {}, {}, {}
            for ds, (tune_v, report_v, values) in zip(datasets, row):
                tune_m[ds.name] = tune_v
                report_m[ds.name] = report_v
                for qid, v in values.items():
                    per_q[f"{ds.name}:{qid}"] = v
            trials.append(FusionTrial(dict(settings), tune_m, report_m, per_q))
            log.info("%s: tune %.4f  report %.4f", settings, trials[-1].tune_mean, trials[-1].report_mean)
    return sorted(trials, key=lambda t: -t.tune_mean)


def _cells_here(datasets: Sequence[Dataset], searchers: Sequence[Searcher], configs: Sequence[SearchConfig], metric: str,
                show_progress: bool) -> Iterable[list[tuple[float, float, dict[str, float]]]]:
    """The grid in this process, one grid point (every dataset) at a time."""
    points: Iterable[Any] = configs
    if show_progress:
        from tqdm.auto import tqdm

        points = tqdm(configs, desc="fusion grid", unit="setting")
    for cfg in points:
        yield [fusion_cell(ds, s.with_config(cfg), cfg, metric) for ds, s in zip(datasets, searchers)]


def fusion_cell(ds: Dataset, searcher: Searcher, cfg: SearchConfig,
                metric: str = "nDCG@10") -> tuple[float, float, dict[str, float]]:
    """One grid point on one dataset: the mean ``metric`` of its tune half and of its report half,
    and the metric of every judged query by query id (``searcher`` is the dataset's index under
    ``cfg``). The sequential loop and a Ray task both score a cell with this."""
    rep = evaluate_dataset(ds, cfg, searcher=searcher, show_progress=False)
    halves: dict[str, list[Any]] = {"tune": [], "report": []}
    for o in rep.outcomes:
        halves[half_of(f"{ds.name}:{o.query_id}")].append(o)
    tune_v = summarize(ds, cfg, halves["tune"], breakdowns=False).metrics[metric]
    report_v = summarize(ds, cfg, halves["report"], breakdowns=False).metrics[metric]
    judged = {o.query_id for o in rep.outcomes if o.answerable}
    qrels = {q: dict(d) for q, d in ds.qrels.items() if q in judged}
    values = {qid: vals[metric] for qid, vals in per_query_metrics(qrels, rep.run(), [metric]).items()}
    return tune_v, report_v, values


RRF_REFERENCE: Mapping[str, Any] = {"fusion.method": "rrf", "fusion.rrf_k": 60}
"""The RRF setting a tuned fusion is tested against (Cormack et al. 2009's k = 60)."""


def fusion_significance(
    trials: Sequence[FusionTrial],
    *,
    test: str = "fisher",
    metric: str = "nDCG@10",
    seed: int | None = None,
    base: FusionTrial | None = None,
) -> dict[str, Any]:
    """The winner of ``tune_fusion`` (``trials[0]``) against the runner-up and against RRF
    (``RRF_REFERENCE`` when in the grid, else the best RRF trial), by a paired test over the
    tune-half queries (``compare.paired_test``), with each one's report-half figure beside it.
    A comparison that cannot be made (one trial; the winner is the RRF reference) is None.
    ``base``: the base config's own trial (``BASE_POINT``, adaptive model included), compared the
    same way (``vs_base``; None without it)."""
    if not trials:
        raise InputError("no fusion trials to compare")
    best = trials[0]
    rrf = [t for t in trials if dict(t.settings) == dict(RRF_REFERENCE)]
    if not rrf:
        rrf = [t for t in trials if t.settings.get("fusion.method") == "rrf"][:1]

    def against(other: FusionTrial | None) -> dict[str, Any] | None:
        if other is None or other is best:
            return None
        a, b = other.half("tune"), best.half("tune")
        p = paired_test({q: {metric: v} for q, v in a.items()}, {q: {metric: v} for q, v in b.items()},
                        test, seed=SEED if seed is None else seed)[metric]
        return {
            "settings": dict(other.settings),
            "tune_mean": other.tune_mean,
            "report_mean": other.report_mean,
            "delta_tune": best.tune_mean - other.tune_mean,
            "p_tune": p,
            "queries_tune": len(a),
        }

    return {
        "metric": metric,
        "test": test,
        "half": "tune",
        "winner": {"settings": dict(best.settings), "tune_mean": best.tune_mean, "report_mean": best.report_mean},
        "vs_runner_up": against(trials[1] if len(trials) > 1 else None),
        "vs_rrf": against(rrf[0] if rrf else None),
        "vs_base": against(base),
    }


# --------------------------------------------------------------------------- keys a method does not fuse by

UNREAD: Mapping[str, Mapping[str, str]] = {
    "wsum": {"fusion.rrf_k": "RRF's k; under wsum it only picks which passage of a record the rerank, speaker and "
                             "evidence stages read"},
    "rrf": {"fusion.norm": "score normalisation; rrf fuses ranks",
            "fusion.weights": "rrf weighs every retriever alike",
            "fusion.fill_missing": "filled scores; rrf fuses ranks",
            "fusion.adaptive": "per-query weights; rrf weighs every retriever alike"},
}
"""The keys each fusion method does not fuse by, and what they are (issue 40 item 1): a grid point
that sets one is warned about, and a tie never picks it (``pick_fusion``)."""


def unread_keys(settings: Mapping[str, Any], base: SearchConfig) -> tuple[str, ...]:
    """The keys of a grid point that the fusion method it runs (its own ``fusion.method``, else the
    base's) does not fuse by (``UNREAD``)."""
    method = settings.get("fusion.method", base.fusion.method)
    return tuple(k for k in settings if k in UNREAD.get(method, {}))


def _without_unread(settings: Mapping[str, Any], base: SearchConfig) -> dict[str, Any]:
    drop = unread_keys(settings, base)
    return {k: v for k, v in settings.items() if k not in drop}


def fusion_points(grid: Sequence[Mapping[str, Any]], base: SearchConfig) -> list[dict[str, Any]]:
    """The points ``tune fusion`` scores: the grid; for a point that sets keys its method does not
    fuse by, the same point without them where no other point (nor the base config) is that
    config, so that a tie between them never picks those keys (``pick_fusion``); and the base
    config itself (``BASE_POINT``), last."""
    points = [dict(p) for p in grid]
    seen = {base.fingerprint()} | {base.replace(**p).fingerprint() for p in points}
    for p in grid:
        clean = _without_unread(p, base)
        if len(clean) < len(p) and clean:
            fp = base.replace(**clean).fingerprint()
            if fp not in seen:
                seen.add(fp)
                points.append(clean)
    return [*points, dict(BASE_POINT)]


def base_label(what: str, base: SearchConfig) -> str:
    """How the summary and the warnings name the base config: ``what``, with ``with its adaptive
    model`` where it fuses by one."""
    if base.fusion.method != "rrf" and base.fusion.adaptive is not None:
        return f"{what} with its adaptive model"
    return what


@dataclass(frozen=True)
class FusionPick:
    """What ``tune fusion`` (and notebook 02, ``research.fusion_sweep``) picked from a sweep, and
    every warning about it: one function, so both show the same lines."""

    best: FusionTrial
    """The pick: the best grid trial on the tune half, or the base config's own trial when the best
    differs from it only in keys its method does not fuse by and ties with it."""
    trials: tuple[FusionTrial, ...]
    """The grid's trials (the points ``fusion_points`` added included), best tune-half mean first,
    the pick first; never the base config's trial."""
    base: FusionTrial
    warnings: tuple[str, ...]
    config: SearchConfig
    """The tuned config: the base config with the pick's settings."""
    drops_adaptive: bool

    @property
    def is_base(self) -> bool:
        return dict(self.best.settings) == dict(BASE_POINT)


def _tied(a: FusionTrial, b: FusionTrial) -> bool:
    return abs(a.tune_mean - b.tune_mean) <= 1e-12


def _text(settings: Mapping[str, Any]) -> str:
    import json

    return json.dumps(dict(settings), sort_keys=True, default=str)


def pick_fusion(scored: Sequence[FusionTrial], grid: Sequence[Mapping[str, Any]], base: SearchConfig,
                base_name: str = "the base config") -> FusionPick:
    """The pick of a sweep over ``fusion_points(grid, base)`` (``scored``: ``tune_fusion``'s trials,
    the base config's among them) and its warnings, in the order shown: each grid point that sets a
    key its method does not fuse by (``UNREAD``); a tie settled against such keys; the pick on the
    edge of the grid (``grid_edges``); the tuned config dropping the base's ``fusion.adaptive``; the
    base config scoring higher than the pick. ``base_name`` names the base config in them.

    The best trial on the tune-half mean is the pick, except that among the trials tied with it
    whose settings differ from its own only in keys their method does not fuse by (the base config
    too, where that is all the best changes), the one that sets fewest such keys is (the base config
    first): a key the method ignores is never a winner on a tie."""
    base_trial = next(t for t in scored if dict(t.settings) == dict(BASE_POINT))
    trials = sorted((t for t in scored if t is not base_trial), key=lambda t: -t.tune_mean)
    if not trials:
        raise InputError("no fusion trials to pick from")
    top = trials[0]
    same = base.replace(**_without_unread(top.settings, base)).fingerprint()
    tied = [t for t in [base_trial, *trials]
            if _tied(t, top) and base.replace(**_without_unread(t.settings, base)).fingerprint() == same]
    best = min(tied, key=lambda t: (len(unread_keys(t.settings, base)), t is not base_trial))
    warnings = []
    for i, point in enumerate(grid, 1):
        keys = unread_keys(point, base)
        if keys:
            method = point.get("fusion.method", base.fusion.method)
            what = "; ".join(f"{k}: {UNREAD[method][k]}" for k in keys)
            warnings.append(f"grid point {i} sets {', '.join(keys)}, which fusion.method {method} does not fuse by "
                            f"({what}): a tie never picks it")
    if best is not top:
        instead = base_label(base_name, base) if best is base_trial else f"{_text(best.settings)}"
        warnings.append(f"the best grid point on the tune half, {_text(top.settings)}, ties with {instead}, which "
                        f"differs from it only in keys its method does not fuse by: the pick is {instead}")
    if best is not base_trial:
        warnings += grid_edges(best.settings, grid, base)
        trials.remove(best)
        trials.insert(0, best)
    config = base.replace(**best.settings)
    drops = base.fusion.adaptive is not None and config.fusion.adaptive is None
    if drops:
        warnings.append(f"the tuned config drops fusion.adaptive: {base_name} picks each query's BM25 share with "
                        "its adaptive model, the winner's fixed weights serve every query; to keep adaptive fusion, "
                        "refit it on the tuned config (searchkit tune adaptive-fusion --config TUNED ...)")
    if base_trial.tune_mean > best.tune_mean:
        warnings.append(f"{base_label(base_name, base)} scores higher on the tune half than the grid's winner "
                        f"({base_trial.tune_mean:.4f} vs {best.tune_mean:.4f} mean nDCG@10): keep it, or widen --grid")
    return FusionPick(best, tuple(trials), base_trial, tuple(warnings), config, drops)
