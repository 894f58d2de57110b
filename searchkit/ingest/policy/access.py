"""Who may see a record (SPEC H15) and which spaces a search covers (H14; part of ``searchkit.ingest.policy``)."""
from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from searchkit.errors import InputError, ParameterError
from searchkit.records import Record

MAX_SPACES = 60
"""At most this many spaces in one search (H14)."""

CONTAINERS: tuple[str, ...] = ("personal", "shared")
"""Where a search runs: a person's own container, or a shared workspace container (H15)."""

SKIP_REASONS: tuple[str, ...] = ("not_member", "history_search_off", "space_limit")
"""Codes ``searchable_spaces`` gives for a space it leaves out (H14)."""


def _check_container(container: str) -> None:
    if container not in CONTAINERS:
        raise InputError(f"container must be one of {CONTAINERS}, got {container!r}")


def can_see(record: Record, caller: str | None, container: str) -> bool:
    """May ``caller`` see ``record`` in a search run in ``container`` (H15)?

    A personal record (a personal chat, the digests of its turns, its scheduled or automatic
    runs) is seen only by its owner, and never in a ``shared`` container (no person behind it).
    A shared record is seen by every member; membership itself is decided per space by
    ``searchable_spaces``.
    """
    _check_container(container)
    if record.visibility == "shared":
        return True
    if container != "personal" or caller is None or record.owner is None:
        return False
    return record.owner == caller


class SpaceLike(Protocol):
    slug: str
    members: tuple[str, ...]
    history_search: bool


def searchable_spaces(
    spaces: Mapping[str, SpaceLike],
    caller: str | None,
    requested: str | Sequence[str] | None,
    current: str,
    *,
    activity: Mapping[str, str] | None = None,
) -> tuple[list[str], list[tuple[str, str]]]:
    """The spaces a search covers, and those it skips with a reason code (H14).

    Args:
        spaces: every known space by slug.
        caller: the user id of the person searching; None in a shared workspace container,
            where only ``current`` is searched and ``spaces`` is not available.
        requested: the ``spaces`` parameter: None (only ``current``), ``"all"`` (every space
            the caller is a member of now) or a list of slugs.
        current: the slug of the space the search runs in.
        activity: slug -> the newest date the caller can see in that space (ISO); decides which
            spaces ``"all"`` searches when the caller is a member of more than ``MAX_SPACES``.

    Returns:
        ``(searched, skipped)``: slugs in request order (``current`` first, then the most
        recently active, for ``"all"``), and ``(slug, reason)`` with reason ``not_member`` |
        ``history_search_off`` | ``space_limit``. For a caller, a slug that names no space is
        skipped as ``not_member`` too, so the answer never tells a space the caller is not in
        from one that does not exist; ``history_search_off`` is told only of the caller's own
        spaces. ``"all"`` counts only searchable spaces towards ``MAX_SPACES``: the first
        ``MAX_SPACES`` are searched, the rest skipped as ``space_limit``.

    Raises:
        ParameterError: naming ``spaces`` for a malformed value, more than ``MAX_SPACES`` slugs in
            a list, or ``spaces`` given without a caller; naming ``current`` when the shared
            container's own space is unknown.
    """
    if requested is None:
        if caller is None and current not in spaces:
            raise ParameterError("space", f"unknown space {_shown(current)}")
        return _sort_out([current], spaces, caller, member_check=caller is not None)
    if caller is None:
        raise ParameterError(
            "spaces", "not available in a shared workspace container (no caller); "
            "search the current space by leaving spaces unset"
        )
    if isinstance(requested, str):
        if requested != "all":
            raise ParameterError("spaces", f"expected \"all\" or a list of space slugs, got the string {_shown(requested)}")
        mine = [s for s, info in spaces.items() if caller in info.members]
        recent = activity or {}
        mine.sort(key=lambda s: (s != current, _desc(recent.get(s) or ""), s))
        searched, skipped = _sort_out(mine, spaces, caller, member_check=True)
        for slug in searched[MAX_SPACES:]:
            skipped.append((slug, "space_limit"))
        return searched[:MAX_SPACES], skipped
    if not isinstance(requested, (list, tuple)):
        raise ParameterError("spaces", f"expected \"all\" or a list of space slugs, got {type(requested).__name__}")
    slugs: list[str] = []
    for slug in requested:
        if not isinstance(slug, str) or not slug:
            raise ParameterError("spaces", f"every item must be a non-empty space slug, got {_shown(slug)}")
        if slug not in slugs:
            slugs.append(slug)
        if len(slugs) > MAX_SPACES:
            raise ParameterError("spaces", f"more than {MAX_SPACES} spaces requested, at most {MAX_SPACES} a search")
    if not slugs:
        raise ParameterError("spaces", "the list is empty; give at least one space slug or \"all\"")
    return _sort_out(slugs, spaces, caller, member_check=True)


def _desc(text: str) -> tuple[int, ...]:
    """A key that sorts ISO strings newest first."""
    return tuple(-ord(ch) for ch in text) + (1,)


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sort_out(
    slugs: list[str], spaces: Mapping[str, SpaceLike], caller: str | None, *, member_check: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    searched: list[str] = []
    skipped: list[tuple[str, str]] = []
    for slug in slugs:
        info = spaces.get(slug)
        if info is None or (member_check and caller not in info.members):
            skipped.append((slug, "not_member"))
        elif not info.history_search:
            skipped.append((slug, "history_search_off"))
        else:
            searched.append(slug)
    return searched, skipped
