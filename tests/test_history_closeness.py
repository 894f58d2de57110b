"""H8's "close enough" does not depend on how many candidates compete (issue 39 item 9).

Before, closeness was the fused score min-max normalised over the candidate list, so the last of a
short list (a search narrowed by ``kinds`` or ``since``/``until``) always scored 0 and was never
close enough: ``searchkit history "выгрузка отчёта" --kinds digest,chat --since 2026-10-21 --until
2026-10-22`` showed one card while both matching digests of that day were in range. Now each
retriever's score is judged relative to its best over the candidates, with a fixed zero
(``rank.diversity.closeness``), and a session's cap never leaves a slot empty. Hashing embedder.
"""
import json
import random
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank.diversity import close_enough, closeness, diversify
from searchkit.records import Hit, Passage, Record
from searchkit.tools.history import HistoryIndex, session_key

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}})


@pytest.fixture(scope="module")
def demo():
    return HistoryIndex.build(DEMO, CFG, cache=EmbeddingCache(None))


def _search(idx, query, **kw):
    kw.setdefault("space", "acme")
    return idx.search(query, caller="u-anna", container="personal", **kw)


def _refs(ans):
    return [c.hit.record.ref for c in ans.cards]


TURNS = {"digest:t_4f2a_01", "digest:t_4f2a_02"}  # the two turns of ses_4f2a, both on 2026-10-21


@pytest.mark.parametrize("kinds", [["digest", "chat"], ["digest"]])
def test_the_issue_example_shows_both_matching_digests_in_range(demo, kinds):
    ans = _search(demo, "выгрузка отчёта", kinds=kinds, since="2026-10-21", until="2026-10-22", limit=10)
    refs = _refs(ans)
    assert TURNS <= set(refs)  # before: one card, the other turn dropped as "not close enough"
    if "chat" in kinds:
        assert "chat:ses_4f2a" in refs  # nothing else is in range: no slot is left empty
    assert [c.hit.rank for c in ans.cards] == list(range(1, len(refs) + 1))


@pytest.mark.parametrize("query", ["выгрузка отчёта", "кодировка выгрузки", "выгрузка по понедельникам"])
def test_the_session_shows_the_same_turns_however_many_candidates_compete(demo, query):
    # the same two turns, searched with 2, 3, 6 and every candidate beside them
    scopes = [dict(kinds=["digest"], since="2026-10-21", until="2026-10-22"),
              dict(kinds=["digest", "chat"], since="2026-10-21", until="2026-10-22"),
              dict(kinds=["digest"]), dict(kinds=["digest", "log", "file"], since="2026-10-01")]
    shown = []
    for scope in scopes:
        ans = _search(demo, query, limit=10, **scope)
        raw = [h for h in demo.searcher.search(query, k=60, scope=demo._visibility.scope(["acme"], "u-anna")).hits]
        assert len(ans.cards) == min(10, sum(1 for h in raw if _in(h, scope)))  # no slot left empty
        shown.append(TURNS & set(_refs(ans)))
    assert all(s == TURNS for s in shown), shown


def _in(hit, scope):
    r = hit.record
    return r.kind in scope["kinds"] and (r.date or "") >= scope.get("since", "") and \
        (r.date or "") < scope.get("until", "9999")


# -- a generated workspace: one session's matching turns among 0..12 unrelated sessions -----------

def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _session(space: Path, ses: str, day: str, turns: list[tuple[str, str]]) -> None:
    msgs = []
    for i, (asked, done) in enumerate(turns, start=1):
        msgs += [{"id": f"m{2 * i - 1}", "role": "user", "author": "Anna", "ts": f"{day}T10:{2 * i:02d}:00+03:00",
                  "text": asked},
                 {"id": f"m{2 * i}", "role": "assistant", "author": "assistant",
                  "ts": f"{day}T10:{2 * i + 1:02d}:00+03:00", "text": done}]
        _write(space / ".space" / "digests" / f"t_{ses}_{i:02d}.json",
               {"turn_id": f"t_{ses}_{i:02d}", "ses_id": ses, "ts": f"{day}T10:{2 * i + 1:02d}:00+03:00",
                "asked": asked, "done": done, "left": "", "decided": ""})
    _write(space / ".space" / "chats" / f"{ses}.json",
           {"ses_id": ses, "title": turns[0][0], "owner": "u-anna", "visibility": "shared", "run": "chat",
            "messages": msgs})


