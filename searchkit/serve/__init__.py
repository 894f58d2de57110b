"""``searchkit serve``: the tools to an assistant, over MCP (the official ``mcp`` SDK; stdio and
streamable HTTP) and a plain JSON HTTP API on the same Starlette app (issue 30; SPEC H, T).

Thin adapters over the one tool registry (:data:`searchkit.tools.registry.TOOLS`):

- :mod:`.session`: who is calling and where (a ``Session``), fixed by the launching flags on stdio
  or by the bearer token of an HTTP request (:mod:`.auth`: a tokens file of sha256 hashes, 0600);
  never by a tool argument.
- :mod:`.state`: the index version queries are answered from, swapped atomically by the background
  refresh (``index --update`` semantics) so that a query holds one version from start to end;
  :mod:`.freshness`: since when the answers are known to match the workspace, its change
  signature (nothing changed: nothing read or published) and the refresh's schedule (ahead of
  H3's bound; a refresh starved at idle priority started again at normal priority once late).
- :mod:`.admission`: at most ``--workers`` calls run and ``--queue`` wait; beyond, a call is
  refused at once (``busy``: HTTP 503 with ``Retry-After``, an MCP tool error).
- :mod:`.service`: one call = one tool run on one version, its answer or its error (a parameter
  error names the parameter), and one JSON log line (:mod:`.calllog`).
- :mod:`.startup`: the export loaded and replayed (``config verify``), the index built or loaded.
- :mod:`.mcp_app` and :mod:`.http_app`: the MCP server and the ASGI app (``/mcp``, ``/api/tools``,
  ``/openapi.json``, ``/health``, ``/health/ready``). They import the ``serve`` extra (mcp, starlette,
  uvicorn), as :mod:`.admission` and :mod:`.runner` do (anyio); the other modules import nothing
  beyond searchkit's core.
"""
