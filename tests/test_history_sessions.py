"""Sessions in the history tool (H8): a chat and the digests of its turns are one result group that
fills at most two cards while other candidates compete, the second only when close enough (H8's
rule for kinds; issue 28 item 4), so a long chat neither crowds out other sessions (issue 11 item
3) nor hides its other matching turns; when the candidates run out, its further close-enough cards
fill the free slots (issue 39 item 9). Hashing embedder."""
import json
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank.diversity import cap_groups, close_enough, diversify, one_per_group
from searchkit.records import Hit, Passage, Record
from searchkit.searcher import Filters
from searchkit.tools.history import HistoryIndex, session_key

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}})
NO_DIVERSITY = SearchConfig.from_dict(
    {"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}, "diversity": {"enabled": False}}
)
SESSION_KINDS = ("chat", "digest")


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=1)
    path.write_text(text, encoding="utf-8")


def _chat(space: Path, ses: str, title: str, texts, owner="u-anna", visibility="shared", day="2026-10-21"):
    msgs = [
        {"id": f"m{i}", "role": "user" if i % 2 else "assistant", "author": owner if i % 2 else "assistant",
         "ts": f"{day}T10:{i:02d}:00+03:00", "text": t}
        for i, t in enumerate(texts, start=1)
    ]
    _write(space / ".space" / "chats" / f"{ses}.json",
           {"ses_id": ses, "title": title, "owner": owner, "visibility": visibility, "run": "chat", "messages": msgs})


def _digest(space: Path, turn: str, ses: str, asked: str, done: str, day="2026-10-21"):
    _write(space / ".space" / "digests" / f"{turn}.json",
           {"turn_id": turn, "ses_id": ses, "ts": f"{day}T11:00:00+03:00", "asked": asked, "done": done,
            "left": "", "decided": ""})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """One space: a long chat about the report export with four digests that all match the
    question strongly, four other sessions that match less, a personal chat of someone else, a
    note and a log day."""
    root = tmp_path_factory.mktemp("ws")
    acme = root / "acme"
    _write(acme / ".space" / "space.json", {"slug": "acme", "title": "ACME", "members": ["u-anna", "u-boris"],
                                            "container": "shared", "history_search": True})
    _chat(acme, "ses_long", "Report export encoding", [
        "The report export breaks the encoding again: the CSV report export shows broken letters.",
        "The report export script writes the CSV in cp1251; I changed the export encoding to utf-8-sig.",
        "Report export encoding: please also check the report export for October.",
        "Checked the October report export: the encoding is right now, the CSV report opens in Excel.",
    ] * 3)
    for i in range(1, 5):
        _digest(acme, f"t_long_{i:02d}", "ses_long",
                f"Why does the report export break the encoding (step {i})?",
                f"Report export encoding fixed: CSV report export in utf-8-sig, step {i}.")
    others = {
        "ses_s1": ("Weekly report schedule", "Run the report export every Monday at 09:00; the schedule is set."),
        "ses_s2": ("Encoding of the invoices", "The invoices CSV had a wrong encoding; fixed it the same way."),
        "ses_s3": ("Sales report numbers", "The sales report totals differ from the dashboard export by 2%."),
        "ses_s4": ("Export to the warehouse", "The warehouse export runs nightly; the report of failures is mailed."),
    }
    for n, (ses, (title, text)) in enumerate(others.items(), start=1):
        _chat(acme, ses, title, [text, f"{title}: done."], day=f"2026-10-{10 + n}")
        _digest(acme, f"t_{ses}_01", ses, title + "?", text, day=f"2026-10-{10 + n}")
    _chat(acme, "ses_boris", "Report export encoding (Boris)", ["Report export encoding, report export."],
          owner="u-boris", visibility="personal")
    _digest(acme, "t_boris_01", "ses_boris", "Report export encoding?", "Report export encoding fixed.")
    _write(acme / "notes" / "export.md", "# Report export\n\nThe report export script lives in scripts/export.py; "
                                        "encoding utf-8-sig.\n")
    _write(acme / "log.md", "## 2026-10-21\n\nFixed the report export encoding (ses_long).\n")
    return root


