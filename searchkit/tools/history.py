"""History search (SPEC H, seed 000): the index the ``history_search`` tool reads.

``HistoryIndex`` holds a loaded workspace and the ``Searcher`` over its records; it builds, updates
(H3), saves and loads them, and for each search plans the scope: which spaces are searched and which
records the caller may see there, read from the workspace when the search runs (H14, H15;
``searchkit.tools.access``: an index never freezes them). The tool itself is
``searchkit.tools.history_search`` (``HistorySearchParams``, ``run(params, ctx)``, checks H6, H7)
with its answer in ``searchkit.tools.cards`` (cards, snippets, rendering, H8-H13).
``HistoryIndex.search(query, kinds, since, until, limit, spaces, *, caller, container, space)`` is
that tool called with keyword arguments; ``HistoryIndex.raw_search`` is the searcher's own ranking
in exactly that scope (``searchkit search --index`` over a history index).
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np

from searchkit.config import SearchConfig
from searchkit.errors import DataError, ResourceError
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache
from searchkit.index.embedding import Embedder
from searchkit.ingest.policy import IndexingReport, Policy, searchable_spaces
from searchkit.ingest.workspace import SpaceInfo, carry_over, load_workspace
from searchkit.ingest.workspace.verdicts import FILE_NAME as MEMO_FILE
from searchkit.ingest.workspace.verdicts import Memo
from searchkit.rank import conversation
from searchkit.rank.diversity import cap_groups, close_enough, diversify, fill_up, renumber
from searchkit.rank.rerank import passage_sentences
from searchkit.records import Hit, Record
from searchkit.searcher import Searcher
from searchkit.tools import history_search as _tool
from searchkit.tools.access import ACCESS_UNKNOWN, Access, AccessSource, StaticAccess, UnknownAccess, WorkspaceAccess
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import (  # noqa: F401 - the answer's names, importable from here as before
    FULL_CHARS, SHORT_CHARS, TOP_FULL, Card, HistoryAnswer, _header, _line, _record_session,
    pointer_line, render, session_key,
)
from searchkit.tools.history_files import saved_report, space_dicts, space_info
from searchkit.tools.history_search import (  # noqa: F401 - the tool's names, importable from here as before
    DEFAULT_LIMIT, DEFAULT_LIMIT_SPACES, MAX_LIMIT, MAX_LIMIT_SPACES, HistorySearchError,
    HistorySearchParams, RawAnswer,
)
from searchkit.tools.version_cache import own_cache, shared_cache, version_caches
from searchkit.util import read_json_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpdateReport:
    """What an incremental update (H3) changed."""

    added: int
    changed: int
    removed: int
    unchanged: int
    embedded: int
    kept: int = 0
    """Records of the previous index kept because their part could not be read now (issue 27 item 11)."""

    def line(self) -> str:
        kept = f"; {self.kept} kept from the previous index (their part could not be read now)" if self.kept else ""
        return (
            f"update: {self.added} added, {self.changed} changed, {self.removed} removed, "
            f"{self.unchanged} unchanged; {self.embedded} passages embedded{kept}"
        )


class HistoryIndex:
    """A workspace's records, its spaces, and the Searcher over them."""

    def __init__(
        self, searcher: Searcher, spaces: Mapping[str, SpaceInfo], report: IndexingReport | None = None, *,
        workspace: str | Path | None = None, access: AccessSource | None = None,
    ) -> None:
        """``spaces`` are the spaces as indexed. Who may see what is read from ``access`` at each
        search: by default the ``workspace`` folder's files (``WorkspaceAccess``), or, for an
        index made in memory without a workspace, ``spaces`` and the records' owners
        (``StaticAccess``)."""
        self.searcher = searcher
        self.spaces = dict(spaces)
        self.report = report
        self.workspace = None if workspace is None else Path(workspace).absolute()
        if access is None:
            access = StaticAccess(self.spaces) if self.workspace is None else WorkspaceAccess(self.workspace)
        self.access = access
        self._visibility = _VisibilityTable(searcher.records)
        self.memo: Memo | None = None
        """The clean verdicts of the secret checks this version keeps for the next update (issue 30)."""
        own_cache(searcher)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        workspace: str | Path,
        config: SearchConfig | None = None,
        *,
        embedder: Embedder | None = None,
        cache: EmbeddingCache | None = None,
        show_progress: bool = False,
        policy: Policy | None = None,
    ) -> "HistoryIndex":
        """Index a workspace folder; ``policy`` (``ingest.policy.Policy``) sets what is never
        indexed and the size caps (default ``DEFAULT_POLICY``)."""
        load = load_workspace(workspace, policy=policy)
        s = Searcher.build(load.records, config, embedder=embedder, cache=cache, show_progress=show_progress)
        s.analyse_lines(show_progress=show_progress)
        index = cls(s, load.spaces, load.report, workspace=workspace)
        index.memo = Memo.of(load, policy)
        return index

    def update(self, workspace: str | Path, *, show_progress: bool = False, policy: Policy | None = None) -> UpdateReport:
        """Re-read the workspace (H3): records whose source is gone leave (a deleted row; a
        deleted chat with its turns' digests), new and changed ones come in, and only new or
        changed passage text is embedded (the embedding cache holds the rest). What could not be
        read this time (an unreadable folder, a failed loader, a damaged database) is never taken
        for deleted: its previous records stay (``ingest.workspace.carry_over``). The cost follows
        what changed (issue 30): a text this version found clean is not checked for secrets again
        (``memo``), an unchanged passage keeps its BM25 tokens; the new version is the same as a
        fresh ``build`` of the workspace."""
        memo = self.memo.digests(policy) if self.memo is not None else None
        load, kept = carry_over(self.searcher.records, load_workspace(workspace, policy=policy, memo=memo))
        old = {r.id: r for r in self.searcher.records}
        new = {r.id: r for r in load.records}
        added = sum(1 for i in new if i not in old)
        removed = sum(1 for i in old if i not in new)
        changed = sum(1 for i, r in new.items() if i in old and _content(old[i]) != _content(r))
        unchanged = len(new) - added - changed
        s0 = self.searcher
        cache = shared_cache(s0.cache)
        before = cache.stats().misses if cache is not None else 0
        s = Searcher.build(load.records, s0.config, embedder=s0.embedder, cache=cache, show_progress=show_progress,
                           previous=s0)
        s.analyse_lines(s0, show_progress=show_progress)
        after = cache.stats().misses if cache is not None else 0
        if cache is not None and removed + changed:  # erased text leaves the cache too (H3)
            was = {i for i in old if i not in new or _content(old[i]) != _content(new[i])}
            try:
                cache.forget(_erased_texts(s0, s, was))
            except ResourceError as exc:  # the cache's write failed (forget raises no other): the index's own erasure must not wait on it
                log.warning("%s; the erased text's vectors stay in the embedding cache until the next update", exc)
        own_cache(s)
        carry_heads(s0, s)
        self.searcher, self.spaces, self.report = s, dict(load.spaces), load.report
        self.memo = Memo.of(load, policy)
        self._visibility = _VisibilityTable(s.records)
        self._point_at(workspace)
        return UpdateReport(added, changed, removed, unchanged, int(after - before), kept)

    def retire(self, newer: "HistoryIndex") -> int:
        """This version is no longer served, ``newer`` is (``searchkit serve`` after a refresh; H3).
        A query answered from this version after ``newer``'s update erased text from the embedding
        cache could have put an erased passage's sentences back (the rerank stage embeds what the
        cache lacks). So this version stops storing in the cache (its queries still running embed
        what they miss without keeping it), then what ``newer`` no longer indexes is erased from
        the cache again. Returns the number of entries removed."""
        for version_cache in version_caches(self.searcher):
            version_cache.seal()
        cache = shared_cache(self.searcher.cache)
        old = {r.id: r for r in self.searcher.records}
        new = {r.id: r for r in newer.searcher.records}
        was = {i for i, r in old.items() if i not in new or _content(r) != _content(new[i])}
        if cache is None or not was:
            return 0
        try:
            return cache.forget(_erased_texts(self.searcher, newer.searcher, was))
        except ResourceError as exc:  # the cache's write failed (forget raises no other)
            log.warning("%s; the erased text's vectors stay in the embedding cache until the next update", exc)
            return 0

    # -- persistence ----------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        spaces = space_dicts(self.spaces)
        where = {"workspace": str(self.workspace)} if self.workspace is not None else {}  # read at query time
        extra = {"workspace.json": json.dumps({"spaces": spaces, **where}, ensure_ascii=False, indent=2) + "\n"}
        if self.report is not None:
            extra["indexing_report.json"] = json.dumps(saved_report(self.report), ensure_ascii=False, indent=2) + "\n"
        if self.memo is not None:  # of this version's records only (H3)
            extra[MEMO_FILE] = self.memo.text(r.id for r in self.searcher.records)
        return self.searcher.save(folder, extra_files=extra)

    @classmethod
    def load(cls, folder: str | Path, config: SearchConfig | None = None, *, embedder: Embedder | None = None,
             cache: EmbeddingCache | None = None, previous: "HistoryIndex | None" = None) -> "HistoryIndex":
        """Load the current version of a history index folder (its records, spaces and Searcher
        from one version, never mixed with a version a writer publishes meanwhile). ``previous``, the
        version served before (a refresh): its records and passages are reused where their lines are
        the same (``Searcher.load_version``)."""
        with store.reading(folder) as version:
            if not (version / "workspace.json").is_file():
                raise DataError(
                    f"{folder} is not a history index (no workspace.json); build one with `searchkit index --workspace`", reason="no_index"
                )
            s = Searcher.load_version(version, config, embedder=embedder, cache=cache, name=str(folder),
                                      previous=None if previous is None else previous.searcher)
            try:
                saved = read_json_file(version / "workspace.json")  # a regular file only: no FIFO hang
                spaces = {slug: space_info(slug, d) for slug, d in saved["spaces"].items()}
                where = saved.get("workspace")
                if where is not None and (not isinstance(where, str) or not where):
                    raise ValueError("workspace")
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
                raise DataError(f"{folder}: workspace.json is damaged; rebuild the index") from None
            memo = Memo.read(version)
        index = cls(s, spaces, workspace=where, access=None if where else _unknown_access(folder))
        index.memo = memo
        return index

    def _point_at(self, workspace: str | Path) -> None:
        """Read who may see what from ``workspace`` from now on (and record it when saved); the
        access source already reading that folder is kept (``share_access``)."""
        self.workspace = Path(workspace).absolute()
        fresh = WorkspaceAccess(self.workspace)
        if not (isinstance(self.access, WorkspaceAccess) and self.access.root == fresh.root):
            self.access = fresh

    def follow(self, previous: "HistoryIndex") -> None:
        """This version is served after ``previous`` (a refresh): read who may see what through
        its access source (``share_access``) and take its records' speaker-like line heads where
        a record's text is the same (``carry_heads``), so the new version's first searches redo
        neither (issue 41 item 9)."""
        self.share_access(previous)
        carry_heads(previous.searcher, self.searcher)

    def share_access(self, previous: "HistoryIndex") -> bool:
        """Read who may see what through ``previous``'s access source when both read the same
        workspace folder (a new version served after a refresh; issue 41 item 9). What it parsed
        of the workspace's files carries over, each file still checked against its ``lstat``
        signature at every search (``WorkspaceAccess``), so the answers are those of a fresh
        source, and the new version's first searches do not read every chat file again (about
        3,000 files, seconds, at 100k passages). Returns whether it is shared."""
        mine, theirs = self.access, previous.access
        if isinstance(mine, WorkspaceAccess) and isinstance(theirs, WorkspaceAccess) and mine.root == theirs.root:
            self.access = theirs
            return True
        return False

    # -- the tool -------------------------------------------------------------------------
    def search(
        self,
        query: object,
        kinds: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        spaces: str | Sequence[str] | None = None,
        *,
        caller: str | None,
        container: str,
        space: str | None,
        lang: str | None = None,
    ) -> HistoryAnswer:
        """history_search (H6-H15): ``searchkit.tools.history_search.run`` with these parameters
        and this context. ``container`` is ``personal`` (a person's container: ``caller`` is
        required, and ``spaces`` may name other spaces of the caller, the current one is always
        searched too) or ``shared`` (a workspace container: no person behind it, only ``space`` is
        searched, personal chats never returned); ``space`` is the slug of the space the search
        runs in (None: the caller's first space). Raises ``ParameterError`` naming the parameter
        on bad input, before anything is searched, and ``ResourceError`` (reason ``access``) when who may see what
        cannot be read from the workspace now.

        Privacy (H14, H15): membership, each space's switch and each chat's owner and visibility
        are read when the search runs; the search sees only the records of the searched spaces
        that the caller may see, and BM25's term statistics are computed over those alone, so no
        card, score, count or message depends on anything the caller may not see. A query that is
        only an ID (no word of any language) gets the space's language (``space.json`` ``lang``,
        else Russian, the seed's)."""
        params = HistorySearchParams(query, kinds, since, until, limit, spaces)  # type: ignore[arg-type]
        ctx = ToolContext(caller=caller, container=container, space=space, lang=lang, index=self)
        return _tool.run(params, ctx)

    def raw_search(
        self,
        query: object,
        *,
        k: int = 10,
        kinds: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        spaces: str | Sequence[str] | None = None,
        caller: str | None,
        container: str,
        space: str | None,
    ) -> RawAnswer:
        """The searcher's own top ``k`` (each retriever's score and rank; no cards, no kind or
        session rule) within exactly the scope ``search`` would use for the same caller,
        container, space and spaces (H14, H15; issue 27 item 3): what ``searchkit search --index``
        shows for a history index. Same errors as ``search``."""
        return _tool.raw(self, query, k=k, kinds=kinds, since=since, until=until, spaces=spaces,
                         caller=caller, container=container, space=space)

    def find(self, space: str, kind: str, ref: str) -> int | None:
        """The row (in ``searcher.records``) of the record of ``space`` of ``kind`` whose ref is
        ``ref``, or None: what ``chat_read`` and ``app_row`` open (a file named like a ref is not
        the chat or row). Who may see it is the caller's plan's business (``plan``), never this
        lookup's."""
        table = self.__dict__.get("_by_ref")
        if table is None or table[0] is not self.searcher:  # built once per searcher (update swaps it)
            rows = {(r.space, r.kind, r.ref): i for i, r in enumerate(self.searcher.records)}
            table = (self.searcher, rows)
            self._by_ref = table
        return table[1].get((space, kind, ref))

    def default_space(self, caller: str | None) -> str | None:
        """The space a caller's search runs in when none is given: the first (by slug) the caller
        is a member of now or was when the index was built (so a removed member is told why
        nothing of it was searched); None when there is none."""
        now = self.access.snapshot().spaces
        mine = {s for s, info in now.items() if caller in info.members}
        mine |= {s for s, info in self.spaces.items() if caller in info.members}
        return min(mine) if mine else None

    # -- the steps of a search ------------------------------------------------------------
    def plan(self, who: str | None, spaces: str | Sequence[str] | None, current: str) -> "Plan":
        """Which spaces a search by ``who`` (None: a shared container) in space ``current`` covers,
        which it skips and why, and which records the caller may see there, read from the access
        source now (H14, H15). A list of ``spaces`` searches the current space too (seed: «искать и
        в других ваших пространствах»). Raises ``ParameterError`` naming ``spaces`` for a
        malformed value."""
        access = self.access.snapshot()
        chats = _ChatCheck(self.access, who) if self.access.live_chats else None
        if isinstance(spaces, (list, tuple)):
            spaces = list(dict.fromkeys([current, *spaces]))
        if who is None and current in access.doubtful:
            return Plan(access, (), ((current, ACCESS_UNKNOWN),), None, who)
        activity = None
        if spaces == "all" and who is not None:
            mine = [s for s, info in access.spaces.items() if who in info.members]
            activity = self._visibility.latest(self._visibility.scope(mine, who, chats))
        searched, skipped = searchable_spaces(access.spaces, who, spaces, current, activity=activity)
        if spaces == "all" and who is not None and current not in searched and current not in dict(skipped):
            # the space the search runs in, left or switched off since: say why it was not searched
            skipped = searchable_spaces(access.spaces, who, None, current)[1] + list(skipped)
        skipped = self._in_doubt(skipped, access, who, spaces)
        scope = self._visibility.scope(searched, who, chats) if searched else None
        return Plan(access, tuple(searched), tuple(skipped), scope, who)

    def _in_doubt(self, skipped: Sequence[tuple[str, str]], access: Access, who: str | None,
                  spaces: str | Sequence[str] | None) -> list[tuple[str, str]]:
        """A space whose settings cannot be read now is skipped as ``access_unknown`` when the
        caller was a member of it as indexed (else it stays ``not_member``: whether a space the
        caller is not in exists is never told)."""
        def was_member(slug: str) -> bool:
            info = self.spaces.get(slug)
            return who is not None and info is not None and who in info.members

        out = [(s, ACCESS_UNKNOWN if r == "not_member" and s in access.doubtful and was_member(s) else r)
               for s, r in skipped]
        if spaces == "all":
            listed = {s for s, _ in out}
            out += [(s, ACCESS_UNKNOWN) for s in sorted(access.doubtful) if was_member(s) and s not in listed]
        return out

    def kinds_mask(self, kinds: Sequence[str]) -> Any:
        """The records of ``self.searcher`` whose kind is one of ``kinds`` (a bool array)."""
        return self._visibility.of_kinds(kinds)

    def pick(self, hits: Sequence[Hit], limit: int) -> list[Hit]:
        """The cards: H8 over the candidates, a session (a chat and its turns' digests) filling at
        most ``per_kind`` cards while other candidates compete, a further one only when close
        enough (H8's rule; issue 28 item 4), another matching turn before the chat itself, so one
        long chat neither crowds out other sessions nor hides its other matching turns (each digest
        names its chat); when the candidates run out, a session's further close-enough cards fill
        the free slots (issue 39 item 9). "Close enough" is ``rank.diversity.closeness``: each
        retriever's score relative to its best, weighed as ``fusion.weights``, whatever the number
        of candidates."""
        d = self.searcher.config.diversity
        weights = self.searcher.config.fusion.weights  # closeness weighs the retrievers as fusion does
        if d.enabled:
            return diversify(hits, limit, per_kind=d.per_kind, min_relative_score=d.min_relative_score,
                             group=session_key, per_group=d.per_kind, prefer=_is_turn, weights=weights)
        capped = cap_groups(hits, session_key, max(1, d.per_kind), min_relative_score=d.min_relative_score,
                            prefer=_is_turn, weights=weights)
        close = close_enough(hits, d.min_relative_score, weights)
        chosen = capped[:limit] + fill_up(hits, capped, limit - len(capped), close)
        order = {id(h): i for i, h in enumerate(hits)}
        return renumber(sorted(chosen, key=lambda h: order[id(h)]))


