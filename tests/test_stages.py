"""The search path as stages over Candidates (issue 29 item 1): the pipeline built from the config,
its prefix API, every stage's score on a hit, and the stage knobs that joined the config."""
from __future__ import annotations

import json

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.workspace import SpaceInfo
from searchkit.rank import stages
from searchkit.rank.candidates import Candidates
from searchkit.records import Record
from searchkit.searcher import Searcher

HASHING = {"dense": {"embedder": "hashing", "hashing_dim": 64}}

_CHAT = [
    ("c1", "2023-05-08", "Anna: I adopted a cat named Biscuit last week.\nBoris: Nice, what colour?"),
    ("c2", "2023-12-02", "Boris: I adopted a dog, Rex, in December."),
    ("c3", "2023-07-14", "Anna: The garden tomatoes are ripe.\nBoris: I adopted a new hobby, pottery."),
    ("c4", "2023-12-20", "Boris: Rex the dog learned to sit.\nAnna: Biscuit the cat ignores him."),
]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    out = [Record(id=i, kind="chat", space="home", date=d, title=f"Chat Anna & Boris, {d}", text=t, owner="u1")
           for i, d, t in _CHAT]
    out += [Record(id=f"f{i}", kind="file", space="home", date=f"2023-0{i}-01", title=f"notes {i}",
                   text=f"Notes {i}: adopted pets, cats and dogs, December plans {i}.", owner="u1") for i in range(1, 7)]
    return out


@pytest.fixture(scope="module")
def searcher(records) -> Searcher:
    return Searcher.build(records, SearchConfig.from_dict(HASHING), cache=EmbeddingCache(None))


def test_the_pipeline_is_built_from_the_config():
    s = Searcher(SearchConfig.from_dict(HASHING), [], [], retrievers={})
    assert s.pipeline.names == stages.ORDER
    off = SearchConfig.from_dict({**HASHING, "rerank": {"enabled": False}, "fusion": {"speaker": 0.0, "date": 0.0}})
    assert Searcher(off, [], [], retrievers={}).pipeline.names == ("retrieve", "fuse", "evidence", "cut")


def test_a_hit_carries_every_stage_score(searcher):
    res = searcher.search("What did Anna adopt in May 2023?", k=5)
    assert res.hits
    for h in res.hits:
        assert set(h.stages) == {"fuse", "rerank", "evidence", "speaker", "date"}
        assert h.stages["date"] == h.score  # the last ranking stage ordered the result
        assert h.stages["evidence"] == h.stages["rerank"]  # the evidence stage reads, never moves
        assert h.to_dict()["stages"] == dict(h.stages)
    # the date stage moved the record of May 2023 up by fusion.date
    c1 = next(h for h in res.hits if h.record.id == "c1")
    assert c1.stages["date"] == pytest.approx(c1.stages["speaker"] + searcher.config.fusion.date)


def test_the_fuse_score_is_the_score_with_the_later_stages_off(searcher):
    query = "Boris adopted a dog in December"
    off = searcher.with_config(searcher.config.replace(**{"rerank.enabled": False, "fusion.speaker": 0.0,
                                                          "fusion.date": 0.0}))
    fused = {h.record.id: h.score for h in off.search(query, k=10).hits}
    for h in searcher.search(query, k=10).hits:
        if h.record.id in fused:
            assert h.stages["fuse"] == fused[h.record.id]


def test_a_prefix_run_once_and_one_stage_varied_ranks_as_a_search_under_that_setting(searcher):
    query = searcher.query("Rex the dog in December", k=10)
    retrieved = searcher.pipeline.upto("retrieve")(Candidates(), query)
    rest = searcher.pipeline.after("retrieve")
    for share in (0.0, 0.3, 1.0):
        weights = {"bm25": share, "dense": 1.0 - share}
        varied = rest.replace("fuse", rest["fuse"].with_weights(weights))
        got = searcher.result(varied(retrieved, query), query)
        fixed = searcher.with_config(searcher.config.replace(**{"fusion.weights": weights})).search(query.text, k=10)
        assert [(h.record.id, h.score) for h in got.hits] == [(h.record.id, h.score) for h in fixed.hits]
        assert got.signals == fixed.signals


def test_pipeline_names_a_missing_stage(searcher):
    with pytest.raises(KeyError, match="no stage 'splade'.*retrieve"):
        searcher.pipeline.upto("splade")
    assert "cut" in searcher.pipeline and "splade" not in searcher.pipeline
    assert searcher.pipeline.without("evidence", "cut").names[-1] == "date"


