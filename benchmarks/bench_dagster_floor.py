"""What Dagster itself costs a process that runs the project's jobs, with no store work at all.

Run from the project root::

    python benchmarks/bench_dagster_floor.py                 # 5 rounds, writes results/dagster-floor.json
    python benchmarks/bench_dagster_floor.py --repeat 3 --no-write

Every process of ``ingest shards`` and ``ingest run`` pays for Python, Dagster's import, a
Dagster instance and its runs before and around any work of the store. This benchmark measures
that floor in a new process per round: the project's own definitions are built (their import
is timed apart, as the project's cost), then each asset of ``documents_job`` and ``chunks_job``
is replaced by one that does nothing, with the same key, partitions, dependencies (partition
mappings included), pool and asset checks, and which records the same number of metadata
entries per partition as the real step does. The jobs are then run the way the CLI runs them
(``execute_in_process``, in-process executor, the project's ``dagster.yaml``):

* ``shard process``: a new ``DAGSTER_HOME`` (as each process of ``bench_scaleout.py`` has), one
  range run of each job over four shards: what each of two ``ingest shards`` processes runs.
* ``edit``: an existing ``DAGSTER_HOME``, one run of each job over one shard: what a one-file
  edit through ``ingest run`` runs.

Each phase is reported in wall seconds and CPU seconds of the process (``time.process_time``;
the interpreter's start is the process's CPU before its first line). From the shard-process
floor and the one-process time of the last ``bench_scaleout.py`` result at x3, it prints the
most two processes can be faster than one when each pays that floor once
(``T1 / ((T1 - F) / 2 + F)``, the work halved exactly, nothing else shared), and beside the
edit, CocoIndex's edit from the last ``bench_end_to_end.py`` result.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, ROOT, machine, median, table, write_json

# Metadata entries a real step records per partition (result_metadata plus data_version,
# chunks_added/removed/changed, and plan/plan_state on chunk assets): the events carry as many.
_METADATA_ENTRIES = 12
_QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
_SHAPES = {"shard process": ("00", "03"), "edit": ("03", "03")}


def _noop_definitions(definitions: Any) -> Any:
    """Definitions of ``documents_job`` and ``chunks_job`` over no-op copies of their assets."""
    from dagster import (
        AssetCheckResult,
        Definitions,
        MaterializeResult,
        define_asset_job,
        in_process_executor,
        multi_asset,
    )

    def copy(assets_def: Any) -> Any:
        (spec,) = assets_def.specs
        checks = list(assets_def.check_specs)
        pool = getattr(assets_def.op, "pool", None)

        @multi_asset(
            specs=[spec],
            check_specs=checks,
            partitions_def=spec.partitions_def,
            name=spec.key.path[-1],
            pool=pool,
        )
        def noop(context):  # type: ignore[no-untyped-def]  # Dagster reads the annotations: none here
            for key in context.partition_keys:
                metadata = {f"entry_{i}": i for i in range(_METADATA_ENTRIES)}
                context.add_asset_metadata(metadata, asset_key=spec.key, partition_key=key)
            return MaterializeResult(
                asset_key=spec.key,
                check_results=[
                    AssetCheckResult(asset_key=spec.key, check_name=c.name, passed=True) for c in checks
                ],
            )

        return noop

    from ingest_assets.defs.jobs import CHUNK_ASSETS, DOCUMENT_ASSETS

    wanted = {"documents_job": DOCUMENT_ASSETS, "chunks_job": CHUNK_ASSETS}
    by_name = {
        a.key.path[-1]: a for a in definitions.assets or [] if hasattr(a, "specs") and len(list(a.specs)) == 1
    }
    copies = {name: copy(by_name[name]) for names in wanted.values() for name in names}
    jobs = [
        define_asset_job(job, selection=[copies[n] for n in names], executor_def=in_process_executor)
        for job, names in wanted.items()
    ]
    return Definitions(assets=list(copies.values()), jobs=jobs)


def child(shape: str, home: str) -> dict[str, float]:
    """One round in this process: the phases' wall and CPU seconds."""
    times: dict[str, float] = {"start cpu": time.process_time()}

    def phase(name: str, started: tuple[float, float]) -> tuple[float, float]:
        now = (time.perf_counter(), time.process_time())
        times[f"{name} wall"] = now[0] - started[0]
        times[f"{name} cpu"] = now[1] - started[1]
        return now

    mark = (time.perf_counter(), time.process_time())
    import dagster  # noqa: F401

    mark = phase("dagster import", mark)
    from ingest_assets.defs import build_definitions
    from ingest_assets.settings import Settings

    definitions = build_definitions(Settings.from_env())
    mark = phase("project import and definitions", mark)
    noop = _noop_definitions(definitions)
    documents_job, chunks_job = (noop.resolve_job_def(name) for name in ("documents_job", "chunks_job"))
    mark = phase("no-op copies", mark)
    from ingest_assets.defs.partitions import PLAN_DIMENSION
    from ingest_assets.defs.private import instance_at
    from ingest_assets.defs.sensors import range_tags
    from ingest_assets.engine.keys import chunk_partition

    instance = instance_at(Path(home), capture_output=False)
    plan = "default-0000000000"
    if plan not in instance.get_dynamic_partitions(PLAN_DIMENSION):
        instance.add_dynamic_partitions(PLAN_DIMENSION, [plan])
    mark = phase("instance", mark)
    first, last = _SHAPES[shape]
    for job, start, end in (
        (documents_job, first, last),
        (chunks_job, chunk_partition(plan, first), chunk_partition(plan, last)),
    ):
        result = job.execute_in_process(
            instance=instance, tags=range_tags(start, end), run_config=_QUIET, raise_on_error=True
        )
        assert result.success
        mark = phase(job.name, mark)
    return times