@pytest.fixture(scope="module")
def index(workspace):
    return HistoryIndex.build(workspace, CFG, cache=EmbeddingCache(None))


@pytest.fixture(scope="module")
def demo():
    return HistoryIndex.build(DEMO, CFG, cache=EmbeddingCache(None))


def _search(idx, query, **kw):
    kw.setdefault("space", "acme")
    return idx.search(query, caller="u-anna", container="personal", **kw)


def _candidates(idx, query, kinds=None, spaces=("acme",)):
    """The searcher's ranking the tool picks its cards from (the same scope and filters)."""
    scope = idx._visibility.scope(list(spaces), "u-anna")
    return list(idx.searcher.search(query, k=60, filters=Filters(kinds=kinds), scope=scope).hits)


def _sessions(cards):
    keys = [session_key(c.hit) for c in cards]
    return [k for k in keys if k is not None]


def _pool(idx, raw):
    """The candidates a session may fill cards with: two a session, the second close enough,
    another turn (a digest) before the chat."""
    d = idx.searcher.config.diversity
    return cap_groups(raw, session_key, 2, min_relative_score=d.min_relative_score,
                      prefer=lambda h: h.record.kind == "digest", weights=idx.searcher.config.fusion.weights)


def _close(idx, raw, hit):
    """H8's "close enough" (``rank.diversity.closeness``) over the candidates ``raw``."""
    cfg = idx.searcher.config
    return close_enough(raw, cfg.diversity.min_relative_score, cfg.fusion.weights)(hit)


def _filled(idx, raw, cards):
    """The cards beyond the pool (a session's third and later): only once every candidate of the
    pool is shown (the candidates ran out), each close enough."""
    pool = _pool(idx, raw)
    ids = {c.hit.record.id for c in cards}
    extra = [c for c in cards if c.hit.record.id not in {h.record.id for h in pool}]
    if extra:
        assert all(h.record.id in ids for h in pool)
        assert all(_close(idx, raw, c.hit) for c in extra)
    return extra


QUERY = "report export encoding"


def test_the_long_chat_would_crowd_the_answer_without_groups(index):
    # the premise of the other tests: without session groups the long chat takes most slots
    raw = _candidates(index, QUERY, kinds=SESSION_KINDS)
    old = diversify(raw, 4)
    assert sum(1 for h in old if session_key(h) == ("acme", "ses_long")) >= 3


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 6, 8, 10])
@pytest.mark.parametrize("kinds", [None, ["chat", "digest"], ["digest"], ["chat"]])
def test_a_session_fills_at_most_two_cards_the_second_close_enough(index, limit, kinds):
    ans = _search(index, QUERY, limit=limit, kinds=kinds)
    keys = _sessions(ans.cards)
    raw = _candidates(index, QUERY, kinds=tuple(kinds) if kinds else None)
    if not _filled(index, raw, ans.cards):  # two a session while other candidates are left
        assert all(keys.count(k) <= 2 for k in keys)
    seen = set()
    for c in ans.cards:
        key = session_key(c.hit)
        if key in seen:  # a session's second card is close enough to the question (H8's rule)
            assert _close(index, raw, c.hit)
        seen.add(key)
    assert [c.hit.rank for c in ans.cards] == list(range(1, len(ans.cards) + 1))


def test_the_kept_cards_are_the_best_ranked_of_their_session(index):
    raw = _candidates(index, QUERY)
    allowed = {h.record.id for h in _pool(index, raw)}
    ans = _search(index, QUERY, limit=10)
    extra = {c.hit.record.id for c in _filled(index, raw, ans.cards)}
    for c in ans.cards:
        assert c.hit.record.id in allowed | extra
    best = {}
    for h in raw:
        best.setdefault(session_key(h), h.record.id)
    shown = {session_key(c.hit) for c in ans.cards}
    for key in shown - {None}:  # a session shown at all shows its best candidate
        assert best[key] in {c.hit.record.id for c in ans.cards}


