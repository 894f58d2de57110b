"""Reading a workspace safely (SPEC H1, H2; part of ``searchkit.ingest.workspace``): what a path is
without following a link (``_lkind``), opening only regular files inside their space that have one
link, capped reads of bytes, text and JSON, and the plain values read from an item's fields.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
from datetime import date, datetime
from pathlib import Path
from typing import Any, Mapping

from searchkit.ingest.policy import decode_text
from searchkit.ingest.workspace.collect import _Collector
from searchkit.ingest.workspace.model import TITLE_CHARS


_MISSING = object()


def _lkind(path: Path) -> str:
    """``missing`` | ``link`` | ``dir`` | ``file`` | ``special`` | ``error``, never following a link."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError):
        return "error"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def _special_detail(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    what = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "not a regular file")
    return f"{what}; never opened"


def _inside(path: Path, base_real: str) -> bool:
    real = os.path.realpath(path)
    return real == base_real or real.startswith(base_real.rstrip(os.sep) + os.sep)


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _hard_link_detail(links: int) -> str:
    return f"{links} hard links: the same file may sit in another space, so it is never read"


def _read_bytes(path: Path, where: str, out: _Collector, base_real: str, cap: int, cap_name: str) -> bytes | None:
    """The bytes of a regular file inside ``base_real``, at most ``cap``; else a skip and None.

    A link is never followed, a FIFO / socket / device is never opened (no hang), a path that
    resolves outside its space folder is refused, and a file over ``cap`` is not read.
    """
    fd = _open_item(path, where, out, base_real, cap, cap_name)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    finally:
        os.close(fd)
    if size > cap:
        out.skip(where, "too_large", f"more than {cap_name} {cap} bytes")
        return None
    return b"".join(chunks)


def _open_item(path: Path, where: str, out: _Collector, base_real: str, cap: int | None = None,
               cap_name: str = "") -> int | None:
    """A descriptor on a regular file inside ``base_real`` (of at most ``cap`` bytes when given);
    else a skip (naming the rule) and None. The caller closes it."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    if stat.S_ISLNK(st.st_mode):
        out.skip(where, "symlink", "a link is never followed")
        return None
    if not stat.S_ISREG(st.st_mode):
        out.skip(where, "special_file", _special_detail(path))
        return None
    if not _inside(path, base_real):
        out.skip(where, "symlink", "resolves outside its own space folder; never read")
        return None
    if st.st_nlink > 1:
        out.skip(where, "hard_link", _hard_link_detail(st.st_nlink))
        return None
    if cap is not None and st.st_size > cap:
        out.skip(where, "too_large", f"{st.st_size} bytes > {cap_name} {cap}")
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            out.skip(where, "symlink", "a link is never followed")
        else:
            out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    try:
        fst = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    if not stat.S_ISREG(fst.st_mode):
        os.close(fd)
        out.skip(where, "special_file", "not a regular file; never read")
        return None
    if fst.st_nlink > 1:
        os.close(fd)
        out.skip(where, "hard_link", _hard_link_detail(fst.st_nlink))
        return None
    return fd


def _read_text(
    path: Path, where: str, out: _Collector, base_real: str, *, rule_on_bad: str, cap: int, cap_name: str,
) -> tuple[str, str] | None:
    """``(text, encoding)`` of a text file (any supported encoding, H1), else a skip and None.

    UTF-8 with a few stray invalid bytes is read with U+FFFD in their place and noted ``decoded``.
    """
    data = _read_bytes(path, where, out, base_real, cap, cap_name)
    if data is None:
        return None
    decoded = decode_text(data, out.policy.text_encodings)
    if decoded.text is None:
        out.skip(where, rule_on_bad, decoded.reason or "not text")
        return None
    if decoded.replaced:
        out.note(where, "decoded", f"UTF-8 with {decoded.replaced} invalid byte sequence"
                                   f"{'s' if decoded.replaced != 1 else ''} replaced by U+FFFD")
    return decoded.text, decoded.encoding or "utf_8"


def _read_json(path: Path, where: str, out: _Collector, base_real: str, *, cap: int | None = None) -> Any:
    cap = cap or out.policy.max_file_bytes
    read = _read_text(path, where, out, base_real, rule_on_bad="bad_json", cap=cap,
                      cap_name="max_file_bytes" if cap == out.policy.max_file_bytes else "max_log_bytes")
    if read is None:
        return _MISSING
    return _parse_json(read[0], where, out)


def _parse_json(text: str, where: str, out: _Collector) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        out.skip(where, "bad_json", f"line {exc.lineno} column {exc.colno}: {exc.msg}")
    except RecursionError:
        out.skip(where, "bad_json", "nested too deeply")
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        out.skip(where, "bad_json", str(exc))
    return _MISSING


def _iso_day(value: object) -> str | None:
    """The ISO day (``YYYY-MM-DD``) of an ISO date or date-time, in its own offset; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        pass
    match = re.match(r"(\d{4}-\d{2}-\d{2})", value)
    if match:
        try:
            return date.fromisoformat(match.group(1)).isoformat()
        except ValueError:
            return None
    return None


def _short(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:#{1,6}[ \t]+|[-*•>][ \t]+|\d+[.)][ \t]+)", "", line).strip()
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return "; ".join(s for s in (_as_text(v) for v in value) if s)
    return json.dumps(value, ensure_ascii=False)


def _str(value: object) -> str | None:
    """A non-empty string, else None (fields given with a wrong type are ignored, never fatal)."""
    return value if isinstance(value, str) and value else None


def _lang(obj: Mapping[str, Any]) -> dict[str, Any]:
    lang = obj.get("lang")
    return {"lang": lang} if isinstance(lang, str) and lang else {}


def _json_files(folder: Path, where: str, out: _Collector) -> list[Path]:
    """The ``*.json`` entries of a folder, sorted; a folder that is a link is never listed."""
    kind = _lkind(folder)
    if kind == "missing":
        return []
    if kind == "link":
        out.skip(where + "/", "symlink", "a folder link is never followed")
        return []
    if kind == "special":
        out.skip(where, "special_file", _special_detail(folder))
        return []
    if kind != "dir":
        out.skip(where, "bad_shape", "expected a folder")
        return []
    try:
        names = os.listdir(folder)
    except OSError as exc:
        out.skip(where + "/", "unreadable", str(exc.strerror or exc))
        return []
    return [folder / n for n in sorted(names) if n.endswith(".json")]