@dataclass(frozen=True)
class Plan:
    """One search's scope (``HistoryIndex.plan``): the access snapshot it was read from, the spaces
    searched and skipped (with the reason), the mask of the records the caller may see there, and
    who is searching."""

    access: Any
    searched: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    scope: Any
    caller: str | None


class _ChatCheck:
    """For one search: may the caller see chat ``(space, ses_id)`` as the workspace has it now?
    Each space's chats are read once per search (H15; a chat gone or in doubt: no)."""

    def __init__(self, source: AccessSource, caller: str | None) -> None:
        self.source, self.caller = source, caller
        self._tables: dict[str, Any] = {}

    def __call__(self, space: str, ses_id: str) -> bool:
        table = self._table(space)
        access = table.get(ses_id) if table is not None else None
        return access is not None and access.allows(self.caller)

    def allowed(self, space: str, ses_ids: Sequence[str]) -> Any:
        """``self(space, s)`` for each of ``ses_ids`` (a bool array). The answer for one table as
        read (the access source returns the very same table while no chat file of the space
        changed) and one caller is kept with that table, so an unchanged space costs its
        signature check only."""
        table = self._table(space)
        if not table:  # none readable, or no chat at all
            return np.zeros(len(ses_ids), dtype=bool)
        if not isinstance(table, MappingProxyType):  # a table someone may change: read it each time
            return np.fromiter((a is not None and a.allows(self.caller) for a in map(table.get, ses_ids)),
                               dtype=bool, count=len(ses_ids))
        key = (space, self.caller, ses_ids)
        hit = _ALLOWED.get(id(table))
        found = hit[1].get(key) if hit is not None and hit[0] is table else None  # one read: another thread may clear
        if found is not None:
            return found
        out = np.fromiter((a is not None and a.allows(self.caller) for a in map(table.get, ses_ids)),
                          dtype=bool, count=len(ses_ids))
        out.flags.writeable = False
        with _ALLOWED_LOCK:
            hit = _ALLOWED.get(id(table))
            if hit is None or hit[0] is not table:
                if len(_ALLOWED) >= 256:
                    _ALLOWED.clear()
                hit = _ALLOWED[id(table)] = (table, {})
            if len(hit[1]) >= 256:
                hit[1].clear()
            hit[1][key] = out
        return out

    def _table(self, space: str) -> Any:
        if space not in self._tables:
            self._tables[space] = self.source.chats(space)
        return self._tables[space]


