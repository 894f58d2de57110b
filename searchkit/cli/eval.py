"""``searchkit eval``: index a dataset, run its queries, print or write the metrics (E4). Runs from
``searchkit.cli.commands.eval``."""
from __future__ import annotations

import argparse

from searchkit.cli import engine, judge
from searchkit.cli.dispatch import Verb

cmd_eval = Verb("searchkit.cli.commands.eval:cmd_eval")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pe = sub.add_parser("eval", help="index a dataset, run its queries, print metrics (or score another system's "
                        "TREC run with --run)")
    pe.add_argument("--dataset", required=True, help="dataset folder or name (datasets/ or ../shared/data): a plain "
                    "BEIR folder, TREC qrels or searchkit's own layout")
    pe.add_argument("--split", metavar="SPLIT", help="any split the dataset has (qrels/SPLIT.tsv; default: dev, else "
                    "the dataset's one split)")
    pe.add_argument("--run", metavar="FILE", help="score this TREC run file (qid Q0 docid rank score tag: Pyserini, "
                    "Elasticsearch, ColBERT, ... output) on the split instead of indexing: the same metrics and "
                    "breakdowns, no no-answer figures (a TREC run has no weak-match probability); --out writes it as a "
                    "run folder for compare, report and gate")
    pe.add_argument("--config", help="SearchConfig JSON file")
    pe.add_argument("--json", action="store_true", help="print one JSON object")
    pe.add_argument("--queries", action="store_true", help="with --json: include per-query outcomes")
    pe.add_argument("--out", metavar="DIR", help="also write a run folder: metrics.json (per-query values "
                    "included), run.trec, config.json, provenance.json (for `searchkit compare`)")
    pe.add_argument("--as-tool", action="store_true", help="rank through the history tool's path (scope, "
                    "privacy, kind diversity H8, at most 15 cards); needs records with 'space'")
    pe.add_argument("--metrics", action="append", metavar="NAMES",
                    help="the metrics to report (repeatable or a comma list): any ir_measures measure (AP,P@5,nDCG@20,"
                    "Judged@10; default: nDCG@10, RR@10, R@1/5/10/20/100; 'default' names those), ragas: add ragas' "
                    "ID-based context precision/recall at 10 beside ours; ragas-llm: ragas' LLM-judged faithfulness and "
                    "answer relevancy of an answer an LLM writes from each query's top cards (--llm-* flags; both need "
                    "the research extra)")
    judge.add_arguments(pe)
    pe.add_argument("--mlflow", metavar="URI", help="also log the eval to MLflow at this tracking URI (file:///path/mlruns, "
                    "a database or a server): params = the config's diff against the shipped default, metrics, "
                    "metrics.json / run.trec / config.json as artifacts (needs the mlflow extra)")
    pe.add_argument("--mlflow-experiment", metavar="NAME", default="searchkit",
                    help="with --mlflow: the experiment (default searchkit)")
    pe.add_argument("--quiet", action="store_true")
    engine.add_arguments(pe, what="the indexing step embeds passages")
    pe.set_defaults(func=cmd_eval)
