"""How fast a workspace load is, redaction included (issue 39 item 4 (b): the cost of the secret detector).

Times ``load_workspace`` (every record read, checked for key material and redacted, the workspace-wide
pass over known secret values included) on ``datasets/demo-workspace`` and on a larger synthetic
workspace (``benchmarks/bench_serve.make_workspace``: chats, digests, notes, log days and table rows
of real passages from ``../shared/data``, or Zipf-like words without it), and reports records/s
(CPU time of the process, the best of ``--repeat`` runs: the machine is shared). No memo: every text is checked, as at a
first build.

    .venv/bin/python evals/redaction/bench_ingest.py [--passages 20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench_serve():
    spec = importlib.util.spec_from_file_location("bench_serve", ROOT / "benchmarks" / "bench_serve.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["bench_serve"] = mod
    spec.loader.exec_module(mod)
    return mod


def time_load(path: Path, repeat: int) -> tuple[int, int, float]:
    """(records, characters, best CPU seconds of the process) of ``load_workspace(path)`` (CPU time,
    not wall time: the machine is shared, and the load is single-threaded)."""
    from searchkit.ingest.workspace import load_workspace

    best = float("inf")
    n = chars = 0
    for _ in range(repeat):
        t = time.process_time()
        load = load_workspace(path)
        best = min(best, time.process_time() - t)
        n = len(load.records)
        chars = sum(len(r.text) for r in load.records)
    return n, chars, best


def plant_secrets(ws: Path, every: int, seed: int) -> int:
    """Put a password in the first message of every ``every``-th chat and the same value alone in a
    later message of the next chat (an echo), so that the pass over known values has work; returns how
    many values were planted."""
    import json
    import random

    rng = random.Random(seed)
    chats = sorted(ws.rglob("ses_*.json"))
    planted = 0
    for i in range(0, len(chats) - 1, every):
        value = f"{rng.choice(['Zebra', 'Комета', 'Orion', 'Лиса'])}_{rng.randrange(10**6):06d}"
        for path, msg, text in ((chats[i], 0, f"пароль: {value}"), (chats[i + 1], 3, f"записал {value}, спасибо")):
            data = json.loads(path.read_text(encoding="utf-8"))
            if len(data["messages"]) > msg:
                data["messages"][msg]["text"] = text
            path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        planted += 1
    return planted


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workdir", type=Path, help="keep (and reuse) the generated workspace here")
    ap.add_argument("--plant", type=int, default=0, metavar="N",
                    help="plant a password in every N-th chat and its echo in the next (in the generated workspace)")
    args = ap.parse_args(argv)
    n, chars, s = time_load(ROOT / "datasets" / "demo-workspace", max(args.repeat, 5))
    print(f"demo-workspace: {n} records, {chars:,} characters, {s * 1000:.1f} ms, {n / s:,.0f} records/s")
    with tempfile.TemporaryDirectory() as tmp:
        ws = (args.workdir or Path(tmp)) / "ws"
        if not (ws / "users.json").is_file():
            bench = _bench_serve()
            texts, _ = bench.real_texts(ROOT.parent / "shared" / "data", args.seed)
            bench.make_workspace(ws, texts, args.passages, args.seed)
            if args.plant:
                print(f"planted {plant_secrets(ws, args.plant, args.seed)} passwords and their echoes")
        n, chars, s = time_load(ws, args.repeat)
        print(f"generated ({args.passages:,} passages): {n} records, {chars:,} characters, {s:.2f} s, "
              f"{n / s:,.0f} records/s, {chars / s / 1e6:.2f} M characters/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
