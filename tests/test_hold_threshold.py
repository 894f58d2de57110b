"""evals/hold_threshold.py (issue 28 item 1, SPEC H11): the documents threshold held to a
false-warning target on mini's dev split through the tool — lowered, never raised; the queries the
conversation model scored warn by its own threshold and count toward the target."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def hold():
    spec = importlib.util.spec_from_file_location("hold_threshold", ROOT / "evals" / "hold_threshold.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _q(p: float, answerable: bool, conversation: bool = False) -> dict:
    return {"answerable": answerable, "answer_probability": p, "signals": {"conversation_model": float(conversation)}}


def test_lowers_the_threshold_to_the_target(hold):
    # 20 answerable: 10% allows 2 warnings; four sit below the fitted 0.3
    queries = [_q(p, True) for p in (0.05, 0.1, 0.2, 0.25)] + [_q(0.9, True) for _ in range(16)] + [_q(0.01, False)]
    assert hold.false_warn_rate(queries, 0.3, None) == pytest.approx(0.2)
    t = hold.held_threshold(queries, 0.3, None, 0.10)
    assert t == 0.2  # warn when p < 0.2: 0.05 and 0.1
    assert hold.false_warn_rate(queries, t, None) == pytest.approx(0.1)


def test_never_raises_it(hold):
    queries = [_q(0.5, True) for _ in range(20)]
    assert hold.held_threshold(queries, 0.3, None, 0.10) == 0.3


def test_the_conversation_models_warnings_count(hold):
    # one answerable warned by the conversation model uses one of the two allowed
    queries = ([_q(0.1, True, conversation=True)] + [_q(p, True) for p in (0.05, 0.15, 0.2)]
               + [_q(0.9, True) for _ in range(16)])
    t = hold.held_threshold(queries, 0.3, 0.5, 0.10)
    assert t == 0.15
    assert hold.false_warn_rate(queries, t, 0.5) == pytest.approx(0.1)


def test_a_run_without_answerable_queries_is_refused(hold):
    with pytest.raises(ValueError, match="no answerable"):
        hold.held_threshold([_q(0.1, False)], 0.3, None, 0.1)
