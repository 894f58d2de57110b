"""``searchkit tune``: fusion settings and the weak-match model, chosen on the tune half."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from searchkit.cli import engine
from searchkit.cli.common import CLIError, load_config


def add_parser(sub: Any) -> None:
    pt = sub.add_parser("tune", help="fit weak match (H11) or pick fusion settings on the tune half; report half held out")
    pt.add_argument("what", choices=["weak-match", "fusion"])
    pt.add_argument("--runs", nargs="+", help="weak-match: outputs of `searchkit eval --json --queries`")
    pt.add_argument("--dataset", action="append", help="fusion: a dataset to tune on (repeatable)")
    pt.add_argument("--config", help="base SearchConfig (default: the shipped one)")
    pt.add_argument("--features", help="comma-separated feature names of the documents model "
                    "(searchkit.rank.signals.FEATURES)")
    pt.add_argument("--conversation-features", help="comma-separated feature names of the model for conversation "
                    "corpora (fitted on the runs whose eval says shape: conversation)")
    pt.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic model")
    pt.add_argument("--target-false-warn", type=float, help="cap on the false-warning rate of answerable queries")
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
    if args.engine != "local" or args.address is not None or args.workers is not None:
        raise CLIError("--engine, --address and --workers go with tune fusion")
    if not args.runs:
        raise CLIError("tune weak-match needs --runs (outputs of `searchkit eval --json --queries`)")
    from searchkit.evaluate.tune import (
        CONVERSATION_FEATURES,
        DEFAULT_FEATURES,
        fit_weak_match_by_shape,
        from_eval_json,
        half_of,
        score_weak_match,
    )

    rows = []
    for path in args.runs:
        p = Path(path)
        if p.is_dir() and (p / "metrics.json").is_file():  # a run folder (eval --out)
            p = p / "metrics.json"
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            reason = "JSON nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())[:150]
            raise CLIError(f"cannot read eval run {path}: {reason}") from None
        try:
            rows.extend(from_eval_json(data))
        except ValueError as exc:
            raise CLIError(f"eval run {path}: {exc}") from None
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    report = [r for r in rows if half_of(r.query_id) == "report"]
    features = tuple(args.features.split(",")) if args.features else DEFAULT_FEATURES
    conv_features = (tuple(args.conversation_features.split(",")) if args.conversation_features
                     else CONVERSATION_FEATURES)
    wm = fit_weak_match_by_shape(tune, features, conv_features, C=args.C, target_false_warn=args.target_false_warn)
    base = load_config(args.config)
    cfg = base.replace(weak_match=wm)
    out = {"fitted_on": "tune half", "n_tune": len(tune), "n_report": len(report), "weak_match": cfg.to_dict()["weak_match"],
           "report_half": {"all": score_weak_match(report, wm)}}
    for g in sorted({r.group for r in rows}):
        out["report_half"][g] = score_weak_match([r for r in report if r.group == g], wm)
    if args.out:
        cfg.save(args.out)
    print(json.dumps(out, indent=2, ensure_ascii=False))
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
    print(json.dumps(out, indent=2, ensure_ascii=False))
    for label, key in (("runner-up", "vs_runner_up"), ("RRF", "vs_rrf")):
        o = sig[key]
        if o is not None:
            print(f"winner vs {label} {o['settings']}: tune-half nDCG@10 {sig['winner']['tune_mean']:.4f} vs "
                  f"{o['tune_mean']:.4f} (delta {o['delta_tune']:+.4f}, {sig['test']} p {o['p_tune']:.4f} over "
                  f"{o['queries_tune']} queries); report half {sig['winner']['report_mean']:.4f} vs {o['report_mean']:.4f}",
                  file=sys.stderr)
    return 0

