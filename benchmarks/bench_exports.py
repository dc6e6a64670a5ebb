"""Export and dry-run times on an ingested store: each format of ``ingest export`` in full, an
incremental export after a one-file edit, and ``ingest plans --diff`` (median of ``--repeat``).

    python benchmarks/bench_exports.py --db /tmp/corpus.duckdb --inbox ../shared/corpus [--repeat 3]

The store must hold the inbox ingested under plans.yaml (``ingest run --inbox ... --db ...``).
Prints a table and writes ``benchmarks/results/exports.json``; nothing in the store is changed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ingest_assets.engine.forecast import forecast
from ingest_assets.exports import FORMATS, export_plan
from ingest_assets.plans import load_plans
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.plan_names import resolve_plan

RESULTS = Path(__file__).resolve().parent / "results" / "exports.json"


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--inbox", required=True)
    parser.add_argument("--plan", default="default")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    store = IngestStore(args.db)
    plan_key = resolve_plan(store, args.plan)
    totals = dict(store.query("SELECT 'chunks', count(*) FROM current_chunks WHERE plan_key = ?", [plan_key]))
    totals["nodes"] = store.query("SELECT count(*) FROM graph_nodes WHERE plan_key = ?", [plan_key])[0][0]
    totals["edges"] = store.query("SELECT count(*) FROM graph_edges WHERE plan_key = ?", [plan_key])[0][0]
    rows = {}
    work = Path(tempfile.mkdtemp(prefix="bench-exports-"))
    try:
        for fmt in FORMATS:
            seconds, size = [], 0
            for i in range(args.repeat):
                out = work / f"{fmt}-{i}"
                seconds.append(export_plan(store, plan_key, fmt, out).seconds)
                size = _size(out)
            rows[fmt] = {"seconds": statistics.median(seconds), "bytes": size}
        base = work / "parquet-0"
        seconds = [
            export_plan(store, plan_key, "parquet", work / f"since-{i}", since=base).seconds
            for i in range(args.repeat)
        ]
        rows["parquet --since (nothing changed)"] = {
            "seconds": statistics.median(seconds),
            "bytes": _size(work / "since-0"),
        }
        plans, settings = load_plans("plans.yaml"), Settings.from_env()
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            forecast(store, args.inbox, plans, settings)
            seconds.append(time.perf_counter() - started)
        rows["plans --diff (no change)"] = {"seconds": statistics.median(seconds), "bytes": 0}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"plan {plan_key}: {totals['chunks']} chunks, {totals['nodes']} nodes, {totals['edges']} edges")
    print(f"{'what':<34} {'seconds':>8} {'MB':>7}")
    for name, row in rows.items():
        print(f"{name:<34} {row['seconds']:>8.3f} {row['bytes'] / 1e6:>7.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"plan": plan_key, "totals": totals, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
