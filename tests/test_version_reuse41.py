"""Issue 41 item 9: a new index version loaded after a refresh reuses the previous version's record
and passage objects for every unchanged line (``Searcher.load_version(previous=)``,
``index.jsonl_lines``), and answers exactly as a fresh load of the same version."""
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache
from searchkit.records import Record
from searchkit.searcher import Searcher

CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}})


def _records(changed: dict[int, str], drop: set[int], extra: int = 0) -> list[Record]:
    out = []
    for i in range(40 + extra):
        if i in drop:
            continue
        text = changed.get(i, f"отчёт номер {i:03d} выгрузка склад report {i} quarterly")
        out.append(Record(id=f"r{i:03d}", kind="file", space="s", text=text))
    return out


def _load(out: Path, previous: Searcher | None = None) -> Searcher:
    with store.reading(out) as version:
        return Searcher.load_version(version, CFG, cache=EmbeddingCache(None), previous=previous)


def _hits(s: Searcher, query: str) -> list[tuple[str, float]]:
    return [(h.record.id, h.score) for h in s.search(query, k=10).hits]


def test_unchanged_lines_are_reused_and_answers_are_a_fresh_loads(tmp_path):
    out = tmp_path / "idx"
    Searcher.build(_records({}, set()), CFG, cache=EmbeddingCache(None)).save(out)
    first = _load(out)
    assert first.line_objects is not None
    Searcher.build(_records({3: "совсем другой текст про склад", 7: "new words entirely"}, {5}, extra=2), CFG,
                   cache=EmbeddingCache(None)).save(out)
    fresh = _load(out)
    followed = _load(out, previous=first)

    assert followed.records == fresh.records and followed.passages == fresh.passages
    before = {r.id: r for r in first.records}
    for r in followed.records:
        same_line = r.id in before and before[r.id] == r
        assert (r is before.get(r.id)) == same_line, r.id  # the very object where the line is unchanged, else a new one
    reused = sum(r is before.get(r.id) for r in followed.records)
    assert reused == 40 - 3  # two changed, one dropped; the two added are new
    kept_passages = {(p.record_id, p.index): p for p in first.passages}
    assert any(p is kept_passages.get((p.record_id, p.index)) for p in followed.passages)
    assert not any(p is kept_passages.get((p.record_id, p.index)) for p in followed.passages
                   if p.record_id in {"r003", "r007"})
    for q in ("отчёт склад", "new words", "report 12 quarterly"):
        assert _hits(followed, q) == _hits(fresh, q)


def test_a_damaged_line_is_still_found_when_a_previous_version_is_given(tmp_path):
    out = tmp_path / "idx"
    Searcher.build(_records({}, set()), CFG, cache=EmbeddingCache(None)).save(out)
    first = _load(out)
    version = store.current_dir(out)
    lines = (version / "passages.jsonl").read_bytes().splitlines(keepends=True)
    (version / "passages.jsonl").write_bytes(b"".join(lines[:-1]) + b"not json\n")
    with pytest.raises(DataError, match=rf"passages.jsonl line {len(lines)} is damaged"):
        _load(out, previous=first)
    (version / "passages.jsonl").write_bytes(b"".join(lines[:-1]) + b"\xff\xfe\n")
    with pytest.raises(DataError, match="passages.jsonl is unreadable"):
        _load(out, previous=first)


def test_a_history_index_loaded_after_another_reuses_its_records(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    from searchkit.tools.history import HistoryIndex

    root = Path(__file__).resolve().parents[1]
    ws = tmp_path / "ws"
    shutil.copytree(root / "datasets" / "demo-workspace", ws, symlinks=True)
    out = tmp_path / "hist"
    exe = str(Path(sys.executable).parent / "searchkit")
    p = subprocess.run([exe, "index", "--workspace", str(ws), "--out", str(out), "--config",
                        str(root / "tests" / "data" / "hashing.json"), "--quiet"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "SEARCHKIT_CACHE": ""})
    assert p.returncode == 0, p.stderr
    first = HistoryIndex.load(out, cache=EmbeddingCache(None))
    again = HistoryIndex.load(out, cache=EmbeddingCache(None), previous=first)
    assert again.searcher.records == first.searcher.records
    assert all(a is b for a, b in zip(again.searcher.records, first.searcher.records))
    assert all(a is b for a, b in zip(again.searcher.passages, first.searcher.passages))
