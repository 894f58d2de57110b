"""Who said each line, analysed once per index version (issue 30; searchkit.rank.lines).

The speaker and evidence stages give the same answers reading the index's line analysis as
analysing the lines themselves, for any scope's speakers; the analysis survives save/load, an
update keeps what it can and gives a fresh build's bytes, and a missing, damaged or foreign file
only means the lines are analysed at query time.
"""
from __future__ import annotations

import io
import json
import random
import shutil

import numpy as np
import pytest

from searchkit.analyze import Analyzer
from searchkit.config import SearchConfig
from searchkit.index import store
from searchkit.passages import make_passages
from searchkit.rank import conversation
from searchkit.rank.conversation import Speakers, attribution, whose
from searchkit.rank.lines import FILE_NAME, LineAnalysis, analyse_line, slice_skip
from searchkit.records import Record
from searchkit.searcher import Searcher

NAMES = ["Caroline", "Melanie", "Анна Петрова", "田中", "Bob", "Dr Who", "Status"]
WORDS = ("charity race painting adoption support group camping concert Caroline Melanie Bob пробежка выставка "
         "Анна Петрова отчёт выгрузка 田中 さん 会議 計画 ATL-1655 v2.3 2026 #412 the a").split()
TITLES = ["Chat with Caroline", "план\rэкспорта", "", "会議メモ", "Title\x0bwith a vertical tab", "Notes\r"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) + rng.choice([".", "!", "?", "。", ""])


def _records(seed: int, n: int = 40) -> list[Record]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lines = []
        for _ in range(rng.randint(1, 30) if i else 450):  # one record longer than the line cap
            roll = rng.random()
            if roll < 0.5:
                lines.append(f"{rng.choice(NAMES)}: {_sentence(rng)}")
            elif roll < 0.85:
                lines.append(" ".join(_sentence(rng) for _ in range(rng.randint(1, 3))))
            elif roll < 0.92:
                lines.append(f"Summary: {_sentence(rng)}")
            else:
                lines.append("")
        sep = rng.choice(["\n", "\r\n", "\n\n", "\u2028"])
        out.append(Record(id=f"r{i}", kind=rng.choice(["chat", "digest", "file"]), title=rng.choice(TITLES),
                          text=sep.join(lines)))
    return out


def _passages(records: list[Record], max_chars: int = 300):
    texts, slices = [], []
    for r in records:
        for p in make_passages(r, max_chars=max_chars):
            texts.append(p.text)
            slices.append(r.text[p.start:p.end])
    return texts, slices


def _scopes(speakers: Speakers, rng: random.Random) -> list[Speakers]:
    """The corpus's speakers, none, and random subsets (a scope's speakers are a subset)."""
    names = list(speakers.names)
    out = [speakers, Speakers({})]
    for _ in range(4):
        keep = [n for n in names if rng.random() < 0.5]
        out.append(Speakers({n: speakers.names[n] for n in keep}))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stages_answers_are_the_same_with_the_analysis(seed):
    """whose() of every slice and attribution() of groups of whole texts, for every scope's
    speakers and queries naming them: the same with the index's entries as without."""
    analyzer = Analyzer()
    tokens = analyzer.query_tokens
    records = _records(seed)
    texts, slices = _passages(records)
    corpus = Speakers.from_records((r.text for r in records), tokens)
    assert len(corpus.names) >= 4
    la = LineAnalysis.build(texts, slices, tokens, corpus.names)
    assert len(la) == len(texts)
    assert any(la.row_skip < 0) or all(la.row_skip >= 0)
    rng = random.Random(seed)
    for scope in _scopes(corpus, rng):
        for row, part in enumerate(slices):
            assert whose(part, scope, tokens, la.entries(row, whole=False)) == whose(part, scope, tokens), row
        for _ in range(25):
            rows = rng.sample(range(len(texts)), k=min(6, len(texts)))
            said = [texts[r] for r in rows]
            query = tokens(" ".join(rng.sample(WORDS, 5) + [rng.choice(NAMES)]))
            weights = {t: rng.random() for t in query}
            got = attribution(query, said, scope, tokens, weights, [la.entries(r) for r in rows])
            assert got == attribution(query, said, scope, tokens, weights)


def test_entries_are_the_lines_of_the_text():
    """Each entry is ``analyse_line`` of the text's line; the slice's entries are the whole text's
    after its title lines, or None where they are not (a title ending in a carriage return whose
    line break joins it, a slice over the line cap)."""
    analyzer = Analyzer()
    records = _records(5)
    texts, slices = _passages(records, max_chars=100_000)
    names = Speakers.from_records((r.text for r in records), analyzer.query_tokens).names
    la = LineAnalysis.build(texts, slices, analyzer.query_tokens, names)
    for row, text in enumerate(texts):
        lines = text.splitlines()[:conversation._MAX_LINES]
        assert la.entries(row) == [analyse_line(line, analyzer.query_tokens, names) for line in lines]
        own = la.entries(row, whole=False)
        if own is None:
            assert slice_skip(text, slices[row]) == -1
        else:
            assert len(own) == len(slices[row].splitlines())
    assert any(la.entries(r, whole=False) is None for r in range(len(texts)))  # the long record, "Notes\r"
    assert la.entries(len(texts)) is None and la.entries(-1) is None
    assert slice_skip("Notes\r\nline", "\nline") == -1 and slice_skip("T\nA: b", "A: b") == 1