def test_a_long_chat_does_not_crowd_out_other_sessions(index):
    raw = _candidates(index, QUERY, kinds=SESSION_KINDS)
    ans = _search(index, QUERY, limit=4, kinds=["chat", "digest"])
    keys = _sessions(ans.cards)
    assert len(ans.cards) == 4 and keys.count(("acme", "ses_long")) == 2 and len(set(keys)) == 3
    assert len(set(keys)) > len({session_key(h) for h in diversify(raw, 4)})  # freed slots went to others
    # the personal chat of someone else stays out (H15)
    assert ("acme", "ses_boris") not in set(keys)


def test_freed_slots_are_filled_in_relevance_order_under_h8(index):
    # the tool's cards are H8 over the candidates, two a session; "close enough" is measured
    # over all candidates, so the dropped cards do not move the bar for the others
    raw = _candidates(index, QUERY)
    d = index.searcher.config.diversity
    want = diversify(raw, 5, per_kind=d.per_kind, min_relative_score=d.min_relative_score, group=session_key,
                     per_group=2)
    ans = _search(index, QUERY, limit=5)
    assert [c.hit.record.id for c in ans.cards] == [h.record.id for h in want]
    assert len(ans.cards) == 5
    pool = _pool(index, raw)
    assert [h.record.id for h in pool[:5]] != [h.record.id for h in raw[:5]]  # something was dropped


def test_pointer_lines_survive(index):
    ans = _search(index, QUERY, limit=6, kinds=["digest"])
    assert ans.cards
    for c in ans.cards:
        ses = c.hit.record.fields["chat"]
        assert c.snippet.splitlines()[-1] == f"Chat: chat:{ses}"
        assert c.to_dict()["chat"] == ses
        assert f"Chat: chat:{ses}" in ans.text
    assert {c.to_dict()["chat"] for c in ans.cards} >= {"ses_long"}
    full = _search(index, QUERY, limit=10)
    for c in full.cards:
        if c.hit.record.kind == "digest":
            assert c.snippet.endswith(f"Chat: chat:{c.hit.record.fields['chat']}")
        if c.hit.record.kind == "chat":
            assert c.hit.record.ref == f"chat:{session_key(c.hit)[1]}"


def test_other_kinds_are_picked_as_before(index):
    # no chat or digest among the candidates: the cards are H8's, untouched
    kinds = ["file", "log"]
    raw = _candidates(index, QUERY, kinds=tuple(kinds))
    ans = _search(index, QUERY, limit=2, kinds=kinds)
    assert [c.hit.record.id for c in ans.cards] == [h.record.id for h in diversify(raw, 2)]


def test_two_cards_per_session_with_diversity_off(workspace):
    idx = HistoryIndex.build(workspace, NO_DIVERSITY, cache=EmbeddingCache(None))
    raw = _candidates(idx, QUERY)
    assert len(_pool(idx, raw)) >= 6  # other candidates are left: two a session
    ans = _search(idx, QUERY, limit=6)
    assert [c.hit.record.id for c in ans.cards] == [h.record.id for h in _pool(idx, raw)[:6]]
    assert [c.hit.rank for c in ans.cards] == list(range(1, 7))
    keys = _sessions(ans.cards)
    assert all(keys.count(k) <= 2 for k in keys)


