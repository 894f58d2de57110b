"""Progress bars end complete (issue 40 item 7): the last state of every tqdm bar an eval draws is
n/n, never 62/63. Hashing config on mini, in-process, progress on.

The BM25 index bar stops one short: ``BM25Builder.build`` (searchkit/index/bm25_build.py) feeds
``tqdm(docs)`` through ``np.fromiter(..., count=...)``, which stops pulling once it has ``count``
tokens, so tqdm never sees the request after the last document that would count it, and the bar is
never closed. The fix belongs to that file's owner (two lines after the ``np.fromiter``: ``if
show_progress: rows.update(n_docs - rows.n); rows.close()``); until it lands this test is a strict
xfail, so the fix turns it into a failure that asks for the marker to go.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from searchkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
HASHING = ROOT / "tests" / "data" / "hashing.json"
_BAR = re.compile(r"^(?P<desc>[^:|]+):\s+\d+%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)")


def last_states(stderr: str) -> dict[str, tuple[int, int]]:
    """``{bar description: (n, total)}`` of the last state each tqdm bar drew."""
    out: dict[str, tuple[int, int]] = {}
    for line in re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", stderr).replace("\r", "\n").splitlines():
        m = _BAR.match(line.strip())
        if m:
            out[m.group("desc").strip()] = (int(m.group("n")), int(m.group("total")))
    return out


def test_last_states_reads_tqdm_lines():
    text = "analyse:  50%|#####     | 1/2 [00:00<?, ?passage/s]\ranalyse: 100%|##########| 2/2 [00:00]\n" \
           "BM25 index:  98%|#########8| 62/63 [00:00<00:00]\n"
    assert last_states(text) == {"analyse": (2, 2), "BM25 index": (62, 63)}


@pytest.mark.xfail(strict=True, reason="BM25 index bar ends at n-1 (searchkit/index/bm25_build.py: fix proposed "
                   "to its owner in engineer K's issue 40 report)")
def test_every_bar_of_an_eval_ends_complete(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.chdir(ROOT)
    assert main(["eval", "--dataset", "mini", "--config", str(HASHING)]) == 0
    states = last_states(capsys.readouterr().err)
    assert {"analyse", "BM25 index", "queries mini"} <= set(states)
    assert {d: s for d, s in states.items() if s[0] != s[1]} == {}
