#!/usr/bin/env bash
# Creates .venv (if missing) and installs searchkit with the extras named in $SEARCHKIT_EXTRAS
# (default "test", which includes "eval"), pinned by constraints.txt where versions decide results.
# Other extras: "notebooks" (execute the notebooks headless, check the report in a browser; CI adds it),
# "research" (JupyterLab, the plotting stack, ragas: `SEARCHKIT_EXTRAS=research`).
# "scale" (Ray: `--engine ray` for index / eval / tune fusion, and the `-m ray` tests; CI adds it).
# "serve" (`searchkit serve`: MCP + JSON HTTP API), "mlflow" (`eval --mlflow URI`); CI adds both, and
# "research" for the ragas tests.
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "searchkit needs Python >= 3.11")'
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".[${SEARCHKIT_EXTRAS:-test}]"