def test_the_stage_knobs_are_left_out_of_the_json_at_their_defaults():
    shipped = SearchConfig()
    assert shipped.fingerprint() == "c8a2b91f72a01671"  # as computed before the knobs existed
    text = shipped.to_json()
    for key in ("speaker_depth", "date_depth", "evidence_depth", "attribution_depth", "attribution_passages",
                "candidates"):
        assert f'"{key}"' not in text
    moved = shipped.replace(**{"fusion.date_depth": 1})
    assert json.loads(moved.to_json())["fusion"]["date_depth"] == 1
    assert moved.fingerprint() != shipped.fingerprint()
    assert moved.index_fingerprint() == shipped.index_fingerprint()  # query-time only


def test_date_depth_bounds_the_records_the_date_stage_moves(searcher):
    query = "What did Boris say in December 2023?"
    wide = searcher.search(query, k=10)
    narrow = searcher.with_config(searcher.config.replace(**{"fusion.date_depth": 1})).search(query, k=10)
    gained = [h for h in wide.hits if h.stages["date"] != h.stages["speaker"]]
    assert len(gained) >= 2  # both December chats gain under the default depth
    top = [h for h in narrow.hits if h.stages["date"] != h.stages["speaker"]]
    assert len(top) <= 1


def test_speaker_depth_bounds_the_records_the_speaker_stage_moves(searcher):
    query = "What did Anna adopt?"
    cfg = searcher.config.replace(**{"fusion.date": 0.0})
    wide = searcher.with_config(cfg).search(query, k=10)
    narrow = searcher.with_config(cfg.replace(**{"fusion.speaker_depth": 1})).search(query, k=10)
    assert sum(h.stages["speaker"] != h.stages["rerank"] for h in wide.hits) >= 1
    assert sum(h.stages["speaker"] != h.stages["rerank"] for h in narrow.hits) <= 1


class _Recording:
    """A retriever that records how many records each ``evidence`` call is shown."""

    def __init__(self, inner, seen):
        self.inner, self.seen = inner, seen

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def evidence(self, query, top, texts):
        self.seen.append(len(top))
        return self.inner.evidence(query, top, texts)


def test_evidence_depth_is_the_number_of_records_the_content_evidence_reads(searcher):
    seen: list[int] = []
    q = searcher.query("adopted pets", k=10)
    views = {n: (_Recording(r, seen) if hasattr(r, "evidence") else r) for n, r in q.views.items()}
    q = stages.Query(q.text, views, q.pmask, q.scope, q.k)
    for depth in (1, 3, 7):
        s = searcher.with_config(searcher.config.replace(**{"weak_match.evidence_depth": depth}))
        s.pipeline.upto("evidence")(Candidates(), q)
        assert seen[-1] == depth


def test_the_history_tool_ranks_diversity_candidates_before_picking_cards(records, monkeypatch):
    from searchkit.tools import history_search
    from searchkit.tools.history import HistoryIndex

    asked = []
    real = history_search._search

    def spy(searcher, c, k, scope, pick=None):
        asked.append(k)
        return real(searcher, c, k, scope, pick)

    monkeypatch.setattr(history_search, "_search", spy)
    spaces = {"home": SpaceInfo(slug="home", title="home", members=("u1",))}
    for candidates, want in ((60, 60), (7, 32)):
        cfg = SearchConfig.from_dict({**HASHING, "diversity": {"candidates": candidates}})
        index = HistoryIndex(Searcher.build(records, cfg, cache=EmbeddingCache(None)), spaces)
        index.search("adopted", caller="u1", container="personal", space="home")
        assert asked[-1] == want  # at least four a card (the default limit is 8)


def test_the_missing_id_notice_is_computed_once_on_the_cards_shown(records, monkeypatch):
    """Issue 29 (needless round trips): the history tool's cards are picked inside the search, and the
    missing-ID notice (H12) is computed there, once, on the cards; the searcher's own ``search``
    without ``pick`` reads all of its hits as before."""
    from searchkit.rank import notices
    from searchkit.tools.history import HistoryIndex

    seen = []
    real = notices.signals.missing_ids_warning

    def spy(query, hits):
        seen.append([h.record.id for h in hits])
        return real(query, hits)

    monkeypatch.setattr(notices.signals, "missing_ids_warning", spy)
    spaces = {"home": SpaceInfo(slug="home", title="home", members=("u1",))}
    index = HistoryIndex(Searcher.build(records, SearchConfig.from_dict(HASHING), cache=EmbeddingCache(None)), spaces)
    answer = index.search("adopted PR-4321", caller="u1", container="personal", space="home", limit=2)
    assert len(seen) == 1
    assert seen[0] == [card.hit.record.id for card in answer.cards]
    assert "missing_ids" in [w.code for w in answer.result.warnings]
    seen.clear()
    res = index.searcher.search("adopted PR-4321", k=5, pick=lambda hs: hs[:1])
    assert len(seen) == 1 and seen[0] == [h.record.id for h in res.hits] and len(res.hits) == 1
    seen.clear()
    full = index.searcher.search("adopted PR-4321", k=5)
    assert seen == [[h.record.id for h in full.hits]] and len(full.hits) > 1
