"""Property tests (hypothesis) for H14/H15 over random workspaces, callers and queries:
zero results from a space the caller is not in, zero personal records of another person, and
no personal record at all in a shared container."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.config import SearchConfig
from searchkit.ingest.workspace import SpaceInfo
from searchkit.records import KINDS, Record
from searchkit.searcher import Searcher
from searchkit.tools.history import HistoryIndex, HistorySearchError

USERS = ["u1", "u2", "u3", "u4"]
WORDS = ["отчёт", "выгрузка", "report", "export", "満月", "計算", "deadline", "статус", "score", "ATL-7"]
CFG = SearchConfig.from_dict({"dense": {"enabled": False}})


@st.composite
def workspaces(draw):
    n_spaces = draw(st.integers(1, 4))
    spaces = {}
    for i in range(n_spaces):
        slug = f"s{i}"
        members = tuple(draw(st.lists(st.sampled_from(USERS), unique=True, max_size=4)))
        spaces[slug] = SpaceInfo(slug=slug, members=members, history_search=draw(st.booleans()))
    records = []
    for j in range(draw(st.integers(1, 25))):
        personal = draw(st.booleans())
        records.append(
            Record(
                id=f"r{j}",
                kind=draw(st.sampled_from(KINDS)),
                space=draw(st.sampled_from(sorted(spaces))),
                date="2026-10-01",
                title=f"t{j}",
                ref=f"ref{j}",
                text=" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))),
                owner=draw(st.sampled_from(USERS)) if personal else draw(st.sampled_from([None] + USERS)),
                visibility="personal" if personal else "shared",
            )
        )
    return spaces, records


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=workspaces(),
    caller=st.sampled_from(USERS),
    container=st.sampled_from(["personal", "shared"]),
    requested=st.one_of(st.none(), st.just("all"), st.lists(st.sampled_from(["s0", "s1", "s2", "s3", "s9"]), min_size=1, max_size=4)),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    current=st.sampled_from(["s0", "s1", "s2", "s3"]),
)
def test_no_card_from_a_foreign_space_or_anothers_personal_record(ws, caller, container, requested, words, current):
    spaces, records = ws
    idx = HistoryIndex(Searcher.build(records, CFG), spaces)
    who = caller if container == "personal" else None
    try:
        passed = requested if container == "personal" else None
        ans = idx.search(" ".join(words), spaces=passed, limit=15 if passed is not None else 10,
                         caller=who, container=container, space=current)
    except HistorySearchError as e:
        assert e.param in ("space", "spaces")
        return
    for c in ans.cards:
        r = c.hit.record
        info = spaces[r.space]
        assert info.history_search
        if container == "personal":
            assert caller in info.members
            if r.visibility == "personal":
                assert r.owner == caller
        else:
            assert r.space == current
            assert r.visibility == "shared"
    assert set(ans.searched).isdisjoint(s for s, _ in ans.skipped)
