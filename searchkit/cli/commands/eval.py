"""``searchkit eval``: index a dataset, run its queries, print or write the metrics (E4)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Mapping

from searchkit import strict_json
from searchkit.cli.commands import engine, judge
from searchkit.cli.common import fmt, load_config
from searchkit.config import SearchConfig
from searchkit.errors import InputError, SearchkitError
from searchkit.evaluate import endpoint_check, mlflow_log, ragas_metrics
from searchkit.evaluate import run as eval_run
from searchkit.evaluate.any_run import open_dataset, trec_file_provenance
from searchkit.evaluate.measures import metrics_option
from searchkit.evaluate.metrics import ranking_metrics
from searchkit.evaluate.datasets import Dataset
from searchkit.evaluate.run import EvalReport
from searchkit.evaluate.runs import check_run_target, write_run
from searchkit.evaluate.trec import read_trec_run
from searchkit.evaluate.trec_runs import evaluate_trec_run
from searchkit.util import check_folder_target, write_failure_line


def cmd_eval(args: argparse.Namespace) -> int:
    if args.run:
        return _eval_trec_run(args)
    config = load_config(args.config)
    if args.out:
        check_folder_target(args.out, "--out")  # what the path is: a link loop, a FIFO (issue 39 item 6)
        check_run_target(args.out)  # what the folder holds; both refused before anything is indexed
    choice = metrics_option(args.metrics)  # a bad name: one line naming it (InputError), before any indexing
    if choice.ragas and not ragas_metrics.is_available():
        raise InputError(ragas_metrics.INSTALL_HINT, usage=True)
    if args.mlflow:
        mlflow_log.check_uri(args.mlflow)  # before anything is indexed
        if not mlflow_log.is_available():
            raise InputError(mlflow_log.INSTALL_HINT, usage=True)
    llm_judge = judge.judge_from_args(args, choice)  # None unless --metrics ragas-llm
    if llm_judge is not None:
        endpoint_check.check_llm(llm_judge)  # one cheap request now, not after the eval (issue 40 item 7)
    endpoint_check.check_reranker(config)  # rerank.method http: one /rerank request first
    ds = open_dataset(args.dataset, args.split)  # any split name; none given: dev, else the dataset's one split
    print_notes(ds)
    with engine.engine_scope(args):
        report = eval_run.evaluate_dataset(ds, config, show_progress=not args.quiet and not args.json,
                                           as_tool=args.as_tool, metrics=choice.ranking)
    body = report.to_dict(with_queries=True)
    if choice.ragas:
        body["ragas"] = _ragas_block(report, ds, body["queries"], k=choice.ragas_k or 10)
    if llm_judge is not None:
        body["ragas_llm"] = judge.judge_block(llm_judge, args, report, ds, config, body["queries"])
    if args.out:
        _write(args.out, report, ds, config, body)
    if args.mlflow:
        run_id = mlflow_log.log_eval(args.mlflow, report, config, body, experiment=args.mlflow_experiment,
                                     run_name=Path(args.out).name if args.out else None)
        print(f"logged to MLflow {mlflow_log.shown_uri(args.mlflow)}: experiment {args.mlflow_experiment}, run {run_id}",
              file=sys.stderr)
    if args.json:
        if not args.queries:
            body.pop("queries")
        print(strict_json.dumps(body))
        return 0
    _print_eval_table(report, body)
    return 0


def print_notes(ds: object) -> None:
    """What the loader inferred about the dataset (detected languages, inferred answerable), one
    ``searchkit eval: note:`` line each on stderr."""
    for note in getattr(ds, "notes", ()):
        print(f"searchkit eval: note: {note}", file=sys.stderr)


def _write(out: str, report: EvalReport, ds: Dataset, config: SearchConfig | None, body: dict[str, Any],
           **extra: Mapping[str, Any] | None) -> None:
    check_folder_target(out, "--out")  # again: the eval took a while
    try:
        where = write_run(out, report, ds, config, metrics=body, **extra)
    except SearchkitError:
        raise
    except OSError as exc:  # no permission, a full disk: one line naming the flag, never a raw [Errno N]
        raise InputError(write_failure_line("--out", out, exc), usage=True) from None
    print(f"wrote run folder {where} (metrics.json, run.trec, config.json, provenance.json)", file=sys.stderr)


_NOT_WITH_RUN = (("config", "--config"), ("as_tool", "--as-tool"), ("mlflow", "--mlflow"))


def _eval_trec_run(args: argparse.Namespace) -> int:
    """``eval --run FILE``: another system's TREC run scored on the split with our metrics and
    breakdowns (``trec_runs.evaluate_trec_run``); no no-answer figures (no weak-match probability)."""
    for attr, flag in _NOT_WITH_RUN:
        if getattr(args, attr):
            raise InputError(f"{flag} does not go with --run: a TREC run file holds another system's rankings, "
                           "scored as they are", usage=True)
    choice = metrics_option(args.metrics)  # a bad name: one line naming it
    if choice.ragas_llm:
        raise InputError("--metrics ragas-llm does not go with --run: a TREC run holds document ids only, no cards an "
                       "LLM could judge", usage=True)
    judge.judge_from_args(args, choice)  # an --llm-* flag without ragas-llm: one line
    if choice.ragas and not ragas_metrics.is_available():
        raise InputError(ragas_metrics.INSTALL_HINT, usage=True)
    if args.out:
        check_folder_target(args.out, "--out")
        check_run_target(args.out)
    run = read_trec_run(args.run)  # every bad line named (file:line: why), before the dataset is read
    ds = open_dataset(args.dataset, args.split)
    print_notes(ds)
    report = evaluate_trec_run(run, ds, metrics=choice.ranking)
    body = report.to_dict(with_queries=True)
    if choice.ragas:
        body["ragas"] = _ragas_block(report, ds, body["queries"], k=choice.ragas_k or 10)
    if args.out:
        _write(args.out, report, ds, None, body, extra_provenance=trec_file_provenance(args.run, run))
    if args.json:
        if not args.queries:
            body.pop("queries")
        print(strict_json.dumps(body))
        return 0
    _print_eval_table(report, body, run_file=args.run)
    return 0


def _ragas_block(report: EvalReport, ds: Dataset, rows: list[dict[str, Any]], k: int = 10) -> dict[str, Any]:
    """ragas' ID-based context precision / recall at ``k`` beside our P@k / R@k (same queries)."""
    qrels = {q: dict(ds.qrels.get(q, {})) for q in report.per_query}
    scores = ragas_metrics.ragas_scores(report.run(), qrels, k=k)
    for row in rows:
        row["ragas"] = scores.get(row["id"])
    return {"k": k, "mean": ragas_metrics.ragas_summary(scores),
            "ours": ranking_metrics(qrels, report.run(), [f"P@{k}", f"R@{k}"]), "queries": len(scores)}


