"""Failed index writes (issue 27 item 13), for every index file a retriever or the searcher writes:
one error that names the file and says whether the disk is full; the index being replaced is kept."""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from searchkit.errors import ResourceError

__all__ = ["write_failure"]


_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


def write_failure(path: str | os.PathLike[str], exc: BaseException | None = None) -> ResourceError:
    """The error for a failed write of ``path`` (reason ``disk``; the index being replaced is kept): "the disk is full" when the error says so or the
    folder's disk has (almost) no free space left, else "the write failed" with the system's reason."""
    p = Path(path)
    code = getattr(exc, "errno", None)
    try:
        nearly_full = shutil.disk_usage(p.parent if p.parent.exists() else Path.cwd()).free < (1 << 20)
    except OSError:
        nearly_full = False
    if code in _FULL or nearly_full:
        why = "the disk is full"
    else:
        why = "the write failed" + (f" ({exc.strerror})" if isinstance(exc, OSError) and exc.strerror else "")
    return ResourceError(f"cannot write {p}: {why}; the previous index is kept", reason="disk")
