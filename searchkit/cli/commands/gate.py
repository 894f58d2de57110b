"""``searchkit gate``: the regression gate (E5)."""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from searchkit import strict_json
from searchkit.cli.common import load_config
from searchkit.errors import DataError, InputError
from searchkit.config import SearchConfig
from searchkit.evaluate import endpoint_check, gate
from searchkit.evaluate.any_run import load_any_run, open_dataset
from searchkit.evaluate.datasets import resolve_dataset
from searchkit.evaluate.provenance import dataset_hash
from searchkit.evaluate.run_values import with_metrics
from searchkit.util import check_file_target, write_failure_line


def _margins(items: list[str]) -> dict[str, float]:
    """``--margin nDCG@10=0.03`` (repeatable) as ``{metric: drop}``; a bad one is one line naming it."""
    out: dict[str, float] = {}
    for item in items:
        metric, sep, value = item.partition("=")
        try:
            drop = float(value) if sep and metric.strip() else math.nan
        except ValueError:
            drop = math.nan
        if not (math.isfinite(drop) and drop >= 0):
            raise InputError(f"--margin {item[:60]!r}: give METRIC=DROP with DROP a number >= 0, e.g. nDCG@10=0.02", usage=True)
        out[metric.strip()] = drop
    return out


def _check_margins(margins: dict[str, float], gated: dict[str, Any], path: str) -> None:
    unknown = sorted(set(margins) - set(gated))
    if unknown:
        raise InputError(f"--margin {unknown[0][:40]!r}: {path} does not gate it (gated: {', '.join(gated)})", usage=True)


def _is_baseline(path: Path) -> bool:
    """Whether ``--update`` may replace the regular file at ``path``: a baseline the gate reads
    (a damaged one is not: its owner removes it)."""
    try:
        gate.read_baseline(path)
    except DataError:  # read_baseline raises no other
        return False
    return True


def _check_baseline_target(path: str) -> Path:
    """``--update --baseline FILE``: a new path or a baseline file, nothing else (issue 39 item 6)."""
    return check_file_target(path, "--baseline", what="a baseline file", ours=_is_baseline,
                             ours_text="a baseline written by searchkit gate", file_text="the baseline file")


def cmd_gate(args: argparse.Namespace) -> int:
    """E5: run (or read) each baseline's eval and exit 1 on a drop beyond a metric's margin, or a
    significant drop beyond its tolerance; exit 2 when nothing was gated."""
    t0 = time.perf_counter()
    margins = _margins(args.margin)
    if args.run and len(args.baseline) != 1:
        raise InputError("--run goes with exactly one --baseline", usage=True)
    if (args.dataset or args.split or args.as_tool) and not args.update:
        raise InputError("--dataset, --split and --as-tool name what --update measures; a check reads them from the baseline", usage=True)
    if args.update:  # before any eval: a target it must not replace is refused now (issue 39 item 6)
        for path in args.baseline:
            _check_baseline_target(path)
    rows: list[gate.Row] = []
    skipped: list[dict[str, str]] = []  # {baseline, name, why}: in the JSON, else one line each on stderr
    for path in args.baseline:
        old = None if args.update and not os.path.lexists(path) else gate.read_baseline(path)
        _check_margins(margins, (old or {}).get("gated") or gate.DEFAULT_GATED, path)
        name = Path(path).stem
        ds_name = args.dataset or (old or {}).get("dataset")
        if ds_name is None:
            raise InputError(f"--update of a new baseline {path!r} needs --dataset (and --split)", usage=True)
        try:
            where = resolve_dataset(ds_name)
        except DataError as exc:  # resolve_dataset raises no other
            if args.skip_missing:
                skipped.append({"baseline": str(path), "name": name, "why": " ".join(str(exc).split())})  # whole
                continue
            raise
        ds = open_dataset(where, args.split or (old or {}).get("split"))  # any split name; none: dev, else the one
        if args.update:
            measured = "tool" if args.as_tool else (old or {}).get("path", "searcher")
            config = load_config(args.config)
            endpoint_check.check_reranker(config)  # an HTTP reranker: asked once before the eval
            report = gate.measure(ds, config, path=measured, show_progress=not args.quiet, metrics=gate.ranking_of(old))
            doc = gate.baseline_from_report(report, ds, config, name=name, gated=(old or {}).get("gated"),
                                            margins={**((old or {}).get("margins") or {}), **margins})
            _check_baseline_target(path)  # again: the eval took a while
            try:
                gate.write_baseline(path, doc)
            except OSError as exc:
                raise InputError(write_failure_line("--baseline", path, exc), usage=True) from None
            print(f"gate: wrote {path} ({ds.name} {ds.split}, {len(ds.queries)} queries, config {config.fingerprint()}, "
                  f"path {doc['path']})")
            continue
        assert old is not None  # a check reads its baseline (None only for --update of a new path)
        if dataset_hash(ds) != old["dataset_sha256"]:
            raise InputError(f"{path}: dataset {ds_name!r} {ds.split} changed since the baseline was written "
                           "(content hash differs); review it, then rewrite the baseline with --update", usage=True)
        if args.run:  # a run folder, or another system's TREC run scored on the baseline's split
            run = load_any_run(args.run, dataset=ds)
            if run.query_set[2] != old["dataset_sha256"]:
                raise InputError(f"{args.run} was measured on other data than {path} (dataset hash differs)", usage=True)
            now = gate.now_figures(with_metrics(run, gate.ranking_of(old)))  # a gated measure it lacks: from its rankings
        else:
            config = load_config(args.config) if args.config else SearchConfig.from_dict(old["config"])
            endpoint_check.check_reranker(config)
            report = gate.measure(ds, config, path=old.get("path", "searcher"), show_progress=not args.quiet,
                                  metrics=gate.ranking_of(old))
            now = gate.now_figures(report.to_dict(with_queries=True))
        rows.extend(gate.check(old, now, label=name, margins=margins))
    if len(skipped) == len(args.baseline):
        raise InputError(f"gate: nothing {'written' if args.update else 'gated'}: all {len(skipped)} baseline(s) skipped, "
                       "their datasets are not on this machine ("
                       + "; ".join(f"{s['name']}: {s['why']}" for s in skipped) + ")", usage=True)
    if not args.json:
        for s in skipped:  # stdout carries the table (or the JSON) alone
            print(f"gate: skipped {s['name']}: {s['why']}", file=sys.stderr)
    if args.update:
        return 0
    if not any(r.verdict != gate.NOT_MEASURED for r in rows):
        raise InputError("gate: nothing gated: no gated figure is defined on these splits (e.g. AUROC without "
                       "unanswerable queries)", usage=True)
    if args.json:
        print(strict_json.dumps({"rows": [r.to_dict() for r in rows], "skipped": skipped,
                                 "failed": any(r.failed for r in rows)}))
    else:
        print(gate.render(rows))
    print(f"gate: {len(args.baseline) - len(skipped)} baseline(s) in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 1 if any(r.failed for r in rows) else 0
