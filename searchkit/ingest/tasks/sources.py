"""Reading the JSON-lines files of an import (SPEC T; issue 27 item 17; part of
``searchkit.ingest.tasks``): streamed line by line, a line over ``max_item_bytes`` skipped unread
and reported, every other row validated.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from searchkit.errors import DataError
from searchkit.ingest.tasks.model import SkippedItem
from searchkit.ingest.tasks.validate import _Batch, _no_duplicates, _validate_comment, _validate_task
from searchkit.util import open_regular, parse_json_text

T = TypeVar("T")

DEFAULT_MAX_ITEM_BYTES = 2_000_000
"""The longest JSON line (one task or one comment, in bytes) an import reads; a longer one is skipped
with its reason in the report (``tasks import --max-item-bytes``)."""
_SKIP_CHUNK = 1 << 20


# --------------------------------------------------------------------------- reading the JSON-lines files

MAX_ITEM_CAP = 1 << 40
"""The largest item cap an import accepts (1 TiB)."""


def _check_cap(max_item_bytes: int) -> int:
    if isinstance(max_item_bytes, bool) or not isinstance(max_item_bytes, int) \
            or not 1 <= max_item_bytes <= MAX_ITEM_CAP:
        raise DataError(f"the item size cap (--max-item-bytes) must be from 1 to {MAX_ITEM_CAP:,} bytes, "
                             f"got {max_item_bytes!r}", reason="task_store")
    return max_item_bytes


def _jsonl_lines(path: str | Path, max_item_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, bytes, size)`` of each line of a JSON-lines file, read one line at a time; a line
    longer than ``max_item_bytes`` (its newline not counted) comes as ``(n, None, size)``, read past in
    chunks and never held."""
    try:
        fh = open_regular(path, "rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file", reason="task_store") from None
    except DataError:
        raise DataError(f"{path}: not a regular file", reason="task_store") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})", reason="task_store") from None
    with fh:
        n = 0
        while True:
            try:
                line = fh.readline(max_item_bytes + 2)
            except OSError as e:
                raise DataError(f"{path}: cannot read ({e.strerror or e})", reason="task_store") from None
            if not line:
                return
            n += 1
            body = line.rstrip(b"\r\n")
            if len(body) <= max_item_bytes:
                yield n, body, len(body)
                continue
            size = len(body)
            while not line.endswith(b"\n"):
                line = fh.readline(_SKIP_CHUNK)
                if not line:
                    break
                size += len(line.rstrip(b"\r\n"))
            yield n, None, size


def _read_items(
    path: str | Path, validate: Callable[[dict[str, Any], str], T], max_item_bytes: int, skipped: list[SkippedItem]
) -> Iterator[T]:
    """Validated rows of one JSON-lines file, streamed (blank lines skipped); an oversize line goes to
    ``skipped``; any other problem is a ``DataError`` naming the file and line."""
    for n, data, size in _jsonl_lines(path, max_item_bytes):
        where = f"{path}:{n}"
        if data is None:
            skipped.append(SkippedItem(where, "too_large", f"{size:,} bytes, over the cap of {max_item_bytes:,}"))
            continue
        if not data.strip():
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{where}: not UTF-8 text", reason="task_store") from None
        try:
            obj = parse_json_text(text, where)
        except DataError as e:
            raise DataError(str(e), reason="task_store") from None
        if not isinstance(obj, dict):
            raise DataError(f"{where}: each line must be a JSON object", reason="task_store")
        yield validate(obj, where)


def _row(obj: dict[str, Any], where: str) -> dict[str, Any]:  # noqa: ARG001 - a validator's signature
    return obj


def read_jsonl(path: str | Path, *, max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> list[dict[str, Any]]:
    """Read a JSON-lines file (blank lines skipped); errors name the file and line, and a line longer
    than ``max_item_bytes`` is one of them."""
    skipped: list[SkippedItem] = []
    rows = list(_read_items(path, _row, _check_cap(max_item_bytes), skipped))
    if skipped:
        raise DataError(f"{skipped[0].where}: line too long ({skipped[0].detail})", reason="task_store")
    return rows


def _read_and_validate(tasks_path: str | Path, comments_path: str | Path,
                       max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> _Batch:
    """Both files, streamed and validated line by line (only the validated rows are kept), with the
    ids checked within the import; oversize lines are skipped into the batch's ``skipped``."""
    cap = _check_cap(max_item_bytes)
    skipped: list[SkippedItem] = []
    tasks = tuple(_read_items(tasks_path, _validate_task, cap, skipped))
    _no_duplicates(tasks, "task")
    tasks_skipped = bool(skipped)
    comments = tuple(_read_items(comments_path, _validate_comment, cap, skipped))
    _no_duplicates(comments, "comment")
    return _Batch(tasks, comments, tuple(skipped), tasks_skipped)


def source_files(folder: str | Path) -> tuple[Path, Path]:
    """``folder/tasks.jsonl`` and ``folder/comments.jsonl``; a missing one is a DataError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder (a task store folder holds tasks.jsonl and comments.jsonl)", reason="task_store")
    for name in ("tasks.jsonl", "comments.jsonl"):
        if not (folder / name).exists():
            raise DataError(
                f"{folder}: {name} is missing (a task store folder holds tasks.jsonl and comments.jsonl)", reason="task_store"
            )
        if not (folder / name).is_file():
            raise DataError(f"{folder / name}: not a regular file (a FIFO, a device or a folder); "
                                 "only regular files are read", reason="task_store")
    return folder / "tasks.jsonl", folder / "comments.jsonl"
