"""Issue 41 item 9: the server's bounded queue defaults to 16 waiting calls, the same in the flag and in
``serve.runner.Options`` (measured: at 20 calls/s offered on 102k passages, a queue of 8 shed calls
during a version swap; 16 shed none and kept history_search p99 under 0.3 s; benchmarks/README.md)."""
import argparse
import dataclasses

from searchkit.cli import serve as serve_cli
from searchkit.serve.runner import Options


def test_the_queue_flag_and_the_options_default_agree_on_16():
    parser = argparse.ArgumentParser()
    serve_cli.add_parser(parser.add_subparsers())
    action = next(a for sub in parser._subparsers._group_actions for p in sub.choices.values()
                  for a in p._actions if a.dest == "queue")
    default = {f.name: f.default for f in dataclasses.fields(Options)}["queue"]
    assert action.default == default == 16
