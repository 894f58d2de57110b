"""``searchkit serve``: the tools to an assistant, over MCP (the official ``mcp`` SDK; stdio and
streamable HTTP) and a plain JSON HTTP API on the same Starlette app (issue 30; SPEC H, T).

Thin adapters over the one tool registry (:data:`searchkit.tools.registry.TOOLS`):

- :mod:`.session`: who is calling and where (a ``Session``), fixed by the launching flags on stdio
  or by the bearer token of an HTTP request (:mod:`.auth`: a tokens file of sha256 hashes, 0600);
  never by a tool argument.
- :mod:`.state`: the index version queries are answered from, swapped atomically by the background
  refresh (``index --update`` semantics) so that a query holds one version from start to end.
- :mod:`.service`: one call = one tool run on one version, its answer or its error (a parameter
  error names the parameter), and one JSON log line (:mod:`.calllog`).
- :mod:`.startup`: the export loaded and replayed (``config verify``), the index built or loaded.
- :mod:`.mcp_app` and :mod:`.http_app`: the MCP server and the ASGI app (``/mcp``, ``/api/tools``,
  ``/openapi.json``, ``/health``). They import the ``serve`` extra (mcp, starlette, uvicorn); the
  other modules import nothing beyond searchkit's core.
"""