def test_one_session_does_not_hide_its_other_matching_turns(tmp_path):
    """Issue 28 item 4: one chat, three turn digests, a query matching two of them: both matching
    turns get a card (today: one card for the whole session, though the limit is 8)."""
    acme = tmp_path / "ws" / "acme"
    _write(acme / ".space" / "space.json", {"slug": "acme", "title": "ACME", "members": ["u-anna"],
                                            "container": "shared", "history_search": True})
    _chat(acme, "ses_x", "Weekly sync", ["Lunch on Friday at noon.", "The invoice numbering restarts in 2027.",
                                         "Quarterly invoice numbering: the prefix changes to INV-Q."])
    _digest(acme, "t_x_01", "ses_x", "Where do we have lunch?", "Lunch booked on Friday at noon.")
    _digest(acme, "t_x_02", "ses_x", "Does the invoice numbering restart?", "Invoice numbering restarts in 2027.")
    _digest(acme, "t_x_03", "ses_x", "What is the quarterly invoice numbering prefix?",
            "Quarterly invoice numbering uses the prefix INV-Q.")
    _write(acme / "notes" / "menu.md", "# Canteen\n\nThe canteen menu for the week.\n")
    idx = HistoryIndex.build(tmp_path / "ws", CFG, cache=EmbeddingCache(None))
    ans = _search(idx, "invoice numbering", kinds=["digest"])
    turns = [c.hit.record.fields["turn"] for c in ans.cards]
    assert len(ans.cards) == 2 and set(turns) == {"t_x_02", "t_x_03"}
    both = _search(idx, "invoice numbering", limit=2)
    assert _sessions(both.cards).count(("acme", "ses_x")) == 2
    # with room to spare (the menu note is all else there is) the chat, close enough, comes third;
    # the lunch turn, not close enough, never does (issue 39 item 9)
    roomy = _search(idx, "invoice numbering")
    assert {c.hit.record.ref for c in roomy.cards if session_key(c.hit)} == {"digest:t_x_02", "digest:t_x_03",
                                                                            "chat:ses_x"}


DEMO_QUERIES = [
    ("выгрузка отчёта кодировка", None), ("отчёт выгрузка клиенты продажи", None), ("ATL-1655 CSV export", None),
    ("выгрузка", ["chat", "digest"]), ("report", None), ("расписание понедельник", None),
    ("NDA Globex review", None), ("выгрузка отчёта", None),
]


@pytest.mark.parametrize("query,kinds", DEMO_QUERIES)
@pytest.mark.parametrize("spaces", [None, "all"])
def test_property_two_cards_a_session_and_no_empty_slot(demo, query, kinds, spaces):
    limit = 15 if spaces else 10
    ans = _search(demo, query, kinds=kinds, spaces=spaces, limit=limit)
    searched = ans.searched
    raw = _candidates(demo, query, kinds=tuple(kinds) if kinds else None, spaces=searched)
    pool = _pool(demo, raw)
    close = [h for h in raw if _close(demo, raw, h)]
    ids = {h.record.id for h in pool}
    # freed slots are filled: from the pool, then (the pool shown whole) by close-enough candidates
    assert len(ans.cards) == min(limit, len(ids | {h.record.id for h in close}))
    extra = _filled(demo, raw, ans.cards)
    assert all(c.hit.record.id in ids for c in ans.cards if c not in extra)
    for c in ans.cards:
        if c.hit.record.kind == "digest":
            assert c.snippet.splitlines()[-1] == f"Chat: chat:{c.hit.record.fields['chat']}"


# -- diversify with groups, by hand ------------------------------------------------------------

def _hits(spec):
    """spec: (id, kind, session or None, score), best first."""
    out = []
    for i, (rid, kind, ses, score) in enumerate(spec, start=1):
        fields = {"ses_id": ses} if kind == "chat" and ses else {"chat": ses} if kind == "digest" and ses else {}
        ref = f"chat:{ses}" if kind == "chat" else f"digest:{rid}" if kind == "digest" else rid
        r = Record(id=rid, kind=kind, space="s", ref=ref, text=rid, fields=fields)
        out.append(Hit(record=r, score=score, rank=i, passage=Passage(rid, 0, rid, 0, len(rid))))
    return out


def test_diversify_groups_by_hand():
    hits = _hits([("d1", "digest", "A", 1.0), ("c1", "chat", "A", 0.95), ("d2", "digest", "A", 0.9),
                  ("d3", "digest", "B", 0.8), ("f1", "file", None, 0.75), ("c2", "chat", "C", 0.7),
                  ("f2", "file", None, 0.6), ("l1", "log", None, 0.0)])
    assert [h.record.id for h in diversify(hits, 3)] == ["d1", "c1", "d2"]
    got = diversify(hits, 3, group=session_key)
    assert [h.record.id for h in got] == ["d1", "d3", "f1"]
    assert [h.rank for h in got] == [1, 2, 3]
    assert [h.record.id for h in diversify(hits, 5, group=session_key)] == ["d1", "d3", "f1", "c2", "f2"]


