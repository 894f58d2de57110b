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
        from searchkit.evaluate.datasets import load_corpus, resolve_dataset

        if args.update:
            raise CLIError("--update works with --workspace")
        where = resolve_dataset(args.dataset)
        store.check_target(args.out, [where])
        records = load_corpus(where)  # an index needs the corpus only: no queries, qrels or splits
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
    if args.out:
        from searchkit.evaluate.runs import check_run_target

        check_run_target(args.out)  # refused before anything is indexed
    if args.metrics == "ragas":
        from searchkit.evaluate.ragas_metrics import INSTALL_HINT, is_available

        if not is_available():
            raise CLIError(INSTALL_HINT)
    ds = load_dataset(resolve_dataset(args.dataset), split=args.split)
    report = evaluate_dataset(ds, config, show_progress=not args.quiet and not args.json, as_tool=args.as_tool)
    body = report.to_dict(with_queries=True)
    if args.metrics == "ragas":
        body["ragas"] = _ragas_block(report, ds, body["queries"])
    if args.out:
        from searchkit.evaluate.runs import write_run

        where = write_run(args.out, report, ds, config, metrics=body)
        print(f"wrote run folder {where} (metrics.json, run.trec, config.json, provenance.json)", file=sys.stderr)
    if args.json:
        if not args.queries:
            body.pop("queries")
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    _print_eval_table(report, body)
    return 0


