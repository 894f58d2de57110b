"""What a version of a history index holds besides the Searcher's files (part of
``searchkit.tools.history``): ``workspace.json`` (the spaces as indexed, the workspace folder),
``indexing_report.json`` and, for the next update, the clean verdicts of the secret checks
(``ingest.workspace.verdicts``, issue 30).
"""
from __future__ import annotations

from typing import Any, Mapping

from searchkit.ingest.policy import IndexingReport
from searchkit.ingest.workspace import SpaceInfo


def space_dicts(spaces: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The spaces as ``workspace.json`` keeps them."""
    return {
        slug: {
            "slug": info.slug,
            "title": info.title,
            "members": list(info.members),
            "container": info.container,
            "history_search": info.history_search,
        }
        for slug, info in spaces.items()
    }


def space_info(slug: str, d: Mapping[str, Any]) -> Any:
    """A space of ``workspace.json`` (ValueError naming it when malformed)."""
    members = d.get("members", ())
    if not isinstance(d, Mapping) or not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise ValueError(f"space {slug!r}")
    return SpaceInfo(
        slug=str(d["slug"]), title=str(d.get("title", "")), members=tuple(members),
        container=d.get("container", "shared"), history_search=d.get("history_search", True) is True,
    )


def saved_report(report: IndexingReport) -> dict[str, Any]:
    """The indexing report as the index folder keeps it (H3): a digest left out because its chat is
    gone (deleted, unusable or in doubt) is counted per space, not named: its file name is its
    turn's id and the reason named the chat, so a deleted chat would stay named in the index after
    its text was erased. The report printed by ``searchkit index`` still lists them one by one."""
    d = report.to_dict()
    orphans: dict[str, int] = {}
    skips = []
    for skip in d["skips"]:
        if skip["rule"] == "orphan_digest":
            slug = skip["path_or_table"].split("/", 1)[0]
            orphans[slug] = orphans.get(slug, 0) + 1
        else:
            skips.append(skip)
    skips += [{"path_or_table": f"{slug}/.space/digests/", "rule": "orphan_digest",
               "detail": f"{n} digest(s) whose chat is missing, unusable or in doubt; left out with it, not named here"}
              for slug, n in sorted(orphans.items())]
    return {**d, "skips": skips}