_ALLOWED: dict[int, tuple[Any, dict[tuple, Any]]] = {}
"""id(chat table) -> (that table, {(space, caller, ses_ids): allowed}): ``_ChatCheck.allowed``'s answers
(the table is held, so its id is not reused while it is here)."""
_ALLOWED_LOCK = threading.Lock()


def open_index(folder: str | Path, config: SearchConfig | None = None, **kw: Any) -> Any:
    """The index at ``folder``: a ``HistoryIndex`` when it is a history index (it holds
    ``workspace.json``), else the ``Searcher`` of a dataset index. The kind is read from the very
    version a dataset index is loaded from, so a history index is never searched as a dataset."""
    with store.reading(folder) as version:
        if not (version / "workspace.json").is_file():
            return Searcher.load_version(version, config, name=str(folder), **kw)
    return HistoryIndex.load(folder, config, **kw)


class _VisibilityTable:
    """Per-record space, visibility, owner, session and day as arrays, for fast scope masks
    (H14, H15)."""

    def __init__(self, records: Sequence[Record]) -> None:
        n = len(records)
        spaces = sorted({r.space for r in records})
        owners = sorted({r.owner for r in records if r.owner is not None})
        self._space_ix = {s: i for i, s in enumerate(spaces)}
        self._owner_ix = {o: i for i, o in enumerate(owners)}
        self.space = np.fromiter((self._space_ix[r.space] for r in records), dtype=np.int64, count=n)
        self.personal = np.fromiter((r.visibility != "shared" for r in records), dtype=bool, count=n)
        self.owner = np.fromiter(
            (self._owner_ix.get(r.owner, -1) if r.owner is not None else -1 for r in records),
            dtype=np.int64, count=n,
        )
        # the session of each chat and digest (its chat, live-checked at query time); -1: no session
        sessions: dict[tuple[str, str] | None, int] = {}
        self.session = np.fromiter(
            (sessions.setdefault(_record_session(r), len(sessions)) if r.kind in _SESSION_KINDS else -1
             for r in records),
            dtype=np.int64, count=n,
        )
        self.sessions: list[tuple[str, str] | None] = list(sessions)
        # each space's sessions (their rows in ``sessions`` and their ses_ids), and each record's
        # session where it has one: a scope checks the chats a space at a time
        by_space: dict[str, tuple[list[int], list[str]]] = {}
        for i, key in enumerate(self.sessions):
            if key is not None:
                rows, ids = by_space.setdefault(key[0], ([], []))
                rows.append(i)
                ids.append(key[1])
        self._by_space = {s: (np.asarray(rows, dtype=np.int64), tuple(ids)) for s, (rows, ids) in by_space.items()}
        self._has_session = self.session >= 0
        self._record_session = self.session[self._has_session]
        kinds = sorted({r.kind for r in records})
        self._kind_ix = {k: i for i, k in enumerate(kinds)}
        self.kind = np.fromiter((self._kind_ix[r.kind] for r in records), dtype=np.int64, count=n)
        days = sorted({r.date for r in records if r.date})
        day_ix = {d: i for i, d in enumerate(days)}
        self._days = days
        self.day = np.fromiter((day_ix[r.date] if r.date else -1 for r in records), dtype=np.int64, count=n)

    def scope(self, spaces: Sequence[str], caller: str | None, chats: _ChatCheck | None = None):
        """Records of ``spaces`` that ``caller`` may see (None: a shared container, no personal
        record at all; else shared records and the caller's own personal ones). With ``chats``
        (``(space, ses_id) -> bool``, the workspace now), a chat or digest is seen only when its
        chat allows it too: the index's copy and the workspace must both say yes."""
        wanted = [self._space_ix[s] for s in spaces if s in self._space_ix]
        in_space = np.isin(self.space, np.asarray(wanted, dtype=np.int64))
        own = self._owner_ix.get(caller, -2) if caller is not None else -2
        mask = in_space & (~self.personal | (self.owner == own))
        if chats is not None and len(self.sessions):
            ok = np.zeros(len(self.sessions), dtype=bool)
            for space in dict.fromkeys(spaces):
                found = self._by_space.get(space)
                if found is not None:
                    ok[found[0]] = chats.allowed(space, found[1])
            live = np.ones(len(mask), dtype=bool)
            live[self._has_session] = ok[self._record_session]
            mask &= live
        return mask

    def of_kinds(self, kinds: Sequence[str]):
        """Records whose kind is one of ``kinds`` (``Filters.accepts``' kind check, as one mask)."""
        wanted = [self._kind_ix[k] for k in kinds if k in self._kind_ix]
        return np.isin(self.kind, np.asarray(wanted, dtype=np.int64))

    def latest(self, mask: np.ndarray) -> dict[str, str]:
        """Space -> the newest date among the records of ``mask`` (what the caller may see)."""
        best = np.full(len(self._space_ix), -1, dtype=np.int64)
        sel = mask & (self.day >= 0)
        np.maximum.at(best, self.space[sel], self.day[sel])
        return {s: self._days[best[i]] for s, i in self._space_ix.items() if best[i] >= 0}


