"""``searchkit tune``: fusion settings and the weak-match model, chosen on the tune half."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from searchkit import strict_json
from searchkit.cli.commands import engine
from searchkit.cli.common import load_config
from searchkit.errors import DataError, InputError
from searchkit.config import AdaptiveFusion, ConfigError, SearchConfig, WeakMatchConfig
from searchkit.evaluate import adaptive, weak_match_runs
from searchkit.evaluate import tune as tuning
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.index.engine import using
from searchkit.rank.adaptive import FEATURES
from searchkit.util import (
    problem_of,
    atomic_write_text,
    check_file_target,
    parse_json_text,
    read_json_file,
    write_failure_line,
)

_SMALL = 1 << 26
"""The most bytes read of an existing ``--out`` or ``--result`` to tell whether tune wrote it."""


def cmd_tune(args: argparse.Namespace) -> int:
    """Fit the weak-match model on the tune half of eval runs; report on the other half."""
    _check_targets(args)  # before any work: a target it must not replace is refused now, not after the fit
    if args.what == "fusion":
        return _tune_fusion(args)
    if args.what == "adaptive-fusion":
        return _tune_adaptive(args)
    if args.grid is not None or args.result is not None:
        raise InputError("--grid and --result go with tune fusion", usage=True)
    if args.engine != "local" or args.address is not None or args.workers is not None:
        raise InputError("--engine, --address and --workers go with tune fusion", usage=True)
    if not args.runs:
        raise InputError("tune weak-match needs --runs (run folders of `searchkit eval --out`, or files of "
                       "`searchkit eval --json --queries`)", usage=True)
    try:
        runs = [weak_match_runs.read_eval_run(path) for path in args.runs]
    except InputError as exc:
        raise InputError(f"tune weak-match: {exc}", usage=True) from None
    given = load_config(args.config) if args.config else None  # its ConfigError as it is
    try:  # the model goes only into the config that made the runs' signals (issue 40 item 1)
        base, written_into = weak_match_runs.config_for_runs(runs, given, args.config)
    except InputError as exc:
        raise InputError(f"tune weak-match: {exc}", usage=True) from None
    rows = [row for run in runs for row in run.rows]
    tune = [r for r in rows if tuning.half_of(r.query_id) == "tune"]
    report = [r for r in rows if tuning.half_of(r.query_id) == "report"]
    features = tuple(args.features.split(",")) if args.features else tuning.DEFAULT_FEATURES
    conv_features = (tuple(args.conversation_features.split(",")) if args.conversation_features
                     else tuning.CONVERSATION_FEATURES)
    rate = _threshold_args(args)
    if not args.quiet:  # the fit's warnings (a model's tune half too small, a model kept), one line each
        logging.basicConfig(level=logging.WARNING, format="tune weak-match: %(message)s", stream=sys.stderr)
    try:
        wm = tuning.fit_weak_match_by_shape(tune, features, conv_features, C=args.C,
                                     target_false_warn=rate, keep=base.weak_match,
                                     refit=args.refit, objective=args.objective or tuning.DOCUMENTS_OBJECTIVE,
                                     conversation_objective=args.conversation_objective or tuning.CONVERSATION_OBJECTIVE,
                                     check_n=args.check_n, allow_small=args.allow_small, threshold=args.threshold)
        held = _threshold_out(args, rate, tune, wm)
    except InputError as exc:  # the fit's own; a config's ConfigError passes as it did
        if isinstance(exc, ConfigError):
            raise
        raise InputError(f"tune weak-match: {exc}", usage=True) from None
    cfg = base.replace(weak_match=wm)
    out = {"fitted_on": "tune half", "refit": args.refit,
           "objective": {shape: obj for shape, obj in (("documents", args.objective or tuning.DOCUMENTS_OBJECTIVE),
                                                       ("conversation", args.conversation_objective or tuning.CONVERSATION_OBJECTIVE))
                         if args.refit in ("both", shape)},
           "n_tune": len(tune), "n_report": len(report),
           "scored_by": {shape: {"tune": len(tuning.by_shape(tune)[shape]), "report": len(tuning.by_shape(report)[shape])}
                         for shape in ("documents", "conversation")},
           "config": {"written_into": written_into, "runs": sorted({r.fingerprint for r in runs}),
                      "fingerprint": cfg.fingerprint()},
           "threshold": held,
           "weak_match": cfg.to_dict()["weak_match"],
           "report_half": {"all": tuning.score_weak_match(report, wm)}}
    for g in sorted({r.group for r in rows}):
        out["report_half"][g] = tuning.score_weak_match([r for r in report if r.group == g], wm)
    if args.out:
        _write_config(args.out, cfg)
    print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    return 0


def _threshold_args(args: argparse.Namespace) -> float | None:
    """The false-warning rate the thresholds hold (``--false-warn-rate``, 10% by default), or None
    under a fixed ``--threshold``; a bad value is one line naming the flag."""
    rate = args.false_warn_rate
    if args.threshold is not None:
        if rate is not None or args.check_n is not None:
            raise InputError("--threshold: not allowed with --false-warn-rate or --check-n (a fixed threshold holds no rate)", usage=True)
        if not 0.0 <= args.threshold <= 1.0:
            raise InputError(f"--threshold: a probability within [0, 1], got {args.threshold:g}", usage=True)
        return None
    if rate is not None and not 0.0 <= rate < 1.0:
        raise InputError(f"--false-warn-rate: a share of the answerable queries within [0, 1), got {rate:g}", usage=True)
    if args.check_n is not None and args.check_n < 1:
        raise InputError(f"--check-n: a positive number of answerable queries, got {args.check_n}", usage=True)
    return tuning.FALSE_WARN_TARGET if rate is None else rate


def _threshold_out(args: argparse.Namespace, rate: float | None, tune: list[tuning.LabelledSignals],
                   wm: WeakMatchConfig) -> dict[str, Any]:
    """How each refit model's threshold was set, for the output: the rule, the rate and, per dataset
    (the small ones pooled), what it held on the tune half (``tune.held_by_group``)."""
    if rate is None:
        return {"rule": "fixed", "threshold": args.threshold}
    shapes = [s for s in ("documents", "conversation") if args.refit in ("both", s) and tuning.by_shape(tune)[s]]
    held = {s: tuning.held_by_group(tuning.by_shape(tune)[s], wm.model_for(s), rate, check_n=args.check_n)[1]
            for s in shapes}
    return {"rule": "held: the largest threshold at which at most false_warn_rate of the tune half's answerable "
                    "queries the model scored are warned, in every dataset (the small ones pooled)"
                    + (", with the margin for a check split of check_n answerable queries" if args.check_n else ""),
            "false_warn_rate": rate, "check_n": args.check_n, "rate": tuning.rate_of(rate, args.check_n),
            "held": {s: {g: h.to_dict() for g, h in by.items()} for s, by in held.items()}}


def _tune_fusion(args: argparse.Namespace) -> int:
    """Pick fusion settings on the tune half over the grid (``--grid`` or the default one), beside
    the base config as it is (its adaptive model included); a short summary on stdout, every trial
    in ``--result`` / ``--json``, warnings on stderr (issue 31 item 5)."""
    if not args.dataset:
        raise InputError("tune fusion needs --dataset (one or more)", usage=True)
    if args.grid is not None and any(p and os.path.realpath(p) == os.path.realpath(args.grid) for p in (args.result, args.out)):
        raise InputError(f"--grid {args.grid}: the same file as --result or --out, which would overwrite it", usage=True)
    if not args.quiet:
        _progress_logging()
    base = load_config(args.config)
    grid = _grid(args.grid, base) if args.grid is not None else tuning.default_grid(base)
    datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
    with engine.engine_scope(args) as eng:
        scored = tuning.tune_fusion(datasets, base, tuning.fusion_points(grid, base), show_progress=not args.quiet,
                                    engine=eng)
    base_name = "the shipped config" if args.config is None else f"the base config ({Path(args.config).name})"
    pick = tuning.pick_fusion(scored, grid, base, base_name)  # the warnings notebook 02 shows too
    best, base_trial, warnings = pick.best, pick.base, list(pick.warnings)
    # the base config as the pick (a tie with points that differ only in keys their method ignores): the
    # grid's trials are what it was tested against
    sig = tuning.fusion_significance([best, *pick.trials] if pick.is_base else pick.trials, test=args.test,
                                     base=base_trial)
    base_label = tuning.base_label(base_name, base)
    out = {"picked_on": "tune half (mean nDCG@10)", "best": _row(best), "best_is_base": pick.is_base,
           "significance": sig, "base": {"label": base_label, **_row(base_trial)}, "drops_adaptive": pick.drops_adaptive,
           "warnings": warnings, "grid": "default" if args.grid is None else "given",
           "trials": [_row(t) for t in pick.trials]}
    if args.out:
        _write_config(args.out, pick.config)
    if args.result:
        _write_result(args.result, strict_json.dumps(out))
    summary = _fusion_summary(out, len(pick.trials), len(datasets), args)
    for line in warnings:
        print(f"tune fusion: warning: {line}", file=sys.stderr)
    if args.json:
        print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    print("\n".join(summary), file=sys.stderr if args.json else sys.stdout)
    return 0


def _row(trial: tuning.FusionTrial) -> dict[str, Any]:
    return {"settings": dict(trial.settings), "tune_mean": round(trial.tune_mean, 4),
            "report_mean": round(trial.report_mean, 4), "report": {k: round(v, 4) for k, v in trial.report.items()}}


def _settings_text(settings: Mapping[str, object]) -> str:
    """``key=value`` pairs of a grid point on one line (a weight mapping as ``bm25:0.6,dense:0.4``)."""
    def value(v: object) -> str:
        if isinstance(v, dict):
            return ",".join(f"{k}:{value(x)}" for k, x in v.items())
        return f"{v:g}" if isinstance(v, float) else str(v)

    return " ".join(f"{k}={value(v)}" for k, v in dict(settings).items()) or "(unchanged)"


def _fusion_summary(out: dict[str, Any], n_trials: int, n_datasets: int, args: argparse.Namespace) -> list[str]:
    """The few lines stdout keeps: the winner, its tests against the runner-up, RRF and the base
    config, and where the details went."""
    sig = out["significance"]
    best = out["best"]
    picked = f"{out['base']['label']} as it is" if out["best_is_base"] else _settings_text(best["settings"])
    lines = [f"winner of {n_trials} settings on {n_datasets} dataset(s), picked on the tune half's mean nDCG@10: "
             f"{picked}",
             f"  tune half {best['tune_mean']:.4f}, report half {best['report_mean']:.4f}"]
    for label, key in (("runner-up", "vs_runner_up"), ("RRF", "vs_rrf"), (out["base"]["label"], "vs_base")):
        o = sig[key]
        if o is None:
            continue
        name = label if key == "vs_base" else f"{label} {_settings_text(o['settings'])}"
        p = "n/a" if o["p_tune"] is None or o["p_tune"] != o["p_tune"] else f"{o['p_tune']:.4f}"
        lines.append(f"  vs {name}: tune {o['tune_mean']:.4f} (delta {o['delta_tune']:+.4f}, {sig['test']} p {p}, "
                     f"{o['queries_tune']} queries), report {o['report_mean']:.4f}")
    if args.out:
        lines.append(f"wrote {args.out}")
    if args.result:
        lines.append(f"every trial and test: {args.result}")
    elif not args.json:
        lines.append("every trial and test: --result FILE (or --json)")
    return lines


def _is_config(path: Path) -> bool | str:
    """Whether ``--out`` may replace the regular file at ``path``: a bare SearchConfig (a config tune
    wrote, or the base config tuned in place); never an exported ``NAME.vN.json`` (exports are never
    replaced) nor any other file (issue 39 item 6)."""
    try:
        data = read_json_file(path, limit=_SMALL)
    except DataError:  # not JSON, not UTF-8, too large: not a config
        return False
    if isinstance(data, dict) and "format" in data:
        return "an exported config is never replaced"
    if not isinstance(data, dict):
        return False
    try:
        SearchConfig.from_dict(data)
    except (ValueError, TypeError, KeyError):
        return False
    return True


def _is_result(path: Path) -> bool:
    """Whether ``--result`` may replace the regular file at ``path``: the result of an earlier
    ``tune fusion`` (every trial, test and warning)."""
    try:
        data = read_json_file(path, limit=_SMALL)
    except DataError:
        return False
    return (isinstance(data, dict) and isinstance(data.get("picked_on"), str) and data["picked_on"].startswith("tune half")
            and isinstance(data.get("trials"), list) and isinstance(data.get("best"), dict))


def _check_out(path: str) -> Path:
    return check_file_target(path, "--out", what="a config file", ours=_is_config,
                             ours_text="a SearchConfig file", file_text="the config file")


def _check_result(path: str) -> Path:
    return check_file_target(path, "--result", what="a result file", ours=_is_result,
                             ours_text="a result written by searchkit tune fusion", file_text="the JSON file")


def _any_file(_path: Path) -> bool:
    return True


def _check_cases(path: str, *, writing: bool) -> Path:
    """``--cases`` is read when a regular file is there (its content is checked when read) and
    written where nothing is; anything else is refused (``writing``: anything there is)."""
    return check_file_target(path, "--cases", what="a cases file", ours=None if writing else _any_file,
                             file_text="the cases file")


def _check_targets(args: argparse.Namespace) -> None:
    """Every path this run would write, checked before any work (issue 39 item 6): one line naming
    the flag and what is there; nothing written."""
    if args.out:
        _check_out(args.out)
    if args.result and args.what == "fusion":
        _check_result(args.result)
    if args.cases and args.what == "adaptive-fusion":
        _check_cases(args.cases, writing=False)


def _write(flag: str, path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` atomically; a write the system refuses is one line naming the flag."""
    try:
        atomic_write_text(Path(path), text)
    except OSError as exc:
        raise InputError(write_failure_line(flag, path, exc), usage=True) from None