def _print_eval_table(report: EvalReport, body: dict[str, Any], run_file: str | None = None) -> None:
    c = report.counts
    print(f"dataset {report.dataset}  split {report.split}  config {report.config_fingerprint}  path {report.path}")
    print(f"{c['records']} records; {c['queries']} queries ({c['answerable']} answerable, {c['unanswerable']} unanswerable)")
    judged = [q for q in body["queries"] if q.get("metrics") is not None]
    rows = [("all", len(judged), report.metrics)]
    for name, groups in report.breakdowns().items():
        label = name.removeprefix("by_").replace("_", "-")
        for g, m in groups.items():
            n = sum(1 for q in judged if g in eval_run.BREAKDOWNS[name](q))
            rows.append((f"{label} {g}", n, m))
    names = list(report.metrics)
    width = max(8, *(len(r[0]) + 1 for r in rows))
    print(f"{'':{width}}{'n':>4}" + "".join(f"{n:>9}" for n in names))
    for label, n, m in rows:
        print(f"{label:{width}}{n:>4}" + "".join(f"{fmt(m[x]):>9}" for x in names))
    na = report.no_answer
    if run_file is not None:
        print("no-answer: none (a TREC run has no weak-match probability)")
    else:
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
    if run_file is not None:
        print(f"TREC run {run_file}: queries of the split it does not rank (each scored 0): {c.get('unranked_queries', 0)}; "
              f"its queries outside the split: {c.get('run_queries_outside_split', 0)}; documents not in the corpus: "
              f"{c.get('unknown_documents', 0)}")
        return
    t = report.timing
    print(f"index {t['index_s']:.1f}s; query p50 {t['query_ms_p50']:.1f} ms, p95 {t['query_ms_p95']:.1f} ms")

