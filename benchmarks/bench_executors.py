"""The engine's executors on the corpus: inline, the local process pool, and Ray on a local
cluster of two nodes (one CPU each), in one run of this script.

    python benchmarks/bench_executors.py            # the shared corpus, plans.yaml
    python benchmarks/bench_executors.py --quick    # data/sample, nothing written

Each executor ingests the corpus into an empty DuckDB store in a process of its own (parse,
parent and child chunks, graph records, vectors: ``IngestEngine.run_pending``), so the pool's
and Ray's start-up count as in a first run. The Ray cluster is started before its run and not
timed (``tests.ray_cluster``: two ``ray start`` nodes on loopback addresses). Every run's views
are compared with the pool's, row for row (times and run ids left out, as in tests/ingest/test_ray.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import ROOT, corpus_files, default_corpus, machine, table, write_json

EXECUTORS = {
    "inline": {"INGEST_EXECUTOR": "process", "INGEST_WORKERS": "1"},
    "process pool": {"INGEST_EXECUTOR": "process"},
    "ray, 2 local nodes": {"INGEST_EXECUTOR": "ray"},
}


def _one(inbox: str, database: str) -> None:
    """In a child process: ingest ``inbox`` into ``database``; print seconds and a digest of
    every view as JSON."""
    import duckdb

    from ingest_assets.engine import IngestEngine, ray_executor
    from ingest_assets.plans import load_plans
    from ingest_assets.store import IngestStore
    from tests.ingest.test_ray import VIEWS

    store = IngestStore(database)
    started = time.perf_counter()
    IngestEngine(store, inbox, load_plans(ROOT / "plans.yaml")).run_pending()
    seconds = time.perf_counter() - started
    del store
    views = {}
    # Read afterwards with more memory than the store's cap: the digests join every view.
    with duckdb.connect(database, read_only=True, config={"memory_limit": "4GB"}) as db:
        for view, columns in VIEWS.items():
            count, digest = db.execute(
                f"SELECT count(*), sum(hash(r))::HUGEINT::VARCHAR FROM (SELECT {columns} FROM {view}) r"
            ).fetchone()
            views[view] = [count, digest]
    print(json.dumps({"seconds": seconds, "views": views, "ray_jobs_by_node": ray_executor.tasks_by_node()}))


def _run(name: str, inbox: Path, root: Path, extra: dict[str, str]) -> dict:
    # Only this run's settings: none inherited from the caller's shell.
    env = {k: v for k, v in os.environ.items() if not k.startswith("INGEST_")}
    env.update({"PYTHONPATH": str(ROOT), **extra})
    database = root / f"{name.split()[0].strip(',')}.duckdb"
    command = [sys.executable, __file__, "--one", str(inbox), str(database)]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = wall
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="data/sample, nothing written")
    parser.add_argument("--one", nargs=2, metavar=("INBOX", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(*args.one)
        return
    from tests.ray_cluster import two_node_cluster

    corpus = default_corpus(args.quick)
    with tempfile.TemporaryDirectory(prefix="bench-executors-") as tmp:
        root = Path(tmp)
        inbox = root / "inbox"
        for path in corpus_files(corpus):
            target = inbox / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        results = {}
        for name, extra in EXECUTORS.items():
            if extra["INGEST_EXECUTOR"] != "ray":
                results[name] = _run(name, inbox, root, extra)
                continue
            started = time.perf_counter()
            with two_node_cluster() as address:
                cluster_seconds = time.perf_counter() - started
                results[name] = _run(name, inbox, root, {**extra, "INGEST_RAY_ADDRESS": address})
            results[name]["cluster_start_seconds"] = cluster_seconds
    pool = results["process pool"]
    rows = []
    for name, result in results.items():
        same = "yes" if result["views"] == pool["views"] else "NO"
        nodes = len(result["ray_jobs_by_node"]) or "-"
        rows.append([name, f"{result['seconds']:.2f}", f"{result['wall_seconds']:.2f}", nodes, same])
    print(f"corpus {corpus} ({sum(p.stat().st_size for p in corpus_files(corpus)) / 1e6:.1f} MB)")
    print(table(["executor", "run_pending s", "process s", "Ray nodes used", "views = pool"], rows))
    start = results["ray, 2 local nodes"]["cluster_start_seconds"]
    print(f"Ray cluster start (not in the times): {start:.1f} s")
    if not args.quick:
        path = write_json("executors.json", {"machine": machine(), "corpus": str(corpus), "results": results})
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
