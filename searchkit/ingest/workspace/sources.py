"""The loaders of ``sources.jsonl`` and the pages (SPEC H1; part of ``searchkit.ingest.workspace``):
sources streamed line by line, each page one JSON file.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from searchkit.ingest.policy import decode_text
from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _rel
from searchkit.ingest.workspace.model import _bad_id_detail, plain_id
from searchkit.ingest.workspace.reading import (
    _MISSING, _as_text, _iso_day, _json_files, _lang, _lkind, _open_item, _parse_json, _read_json,
    _read_text, _str,
)



_SNIFF_BYTES = 1 << 16
"""How much of ``sources.jsonl`` is read first to tell UTF-8 (streamed) from other encodings."""


def _load_sources(sp: _Space, out: _Collector) -> None:
    """``.space/sources.jsonl``, streamed line by line (issue 27 item 17): a line longer than
    ``max_item_chars`` is skipped without being held whole, and the lines past
    ``max_log_bytes`` of kept text are skipped together; the rest is indexed. A file not in
    UTF-8 (UTF-16, cp1251, ...) is read whole, up to ``max_log_bytes``, and decoded."""
    path = sp.meta / "sources.jsonl"
    if _lkind(path) == "missing":
        return
    where = f"{sp.slug}/.space/sources.jsonl"
    policy = out.policy
    fd = _open_item(path, where, out, sp.real)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as fh:
        if not _utf8_head(fh.read(_SNIFF_BYTES)):
            fh.close()
            read = _read_text(path, where, out, sp.real, rule_on_bad="bad_json", cap=policy.max_log_bytes,
                              cap_name="max_log_bytes")
            if read is not None:
                _load_source_lines(sp.slug, where, enumerate(read[0].splitlines(), start=1), out)
            return
        fh.seek(0)
        try:
            _load_source_lines(sp.slug, where, _stream_lines(fh, where, out), out)
        except OSError as exc:
            out.skip(where, "unreadable", str(exc.strerror or exc))


def _utf8_head(head: bytes) -> bool:
    """Whether the start of a file reads as UTF-8 (a BOM allowed, a character cut at the end allowed)."""
    if b"\x00" in head or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def _stream_lines(fh: BinaryIO, where: str, out: _Collector) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of a UTF-8 file, read line by line. A line longer than
    ``max_item_chars`` is skipped as it is read (never held whole); once the lines kept hold more
    than ``max_log_bytes``, the rest of the file is skipped with one ``too_large``."""
    policy = out.policy
    line_cap = 4 * policy.max_item_chars  # bytes: no line of max_item_chars characters is longer
    kept = 0
    number = 0
    while True:
        raw = fh.readline(line_cap + 1)
        if not raw:
            return
        number += 1
        if len(raw) > line_cap and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):  # the rest of that line, read and dropped
                raw = fh.readline(1 << 20)
                size += len(raw)
            out.skip(f"{where}:{number}", "too_large", f"a line of {size} bytes > max_item_chars "
                                                       f"{policy.max_item_chars} characters")
            continue
        kept += len(raw)
        if kept > policy.max_log_bytes:
            out.skip(f"{where}:{number}", "too_large", f"this line and the rest of the file: more than max_log_bytes "
                                                       f"{policy.max_log_bytes} bytes of sources")
            return
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        text = _line_text(raw, f"{where}:{number}", out)
        if text is not None:
            yield number, text


def _line_text(raw: bytes, label: str, out: _Collector) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    decoded = decode_text(raw, out.policy.text_encodings)
    if decoded.text is None:
        out.skip(label, "bad_json", decoded.reason or "not text")
        return None
    if decoded.replaced:
        out.note(label, "decoded", "UTF-8 with invalid bytes replaced by U+FFFD")
    return decoded.text


def _load_source_lines(slug: str, where: str, lines: Iterable[tuple[int, str]], out: _Collector) -> None:
    policy = out.policy
    for number, line in lines:
        if not line.strip():
            continue
        label = f"{where}:{number}"
        if len(line) > policy.max_item_chars:
            out.skip(label, "too_large", f"a line of {len(line)} characters > max_item_chars {policy.max_item_chars}")
            continue
        _guard(out, label, None, _load_source, slug, label, line, out)


def _load_source(slug: str, label: str, line: str, out: _Collector) -> None:
    item = _parse_json(line, label, out)
    if item is _MISSING:
        return
    if not isinstance(item, dict) or not _str(item.get("uuid")):
        out.skip(label, "bad_shape", "a source needs a JSON object with a string uuid")
        return
    uuid = item["uuid"]
    if not plain_id(uuid):
        out.skip(label, "bad_id", _bad_id_detail("uuid", uuid))
        return
    title, url, summary = (_as_text(item.get(k)) for k in ("title", "url", "summary"))
    fields = {"url": url} if url else {}
    out.add(
        kind="source", space=slug, key=uuid, ref=f"source:{uuid}", date=_iso_day(item.get("added")),
        title=title or url or uuid, text="\n".join(s for s in (title, url, summary) if s),
        where=label, fields={**fields, "source_path": ".space/sources.jsonl", **_lang(item)},
    )


def _load_pages(sp: _Space, out: _Collector) -> None:
    for path in _json_files(sp.meta / "pages", f"{sp.slug}/.space/pages", out):
        where = f"{sp.slug}/.space/pages/{path.name}"
        _guard(out, where, None, _load_page, sp, path, where, out)


def _load_page(sp: _Space, path: Path, where: str, out: _Collector) -> None:
    data = _read_json(path, where, out, sp.real)
    if data is _MISSING:
        return
    if not isinstance(data, dict):
        out.skip(where, "bad_shape", "a page must be a JSON object")
        return
    uuid = _str(data.get("uuid")) or path.stem
    if not plain_id(uuid):
        out.skip(where, "bad_id", _bad_id_detail("uuid", uuid))
        return
    title = _as_text(data.get("title"))
    body = data.get("body")
    body_text = body.strip() if isinstance(body, str) else _as_text(body)
    fields = {"type": _str(data.get("type")) or "page", "source_path": _rel(where), **_lang(data)}
    out.add(
        kind="page", space=sp.slug, key=uuid, ref=f"page:{uuid}", date=_iso_day(data.get("updated")),
        title=title or uuid, text="\n\n".join(s for s in (title, body_text) if s), where=where, fields=fields,
    )