def _write_config(path: str, cfg: SearchConfig) -> None:
    _write("--out", _check_out(path), cfg.to_json() + "\n")  # checked again: the fit took a while


def _write_result(path: str, text: str) -> None:
    _write("--result", _check_result(path), text + "\n")


def _grid(value: str, base: SearchConfig) -> tuple[dict[str, Any], ...]:
    """``--grid``: inline JSON (it starts with ``[`` or ``{``) or a JSON file, checked point by
    point (``tune.parse_grid``); every problem is one line naming the point and the bad value."""
    text = value.strip()
    if text.startswith(("[", "{")):
        where = "--grid"
        try:
            data = parse_json_text(text, where)
        except DataError as exc:
            raise InputError(f"--grid: {problem_of(exc)}", usage=True) from None
    else:
        where = f"--grid {value}"
        data = _read_json(Path(value), where)
    try:
        return tuning.parse_grid(data, base)
    except InputError as exc:  # the grid's own; a config's ConfigError passes as it did
        if isinstance(exc, ConfigError):
            raise
        raise InputError(f"{where}: {exc}", usage=True) from None


def _progress_logging(fmt: str = "%(message)s") -> None:
    """Progress lines on stderr: searchkit's INFO records; other libraries' only from WARNING up, so
    faiss's loader lines ("Loading faiss with AVX2 support", ...) stay off stderr (issue 31 item 5)."""
    logging.basicConfig(level=logging.WARNING, format=fmt, stream=sys.stderr)
    logging.getLogger("searchkit").setLevel(logging.INFO)


