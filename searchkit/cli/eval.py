"""``searchkit eval``: index a dataset, run its queries, print or write the metrics (E4)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from searchkit import strict_json
from searchkit.cli import engine, judge
from searchkit.cli.common import CLIError, fmt, load_config


def add_parser(sub: Any) -> None:
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
    pe.add_argument("--metrics", choices=["ragas", "ragas-llm"], help="ragas: add ragas' ID-based context "
                    "precision/recall at 10 beside ours; ragas-llm: ragas' LLM-judged faithfulness and answer relevancy "
                    "of an answer an LLM writes from each query's top cards (--llm-* flags; both need the research extra)")
    judge.add_arguments(pe)
    pe.add_argument("--mlflow", metavar="URI", help="also log the eval to MLflow at this tracking URI (file:///path/mlruns, "
                    "a database or a server): params = the config's diff against the shipped default, metrics, "
                    "metrics.json / run.trec / config.json as artifacts (needs the mlflow extra)")
    pe.add_argument("--mlflow-experiment", metavar="NAME", default="searchkit",
                    help="with --mlflow: the experiment (default searchkit)")
    pe.add_argument("--quiet", action="store_true")
    engine.add_arguments(pe, what="the indexing step embeds passages")
    pe.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.run import evaluate_dataset

    config = load_config(args.config)
    if args.out:
        from searchkit.evaluate.runs import check_run_target

        check_run_target(args.out)  # refused before anything is indexed
    if args.metrics == "ragas":
        from searchkit.evaluate.ragas_metrics import INSTALL_HINT, is_available

        if not is_available():
            raise CLIError(INSTALL_HINT)
    if args.mlflow:
        from searchkit.evaluate.mlflow_log import INSTALL_HINT as MLFLOW_HINT
        from searchkit.evaluate.mlflow_log import check_uri
        from searchkit.evaluate.mlflow_log import is_available as mlflow_available

        check_uri(args.mlflow)  # before anything is indexed
        if not mlflow_available():
            raise CLIError(MLFLOW_HINT)
    llm_judge = judge.judge_from_args(args)  # None unless --metrics ragas-llm
    ds = load_dataset(resolve_dataset(args.dataset), split=args.split)
    with engine.engine_scope(args):
        report = evaluate_dataset(ds, config, show_progress=not args.quiet and not args.json, as_tool=args.as_tool)
    body = report.to_dict(with_queries=True)
    if args.metrics == "ragas":
        body["ragas"] = _ragas_block(report, ds, body["queries"])
    if llm_judge is not None:
        body["ragas_llm"] = judge.judge_block(llm_judge, args, report, ds, config, body["queries"])
    if args.out:
        from searchkit.evaluate.runs import write_run

        where = write_run(args.out, report, ds, config, metrics=body)
        print(f"wrote run folder {where} (metrics.json, run.trec, config.json, provenance.json)", file=sys.stderr)
    if args.mlflow:
        from pathlib import Path

        from searchkit.evaluate.mlflow_log import log_eval, shown_uri

        run_id = log_eval(args.mlflow, report, config, body, experiment=args.mlflow_experiment,
                          run_name=Path(args.out).name if args.out else None)
        print(f"logged to MLflow {shown_uri(args.mlflow)}: experiment {args.mlflow_experiment}, run {run_id}", file=sys.stderr)
    if args.json:
        if not args.queries:
            body.pop("queries")
        print(strict_json.dumps(body))
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
        print(f"{label:{width}}{n:>4}" + "".join(f"{fmt(m[x]):>9}" for x in names))
    na = report.no_answer
    print("no-answer: " + "  ".join(f"{k} {fmt(v)}" for k, v in na.items()))
    mi = report.missing_id
    if mi.get("queries"):
        print(f"missing-ID warning (H12), {mi['queries']} queries naming an id, {mi['id_absent']} absent from the corpus: "
              f"precision {fmt(mi['precision'])}  recall {fmt(mi['recall'])}  false-warn-rate {fmt(mi['false-warn-rate'])}")
    if "ragas" in body:
        rg = body["ragas"]
        k = rg["k"]
        print(f"ragas (k={k}, {rg['queries']} queries): ID context precision {fmt(rg['mean'][f'ragas:id_context_precision@{k}'])} "
              f"(ours P@{k} {fmt(rg['ours'][f'P@{k}'])}), ID context recall {fmt(rg['mean'][f'ragas:id_context_recall@{k}'])} "
              f"(ours R@{k} {fmt(rg['ours'][f'R@{k}'])})")
    if "ragas_llm" in body:
        judge.print_block(body["ragas_llm"])
    t = report.timing
    print(f"index {t['index_s']:.1f}s; query p50 {t['query_ms_p50']:.1f} ms, p95 {t['query_ms_p95']:.1f} ms")