def test_round_trip_and_same_bytes():
    analyzer = Analyzer()
    records = _records(7)
    texts, slices = _passages(records)
    names = Speakers.from_records((r.text for r in records), analyzer.query_tokens).names
    la = LineAnalysis.build(texts, slices, analyzer.query_tokens, names)
    data = la.to_bytes()
    assert data == LineAnalysis.build(texts, slices, analyzer.query_tokens, names).to_bytes()
    back = LineAnalysis.from_file(io.BytesIO(data), len(texts))
    assert back is not None and back.to_bytes() == data
    assert all(back.entries(r) == la.entries(r) and back.entries(r, False) == la.entries(r, False)
               for r in range(len(texts)))
    assert LineAnalysis.from_file(io.BytesIO(data), len(texts) + 1) is None  # another index's
    assert LineAnalysis.from_file(io.BytesIO(data[: len(data) // 2]), len(texts)) is None  # cut short
    assert LineAnalysis.from_file(io.BytesIO(b"not a zip"), len(texts)) is None


def test_an_update_keeps_entries_and_gives_a_fresh_builds_bytes():
    """Entries of unchanged passages are kept (not analysed again) and the result is what a fresh
    build gives, also when the speakers changed (a kept entry of another part is analysed again);
    the vocabulary holds the live passages' tokens only (H3)."""
    analyzer = Analyzer()
    calls = []

    def tokens(text):
        calls.append(text)
        return analyzer.query_tokens(text)

    before = _records(9) + [Record(id="gone", kind="chat", text="Caroline: the okapiword and secretquokka.")]
    t0, s0 = _passages(before)
    names0 = Speakers.from_records((r.text for r in before), analyzer.query_tokens).names
    la0 = LineAnalysis.build(t0, s0, tokens, names0)
    after = before[5:-1] + [Record(id="new", kind="chat", text="Zebra: a secretword zebraquokka here\n" * 3)]
    after[0] = Record(id=after[0].id, kind="chat", text="Caroline: changed text entirely.")
    t1, s1 = _passages(after)
    names1 = Speakers.from_records((r.text for r in after), analyzer.query_tokens).names
    assert set(names1) != set(names0)  # Zebra is a speaker now
    calls.clear()
    kept = LineAnalysis.build(t1, s1, tokens, names1, (la0, t0))
    reused = len(calls)
    fresh = LineAnalysis.build(t1, s1, analyzer.query_tokens, names1)
    assert kept.to_bytes() == fresh.to_bytes()
    calls.clear()
    LineAnalysis.build(t1, s1, tokens, names1)
    assert reused < len(calls) / 2  # most passages kept their entries
    assert {"okapiword", "secretquokka"} & set(la0.vocab) and not {"okapiword", "secretquokka"} & set(kept.vocab)


def _searcher(records: list[Record]) -> Searcher:
    s = Searcher.build(records, SearchConfig.from_dict({"dense": {"embedder": "hashing"}}))
    s.analyse_lines()
    return s


def test_searches_are_the_same_with_and_without_the_analysis(tmp_path, monkeypatch):
    """Whole searches (the speaker stage on, queries naming speakers): results and evidence the
    same with the analysis, after save/load and without it; the file is in the saved version."""
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    records = _records(11, n=60)
    s = _searcher(records)
    s.save(tmp_path / "idx")
    assert (store.current_dir(tmp_path / "idx") / FILE_NAME).is_file()
    loaded = Searcher.load(tmp_path / "idx")
    assert loaded.line_analysis is not None and loaded.line_analysis.to_bytes() == s.line_analysis.to_bytes()
    bare = Searcher.load(tmp_path / "idx")
    bare.line_analysis = None
    assert s.config.fusion.speaker > 0  # the speaker stage runs
    queries = ["What did Caroline say about the charity race?", "Анна Петрова выгрузка отчёт",
               "田中 会議 計画", "Did Melanie go camping?", "Bob painting concert"]
    named = 0
    for q in queries:
        results = [x.search(q, k=10) for x in (loaded, bare)]
        answers = [json.dumps(r.to_dict(), sort_keys=True, default=str) for r in results]
        assert answers[0] == answers[1], q
        named += results[0].signals.get("speaker_query", 0.0) == 1.0
    assert named >= 3  # the questions name speakers: the evidence stage read who said what


def test_a_damaged_or_missing_file_means_analysing_at_query_time(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    s = _searcher(_records(13, n=10))
    s.save(tmp_path / "idx")
    path = store.current_dir(tmp_path / "idx") / FILE_NAME
    data = path.read_bytes()
    path.write_bytes(data[:100])
    assert Searcher.load(tmp_path / "idx").line_analysis is None
    path.unlink()
    assert Searcher.load(tmp_path / "idx").line_analysis is None
    other = np.load(io.BytesIO(data))
    assert "meta" in other.files
    shutil.rmtree(tmp_path / "idx")