def _tune_adaptive(args: argparse.Namespace) -> int:
    """Fit query-adaptive fusion (``searchkit.evaluate.adaptive``) on the tune half; figures by half."""
    if not args.quiet:
        _progress_logging()
    base = load_config(args.config)
    if base.fusion.method == "rrf":
        raise InputError("tune adaptive-fusion: the base config fuses by rrf; adaptive fusion picks wsum weights", usage=True)

    names = [n.strip() for n in args.features.split(",") if n.strip()] if args.features else list(adaptive.DEFAULT_FEATURES)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise InputError(f"--features: unknown fusion feature {unknown[0]!r}; valid: {', '.join(sorted(FEATURES))}", usage=True)
    cases_path = Path(args.cases) if args.cases else None
    if cases_path is not None and cases_path.exists():
        data = _read_json(cases_path, f"--cases {args.cases!r}")
        try:
            cases = [adaptive.FusionCase.from_dict(d) for d in data["cases"]]
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:  # named, never quoted
            raise InputError(f"--cases {args.cases!r} is not a cases file written by tune adaptive-fusion "
                           f"({type(exc).__name__})", usage=True) from None
        if args.dataset:
            wanted = set(args.dataset)
            cases = [c for c in cases if c.dataset in wanted or any(c.dataset == Path(d).name for d in wanted)]
    else:
        if not args.dataset:
            raise InputError("tune adaptive-fusion needs --dataset (one or more) or an existing --cases file", usage=True)
        datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
        with engine.engine_scope(args) as eng, using(eng) if eng is not None else _null():
            cases = adaptive.collect_cases(datasets, base, show_progress=not args.quiet)
        if cases_path is not None:
            _write("--cases", _check_cases(args.cases, writing=True),
                   json.dumps({"grid": list(adaptive.GRID), "cases": [c.to_dict() for c in cases]}))
    lead, others = adaptive.lead_of(base)
    lead = lead or AdaptiveFusion.retriever
    base_share = float(base.fusion.weights.get(lead, 0.0)) / max(1e-12, sum(base.fusion.weights.values()))
    try:
        res = adaptive.fit_and_choose(cases, base_share=base_share, features=names, retriever=lead, others=others)
    except ValueError as exc:
        raise InputError(f"tune adaptive-fusion: {exc}", usage=True) from None
    model = res["model"]
    if args.out:
        _write_config(args.out, base.replace(**{"fusion.adaptive": model}))
    rnd = {h: {k: {d: round(v, 4) for d, v in fig.items()} for k, fig in res[h].items()} for h in ("tune", "report")}
    out = {"picked_on": "tune half (mean over datasets of nDCG@10, interpolated between grid shares)",
           "model": {"features": list(model.features), "coef": list(model.coef), "intercept": model.intercept,
                     "lo": model.lo, "hi": model.hi},
           f"base_{lead}_share": base_share, "counts": res["counts"], "tune": rnd["tune"], "report": rnd["report"],
           "trials": res["trials"]}
    print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    for d, v in rnd["report"]["adaptive"].items():
        print(f"{d}: report half nDCG@10 adaptive {v:.4f}  fixed {rnd['report']['fixed'][d]:.4f}  "
              f"{lead} {rnd['report'][lead][d]:.4f}  {res['others']} {rnd['report'][res['others']][d]:.4f}  "
              f"oracle {rnd['report']['oracle'][d]:.4f}", file=sys.stderr)
    return 0


def _read_json(path: Path, what: str) -> Any:
    """A JSON file given on the command line: a regular file only (a FIFO is refused, never waited
    on); the error names it and the problem, never its content (issue 27, items 8 and 12)."""
    try:
        return read_json_file(path)
    except DataError as exc:
        raise InputError(f"{what}: {problem_of(exc)}", usage=True) from None
    except OSError as exc:
        raise InputError(f"{what}: {exc.strerror or type(exc).__name__}", usage=True) from None


def _null() -> Any:
    return contextlib.nullcontext()