OTHER = [("Where do we have lunch on Friday?", "Lunch booked at noon."),
         ("Who reviews the slides?", "Olga reviews the slides."),
         ("Move the team offsite?", "The offsite moves to May."),
         ("Which printer is broken?", "The second floor printer."),
         ("Order new chairs?", "Chairs ordered for the office."),
         ("Book the meeting room?", "Room 4 booked on Tuesday.")]


def _workspace(root: Path) -> Path:
    """ses_inv (2026-10-21): three turns about the invoice numbering; twelve unrelated one-turn
    sessions, one a day from 2026-10-01 to 2026-10-12."""
    acme = root / "acme"
    _write(acme / ".space" / "space.json", {"slug": "acme", "title": "ACME", "members": ["u-anna"],
                                            "container": "shared", "history_search": True})
    _session(acme, "ses_inv", "2026-10-21", [
        ("Does the invoice numbering restart next year?", "Invoice numbering restarts in 2027."),
        ("What is the quarterly invoice numbering prefix?", "Quarterly invoice numbering uses the prefix INV-Q."),
        ("Who approves invoice numbering changes?", "Finance approves invoice numbering changes."),
    ])
    for n in range(12):
        _session(acme, f"ses_o{n:02d}", f"2026-10-{1 + n:02d}", [OTHER[n % len(OTHER)]])
    return root


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return HistoryIndex.build(_workspace(tmp_path_factory.mktemp("gen")), CFG, cache=EmbeddingCache(None))


INV = ("acme", "ses_inv")


@pytest.mark.parametrize("kinds", [["digest"], ["digest", "chat"]])
def test_generated_workspace_closeness_does_not_depend_on_the_competition(generated, kinds):
    # the same corpus and scope (the same statistics); a date window lets 0, 2, 6 or 12 unrelated
    # sessions compete with the three matching turns
    idx, query, limit = generated, "invoice numbering", 10
    scope = idx._visibility.scope(["acme"], "u-anna")
    verdicts, firsts = [], []
    for others in (0, 2, 6, 12):
        window = dict(since=f"2026-10-{13 - others:02d}", until="2026-10-22")
        ans = _search(idx, query, kinds=kinds, limit=limit, **window)
        raw = list(idx.searcher.search(query, k=60, scope=scope, filters=_filters(kinds, window)).hits)
        assert len(raw) == 3 + others + ("chat" in kinds) * (1 + others)  # turns, and chats
        close = close_enough(raw, idx.searcher.config.diversity.min_relative_score, idx.searcher.config.fusion.weights)
        verdicts.append({h.record.ref: close(h) for h in raw if session_key(h) == INV})
        mine = [c.hit.record.ref for c in ans.cards if session_key(c.hit) == INV]
        firsts.append(mine[:2])
        if len(ans.cards) < limit:  # the candidates ran out: no close-enough one is left out
            shown = {c.hit.record.id for c in ans.cards}
            assert all(h.record.id in shown for h in raw if close(h)), others
    assert all(v == verdicts[0] for v in verdicts), verdicts
    assert all(v for v in verdicts[0].values())  # every matching turn (and the chat) is close enough
    assert all(f == firsts[0] and len(f) == 2 for f in firsts), firsts  # before: one card with 0 others


def _filters(kinds, window):
    from searchkit.searcher import Filters

    return Filters(kinds=tuple(kinds), since=window["since"], until=window["until"])


# -- closeness, by hand --------------------------------------------------------------------------