def _round(shape: str) -> dict[str, float]:
    home = tempfile.mkdtemp(prefix="dagster-floor-")
    try:
        shutil.copyfile(ROOT / "dagster.yaml", Path(home) / "dagster.yaml")
        env = {**os.environ, "DAGSTER_TELEMETRY_DISABLED": "1", "PYTHONPATH": str(ROOT)}
        command = [sys.executable, __file__, "--child", shape, home]
        if shape == "edit":  # an existing instance: one round before, not timed
            subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        started = time.perf_counter()
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        times = json.loads(out.stdout.strip().splitlines()[-1])
        times["process wall"] = wall
        return times
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _last(name: str) -> dict[str, Any] | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    rounds: dict[str, list[dict[str, float]]] = {shape: [] for shape in _SHAPES}
    for _ in range(args.repeat):
        for shape in _SHAPES:  # the shapes in turn, so drift of the VM's speed hits both alike
            rounds[shape].append(_round(shape))
    phases = [
        "dagster import",
        "project import and definitions",
        "no-op copies",
        "instance",
        "documents_job",
        "chunks_job",
    ]
    summary: dict[str, dict[str, float]] = {}
    rows = []
    for shape, found in rounds.items():
        med = {key: round(median([r[key] for r in found]), 3) for key in found[0]}
        # Dagster's floor: the interpreter's start, Dagster's import, the instance and the runs.
        med["floor cpu"] = round(
            median(
                [
                    r["start cpu"]
                    + sum(r[f"{p} cpu"] for p in phases if not p.startswith(("project", "no-op")))
                    for r in found
                ]
            ),
            3,
        )
        med["floor wall"] = round(
            median(
                [
                    r["process wall"] - r["project import and definitions wall"] - r["no-op copies wall"]
                    for r in found
                ]
            ),
            3,
        )
        summary[shape] = med
        rows.append(
            [
                shape,
                *(f"{med[f'{p} wall']:.2f} / {med[f'{p} cpu']:.2f}" for p in phases),
                f"{med['floor wall']:.2f} / {med['floor cpu']:.2f}",
            ]
        )
    print(table(["process", *phases, "Dagster's floor"], rows))
    print("(wall s / CPU s, medians of", args.repeat, "rounds)")
    bounds: dict[str, Any] = {}
    scaleout = _last("scaleout-x3.json")
    if scaleout:
        t1 = scaleout.get("x3", {}).get("seconds", {}).get("lake, 1 process")
        if t1:
            floor = summary["shard process"]["floor cpu"]
            project = summary["shard process"]["project import and definitions cpu"]
            bounds["two_vs_one_at_x3"] = {
                "one_process_s": t1,
                "floor_cpu_s": floor,
                "project_import_cpu_s": project,
            }
            for label, fixed in (("Dagster's floor", floor), ("and the project's import", floor + project)):
                best = t1 / ((t1 - fixed) / 2 + fixed)
                bounds["two_vs_one_at_x3"]["at_most" if fixed == floor else "at_most_with_import"] = round(
                    best, 3
                )
                print(
                    f"x3, one lake process {t1:.1f} s; {label} ({fixed:.2f} s CPU): two at most {best:.2f}x"
                )
    e2e = _last("end_to_end-nollama.json")
    if e2e:
        coco = e2e.get("systems", {}).get("cocoindex-cold", {}).get("edit", {}).get("seconds")
        if coco:
            edit = summary["edit"]["floor wall"]
            bounds["edit_vs_cocoindex"] = {
                "cocoindex_edit_s": coco,
                "floor_wall_s": edit,
                "at_least": round(edit / coco, 3),
            }
            print(
                f"edit: Dagster's floor {edit:.2f} s, CocoIndex's whole edit {coco:.2f} s: {edit / coco:.2f}x"
            )
    if not args.no_write:
        path = write_json(
            "dagster-floor.json",
            {
                "machine": machine(),
                "repeat": args.repeat,
                "summary": summary,
                "bounds": bounds,
                "rounds": rounds,
            },
        )
        print("wrote", path)


if __name__ == "__main__":
    main()
