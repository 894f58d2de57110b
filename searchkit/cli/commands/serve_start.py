"""``searchkit serve`` once its flags are checked (``searchkit.cli.commands.serve``): the server
(``searchkit.serve.runner``, with anyio and the transports' wiring, from the serve extra) started
with every flag (issue 41: ``--queue``, ``--allowed-host``, ``--allowed-origin`` too).

Each field of ``serve.runner.Options`` is taken from the flag of the same name (a flag added to the
parser and a field added to ``Options`` reach the server with no change here); the session (stdio),
the refresh interval (parsed) and the repeated host/origin flags are given apart."""
from __future__ import annotations

import argparse
import dataclasses
import socket

from searchkit.serve.runner import Options, serve
from searchkit.serve.session import Session


def options(args: argparse.Namespace, session: Session | None, every: float) -> Options:
    """The server's options from the checked flags."""
    names = {f.name for f in dataclasses.fields(Options)}
    given = {k: v for k, v in vars(args).items() if k in names}
    given.update(session=session, every=every, allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()),
                 allowed_origins=tuple(getattr(args, "allowed_origin", None) or ()))
    return Options(**given)


def start(args: argparse.Namespace, session: Session | None, every: float, sock: socket.socket | None) -> int:
    """Serve until stopped: the export loaded and verified, the index opened (``serve.runner``)."""
    return serve(options(args, session, every), sock)
