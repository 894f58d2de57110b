"""The labelled questions about the demo workspace, asked through the history tool.

`searchkit eval` reads BEIR-style datasets; a workspace (WORKSPACE.md) is folders of chats, digests,
files, logs, pages, sources and app tables with members and switches. This asks the labelled
queries of a query folder (default `datasets/demo-workspace-queries`) about a workspace (default
`datasets/demo-workspace`) as each query's caller, in its space, through `HistoryIndex.search`
(`searchkit.evaluate.workspace_eval`), and prints the no-answer figures: AUROC, warning recall
(unanswerable queries warned) and false warnings (answerable queries warned), overall and for each
weak-match model. `--json FILE` writes the report as `searchkit eval --json --queries` does, which
`searchkit tune weak-match --runs` reads. Usage:

    .venv/bin/python evals/eval_workspace.py [--config FILE] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default=str(ROOT / "datasets" / "demo-workspace"))
    ap.add_argument("--queries", default=str(ROOT / "datasets" / "demo-workspace-queries"))
    ap.add_argument("--config", help="SearchConfig JSON file (default: the shipped one)")
    ap.add_argument("--json", help="write the report (per-query rows included) here")
    args = ap.parse_args()
    from searchkit.config import SearchConfig
    from searchkit.evaluate.workspace_eval import evaluate_workspace, load_queries
    from searchkit.tools.history import HistoryIndex
    from searchkit.util import atomic_write_text

    config = SearchConfig.load(args.config) if args.config else SearchConfig()
    labelled = load_queries(args.queries)
    report = evaluate_workspace(HistoryIndex.build(args.workspace, config), labelled)
    data = report.to_dict(with_queries=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    na = report.no_answer
    print(f"{labelled.name}: {report.counts['answerable']} answerable, {report.counts['unanswerable']} unanswerable; "
          f"nDCG@10 {report.metrics['nDCG@10']:.4f}; AUROC {na['AUROC']:.4f}  warn-recall {na['warn-recall']:.4f}  "
          f"false-warn-rate {na['false-warn-rate']:.4f}")
    for model in ("documents", "conversation"):
        mine = [q for q in data["queries"] if (q["signals"].get("conversation_model", 0.0) >= 0.5) == (model == "conversation")]
        ans = [q for q in mine if q["answerable"]]
        una = [q for q in mine if not q["answerable"]]
        print(f"  {model} model: {len(ans)} answerable ({sum(q['weak_match'] for q in ans)} warned), "
              f"{len(una)} unanswerable ({sum(q['weak_match'] for q in una)} warned)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
