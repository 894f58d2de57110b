"""Where ``searchkit report`` may write: a new path or a page it wrote itself (issue 27 item 9).

Part of ``searchkit.evaluate.report`` (which re-exports every name).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from searchkit.errors import InputError
from searchkit.util import open_regular

__all__ = ["NO_TEXT_MARKER", "REPORT_MARKER", "ReportError", "check_out"]

REPORT_MARKER = '<meta name="generator" content="searchkit report">'
"""In the ``<head>`` of every page ``build_report`` writes: ``--out`` replaces only a file that holds it."""
NO_TEXT_MARKER = '<meta name="searchkit-report-text" content="none">'
"""In the ``<head>`` of a page written with ``text=False``."""
_LEGACY_HEAD = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                'content="width=device-width, initial-scale=1"><title>')
_LEGACY_NAV = '<nav><a href="#headline">Headline</a><a href="#compare">Comparison</a>'
"""How pages written before ``REPORT_MARKER`` begin: they are reports of this tool too."""
_HEAD_BYTES = 65_536



class ReportError(InputError):
    """Run folders that cannot make one report (different datasets, none given, a bad ``--out``)."""


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a special file"


def _is_report(path: Path) -> bool:
    """Whether the regular file at ``path`` is a page ``build_report`` wrote (its first 64 KiB
    hold ``REPORT_MARKER``, or begin as pages written before the marker did)."""
    with open_regular(path, "rb") as fh:
        head = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    if REPORT_MARKER in head:
        return True
    return head.startswith(_LEGACY_HEAD) and _LEGACY_NAV in head


def check_out(out: str | os.PathLike[str]) -> Path:
    """Refuse an ``--out`` that is not safe to replace; return it (issue 27 item 9).

    Safe: a path where nothing is (its folders are created), or a regular file that is a report
    this tool wrote (``REPORT_MARKER``). Refused, with one line naming the path: a folder, a
    symbolic link, a FIFO, a socket or a device (``/dev/full``), any other file (an unrelated
    JSON file, a page someone else wrote), a path under a file, a file that cannot be read.

    Raises:
        ReportError: the line, naming the path and what is there.
    """
    target = Path(out)
    shown = repr(str(target))
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ReportError(f"--out {shown} cannot be checked ({exc.strerror}); give the path of the HTML file "
                          "to write") from None
    if st is None:
        ancestor = target.parent
        while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if os.path.lexists(ancestor) and not ancestor.is_dir():
            raise ReportError(f"--out {shown} is under {str(ancestor)!r}, which is not a folder; give the path of "
                              "the HTML file to write")
        return target
    if stat.S_ISDIR(st.st_mode):
        raise ReportError(f"--out {shown} is a folder; give the path of the HTML file to write")
    if not stat.S_ISREG(st.st_mode):
        raise ReportError(f"--out {shown} is {_file_kind(st.st_mode)}, not a report file; refusing to replace it "
                          "(give a new path)")
    try:
        ours = _is_report(target)
    except OSError as exc:
        raise ReportError(f"--out {shown} exists and cannot be read ({exc.strerror or exc}); refusing to replace "
                          "it (give a new path)") from None
    if not ours:
        raise ReportError(f"--out {shown} exists and is not a report written by searchkit report; refusing to "
                          "replace it (give a new path, or remove the file yourself)")
    return target
