"""Where ``searchkit report`` may write: a new path or a page it wrote itself (issue 27 item 9).

Part of ``searchkit.evaluate.report`` (which re-exports every name).
"""
from __future__ import annotations

import os
from pathlib import Path

from searchkit.errors import InputError
from searchkit.util import check_file_target, open_regular

__all__ = ["NO_TEXT_MARKER", "REPORT_MARKER", "check_out"]

REPORT_MARKER = '<meta name="generator" content="searchkit report">'
"""In the ``<head>`` of every page ``build_report`` writes: ``--out`` replaces only a file that holds it."""
NO_TEXT_MARKER = '<meta name="searchkit-report-text" content="none">'
"""In the ``<head>`` of a page written with ``text=False``."""
_LEGACY_HEAD = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                'content="width=device-width, initial-scale=1"><title>')
_LEGACY_NAV = '<nav><a href="#headline">Headline</a><a href="#compare">Comparison</a>'
"""How pages written before ``REPORT_MARKER`` begin: they are reports of this tool too."""
_HEAD_BYTES = 65_536



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
    JSON file, a page someone else wrote), a path under a file, a file that cannot be read
    (``searchkit.util.check_file_target``, the check every file writer makes).

    Raises:
        InputError: the line, naming the path and what is there.
    """
    try:
        return check_file_target(out, "--out", what="a report file", ours=_is_report,
                                 ours_text="a report written by searchkit report", file_text="the HTML file")
    except InputError as exc:  # check_file_target's refusal (param --out), as a plain InputError
        raise InputError(str(exc)) from None
