"""``searchkit tune``: fusion settings and the weak-match model, chosen on the tune half."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from searchkit import strict_json
from searchkit.cli import engine
from searchkit.cli.common import CLIError, load_config


def add_parser(sub: Any) -> None:
    pt = sub.add_parser("tune", help="fit weak match (H11) or pick fusion settings on the tune half; report half held out")
    pt.add_argument("what", choices=["weak-match", "fusion", "adaptive-fusion"])
    pt.add_argument("--runs", nargs="+", help="weak-match: outputs of `searchkit eval --json --queries`")
    pt.add_argument("--dataset", action="append", help="fusion, adaptive-fusion: a dataset to tune on (repeatable)")
    pt.add_argument("--cases", help="adaptive-fusion: reuse (if it exists) or write the per-query cases here (JSON)")
    pt.add_argument("--config", help="base SearchConfig (default: the shipped one)")
    pt.add_argument("--features", help="comma-separated feature names of the documents model "
                    "(searchkit.rank.signals.FEATURES)")
    pt.add_argument("--conversation-features", help="comma-separated feature names of the conversation model "
                    "(fitted on the queries it scored: those whose top results were chats and digests)")
    pt.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic model")
    pt.add_argument("--objective", choices=["pointwise", "pairwise"],
                    help="weak-match: how the documents model is fitted (default: the shipped choice, pairwise: "
                    "within-dataset answerable/unanswerable pairs, then Platt scaling)")
    pt.add_argument("--conversation-objective", choices=["pointwise", "pairwise"],
                    help="weak-match: how the conversation model is fitted (default: the shipped choice, pointwise)")
    pt.add_argument("--target-false-warn", type=float, help="cap on the false-warning rate of answerable queries")
    pt.add_argument("--refit", choices=["both", "documents", "conversation"], default="both",
                    help="weak-match: refit only this model (the queries it scored) and keep the other one from "
                    "--config; both: every model that scored some query")
    pt.add_argument("--out", help="write the tuned SearchConfig here")
    pt.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="fusion: paired test of the winner against the runner-up and RRF (tune half)")
    pt.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    engine.add_arguments(pt, what="fusion: the indexes are embedded and the grid × datasets runs")
    pt.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    """Fit the weak-match model on the tune half of eval runs; report on the other half."""
    if args.what == "fusion":
        return _tune_fusion(args)
    if args.what == "adaptive-fusion":
        return _tune_adaptive(args)
    if args.engine != "local" or args.address is not None or args.workers is not None:
        raise CLIError("--engine, --address and --workers go with tune fusion")
    if not args.runs:
        raise CLIError("tune weak-match needs --runs (outputs of `searchkit eval --json --queries`)")
    from searchkit.evaluate.tune import (
        CONVERSATION_FEATURES,
        CONVERSATION_OBJECTIVE,
        DEFAULT_FEATURES,
        DOCUMENTS_OBJECTIVE,
        TuneError,
        by_shape,
        fit_weak_match_by_shape,
        from_eval_json,
        half_of,
        score_weak_match,
    )

    rows = []
    for path in args.runs:
        p = Path(path)
        if p.is_dir() and (p / "metrics.json").exists():  # a run folder (eval --out)
            p = p / "metrics.json"
        data = _read_json(p, f"cannot read eval run {p}")
        try:
            rows.extend(from_eval_json(data))
        except ValueError as exc:
            raise CLIError(f"eval run {p}: {exc}") from None
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    report = [r for r in rows if half_of(r.query_id) == "report"]
    features = tuple(args.features.split(",")) if args.features else DEFAULT_FEATURES
    conv_features = (tuple(args.conversation_features.split(",")) if args.conversation_features
                     else CONVERSATION_FEATURES)
    base = load_config(args.config)
    if not args.quiet:  # the fit's warnings (a model's tune half too small, a model kept), one line each
        import logging

        logging.basicConfig(level=logging.WARNING, format="tune weak-match: %(message)s", stream=sys.stderr)
    try:
        wm = fit_weak_match_by_shape(tune, features, conv_features, C=args.C,
                                     target_false_warn=args.target_false_warn, keep=base.weak_match,
                                     refit=args.refit, objective=args.objective or DOCUMENTS_OBJECTIVE,
                                     conversation_objective=args.conversation_objective or CONVERSATION_OBJECTIVE)
    except TuneError as exc:
        raise CLIError(f"tune weak-match: {exc}") from None
    cfg = base.replace(weak_match=wm)
    out = {"fitted_on": "tune half", "refit": args.refit,
           "objective": {shape: obj for shape, obj in (("documents", args.objective or DOCUMENTS_OBJECTIVE),
                                                       ("conversation", args.conversation_objective or CONVERSATION_OBJECTIVE))
                         if args.refit in ("both", shape)},
           "n_tune": len(tune), "n_report": len(report),
           "scored_by": {shape: {"tune": len(by_shape(tune)[shape]), "report": len(by_shape(report)[shape])}
                         for shape in ("documents", "conversation")},
           "weak_match": cfg.to_dict()["weak_match"],
           "report_half": {"all": score_weak_match(report, wm)}}
    for g in sorted({r.group for r in rows}):
        out["report_half"][g] = score_weak_match([r for r in report if r.group == g], wm)
    if args.out:
        cfg.save(args.out)
    print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    return 0


def _tune_fusion(args: argparse.Namespace) -> int:
    import logging

    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.tune import fusion_significance, tune_fusion

    if not args.dataset:
        raise CLIError("tune fusion needs --dataset (one or more)")
    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    base = load_config(args.config)
    datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
    with engine.engine_scope(args) as eng:
        trials = tune_fusion(datasets, base, show_progress=not args.quiet, engine=eng)
    best = trials[0]
    table = [
        {"settings": t.settings, "tune_mean": round(t.tune_mean, 4), "report_mean": round(t.report_mean, 4),
         "report": {k: round(v, 4) for k, v in t.report.items()}}
        for t in trials
    ]
    if args.out:
        base.replace(**best.settings).save(args.out)
    sig = fusion_significance(trials, test=args.test)
    out = {"picked_on": "tune half (mean nDCG@10)", "best": table[0], "significance": sig, "trials": table}
    print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    for label, key in (("runner-up", "vs_runner_up"), ("RRF", "vs_rrf")):
        o = sig[key]
        if o is not None:
            print(f"winner vs {label} {o['settings']}: tune-half nDCG@10 {sig['winner']['tune_mean']:.4f} vs "
                  f"{o['tune_mean']:.4f} (delta {o['delta_tune']:+.4f}, {sig['test']} p {o['p_tune']:.4f} over "
                  f"{o['queries_tune']} queries); report half {sig['winner']['report_mean']:.4f} vs {o['report_mean']:.4f}",
                  file=sys.stderr)
    return 0



def _tune_adaptive(args: argparse.Namespace) -> int:
    """Fit query-adaptive fusion (``searchkit.evaluate.adaptive``) on the tune half; figures by half."""
    import logging

    from searchkit.evaluate import adaptive
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.index.engine import using

    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    base = load_config(args.config)
    if base.fusion.method == "rrf":
        raise CLIError("tune adaptive-fusion: the base config fuses by rrf; adaptive fusion picks wsum weights")
    from searchkit.rank.adaptive import FEATURES

    names = [n.strip() for n in args.features.split(",") if n.strip()] if args.features else list(adaptive.DEFAULT_FEATURES)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise CLIError(f"--features: unknown fusion feature {unknown[0]!r}; valid: {', '.join(sorted(FEATURES))}")
    cases_path = Path(args.cases) if args.cases else None
    if cases_path is not None and cases_path.exists():
        data = _read_json(cases_path, f"--cases {args.cases!r}")
        try:
            cases = [adaptive.FusionCase.from_dict(d) for d in data["cases"]]
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:  # named, never quoted
            raise CLIError(f"--cases {args.cases!r} is not a cases file written by tune adaptive-fusion "
                           f"({type(exc).__name__})") from None
        if args.dataset:
            wanted = set(args.dataset)
            cases = [c for c in cases if c.dataset in wanted or any(c.dataset == Path(d).name for d in wanted)]
    else:
        if not args.dataset:
            raise CLIError("tune adaptive-fusion needs --dataset (one or more) or an existing --cases file")
        datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
        with engine.engine_scope(args) as eng, using(eng) if eng is not None else _null():
            cases = adaptive.collect_cases(datasets, base, show_progress=not args.quiet)
        if cases_path is not None:
            from searchkit.util import atomic_write_text

            atomic_write_text(cases_path, json.dumps({"grid": list(adaptive.GRID),
                                                      "cases": [c.to_dict() for c in cases]}))
    base_share = float(base.fusion.weights.get("bm25", 0.0)) / max(1e-12, sum(base.fusion.weights.values()))
    try:
        res = adaptive.fit_and_choose(cases, base_share=base_share, features=names)
    except ValueError as exc:
        raise CLIError(f"tune adaptive-fusion: {exc}") from None
    model = res["model"]
    if args.out:
        base.replace(**{"fusion.adaptive": model}).save(args.out)
    rnd = {h: {k: {d: round(v, 4) for d, v in fig.items()} for k, fig in res[h].items()} for h in ("tune", "report")}
    out = {"picked_on": "tune half (mean over datasets of nDCG@10, interpolated between grid shares)",
           "model": {"features": list(model.features), "coef": list(model.coef), "intercept": model.intercept,
                     "lo": model.lo, "hi": model.hi},
           "base_bm25_share": base_share, "counts": res["counts"], "tune": rnd["tune"], "report": rnd["report"],
           "trials": res["trials"]}
    print(strict_json.dumps(out))  # strict JSON: an undefined figure is null (issue 31 item 2)
    for d, v in rnd["report"]["adaptive"].items():
        print(f"{d}: report half nDCG@10 adaptive {v:.4f}  fixed {rnd['report']['fixed'][d]:.4f}  "
              f"bm25 {rnd['report']['bm25'][d]:.4f}  dense {rnd['report']['dense'][d]:.4f}  "
              f"oracle {rnd['report']['oracle'][d]:.4f}", file=sys.stderr)
    return 0


def _read_json(path: Path, what: str) -> Any:
    """A JSON file given on the command line: a regular file only (a FIFO is refused, never waited
    on); the error names it and the problem, never its content (issue 27, items 8 and 12)."""
    from searchkit.util import FileProblem, read_json_file

    try:
        return read_json_file(path)
    except FileProblem as exc:
        raise CLIError(f"{what}: {exc.problem}") from None
    except OSError as exc:
        raise CLIError(f"{what}: {exc.strerror or type(exc).__name__}") from None


def _null() -> Any:
    import contextlib

    return contextlib.nullcontext()
