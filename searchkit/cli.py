"""The ``searchkit`` command: index, search, eval, config, history, tasks."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence


class CLIError(Exception):
    """An error the CLI prints as one line (exit status 2)."""


def _load_config(path: str | None):
    from searchkit.config import SearchConfig

    return SearchConfig.load(path) if path else SearchConfig()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4f}"
    return str(v)


def cmd_index(args: argparse.Namespace) -> int:
    from searchkit.searcher import Searcher

    from searchkit.index import store

    config = _load_config(args.config)
    if args.dataset:
        from searchkit.evaluate.datasets import load_dataset, resolve_dataset

        if args.update:
            raise CLIError("--update works with --workspace")
        where = resolve_dataset(args.dataset)
        store.check_target(args.out, [where])
        ds = load_dataset(where, split=args.split)
        records = ds.records
    elif args.workspace:
        store.check_target(args.out, [args.workspace])
        if args.update and not store.is_index(args.out):
            raise CLIError(f"--update: {args.out!r} holds no index to update; build one first (without --update)")
        return _index_workspace(args, config)
    else:
        raise CLIError("give --dataset DIR or --workspace DIR")
    s = Searcher.build(records, config, show_progress=not args.quiet)
    s.save(args.out)
    print(f"indexed {len(s.records)} records ({len(s.passages)} passages) into {args.out}", file=sys.stderr)
    return 0


def _index_workspace(args: argparse.Namespace, config) -> int:
    from searchkit.tools.history import HistoryIndex

    if args.update:
        idx = HistoryIndex.load(args.out, config if args.config else None)
        rep = idx.update(args.workspace, show_progress=not args.quiet)
        print(rep.line(), file=sys.stderr)
    else:
        idx = HistoryIndex.build(args.workspace, config, show_progress=not args.quiet)
    idx.save(args.out)
    s = idx.searcher
    print(f"indexed {len(s.records)} records ({len(s.passages)} passages) into {args.out}", file=sys.stderr)
    if idx.report is not None:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(idx.report.counts.items()))
        print(f"records by kind: {counts}", file=sys.stderr)
        for sk in idx.report.skips:
            print(f"skipped {sk.path_or_table}: {sk.rule}" + (f" ({sk.detail})" if sk.detail else ""), file=sys.stderr)
        for sk in idx.report.notes:
            print(f"note {sk.path_or_table}: {sk.rule}" + (f" ({sk.detail})" if sk.detail else ""), file=sys.stderr)
    return 0


def _shown(value: str, limit: int = 60) -> str:
    return repr(value) if len(value) <= limit else repr(value[: limit - 3] + "...")


def _kinds_arg(value: str | None) -> tuple[str, ...] | None:
    """``--kinds a,b`` checked against the record kinds (``doc`` for dataset documents)."""
    from searchkit.records import KINDS

    if value is None:
        return None
    kinds = tuple(k.strip() for k in value.split(","))
    valid = KINDS + ("doc",)
    bad = [k for k in kinds if k not in valid]
    if not value.strip() or bad:
        raise CLIError(f"--kinds: unknown kind {_shown(bad[0] if bad else value)}; valid kinds: {', '.join(valid)}")
    return tuple(dict.fromkeys(kinds))


def _date_arg(flag: str, value: str | None) -> str | None:
    """An ISO date (``YYYY-MM-DD``) or date-time for ``flag``."""
    import datetime as dt

    if value is None:
        return None
    try:
        if len(value) == 10:
            return dt.date.fromisoformat(value).isoformat()
        if len(value) <= 40:
            return dt.datetime.fromisoformat(value).isoformat()
    except ValueError:
        pass
    raise CLIError(f"{flag}: expected an ISO date (YYYY-MM-DD) or date-time, got {_shown(value)}")


def cmd_search(args: argparse.Namespace) -> int:
    from searchkit.searcher import Filters, Searcher

    kinds = _kinds_arg(args.kinds)
    since, until = _date_arg("--since", args.since), _date_arg("--until", args.until)
    if since and until and since >= until:
        raise CLIError(f"--until must be later than --since ({since}), got {until} (until is exclusive)")
    if not 1 <= args.k <= 1000:
        raise CLIError(f"--k must be from 1 to 1000, got {args.k}")
    config = _load_config(args.config) if args.config else None
    s = Searcher.load(args.index, config)
    filters = Filters(kinds=kinds, since=since, until=until)
    res = s.search(args.query, k=args.k, filters=filters)
    if args.json:
        print(json.dumps(res.to_dict(), ensure_ascii=False, indent=2))
        return 0
    for w in res.warnings:
        print(f"! {w.message}")
    for h in res.hits:
        parts = " ".join(f"{n}={h.scores[n]:.4f}(#{h.ranks[n]})" for n in sorted(h.scores))
        print(f"{h.rank:>3}. {h.score:.4f}  {h.record.ref or h.record.id}  {h.record.title[:60]}  [{parts}]")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.run import evaluate_dataset

    config = _load_config(args.config)
    ds = load_dataset(resolve_dataset(args.dataset), split=args.split)
    report = evaluate_dataset(ds, config, show_progress=not args.quiet and not args.json)
    if args.json:
        print(json.dumps(report.to_dict(with_queries=args.queries), ensure_ascii=False, indent=2))
        return 0
    c = report.counts
    print(f"dataset {report.dataset}  split {report.split}  config {report.config_fingerprint}")
    print(f"{c['records']} records; {c['queries']} queries ({c['answerable']} answerable, {c['unanswerable']} unanswerable)")
    rows = [("all", report.metrics)] + sorted(report.by_lang.items())
    names = list(report.metrics)
    print(f"{'':8}" + "".join(f"{n:>10}" for n in names))
    for label, m in rows:
        print(f"{label:8}" + "".join(f"{_fmt(m[n]):>10}" for n in names))
    na = report.no_answer
    print("no-answer: " + "  ".join(f"{k} {_fmt(v)}" for k, v in na.items()))
    t = report.timing
    print(f"index {t['index_s']:.1f}s; query p50 {t['query_ms_p50']:.1f} ms, p95 {t['query_ms_p95']:.1f} ms")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    from searchkit.config import SearchConfig

    if args.action == "show":
        cfg = _load_config(args.file)
        print(cfg.to_json())
    elif args.action == "validate":
        if not args.file:
            raise CLIError("config validate needs FILE")
        cfg = SearchConfig.load(args.file)
        print(f"{args.file}: valid (fingerprint {cfg.fingerprint()}, index fingerprint {cfg.index_fingerprint()})")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    """Fit the weak-match model on the tune half of eval runs; report on the other half."""
    if args.what == "fusion":
        return _tune_fusion(args)
    if not args.runs:
        raise CLIError("tune weak-match needs --runs (outputs of `searchkit eval --json --queries`)")
    from searchkit.evaluate.tune import DEFAULT_FEATURES, fit_weak_match, from_eval_json, half_of, score_weak_match

    rows = []
    for path in args.runs:
        try:
            rows.extend(from_eval_json(json.loads(Path(path).read_text(encoding="utf-8"))))
        except (OSError, json.JSONDecodeError) as exc:
            raise CLIError(f"cannot read eval run {path}: {exc}") from None
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    report = [r for r in rows if half_of(r.query_id) == "report"]
    features = tuple(args.features.split(",")) if args.features else DEFAULT_FEATURES
    wm = fit_weak_match(tune, features, C=args.C, target_false_warn=args.target_false_warn)
    base = _load_config(args.config)
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
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.tune import tune_fusion

    if not args.dataset:
        raise CLIError("tune fusion needs --dataset (one or more)")
    base = _load_config(args.config)
    datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
    trials = tune_fusion(datasets, base, show_progress=True)
    best = trials[0]
    table = [
        {"settings": t.settings, "tune_mean": round(t.tune_mean, 4), "report_mean": round(t.report_mean, 4),
         "report": {k: round(v, 4) for k, v in t.report.items()}}
        for t in trials
    ]
    if args.out:
        base.replace(**best.settings).save(args.out)
    print(json.dumps({"picked_on": "tune half (mean nDCG@10)", "best": table[0], "trials": table}, indent=2, ensure_ascii=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="searchkit", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    pi = sub.add_parser("index", help="build an index folder from a dataset or a workspace")
    src = pi.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="dataset folder (BEIR layout) or name")
    src.add_argument("--workspace", help="workspace folder (WORKSPACE.md layout)")
    pi.add_argument("--out", required=True, help="index folder to write (atomically)")
    pi.add_argument("--split", default="dev")
    pi.add_argument("--config", help="SearchConfig JSON file")
    pi.add_argument("--update", action="store_true", help="with --workspace: update the index at --out in place (H3)")
    pi.add_argument("--quiet", action="store_true", help="no progress bars")
    pi.set_defaults(func=cmd_index)

    ps = sub.add_parser("search", help="search an index folder")
    ps.add_argument("--index", required=True)
    ps.add_argument("query")
    ps.add_argument("--k", type=int, default=10)
    ps.add_argument("--kinds", help="comma-separated kinds")
    ps.add_argument("--since")
    ps.add_argument("--until")
    ps.add_argument("--config", help="query-time config (index part must match)")
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(func=cmd_search)

    pe = sub.add_parser("eval", help="index a dataset, run its queries, print metrics")
    pe.add_argument("--dataset", required=True, help="dataset folder or name (datasets/ or ../shared/data)")
    pe.add_argument("--split", default="dev", choices=["dev", "test"])
    pe.add_argument("--config", help="SearchConfig JSON file")
    pe.add_argument("--json", action="store_true", help="print one JSON object")
    pe.add_argument("--queries", action="store_true", help="with --json: include per-query outcomes")
    pe.add_argument("--quiet", action="store_true")
    pe.set_defaults(func=cmd_eval)

    pc = sub.add_parser("config", help="show or validate a SearchConfig")
    pc.add_argument("action", choices=["show", "validate"])
    pc.add_argument("file", nargs="?")
    pc.set_defaults(func=cmd_config)

    pt = sub.add_parser("tune", help="fit weak match (H11) or pick fusion settings on the tune half; report half held out")
    pt.add_argument("what", choices=["weak-match", "fusion"])
    pt.add_argument("--runs", nargs="+", help="weak-match: outputs of `searchkit eval --json --queries`")
    pt.add_argument("--dataset", action="append", help="fusion: a dataset to tune on (repeatable)")
    pt.add_argument("--config", help="base SearchConfig (default: the shipped one)")
    pt.add_argument("--features", help="comma-separated feature names (searchkit.rank.signals.FEATURES)")
    pt.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic model")
    pt.add_argument("--target-false-warn", type=float, help="cap on the false-warning rate of answerable queries")
    pt.add_argument("--out", help="write the tuned SearchConfig here")
    pt.set_defaults(func=cmd_tune)

    for mod in ("searchkit.tools.history_cli", "searchkit.tools.tasks_cli"):
        try:
            m = __import__(mod, fromlist=["add_subparsers"])
        except ImportError:
            continue
        before = set(sub.choices)
        m.add_subparsers(sub)
        for name in set(sub.choices) - before:
            if sub.choices[name].get_default("func") is None:
                sub.choices[name].set_defaults(func=m.run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from searchkit._omp import prefer_passive_wait
    from searchkit.index.embedders import EmbeddingError

    prefer_passive_wait()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc = args.func(args)
    except CLIError as exc:
        print(f"searchkit: {exc}", file=sys.stderr)
        return 2
    except EmbeddingError as exc:  # H16: an embedding provider (or all of them) failed: one line, no traceback
        print(f"searchkit {args.command}: embedding failed: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, OSError) as exc:
        print(f"searchkit {args.command}: {exc}", file=sys.stderr)
        return 2
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
