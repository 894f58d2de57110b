"""Hold the documents model's threshold to a false-warning target on a workspace-shaped dev split.

Step 7 of `reproduce_defaults.sh` (issue 28 item 1, SPEC H11). `tune weak-match` picks each
threshold on the tune half of every set, and a set too small to hold a 10% rate alone is held to it
with the other small sets (mini's tune half has 13 answerable questions). The warning's target is
also stated for the whole of mini's dev split through the history tool: this step lowers the
documents threshold, never raises it, to the largest value at which that split's answerable
questions get at most ``--target`` warnings (the conversation model's threshold is kept). It reads
only the dev split's check run (step 6, `eval --dataset mini --split dev --as-tool --json
--queries`); mini's test split and the demo workspace's questions stay unseen by every choice.

    .venv/bin/python evals/hold_threshold.py --check runs/defaults/check_tuned_mini-dev.json \\
        --config runs/defaults/tuned.json --target 0.10 --out runs/defaults/tuned.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from searchkit.config import SearchConfig
from searchkit.util import FileProblem, atomic_write_text, read_json_file


def held_threshold(queries: list[dict], threshold: float, conv_threshold: float | None, target: float) -> float:
    """The largest documents threshold <= ``threshold`` whose false-warning rate over the run's
    answerable queries is <= ``target`` (queries the conversation model scored warn by its own
    threshold, which is kept)."""
    answerable = [q for q in queries if q.get("answerable")]
    if not answerable:
        raise ValueError("the check run holds no answerable query")
    docs = sorted(float(q["answer_probability"]) for q in answerable if not q["signals"].get("conversation_model"))
    conv_fw = sum(1 for q in answerable if q["signals"].get("conversation_model")
                  and conv_threshold is not None and float(q["answer_probability"]) < conv_threshold)
    allowed = int(target * len(answerable)) - conv_fw  # warnings the documents model may give
    if allowed < 0:
        raise ValueError("the conversation model alone exceeds the target on this run")
    if allowed >= len(docs):
        return threshold
    # warn when p < t: with t = docs[allowed], exactly the `allowed` lowest (ties aside) warn
    return min(threshold, docs[allowed])


def false_warn_rate(queries: list[dict], threshold: float, conv_threshold: float | None) -> float:
    answerable = [q for q in queries if q.get("answerable")]
    warned = 0
    for q in answerable:
        t = conv_threshold if q["signals"].get("conversation_model") else threshold
        warned += t is not None and float(q["answer_probability"]) < t
    return warned / len(answerable)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", type=Path, required=True, help="eval --as-tool --json --queries of mini's dev split")
    ap.add_argument("--config", type=Path, required=True, help="the tuned config")
    ap.add_argument("--target", type=float, default=0.10)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    try:
        run = read_json_file(args.check)
        cfg = SearchConfig.from_dict(read_json_file(args.config))
    except (FileProblem, ValueError) as exc:
        print(f"hold_threshold: {exc}", file=sys.stderr)
        return 2
    if run.get("dataset") != "mini" or run.get("split") != "dev" or run.get("path") != "tool":
        print(f"hold_threshold: {args.check} is not mini's dev split through the tool", file=sys.stderr)
        return 2
    if run.get("config_fingerprint") != cfg.fingerprint():
        print(f"hold_threshold: {args.check} was not run with {args.config}", file=sys.stderr)
        return 2
    wm = cfg.weak_match
    conv_t = wm.conversation.threshold if wm.conversation is not None else None
    try:
        new = held_threshold(run["queries"], wm.threshold, conv_t, args.target)
    except (KeyError, ValueError) as exc:
        print(f"hold_threshold: {args.check}: {exc}", file=sys.stderr)
        return 2
    before = false_warn_rate(run["queries"], wm.threshold, conv_t)
    after = false_warn_rate(run["queries"], new, conv_t)
    out = dataclasses.replace(cfg, weak_match=dataclasses.replace(wm, threshold=new))
    atomic_write_text(args.out, out.to_json())
    print(json.dumps({"threshold_before": wm.threshold, "threshold_after": new, "target": args.target,
                      "mini_dev_false_warn_before": before, "mini_dev_false_warn_after": after}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
