#!/bin/sh
# searchkit in Claude Code (issue 41 item 8). Run one of the two.

# Local (stdio): Claude Code starts the server itself; who is calling is fixed by --caller/--space.
claude mcp add --transport stdio --scope user searchkit -- /opt/searchkit/.venv/bin/searchkit serve --config /etc/searchkit/shipped.v1.json --index /var/lib/searchkit/index --caller u-anna --space acme

# Remote (streamable HTTP): a server run by deploy/Dockerfile or deploy/searchkit.service; the token
# (searchkit serve-token) says who is calling.
claude mcp add --transport http --scope user searchkit-remote https://searchkit.example.com/mcp --header "Authorization: Bearer ${SEARCHKIT_TOKEN}"
