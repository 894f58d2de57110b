"""The space snapshot's privacy rule (issue 41 item 7; seed 000: «в пространстве с несколькими
участниками сводка собирается только из общих чатов, запусков по расписанию и автоматических
запусков, но никогда из чьих-то личных чатов»), property-tested with hypothesis over generated
spaces, chats and digests, with the chats' visibility as indexed and as the workspace has it now:

- in a space of several members no item comes from a chat that is personal (as indexed or now),
  gone or in doubt, whoever reads it; removing every such chat changes nothing of the snapshot;
- a reader who is not a member, a space with history search off and a space that does not exist
  all get the same answer: none;
- a shared container never sees a personal chat, and reads only its own space.

Also on the demo workspace (WorkspaceAccess read live): Anna's and Boris's personal chats and
digests never reach acme's snapshot, and a shared chat made personal leaves it with no re-index."""
import datetime as dt
import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.workspace import SpaceInfo
from searchkit.records import Record
from searchkit.tools import snapshot
from searchkit.tools.access import Access, ChatAccess
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
USERS = ["u-a", "u-b", "u-c"]
AS_OF = dt.date(2026, 11, 5)
NOW = dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.timezone.utc)


class Source:
    """An access source with live chats: the spaces and each chat's access now (None: in doubt)."""

    live_chats = True

    def __init__(self, spaces, chats, doubtful=()):
        self.spaces, self._chats, self.doubtful = spaces, chats, frozenset(doubtful)

    def snapshot(self):
        return Access(self.spaces, self.doubtful)

    def chats(self, slug):
        return self._chats.get(slug, {})


@st.composite
def worlds(draw):
    """Spaces with members and a switch; chats with an owner, a visibility as indexed and one now
    (the same, the other one, gone or in doubt), a run, a digest with Left/Decided and a last
    message that may be a question; pages and files. Every text names its chat (a token)."""
    spaces, records, live = {}, [], {}
    for s in range(draw(st.integers(1, 3))):
        slug = f"s{s}"
        members = draw(st.lists(st.sampled_from(USERS), unique=True, max_size=3))
        spaces[slug] = SpaceInfo(slug=slug, title=slug.upper(), members=tuple(members), container="shared",
                                 history_search=draw(st.booleans()))
        live[slug] = {}
        for c in range(draw(st.integers(0, 6))):
            ses = f"{slug}c{c}"
            owner = draw(st.sampled_from(USERS + [None]))
            indexed = "personal" if owner is not None and draw(st.booleans()) else "shared"
            now = draw(st.sampled_from(["same", "flip", "gone", "doubt"]))
            day = (AS_OF - dt.timedelta(days=draw(st.integers(0, 20)))).isoformat()
            run = draw(st.sampled_from(["chat", "scheduled", "automatic"]))
            q = "?" if draw(st.booleans()) else "."
            records.append(Record(id=f"{slug}/chat/{ses}", kind="chat", space=slug, date=day, title=ses,
                                  ref=f"chat:{ses}", text=f"{ses}\nuser: hello {ses}\nassistant: TOKEN-{ses}-msg{q}",
                                  owner=owner, visibility=indexed, fields={"ses_id": ses, "run": run}))
            records.append(Record(id=f"{slug}/digest/t{ses}", kind="digest", space=slug, date=day, title=ses,
                                  ref=f"digest:t{ses}", owner=owner, visibility=indexed,
                                  text=f"Asked: a\nLeft: TOKEN-{ses}-left\nDecided: TOKEN-{ses}-decided\nChat: chat:{ses}",
                                  fields={"chat": ses, "run": run}))
            if now == "same":
                live[slug][ses] = ChatAccess(owner, indexed)
            elif now == "flip":
                live[slug][ses] = ChatAccess(owner, "shared" if indexed == "personal" or owner is None else "personal")
            elif now == "doubt":
                live[slug][ses] = None
        records.append(Record(id=f"{slug}/page/p", kind="page", space=slug, date=AS_OF.isoformat(), title="Dash",
                              ref="page:p", text="Dash"))
    caller = draw(st.sampled_from(USERS + [None]))
    container = "shared" if caller is None else "personal"
    space = draw(st.sampled_from(sorted(spaces))) if caller is None else None
    return spaces, records, live, caller, container, space


def _private(records, live, slug):
    """The chats of ``slug`` that are personal as indexed or now, gone, or in doubt."""
    out = set()
    for r in records:
        if r.space == slug and r.kind == "chat":
            ses = r.fields["ses_id"]
            now = live[slug].get(ses)
            if r.visibility != "shared" or now is None or now.visibility != "shared":
                out.add(ses)
    return out


