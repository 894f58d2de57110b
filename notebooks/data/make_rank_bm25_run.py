"""Write ``mini-dev.rank_bm25.trec``: another system's run of ``datasets/mini`` (dev split) for
``notebooks/00_api.ipynb`` to compare with, as a researcher's Pyserini or Elasticsearch run would be.

The other system is the ``rank_bm25`` package (BM25Okapi, k1 1.5, b 0.75) over a tokenisation of its
own: lower-cased words of letters and digits, and character bigrams of Japanese and Chinese text; no
stemming, no searchkit code. Each query's top 20 records that match a term, TREC six columns. Run from the repository root
(``rank-bm25`` is in the ``test`` extra)::

    .venv/bin/python notebooks/data/make_rank_bm25_run.py
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from rank_bm25 import BM25Okapi

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "datasets" / "mini"
OUT = Path(__file__).resolve().parent / "mini-dev.rank_bm25.trec"
DEPTH = 20
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]+")
WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    text = text.lower()
    out = []
    for word in WORD.findall(text):
        for part in CJK.split(word):
            if part:
                out.append(part)
        for run in CJK.findall(word):
            out.extend(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return out


def main() -> None:
    docs = [json.loads(line) for line in (MINI / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = {q["_id"]: q for q in (json.loads(line) for line in
                                     (MINI / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line)}
    dev = [q for q in queries.values() if q.get("split") == "dev"]
    bm25 = BM25Okapi([tokens(f"{d.get('title', '')} {d['text']}") for d in docs])
    lines = []
    for q in dev:
        scores = bm25.get_scores(tokens(q["text"]))
        ranked = sorted(((s, d["_id"]) for s, d in zip(scores, docs) if s > 0), key=lambda x: (-x[0], x[1]))[:DEPTH]
        for rank, (score, doc) in enumerate(ranked, 1):
            lines.append(f"{q['_id']} Q0 {doc} {rank} {score:.6f} rank_bm25")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
