"""``searchkit serve`` once its flags are checked (``searchkit.cli.commands.serve``): the server
(``searchkit.serve.runner``, with anyio and the transports' wiring, from the serve extra) started."""
from __future__ import annotations

import argparse
import socket

from searchkit.serve.runner import Options, serve
from searchkit.serve.session import Session


def start(args: argparse.Namespace, session: Session | None, every: float, sock: socket.socket | None) -> int:
    """Serve until stopped: the export loaded and verified, the index opened (``serve.runner``)."""
    opts = Options(config=args.config, workspace=args.workspace, index=args.index, tasks_db=args.tasks_db,
                   transport=args.transport, host=args.host, port=args.port, tokens=args.tokens,
                   session=session, every=every, no_verify=args.no_verify, log_file=args.log_file,
                   log_content=args.log_content, workers=args.workers, state_dir=args.state_dir)
    return serve(opts, sock)
