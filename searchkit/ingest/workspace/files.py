"""The loaders of a space's files and ``log.md`` (SPEC H1, H2; part of ``searchkit.ingest.workspace``):
the walk over a space's folders (never through a link, never deeper than ``max_depth``), each text
file decoded and titled, and the log cut into one record a day.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _utf8
from searchkit.ingest.workspace.reading import _iso_day, _lkind, _read_text, _short, _special_detail
LOG_HEADING = re.compile(r"^##[ \t]+(\d{4}-\d{2}-\d{2})(?![\d])[ \t]*[-—–:·|]*[ \t]*(.*?)\s*$")



def _file_day(path: Path, rel: str, file_dates: Mapping[str, str]) -> tuple[str | None, str | None]:
    stamp = file_dates.get(rel)
    if stamp and _iso_day(stamp):
        return _iso_day(stamp), stamp
    try:
        mtime = datetime.fromtimestamp(os.lstat(path).st_mtime, timezone.utc).isoformat(timespec="seconds")
    except (OSError, OverflowError, ValueError):
        return None, None
    return _iso_day(mtime), mtime


def _load_log(sp: _Space, file_dates: Mapping[str, str], out: _Collector) -> None:
    slug = sp.slug
    path = sp.folder / "log.md"
    where = f"{slug}/log.md"
    kind = _lkind(path)
    if kind in ("missing", "dir"):
        return
    policy = out.policy
    read = _read_text(path, where, out, sp.real, rule_on_bad="binary", cap=policy.max_log_bytes,
                      cap_name="max_log_bytes")
    if read is None:
        return
    text, encoding = read
    if encoding != "utf_8":
        out.note(where, "decoded", f"decoded from {encoding}")
    days: dict[str, list[str]] = {}
    heads: dict[str, str] = {}
    current: str | None = None
    preamble: list[str] = []
    for line in text.splitlines():
        match = LOG_HEADING.match(line)
        if match and _iso_day(match.group(1)):
            current = match.group(1)
            if current in days:
                out.note(where, "duplicate", f"## {current} appears more than once; sections merged")
                days[current].append("")
            else:
                days[current] = []
                heads[current] = match.group(2)
        if current is None:
            preamble.append(line)
        else:
            days[current].append(line)
    if not days:
        day, stamp = _file_day(path, "log.md", file_dates)
        if text.strip():
            out.note(where, "log_no_headings", "no '## YYYY-MM-DD' heading; indexed whole as one log record (ref log.md)")
        secret = out.verdicts.secret_content(text)
        if secret:
            out.skip(where, "secret_content", f"holds {secret}")
            out.verdicts.drop()  # nothing of it is indexed
            return
        out.add(
            kind="log", space=slug, key="log.md", ref="log.md", date=day, title="log.md", text=text,
            where=where, fields={"source_path": "log.md", "whole_file": True, **({"modified": stamp} if stamp else {})},
        )
        return
    if any(ln.strip() and not ln.lstrip().startswith("#") for ln in preamble):
        out.skip(where, "log_preamble", f"{sum(1 for ln in preamble if ln.strip())} lines before the first day heading")
    for day in sorted(days):
        body = "\n".join(days[day])
        rest = "\n".join(days[day][1:])
        secret = out.verdicts.secret_content(body)
        if secret:
            out.skip(f"{where}#{day}", "secret_content", f"holds {secret}")
            out.verdicts.drop()  # nothing of it is indexed
            continue
        out.add(
            kind="log", space=slug, key=day, ref=f"log.md#{day}", date=day,
            title=heads[day] or _short(rest) or f"log.md {day}", text=body, where=f"{where}#{day}",
            fields={"source_path": "log.md"},
        )


def _load_files(sp: _Space, file_dates: Mapping[str, str], out: _Collector) -> None:
    """Every file of the space (``.space/`` and ``log.md`` aside), folder by folder, in name order.

    The walk keeps its own stack (no recursion: a folder nested thousands of levels deep cannot
    stop it), and a folder deeper than ``Policy.max_depth`` is skipped alone (``too_deep``), as is
    one that cannot be listed (``unreadable``): the rest of the space is read all the same."""
    slug = sp.slug
    for rel_dir, names in _walk(sp, out):
        here = sp.folder / rel_dir if rel_dir else sp.folder
        for name in names:
            rel = rel_dir + name
            if rel == "log.md":
                continue
            _guard(out, f"{slug}/{rel}", None, _load_file, sp, here / name, rel, file_dates, out)


def _walk(sp: _Space, out: _Collector) -> Iterator[tuple[str, list[str]]]:
    """``(relative folder, its file names)`` for each folder of the space that is read, top down,
    the folders of each in name order (the order ``os.walk`` gives); never follows a link."""
    policy = out.policy
    slug = sp.slug
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        here = sp.folder / rel_dir if rel_dir else sp.folder
        try:
            with os.scandir(here) as entries:
                listed = sorted(e.name for e in entries)
        except OSError as exc:
            out.skip(f"{slug}/{rel_dir}", "unreadable", str(exc.strerror or exc))
            continue
        files: list[str] = []
        folders: list[str] = []
        for name in listed:
            kind = _lkind(here / name)
            if kind != "dir" and not (kind == "link" and os.path.isdir(here / name)):
                files.append(name)  # a file, a file link, or something else: judged, never opened unless regular
                continue
            if not rel_dir and name == ".space":
                continue
            ruled = policy.dir_skip(name)
            if kind == "link":
                out.skip(f"{slug}/{rel_dir}{name}/", "symlink", "a folder link is never followed")
            elif ruled:
                out.skip(f"{slug}/{rel_dir}{name}/", *ruled)
            elif depth + 1 > policy.max_depth:
                out.skip(f"{slug}/{rel_dir}{name}/", "too_deep",
                         f"a folder {depth + 1} levels deep > max_depth {policy.max_depth}; its files are not read")
            else:
                folders.append(name)
        yield rel_dir, files
        stack.extend((f"{rel_dir}{name}/", depth + 1) for name in reversed(folders))


def _load_file(sp: _Space, path: Path, rel: str, file_dates: Mapping[str, str], out: _Collector) -> None:
    slug = sp.slug
    where = f"{slug}/{rel}"
    policy = out.policy
    kind = _lkind(path)
    if kind == "link":
        out.skip(where, "symlink", "a file link is never followed")
        return
    if kind == "special":
        out.skip(where, "special_file", _special_detail(path))
        return
    if not _utf8(rel):
        out.skip(where, "bad_text", "the file's path is not valid UTF-8")
        return
    ruled = policy.path_skip(rel)
    if ruled:
        out.skip(where, *ruled)
        return
    read = _read_text(path, where, out, sp.real, rule_on_bad="binary", cap=policy.max_file_bytes,
                      cap_name="max_file_bytes")
    if read is None:
        return
    text, encoding = read
    secret = out.verdicts.secret_content(text)
    if secret:
        out.skip(where, "secret_content", f"holds {secret}")
        out.verdicts.drop()  # nothing of it is indexed
        return
    if encoding != "utf_8" and text.strip():
        out.note(where, "decoded", f"decoded from {encoding}")
    day, stamp = _file_day(path, rel, file_dates)
    fields: dict[str, Any] = {"source_path": rel}
    if stamp:
        fields["modified"] = stamp
    out.add(
        kind="file", space=slug, key=rel, ref=rel, date=day, title=_file_title(path.name, text),
        text=text, where=where, fields=fields,
    )


def _file_title(name: str, text: str) -> str:
    lower = name.lower()
    if lower.endswith((".md", ".markdown")):
        match = re.search(r"^#[ \t]+(.+?)\s*$", text, re.MULTILINE)
        if match:
            return f"{name} · {_short(match.group(1))}"
    if lower.endswith((".html", ".htm")):
        match = re.search(r"<title[^>]*>(.*?)</title>", text[:200_000], re.IGNORECASE | re.DOTALL)
        if match and match.group(1).strip():
            return f"{name} · {_short(match.group(1))}"
    return name
