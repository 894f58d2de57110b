#!/usr/bin/env bash
# Sets up .venv and runs the test suite: every test but those marked slow (a real model, a Ray cluster,
# a kill -9 loop, a server under load, the notebooks executed headless), one pytest-xdist worker per core,
# each test file on one worker (--dist loadfile: a file's tests run in order, in one process).
#   bash scripts/test.sh            # the suite (what README gives; .ci/run's first pass)
#   bash scripts/test.sh --slow     # only the slow tests (.ci/run's second pass)
#   bash scripts/test.sh --all      # both in one run
#   bash scripts/test.sh ARGS...    # pytest ARGS as given (e.g. tests/test_x.py -k name)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
case "${1:-}" in
  "") exec .venv/bin/python -m pytest -m "not slow" -n auto --dist loadfile ;;
  --slow) shift; exec .venv/bin/python -m pytest -m slow "$@" ;;
  --all) shift; exec .venv/bin/python -m pytest "$@" ;;
  *) exec .venv/bin/python -m pytest "$@" ;;
esac