def test_diversify_groups_keep_h8_and_close_enough_over_all_candidates():
    # three sessions' digests crowd the top; the chat of session A is dropped (its digest d1 is
    # kept), the chat of session D comes in under H8 in place of the weakest digest; "close
    # enough" is measured over the whole list, so l1 (the lowest) stays the zero point
    hits = _hits([("d1", "digest", "A", 1.0), ("d2", "digest", "B", 0.9), ("d3", "digest", "C", 0.85),
                  ("c1", "chat", "A", 0.8), ("c4", "chat", "D", 0.6), ("l1", "log", None, 0.0)])
    got = diversify(hits, 3, per_kind=2, min_relative_score=0.5, group=session_key)
    assert [h.record.id for h in got] == ["d1", "d2", "c4"]
    # a lone log day far below is not close enough and never comes in
    assert "l1" not in [h.record.id for h in diversify(hits, 4, group=session_key)]


def test_a_session_fills_two_cards_by_hand():
    hits = _hits([("d1", "digest", "A", 1.0), ("c1", "chat", "A", 0.95), ("d2", "digest", "A", 0.9),
                  ("d3", "digest", "B", 0.8), ("f1", "file", None, 0.75), ("c2", "chat", "C", 0.7),
                  ("f2", "file", None, 0.6), ("l1", "log", None, 0.0)])
    assert [h.record.id for h in diversify(hits, 3, group=session_key, per_group=2)] == ["d1", "c1", "d3"]
    assert [h.record.id for h in cap_groups(hits, session_key, 2)] == ["d1", "c1", "d3", "f1", "c2", "f2", "l1"]
    assert cap_groups(hits, session_key, 1) == one_per_group(hits, session_key)
    # a second card that is not close enough stays out, even below a weaker card of another kind
    far = _hits([("d1", "digest", "A", 1.0), ("x", "file", None, 0.9), ("d2", "digest", "A", 0.3),
                 ("l", "log", None, 0.0)])
    assert [h.record.id for h in diversify(far, 3, group=session_key, per_group=2)] == ["d1", "x", "l"]
    with pytest.raises(ValueError):
        cap_groups(hits, session_key, 0)


def test_a_sessions_second_card_is_another_matching_turn_before_its_chat(index):
    """Issue 28 item 4: when a chat ranks between two matching turns of its session, the session's
    two cards are the two turns (each names its chat), not one turn and the chat; with one
    matching turn the chat still comes second, and a session's best card always stays."""
    two_turns = _hits([("d1", "digest", "A", 1.0), ("c1", "chat", "A", 0.95), ("d2", "digest", "A", 0.9),
                       ("f1", "file", None, 0.5), ("l1", "log", None, 0.0)])
    assert [h.record.id for h in index.pick(two_turns, 3)] == ["d1", "d2", "f1"]
    one_turn = _hits([("d1", "digest", "A", 1.0), ("c1", "chat", "A", 0.95), ("d2", "digest", "A", 0.1),
                      ("f1", "file", None, 0.5), ("l1", "log", None, 0.0)])
    assert [h.record.id for h in index.pick(one_turn, 3)] == ["d1", "c1", "f1"]
    chat_first = _hits([("c1", "chat", "A", 1.0), ("d1", "digest", "A", 0.95), ("d2", "digest", "A", 0.9),
                        ("l1", "log", None, 0.0)])
    assert [h.record.id for h in index.pick(chat_first, 2)] == ["c1", "d1"]
    assert [h.rank for h in index.pick(two_turns, 3)] == [1, 2, 3]
    # with room to spare, the session's third close-enough card takes a free slot (issue 39 item 9)
    assert [h.record.id for h in index.pick(two_turns, 8)] == ["d1", "c1", "d2", "f1", "l1"]
    assert [h.record.id for h in index.pick(one_turn, 8)] == ["d1", "c1", "f1", "l1"]
