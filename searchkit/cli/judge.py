"""``searchkit eval --metrics ragas-llm``: the flags naming the LLM endpoint, the block the eval
prints and writes (``searchkit.evaluate.ragas_metrics``: faithfulness and answer relevancy of an
answer an LLM writes from each query's top cards). Off unless ``--metrics ragas-llm`` is given. The
flags are here; the judge, ``searchkit.cli.commands.judge``."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--llm-*`` flags of ``searchkit eval``."""
    g = parser.add_argument_group("--metrics ragas-llm: an OpenAI-compatible LLM endpoint (the queries and their "
                                  "top cards are sent to it)")
    g.add_argument("--llm-base-url", metavar="URL", help="the API root, e.g. http://127.0.0.1:8000/v1 (no credentials "
                   "in it: see --llm-api-key-env)")
    g.add_argument("--llm-model", metavar="NAME", help="the chat model that writes and judges the answers")
    g.add_argument("--llm-api-key-env", metavar="VAR", help="environment variable holding the API key (default: none)")
    g.add_argument("--llm-embedding-model", metavar="NAME", help="the endpoint's embedding model for answer relevancy "
                   "(default: the config's own embedder)")
    g.add_argument("--llm-k", type=int, metavar="N", help="cards an answer is written from (default 5, or the K of "
                   "a ragas:faithfulness@K named in --metrics)")
    g.add_argument("--llm-timeout", type=float, default=60.0, metavar="S", help="seconds for one request (default 60)")
    g.add_argument("--llm-queries", type=int, metavar="N", help="judge the first N queries only (default: all)")
