"""The server's state folder (issue 30; issue 39 items 7 and 8): a new owner-only folder, inside
``--state-dir`` or the system's temporary folder, holding the server's private copy of the index
for the refresh child (every personal chat's text). It leaves with the server."""
from __future__ import annotations

import os
import stat
from pathlib import Path

PREFIX = "searchkit-serve-"


def problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot hold state folders (None: it can): an existing folder this user may
    write in. ``stat`` and ``access`` only."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return f"{str(p)[:200]}: no such folder"
    except OSError as exc:
        return f"{str(p)[:200]}: cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{str(p)[:200]}: not a folder"
    if not os.access(p, os.W_OK | os.X_OK):
        return f"{str(p)[:200]}: this user cannot write in it"
    return None
