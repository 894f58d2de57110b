"""Write (or check) a gate baseline measured through the history tool (``eval --as-tool``).

`searchkit gate --update` measures the Searcher; the weak-match warning's false-warning rate is
reported and gated through the history tool (issue 39 item 10), so its baseline
(`evals/baselines/mini-dev-tool.json`) is written here with the same library calls the gate uses
(`evaluate.gate.measure` with path `tool`, `baseline_from_report`, `write_baseline`; the gated
figures: nDCG@10, RR@10, R@100, AUROC and the false-warning rate). To check a change against it:

    .venv/bin/searchkit eval --dataset mini --split dev --as-tool --out runs/mini-dev-tool --quiet
    .venv/bin/searchkit gate --baseline evals/baselines/mini-dev-tool.json --run runs/mini-dev-tool

Usage: .venv/bin/python evals/tool_baseline.py --baseline evals/baselines/mini-dev-tool.json \\
           --dataset mini --split dev [--config FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from searchkit.config import SearchConfig
from searchkit.evaluate import gate
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.util import read_json_file


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--config", type=Path, help="default: the shipped config")
    args = ap.parse_args()
    try:
        config = SearchConfig.from_dict(read_json_file(args.config)) if args.config else SearchConfig()
        ds = load_dataset(resolve_dataset(args.dataset), split=args.split)
        report = gate.measure(ds, config, path="tool")
        doc = gate.baseline_from_report(report, ds, config, name=args.baseline.stem, gated=gate.DEFAULT_GATED)
    except (OSError, ValueError) as exc:
        print(f"tool_baseline: {exc}", file=sys.stderr)
        return 2
    gate.write_baseline(args.baseline, doc)
    fw = doc["figures"][gate.FALSE_WARN]
    print(f"tool_baseline: wrote {args.baseline} ({ds.name} {ds.split} through the tool, "
          f"{len(ds.queries)} queries, false-warn-rate {fw}, config {config.fingerprint()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