_SESSION_KINDS = ("chat", "digest")


def carry_heads(old: Searcher, new: Searcher) -> bool:
    """``rank.conversation.record_heads(new)`` taken from ``old``'s where a record's text is the
    same (``line_heads`` reads a record's text alone, so the heads are those ``new`` would
    compute), only the new texts read: a new version's speakers (H11's evidence) cost what
    changed, not a pass over every record's text (seconds of the server's interpreter at 100k
    passages, while calls wait for it). Returns whether ``old``'s heads were there to carry."""
    known = conversation._HEADS.get(old)
    if known is None or new is old or conversation._HEADS.get(new) is not None:
        return False
    by_text = {r.text: h for r, h in zip(old.records, known)}
    heads = [by_text[r.text] if r.text in by_text else conversation.line_heads(r.text) for r in new.records]
    with conversation._MEMOS_LOCK:
        conversation._HEADS.setdefault(new, heads)
    return True


def _is_turn(hit: Hit) -> bool:
    """A digest: one turn of its session (the chat card is the whole session)."""
    return hit.record.kind == "digest"


def _erased_texts(old: Searcher, new: Searcher, records: set[str]) -> set[str]:
    """The texts whose vectors the cache may hold and that Searcher ``new`` no longer indexes: the
    passages of ``records`` (deleted or changed in ``old``) that no passage of ``new`` has, and
    their sentences (the reranking stage's, whatever their language). Only the erased passages are
    split, so the cost follows what changed: a sentence one of them shares with a passage still
    indexed leaves too, and is embedded again when a reranked query next reaches it."""
    kept = {p.text for p in new.passages}
    gone = {p.text for p in old.passages if p.record_id in records} - kept
    return (gone | {x for t in gone for x in passage_sentences(t)}) - kept


def _content(r: Record) -> tuple:
    return (r.text, r.title, r.date, r.owner, r.visibility, r.kind, r.ref)


def _unknown_access(folder: str | Path) -> Any:
    return UnknownAccess(
        f"{folder} does not say which workspace it was built from, so who may see what cannot be checked "
        "now; nothing was searched. Rebuild it with `searchkit index --workspace DIR --out INDEX`"
    )
