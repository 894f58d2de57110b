"""Progress bars end complete (issue 40 item 7): the last state of every tqdm bar an eval draws is
n/n, never 62/63. Hashing config on mini, in-process, progress on.

The BM25 index bar stopped one short (62/63): ``BM25Builder.build`` fed ``tqdm(docs)`` through
``np.fromiter(..., count=...)``, which stops pulling once it has ``count`` tokens, so tqdm never saw
the request after the last document and the bar was never closed; it now counts each document as it
is handed out and completes and closes the bar after the ``fromiter``.
"""
from __future__ import annotations

import re
from pathlib import Path

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


def test_every_bar_of_an_eval_ends_complete(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.chdir(ROOT)
    assert main(["eval", "--dataset", "mini", "--config", str(HASHING)]) == 0
    states = last_states(capsys.readouterr().err)
    assert {"analyse", "BM25 index", "queries mini"} <= set(states)
    assert {d: s for d, s in states.items() if s[0] != s[1]} == {}