def _ragas_block(report, ds, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """ragas' ID-based context precision / recall at 10 beside ranx's P@10 / R@10 (same queries)."""
    from searchkit.evaluate.metrics import ranking_metrics
    from searchkit.evaluate.ragas_metrics import ragas_scores, ragas_summary

    k = 10
    qrels = {q: dict(ds.qrels.get(q, {})) for q in report.per_query}
    scores = ragas_scores(report.run(), qrels, k=k)
    for row in rows:
        row["ragas"] = scores.get(row["id"])
    return {"k": k, "mean": ragas_summary(scores), "ours": ranking_metrics(qrels, report.run(), [f"P@{k}", f"R@{k}"]),
            "queries": len(scores)}


def _print_eval_table(report, body: dict[str, Any]) -> None:
    from searchkit.evaluate.run import BREAKDOWNS

    c = report.counts
    print(f"dataset {report.dataset}  split {report.split}  config {report.config_fingerprint}  path {report.path}")
    print(f"{c['records']} records; {c['queries']} queries ({c['answerable']} answerable, {c['unanswerable']} unanswerable)")
    judged = [q for q in body["queries"] if q.get("metrics") is not None]
    rows = [("all", len(judged), report.metrics)]
    for name, groups in report.breakdowns().items():
        label = name.removeprefix("by_").replace("_", "-")
        for g, m in groups.items():
            n = sum(1 for q in judged if g in BREAKDOWNS[name](q))
            rows.append((f"{label} {g}", n, m))
    names = list(report.metrics)
    width = max(8, *(len(r[0]) + 1 for r in rows))
    print(f"{'':{width}}{'n':>4}" + "".join(f"{n:>9}" for n in names))
    for label, n, m in rows:
        print(f"{label:{width}}{n:>4}" + "".join(f"{_fmt(m[x]):>9}" for x in names))
    na = report.no_answer
    print("no-answer: " + "  ".join(f"{k} {_fmt(v)}" for k, v in na.items()))
    mi = report.missing_id
    if mi.get("queries"):
        print(f"missing-ID warning (H12), {mi['queries']} queries naming an id, {mi['id_absent']} absent from the corpus: "
              f"precision {_fmt(mi['precision'])}  recall {_fmt(mi['recall'])}  false-warn-rate {_fmt(mi['false-warn-rate'])}")
    if "ragas" in body:
        rg = body["ragas"]
        k = rg["k"]
        print(f"ragas (k={k}, {rg['queries']} queries): ID context precision {_fmt(rg['mean'][f'ragas:id_context_precision@{k}'])} "
              f"(ours P@{k} {_fmt(rg['ours'][f'P@{k}'])}), ID context recall {_fmt(rg['mean'][f'ragas:id_context_recall@{k}'])} "
              f"(ours R@{k} {_fmt(rg['ours'][f'R@{k}'])})")
    t = report.timing
    print(f"index {t['index_s']:.1f}s; query p50 {t['query_ms_p50']:.1f} ms, p95 {t['query_ms_p95']:.1f} ms")


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare run folders against the first: per metric and breakdown, with paired tests."""
    from searchkit.evaluate.compare import compare_runs, render
    from searchkit.evaluate.runs import load_run

    runs = [load_run(p) for p in args.runs]
    cmp = compare_runs(runs, test=args.test, alpha=args.alpha, seed=args.seed)
    if args.json:
        print(json.dumps(cmp.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(render(cmp), end="")
    return 0


def cmd_gate(args: argparse.Namespace) -> int:
    """E5: run (or read) each baseline's eval and exit 1 on a significant drop beyond tolerance."""
    import time

    from searchkit.evaluate import gate
    from searchkit.evaluate.datasets import DatasetError, load_dataset, resolve_dataset
    from searchkit.evaluate.provenance import dataset_hash
    from searchkit.evaluate.run import evaluate_dataset

    t0 = time.perf_counter()
    if args.run and len(args.baseline) != 1:
        raise CLIError("--run goes with exactly one --baseline")
    if (args.dataset or args.split) and not args.update:
        raise CLIError("--dataset and --split name what --update measures; a check reads them from the baseline")
    rows, skipped = [], []
    for path in args.baseline:
        old = None if args.update and not Path(path).exists() else gate.read_baseline(path)
        name = Path(path).stem
        ds_name = args.dataset or (old or {}).get("dataset")
        split = args.split or (old or {}).get("split") or "dev"
        if ds_name is None:
            raise CLIError(f"--update of a new baseline {path!r} needs --dataset (and --split)")
        try:
            where = resolve_dataset(ds_name)
        except DatasetError as exc:
            if args.skip_missing:
                skipped.append(f"gate: skipped {name}: {' '.join(str(exc).split())[:200]}")
                continue
            raise
        ds = load_dataset(where, split=split)
        if args.update:
            config = _load_config(args.config)
            report = evaluate_dataset(ds, config, show_progress=not args.quiet)
            gate.write_baseline(path, gate.baseline_from_report(report, ds, config, name=name,
                                                                gated=(old or {}).get("gated")))
            print(f"gate: wrote {path} ({ds.name} {ds.split}, {len(ds.queries)} queries, config {config.fingerprint()})")
            continue
        if dataset_hash(ds) != old["dataset_sha256"]:
            raise CLIError(f"{path}: dataset {ds_name!r} {split} changed since the baseline was written "
                           "(content hash differs); review it, then rewrite the baseline with --update")
        if args.run:
            from searchkit.evaluate.runs import load_run

            run = load_run(args.run)
            if run.query_set[2] != old["dataset_sha256"]:
                raise CLIError(f"{args.run} was measured on other data than {path} (dataset hash differs)")
            now = gate.now_figures(run.metrics)
        else:
            from searchkit.config import SearchConfig

            config = _load_config(args.config) if args.config else SearchConfig.from_dict(old["config"])
            now = gate.now_figures(evaluate_dataset(ds, config, show_progress=not args.quiet).to_dict(with_queries=True))
        rows.extend(gate.check(old, now, label=name))
    for line in skipped:
        print(line)
    if args.update:
        return 0
    if args.json:
        print(json.dumps({"rows": [r.to_dict() for r in rows], "skipped": skipped,
                          "failed": any(r.failed for r in rows)}, ensure_ascii=False, indent=2))
    elif rows:
        print(gate.render(rows))
    print(f"gate: {len(args.baseline) - len(skipped)} baseline(s) in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 1 if any(r.failed for r in rows) else 0


def cmd_config(args: argparse.Namespace) -> int:
    """show | validate | schema | export | verify (SPEC E6).

    ``validate`` exits 1 when the file is invalid (every problem on its own line), 2 when it cannot
    be read; ``verify`` exits 1 when a ranking differs, 3 when the replay dataset changed."""
    from searchkit import export

    if args.action == "show":
        cfg = export.load_config(args.file) if args.file else _load_config(None)
        print(cfg.to_json())
    elif args.action == "schema":
        from searchkit.config import schema_text

        sys.stdout.write(schema_text())
    elif args.action == "validate":
        cfg, problems, notes = export.validate_file(args.file)
        for note in notes:
            print(f"note: {note}")
        if problems:
            n = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
            print(f"{args.file}: invalid, {n}:")
            for p in problems:
                print(f"  {p}")
            print(f"searchkit config validate: {args.file} is invalid ({n}, listed above)", file=sys.stderr)
            return 1
        print(f"{args.file}: valid (fingerprint {cfg.fingerprint()}, index fingerprint {cfg.index_fingerprint()})")
    elif args.action == "export":
        path = export.export_config(
            args.tuned, args.out, name=args.name,
            replay_dataset=args.replay_dataset or export.DEFAULT_REPLAY[0],
            replay_split=args.replay_split or export.DEFAULT_REPLAY[1],
            runs=args.runs or (), tuned_on=args.tuned_on or (), show_progress=not args.quiet,
        )
        doc = json.loads(path.read_text(encoding="utf-8"))
        rb = doc["replay"]
        print(f"{path}: version {doc['version']}, config {doc['config_fingerprint']}, index {doc['index_fingerprint']}, "
              f"replay {rb['dataset']}/{rb['split']} {rb['queries']} queries (sha256 {rb['rankings_sha256'][:16]})")
    elif args.action == "verify":
        v = export.verify(args.file, dataset=args.dataset, show_progress=not args.quiet)
        for pkg, (was, now) in v.version_changes.items():
            print(f"warning: {pkg} {was or 'absent'} at export, {now or 'absent'} now")
        if v.status == "dataset_changed":
            print(f"dataset changed: {v.dataset}/{v.split} content sha256 {v.dataset_sha256[:16]}, recorded "
                  f"{v.recorded_sha256[:16]}; the replay cannot be compared (give the exported data with --dataset)")
            return 3
        if v.status == "differs":
            print(f"replay differs: {len(v.diffs)} of {v.queries} queries rank differently"
                  + (f", {len(v.missing)} queries missing or new" if v.missing else ""))
            for d in v.diffs[: args.show]:
                line = f"  {d.query_id} {d.text[:60]!r}: now {list(d.got)}"
                if d.expected is not None:
                    line += f", recorded {list(d.expected)}"
                print(line)
            return 1
        print(f"replay identical: {v.queries} queries")
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
    import logging

    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.tune import fusion_significance, tune_fusion

    if not args.dataset:
        raise CLIError("tune fusion needs --dataset (one or more)")
    if not args.quiet:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    base = _load_config(args.config)
    datasets = [load_dataset(resolve_dataset(d), split="dev") for d in args.dataset]
    trials = tune_fusion(datasets, base, show_progress=not args.quiet)
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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (usage is in ``--help``), cut short so a huge argument is
    never echoed back."""

    def error(self, message: str) -> None:  # type: ignore[override]
        message = " ".join(message.split())
        if len(message) > 300:
            message = message[:297] + "..."
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="searchkit", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    pi = sub.add_parser("index", help="build an index folder from a dataset or a workspace")
    src = pi.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="dataset folder (BEIR layout) or name")
    src.add_argument("--workspace", help="workspace folder (WORKSPACE.md layout)")
    pi.add_argument("--out", required=True, help="index folder to write (atomically)")
    pi.add_argument("--split", default="dev", help=argparse.SUPPRESS)  # ignored: an index reads the corpus only
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
    pe.add_argument("--out", metavar="DIR", help="also write a run folder: metrics.json (per-query values "
                    "included), run.trec, config.json, provenance.json (for `searchkit compare`)")
    pe.add_argument("--as-tool", action="store_true", help="rank through the history tool's path (scope, "
                    "privacy, kind diversity H8, at most 15 cards); needs records with 'space'")
    pe.add_argument("--metrics", choices=["ragas"], help="ragas: add ragas' ID-based context precision/recall "
                    "at 10 beside ours (needs the research extra)")
    pe.add_argument("--quiet", action="store_true")
    pe.set_defaults(func=cmd_eval)

    pm = sub.add_parser("compare", help="compare run folders (eval --out) against the first, with paired tests")
    pm.add_argument("runs", nargs="+", metavar="RUN", help="run folders; the first is the baseline")
    pm.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="paired test over queries: Fisher's randomization test (default) or Student's t")
    pm.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pm.add_argument("--seed", type=int, default=42, help="seed of the randomization test and the bootstrap")
    pm.add_argument("--json", action="store_true", help="print one JSON object")
    pm.set_defaults(func=cmd_compare)

    pg = sub.add_parser("gate", help="regression gate (E5): exit 1 when a gated metric drops significantly below its baseline")
    pg.add_argument("--baseline", action="append", required=True, metavar="FILE",
                    help="a baseline file (evals/baselines/NAME.json); repeatable")
    pg.add_argument("--run", help="read this run folder (eval --out) instead of running the eval")
    pg.add_argument("--config", help="gate this config instead of the baseline's (with --update: the config to record)")
    pg.add_argument("--update", action="store_true", help="rewrite the baseline(s) on purpose (records commit and date)")
    pg.add_argument("--dataset", help="with --update of a new baseline: the dataset it measures")
    pg.add_argument("--split", choices=["dev", "test"], help="with --update of a new baseline: the split")
    pg.add_argument("--skip-missing", action="store_true",
                    help="skip, with one line, a baseline whose dataset is not on this machine (../shared/data)")
    pg.add_argument("--json", action="store_true")
    pg.add_argument("--quiet", action="store_true", help="no progress bars")
    pg.set_defaults(func=cmd_gate)

    pc = sub.add_parser("config", help="show, validate, export or verify a SearchConfig")
    pcs = pc.add_subparsers(dest="action", required=True)
    c = pcs.add_parser("show", help="print a config (default: the shipped one) as JSON")
    c.add_argument("file", nargs="?", help="a config JSON or an exported file")
    c = pcs.add_parser("validate", help="list every problem of a config file (exit 1 when invalid, 2 unreadable)")
    c.add_argument("file", help="a config JSON or an exported file")
    pcs.add_parser("schema", help="print the JSON Schema of the config file")
    c = pcs.add_parser("export", help="write DIR/NAME.v<N>.json: config, fingerprints, provenance, replay")
    c.add_argument("tuned", help="the tuned config (bare JSON or an earlier export)")
    c.add_argument("--out", required=True, help="folder of the exported versions")
    c.add_argument("--name", help="base name of the file (default: TUNED's)")
    c.add_argument("--replay-dataset", help="dataset replayed (default: mini)")
    c.add_argument("--replay-split", choices=["dev", "test"], help="its split (default: dev)")
    c.add_argument("--runs", nargs="+", metavar="RUN_DIR", help="run folders (eval --out) the config was reported on")
    c.add_argument("--tuned-on", nargs="+", metavar="DATASET", help="datasets whose dev tune half it was tuned on")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    c = pcs.add_parser("verify", help="re-run an export's replay; exit 1 on any ranking difference")
    c.add_argument("file", help="an exported file")
    c.add_argument("--dataset", help="the replay dataset's folder, when it is not where the file says")
    c.add_argument("--show", type=int, default=5, help="how many differing queries to print")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
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
    pt.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="fusion: paired test of the winner against the runner-up and RRF (tune half)")
    pt.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
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
