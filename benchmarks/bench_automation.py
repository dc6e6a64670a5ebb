"""The daemon path users take: how long an edit takes to reach the chunks with ``ingest_sensor``
on, and what one chunk run launched by the daemon costs beside ``ingest run``'s one-file edit.

Run from the project root::

    python benchmarks/bench_automation.py              # data/sample, sensor every 5 s
    python benchmarks/bench_automation.py --corpus ../shared/corpus --interval 10

A real ``dagster dev`` (webserver and daemon, the harness of ``tests/daemon``) runs on a free
loopback port over a temporary copy of the corpus, store and DAGSTER_HOME. Measured, ``--repeat``
times each:

* ``edit -> chunks``: a paragraph is appended to one Markdown file; seconds until the store's
  current children of that document hold it. Split into ``noticed`` (until the sensor's first run
  for it was created: at most one interval) and ``after noticed`` (the runs themselves).
* ``one-shard chunk run``: ``chunks_job`` for one plan and shard launched from the API, seconds
  from launch to success (queue, start-up, three assets and their checks).
* ``ingest run, one edit``: the same kind of edit through ``ingest run`` (both runs in process).

Results go to ``benchmarks/results/automation.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import ROOT, default_corpus, machine, median, table, write_json
from ingest_assets.engine import IngestEngine
from ingest_assets.plans import load_plans
from ingest_assets.store import IngestStore
from tests.daemon.harness import DagsterDev

_TIMES = "query Run($id: ID!) { runOrError(runId: $id) { ... on Run { creationTime startTime endTime } } }"


def _settle(dev: DagsterDev, database: Path, inbox: Path, plans: Path, interval: float) -> None:
    while True:
        dev.wait_until_idle(quiet=3 * interval + 1, timeout=1800)
        if IngestEngine(IngestStore(database, lock_timeout=60), inbox, load_plans(plans)).pending().empty:
            return


def _timeline(dev: DagsterDev, since: float) -> list[dict[str, Any]]:
    """The runs since ``since`` (a wall clock), oldest first: what each ran, over which
    partitions, and its seconds from ``since`` to creation, start and end."""
    found = []
    for run in sorted(dev.runs(), key=lambda r: r.creation_time):
        times = dev.graphql(_TIMES, {"id": run.run_id})["runOrError"]
        found.append({
            "assets": "documents" if "documents" in run.assets else "chunks",
            "partitions": run.partition or "..".join(
                run.tags.get(f"dagster/asset_partition_range_{end}", "") for end in ("start", "end")
            ),
            "backfill": "dagster/backfill" in run.tags,
            **{key: round(times[key] - since, 1) if times[key] else None
               for key in ("creationTime", "startTime", "endTime")},
        })  # fmt: skip
    return found


def _holds(database: Path, uri: str, text: str) -> bool:
    rows = IngestStore(database, lock_timeout=60).query(
        "SELECT count(*) FROM current_chunks c JOIN current_documents d USING (document_id, version_id) "
        "WHERE d.source_uri = ? AND c.level = 0 AND contains(c.text, ?)",
        [uri, text],
    )
    return rows[0][0] > 0


def measure(corpus: Path, interval: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-automation-") as tmp:
        root = Path(tmp)
        inbox, database, plans = root / "inbox", root / "ingest.duckdb", root / "plans.yaml"
        shutil.copytree(corpus, inbox, ignore=shutil.ignore_patterns("README.md", "MANIFEST.tsv"))
        shutil.copyfile(ROOT / "plans.yaml", plans)
        target = sorted(inbox.rglob("*.md"))[0]
        env = {"INGEST_SENSOR_SECONDS": str(interval)}
        dev = DagsterDev(root / "dev", database=database, inbox=inbox, plans_file=plans, env=env)
        edits: list[dict[str, float]] = []
        chunk_runs: list[float] = []
        with dev:
            dev.start_sensor("ingest_sensor")
            started, wall = time.monotonic(), time.time()
            _settle(dev, database, inbox, plans, interval)
            full = time.monotonic() - started
            catch_up_runs = _timeline(dev, wall)
            for i in range(repeat):
                marker = f"automation-bench-{i}-{time.time_ns()}"
                known = {r.run_id for r in dev.runs()}
                t0 = time.time()
                target.write_text(target.read_text() + f"\n\nA paragraph that says {marker}.\n")
                while not _holds(database, target.resolve().as_uri(), marker):
                    time.sleep(0.25)
                t1 = time.time()
                first = min(r.creation_time for r in dev.runs() if r.run_id not in known)
                edits.append({"total": t1 - t0, "noticed": first - t0, "after_noticed": t1 - first})
                _settle(dev, database, inbox, plans, interval)
            dev.stop_sensor("ingest_sensor")
            plan = load_plans(plans)[0].key
            shard = IngestStore(database).query(
                "SELECT shard FROM current_documents WHERE source_uri = ?", [target.resolve().as_uri()]
            )[0][0]
            for _ in range(repeat):
                t0 = time.time()
                run_id = dev.launch_assets(
                    ["parent_chunks", "child_chunks", "graph_nodes"], f"{plan}|{shard}"
                )
                run = dev.wait_for_run(run_id, timeout=600)
                assert run.status == "SUCCESS", dev.run_errors(run_id)
                times = dev.graphql(_TIMES, {"id": run_id})["runOrError"]
                chunk_runs.append(times["endTime"] - t0)
        cli = _ingest_run_edits(root, inbox, database, plans, target, repeat)
    return {
        "full_catch_up_seconds": round(full, 2),
        "catch_up_runs": catch_up_runs,
        "edit_to_chunks": edits,
        "one_shard_chunk_run_seconds": chunk_runs,
        "ingest_run_one_edit_seconds": cli,
    }


def _ingest_run_edits(
    root: Path, inbox: Path, database: Path, plans: Path, target: Path, repeat: int
) -> list[float]:
    """``ingest run`` after a one-paragraph edit of ``target``, end to end (a child process)."""
    import os

    env = {**os.environ, "DAGSTER_HOME": str(root / "dev" / "home")}
    command = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", str(inbox), "--db", str(database),
               "--plans", str(plans), "--json"]  # fmt: skip
    found = []
    for i in range(repeat):
        target.write_text(target.read_text() + f"\n\nAn edit through ingest run, number {i}.\n")
        t0 = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        found.append(time.perf_counter() - t0)
        if done.returncode:
            raise RuntimeError(done.stderr[-2000:])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default data/sample)")
    parser.add_argument("--interval", type=int, default=5, help="INGEST_SENSOR_SECONDS (default 5)")
    parser.add_argument("--repeat", type=int, default=3, help="edits and runs measured (default 3)")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus(quick=True)
    found = measure(corpus, args.interval, args.repeat)
    edits = found["edit_to_chunks"]
    chunk, cli = median(found["one_shard_chunk_run_seconds"]), median(found["ingest_run_one_edit_seconds"])
    rows = [
        ["catch-up from an empty store", f"{found['full_catch_up_seconds']:.1f}", ""],
        [
            "edit -> chunks current (total)",
            f"{median([e['total'] for e in edits]):.1f}",
            f"interval {args.interval} s",
        ],
        [
            "  until the sensor noticed",
            f"{median([e['noticed'] for e in edits]):.1f}",
            "at most one interval",
        ],
        ["  after it noticed", f"{median([e['after_noticed'] for e in edits]):.1f}", "target <= 30 s"],
        [
            "one-shard chunk run (daemon)",
            f"{chunk:.1f}",
            f"{chunk / cli:.2f}x ingest run's edit; target <= 2x",
        ],
        ["ingest run, one edit", f"{cli:.1f}", ""],
    ]
    text = table(["measure (median)", "seconds", "note"], rows)
    print(text)
    report = {
        "benchmark": "automation",
        "machine": machine(),
        "corpus": str(corpus),
        "interval": args.interval,
        **found,
        "table": text,
    }
    print(f"wrote {write_json('automation.json', report)}", file=sys.stderr)
    print(json.dumps({"ratio_chunk_run_to_ingest_run_edit": round(chunk / cli, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