def _build(records, source, slug, caller, container, space):
    return snapshot.build_from(records, source, slug, caller=caller, container=container, space=space,
                               as_of=AS_OF, now=NOW)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_no_personal_chat_reaches_the_snapshot_of_a_space_of_several_members(world):
    spaces, records, live, caller, container, space = world
    source = Source(spaces, live)
    for slug, info in spaces.items():
        snap = _build(records, source, slug, caller, container, space)
        if snap is None:
            continue
        private = _private(records, live, slug)
        dumped = json.dumps(snap.to_dict()) + snap.render()
        several = len(set(info.members)) > 1
        if several or container == "shared":
            for ses in private:
                assert f"TOKEN-{ses}-" not in dumped
            # nothing a reader may not see changes what they get
            kept = [r for r in records if not (r.space == slug and r.kind in ("chat", "digest") and
                                                (r.fields.get("ses_id") or r.fields.get("chat")) in private)]
            assert _build(kept, source, slug, caller, container, space) == snap
        else:  # one member, the reader: their own personal chats count, nobody else's
            for r in records:
                if r.space == slug and r.kind == "chat" and r.owner != caller and r.fields["ses_id"] in private:
                    assert f"TOKEN-{r.fields['ses_id']}-" not in dumped
        assert snap.shared_only is several


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from(["s0", "s1", "s2", "zz", "s0/../s1", ""]))
def test_a_reader_who_may_not_read_it_gets_the_answer_of_a_space_that_does_not_exist(world, slug):
    spaces, records, live, caller, container, space = world
    source = Source(spaces, live)
    info = spaces.get(slug)
    if container == "shared":
        may = info is not None and info.history_search and slug == space
    else:
        may = info is not None and info.history_search and caller in info.members
    snap = _build(records, source, slug, caller, container, space)
    assert (snap is not None) is may
    if not may:
        assert _build(records, source, "no-such-space", caller, container, space) is None
        assert snapshot.not_found_text(slug) == snapshot.not_found_text("no-such-space").replace("no-such-space", slug)
    listed = [s for s, _ in snapshot.readable_spaces(source.snapshot(), caller, container, space)]
    assert (slug in listed) is may


def test_digest_parts_reads_multiline_parts():
    text = "Asked: why\nDone: fixed\nit twice\nLeft: check October\nDecided: Mondays 09:00\nChat: chat:ses_1"
    assert snapshot.digest_parts(text) == {"Asked": "why", "Done": "fixed\nit twice", "Left": "check October",
                                           "Decided": "Mondays 09:00"}


def test_demo_workspace_personal_chats_never_reach_acme_and_a_chat_made_personal_leaves_at_once(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    index = HistoryIndex.build(ws, SearchConfig.load(ROOT / "tests" / "data" / "hashing.json"),
                               cache=EmbeddingCache(None))
    as_of = dt.date(2026, 11, 5)
    for who in ("u-anna", "u-boris"):
        snap = snapshot.build(index, "acme", caller=who, as_of=as_of, days=30)
        dumped = json.dumps(snap.to_dict(), ensure_ascii=False) + snap.render()
        for personal in ("ses_7c19", "t_7c19_01", "ses_b3d0", "t_b3d0_01", "ses_sch1", "Никому не показывать",
                         "12% raise", "Согласовать с финансами"):
            assert personal not in dumped, (who, personal)
        assert "Ship the fix." in [it.text for it in snap.decisions.items]
        assert "Выгрузка по понедельникам в 09:00 МСК." in [it.text for it in snap.decisions.items]
        assert snap.since == "2026-10-07" and snap.until == "2026-11-05" and snap.shared_only
    assert snapshot.build(index, "acme", caller="u-olga", as_of=as_of) is None  # not a member
    assert snapshot.build(index, "archive", caller="u-anna", as_of=as_of) is None  # history search off
    chat = ws / "acme" / ".space" / "chats" / "ses_e7d1.json"
    chat.write_text(json.dumps({**json.loads(chat.read_text(encoding="utf-8")), "visibility": "personal"}),
                    encoding="utf-8")
    snap = snapshot.build(index, "acme", caller="u-boris", as_of=as_of, days=30)  # Boris owns it: still left out
    assert "Ship the fix." not in [it.text for it in snap.decisions.items]
    assert all("e7d1" not in it.ref for s in (snap.in_work, snap.decisions, snap.waiting) for it in s.items)