def _hits(spec):
    """spec: (id, kind, session or None, {retriever: score}), best first; fused score by rank."""
    out = []
    for i, (rid, kind, ses, scores) in enumerate(spec, start=1):
        fields = {"ses_id": ses} if kind == "chat" and ses else {"chat": ses} if kind == "digest" and ses else {}
        ref = f"chat:{ses}" if kind == "chat" else f"digest:{rid}" if kind == "digest" else rid
        r = Record(id=rid, kind=kind, space="s", ref=ref, text=rid, fields=fields)
        out.append(Hit(record=r, score=1.0 / i, rank=i, passage=Passage(rid, 0, rid, 0, len(rid)), scores=scores))
    return out


W = {"bm25": 0.4, "dense": 0.6}


def test_closeness_is_relative_to_each_retrievers_best_with_a_fixed_zero():
    hits = _hits([("a", "digest", "A", {"bm25": 4.0, "dense": 0.90}),
                  ("b", "digest", "A", {"bm25": 2.0, "dense": 0.80}),
                  ("c", "file", None, {"dense": 0.60})])
    of = closeness(hits, W)
    assert of(hits[0]) == pytest.approx(1.0)
    # bm25 2/4; dense: the best is 0.10 from the question, b 0.20: half as close
    assert of(hits[1]) == pytest.approx(0.4 * 0.5 + 0.6 * 0.5)
    assert of(hits[2]) == pytest.approx(0.6 * (0.10 / 0.40))  # no query term: bm25 counts 0
    # weights: only the retrievers with a positive weight count; none: all alike
    assert closeness(hits, {"bm25": 1.0, "dense": 0.0})(hits[1]) == pytest.approx(0.5)
    assert closeness(hits, None)(hits[2]) == pytest.approx(0.5 * 0.25)


def test_weaker_candidates_coming_or_going_change_no_judgement():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 8)
        head = [(f"h{i}", rng.choice(["digest", "chat", "file", "log"]), rng.choice(["A", "B", None]),
                 {"bm25": rng.uniform(0, 5), "dense": rng.uniform(0.5, 0.95)}) for i in range(n)]
        best_b = max(s["bm25"] for *_, s in head)
        best_d = max(s["dense"] for *_, s in head)
        tail = [(f"t{i}", rng.choice(["file", "app", "digest"]), None,
                 {"bm25": rng.uniform(0, best_b), "dense": rng.uniform(0.3, best_d)}) for i in range(rng.randint(0, 30))]
        short, long_ = _hits(head), _hits(head + tail)
        a, b = close_enough(short, 0.5, W), close_enough(long_, 0.5, W)
        assert [a(h) for h in short] == [b(h) for h in long_[:n]]


def test_a_short_list_keeps_its_last_close_candidate():
    # min-max gave the last of these 0 whatever its scores: not close, the session's second turn lost
    two = _hits([("d1", "digest", "A", {"bm25": 4.0, "dense": 0.89}), ("d2", "digest", "A", {"bm25": 3.7, "dense": 0.88})])
    assert [h.record.id for h in diversify(two, 10, group=session_key, per_group=2, weights=W)] == ["d1", "d2"]
    far = _hits([("d1", "digest", "A", {"bm25": 4.0, "dense": 0.89}), ("d2", "digest", "A", {"dense": 0.60})])
    assert [h.record.id for h in diversify(far, 10, group=session_key, per_group=2, weights=W)] == ["d1"]


def test_a_session_cap_never_leaves_a_slot_empty():
    hits = _hits([("c1", "chat", "A", {"bm25": 4.0, "dense": 0.90}), ("d1", "digest", "A", {"bm25": 3.9, "dense": 0.89}),
                  ("d2", "digest", "A", {"bm25": 3.8, "dense": 0.88}), ("d3", "digest", "A", {"dense": 0.50})])
    # nothing else competes: the third close turn takes a free slot, the far one never does
    assert [h.record.id for h in diversify(hits, 10, group=session_key, per_group=2, weights=W)] == ["c1", "d1", "d2"]
    # with another candidate, the session keeps to two and the other one gets the slot
    other = hits + _hits([("f1", "file", None, {"dense": 0.55})])[:1]
    got = diversify(other, 3, group=session_key, per_group=2, prefer=lambda h: h.record.kind == "digest", weights=W)
    assert [h.record.id for h in got] == ["c1", "d1", "f1"]
    assert [h.rank for h in got] == [1, 2, 3]
