"""Peak memory of a full ingestion on the corpus and on the corpus copied ten times.

Run from the project root::

    python benchmarks/bench_memory.py               # shared corpus, x1 and x10
    python benchmarks/bench_memory.py --quick       # data/sample, x1 and x3: a smoke test

Each measurement is a fresh child process on a fresh DuckDB file and DAGSTER_HOME: ``ingest run
--json`` (end to end, Dagster included) and the engine alone (the steps the assets call). The
main process's peak comes from ``os.wait4`` (``ru_maxrss``). The copies get
distinct file names (``copy03-<name>``), so every copy is a separate document. With worker
processes (``INGEST_WORKERS``), the figure is the peak of the whole process tree (the sum of
resident memory, sampled every 20 ms), next to the main process's own. The target:
the peak on ten times the corpus is at most 1.5x the peak on the corpus. Results go to
``benchmarks/results/memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import ROOT, corpus_files, default_corpus, machine, table, write_json

# The project's own default plans file: the benchmark measures what `make run` runs.
PLANS = ROOT / "plans.yaml"

# The engine's own driver: the sequence of steps the assets run (no Dagster import).
ENGINE_CHILD = """
import json, sys, time
from ingest_assets.engine import IngestEngine
from ingest_assets.plans import load_plans
from ingest_assets.store import IngestStore
inbox, db, plans_file = sys.argv[1:4]
started = time.perf_counter()
plans = load_plans(plans_file)
report = IngestEngine(IngestStore(db), inbox, plans).run_pending()
print(json.dumps({"chunker_calls": report.chunker_calls, "wall_seconds": time.perf_counter() - started}))
"""


def make_inbox(corpus: Path, target: Path, copies: int) -> tuple[int, int]:
    files = corpus_files(corpus)
    size = 0
    for copy in range(copies):
        for path in files:
            relative = path.relative_to(corpus)
            out = (
                target
                / relative.parent
                / (f"copy{copy:02d}-{relative.name}" if copies > 1 else relative.name)
            )
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
            size += path.stat().st_size
    return len(files) * copies, size


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{thread}/children").read_text().split()]
        except OSError:
            continue
    return found


def _tree_rss_kib(root: int) -> int:
    """Resident memory of ``root`` and every process under it (worker processes included)."""
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            continue
        stack += _children(pid)
    return total


def measure(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # The engine parses and chunks in worker processes: the peak that counts is that of the
    # whole process tree, sampled every 20 ms while it runs.
    peak_tree = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak_tree[0] = max(peak_tree[0], _tree_rss_kib(child.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # wait4 gives this child's own rusage; reading the pipes first avoids a full-pipe deadlock.
    stdout, stderr = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    done.set()
    sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if child.returncode:
        raise RuntimeError(f"{command[2:4]} failed ({child.returncode}): {stderr[-2000:]}")
    summary = json.loads(stdout.strip().splitlines()[-1])
    main_peak = round(usage.ru_maxrss / 1024, 1)  # Linux reports KiB
    return {
        # The tree's sampled peak; never below the main process's exact peak.
        "peak_rss_mb": max(round(peak_tree[0] / 1024, 1), main_peak),
        "main_process_peak_rss_mb": main_peak,
        "seconds": round(wall, 2),
        "chunker_calls": summary.get("chunker_calls"),
        "current": summary.get("current"),
    }


def run(corpus: Path, copies: int, system: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"bench-mem-{copies}-") as tmp:
        root = Path(tmp)
        files, size = make_inbox(corpus, root / "inbox", copies)
        shutil.copyfile(PLANS, root / "plans.yaml")
        home = root / "dagster_home"
        home.mkdir()
        shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
        env = {**os.environ, "DAGSTER_HOME": str(home)}
        inbox, db, plans = str(root / "inbox"), str(root / "ingest.duckdb"), str(root / "plans.yaml")
        if system == "cli":
            command = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", inbox, "--db", db]
            command += ["--plans", plans, "--json"]
        else:
            command = [sys.executable, "-c", ENGINE_CHILD, inbox, db, plans]
        result = measure(command, env)
        print(f"  {system} x{copies}: {result['peak_rss_mb']} MB, {result['seconds']} s", file=sys.stderr)
        return {"copies": copies, "files": files, "megabytes": round(size / 1e6, 1), **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--copies", type=int, help="the large run's copies (default 10; 3 with --quick)")
    parser.add_argument("--system", action="append", choices=["cli", "engine"], help="repeatable")
    parser.add_argument("--quick", action="store_true", help="data/sample: a smoke test")
    parser.add_argument("--output", default="memory.json", help="file name under benchmarks/results")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus(args.quick)
    copies = args.copies or (3 if args.quick else 10)
    report: dict[str, Any] = {
        "benchmark": "memory",
        "machine": machine(),
        "corpus": str(corpus),
        "systems": {},
    }
    rows = []
    for system in args.system or ["cli", "engine"]:
        small, large = run(corpus, 1, system), run(corpus, copies, system)
        growth = round(large["peak_rss_mb"] / small["peak_rss_mb"], 3)
        report["systems"][system] = {"x1": small, f"x{copies}": large, "growth": growth}
        name = "ingest run (end to end)" if system == "cli" else "engine (no Dagster)"
        for entry in (small, large):
            rows.append(
                [
                    name,
                    f"x{entry['copies']}",
                    entry["files"],
                    entry["megabytes"],
                    entry["peak_rss_mb"],
                    entry["seconds"],
                    f"{growth:.2f}x" if entry is large else "",
                ]
            )
    text = table(["system", "corpus", "files", "MB", "peak RSS MB", "seconds", "peak growth"], rows)
    print(text)
    if not args.quick or args.output != "memory.json":
        print(f"wrote {write_json(args.output, report | {'table': text})}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
