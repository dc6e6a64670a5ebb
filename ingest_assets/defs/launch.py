"""How ``ingest run`` executes the jobs the UI launches, in its own process (the CLI imports
this module only when there is work). What a run did is read from the store afterwards
(``ingest_assets.engine.summary``, by the run ids :meth:`Launcher.execute` returns)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import yaml
from dagster import AssetCheckSeverity, DagsterInstance, DagsterRunStatus, RunsFilter

from ingest_assets.defs import build_definitions
from ingest_assets.defs.partitions import PLAN_DIMENSION, never_materialized
from ingest_assets.defs.private import free_pool_slots, instance_at
from ingest_assets.defs.sensors import range_tags
from ingest_assets.engine.keys import is_chunk_partition, plan_and_shard
from ingest_assets.settings import DEFAULT_STORE, Settings

__all__ = ["HOST_TAG", "PID_TAG", "STORE_TAG", "Launcher", "dagster_home", "store_label"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# `ingest run` says itself what its runs did, what failed and why (the summary, a failed run's
# cause, failed checks); Dagster's console would repeat it above, with a step failure's stack.
# The run's events keep it all for the UI. With --verbose, Dagster's warnings are shown too.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
_VERBOSE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# A check result's numbers that are not counts of violations.
_NOT_VIOLATIONS = {"sets_checked", "plans_embedding"}
# Runs of `ingest run` name their process, so a later `ingest run` can tell a run whose
# process was killed from one still going (see Launcher._release_orphans).
PID_TAG, HOST_TAG = "ingest/pid", "ingest/host"
# And the store they wrote (a lake's connection string without its password), so runs of
# several stores in one instance can be told apart in the UI.
STORE_TAG = "ingest/store"
# Beside an instance's dagster.yaml copied from the project's: the copy's digest.
_SEEDED = ".dagster.yaml.seeded"
# How many of an instance's latest runs are looked at for another store's.
_RUNS_LOOKED_AT = 50
_PASSWORD = re.compile(r"(password\s*=\s*)\S+", re.IGNORECASE)


def dagster_home(settings: Settings) -> Path:
    """Return ``$DAGSTER_HOME``, else the default instance of the store (made on first use):

    - the project's store (``data/ingest.duckdb``): ``./.dagster_home``;
    - any other DuckDB file: ``./.dagster_homes/<file stem>-<8 hex of its absolute path>``;
    - a lake: ``./.dagster_home_lake`` (its storage: dagster.postgres.yaml where the variables it
      names are set, as ``scripts/local_postgres.sh`` prints them; else dagster.yaml).

    Each store has its own: one instance shared by two stores shows either's runs as the
    other's in the UI, and its ``plans_sensor`` drops the other's plan partitions. The
    instance's dagster.yaml is a copy of the project's (``./`` first, then the project root),
    kept in step with it until someone edits the copy.
    """
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    lake = settings.is_lake
    if lake:
        home = Path(".dagster_home_lake").resolve()
    else:
        store = Path(settings.database).resolve()
        if store == Path(DEFAULT_STORE).resolve():
            home = Path(".dagster_home").resolve()
        else:
            digest = hashlib.sha256(str(store).encode()).hexdigest()[:8]
            home = Path(".dagster_homes", f"{store.stem}-{digest}").resolve()
    home.mkdir(parents=True, exist_ok=True)
    config, seeded = home / "dagster.yaml", home / _SEEDED
    # A copy no one edited since it was made follows its template (the project's settings
    # change with the code: pools, run limits); an edited one is the user's.
    untouched = seeded.exists() and config.exists() and seeded.read_text(encoding="utf-8") == _digest(config)
    if not config.exists() or untouched:
        names = ["dagster.postgres.yaml", "dagster.yaml"] if lake else ["dagster.yaml"]
        for candidate in (folder / name for name in names for folder in (Path("."), PROJECT_ROOT)):
            if candidate.exists() and _variables_set(candidate):
                if not config.exists() or config.read_bytes() != candidate.read_bytes():
                    shutil.copyfile(candidate, config)
                    seeded.write_text(_digest(config), encoding="utf-8")
                break
    return home


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _variables_set(config: Path) -> bool:
    """Whether every ``{env: NAME}`` of a Dagster instance file is set in the environment."""
    names: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("env"), str):
                names.append(node["env"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(yaml.safe_load(config.read_text(encoding="utf-8")))
    return all(name in os.environ for name in names)


def store_label(settings: Settings) -> str:
    """The store of ``settings`` as a run's tag names it: a file's absolute path, a lake's
    connection string with its password masked."""
    if not settings.is_lake:
        return str(Path(settings.database).resolve())
    return _PASSWORD.sub(r"\1***", settings.database)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Launcher:
    """The Dagster side of ``ingest run``: definitions, instance, plan partitions, runs launched."""

    def __init__(
        self, settings: Settings, keys: list[str], instance: Any = None, *, verbose: bool = False
    ) -> None:
        self.defs = build_definitions(settings)
        self.run_config = _VERBOSE if verbose else _QUIET
        # The error-severity checks the runs executed here failed, one line each (see _failed_check).
        self.failed_checks: list[str] = []
        self.store = store_label(settings)
        # The runs execute in this process, whose output is the user's terminal already.
        self.instance: DagsterInstance = instance or instance_at(dagster_home(settings), capture_output=False)
        # Other stores whose runs this instance holds (a DAGSTER_HOME shared on purpose).
        self.other_stores = self._other_stores()
        self._release_orphans()
        known = set(self.instance.get_dynamic_partitions(PLAN_DIMENSION))
        missing = [key for key in keys if key not in known]
        if missing:  # a run may only name registered keys; retired keys stay, with their history
            self.instance.add_dynamic_partitions(PLAN_DIMENSION, missing)

    def _other_stores(self) -> list[str]:
        """The stores other than this one named by the instance's latest runs (see
        :func:`dagster_home`: each store's UI should show its own runs and plan keys alone)."""
        latest = self.instance.get_runs(limit=_RUNS_LOOKED_AT)
        stores = {run.tags.get(STORE_TAG, self.store) for run in latest}
        return sorted(stores - {self.store})

    def _release_orphans(self) -> None:
        """Fail the runs of killed ``ingest run`` processes on this host and free their pool slots.

        A run killed mid-step keeps its slot of the ``duckdb_writer`` pool; without this, the
        next run's writing steps would wait for that slot forever.
        """
        unfinished = [DagsterRunStatus.STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.NOT_STARTED]
        host = socket.gethostname()
        for run in self.instance.get_runs(filters=RunsFilter(statuses=unfinished, tags={HOST_TAG: host})):
            pid = int(run.tags.get(PID_TAG, "0") or 0)
            if pid and pid != os.getpid() and not _alive(pid):
                self.instance.report_run_failed(run, message=f"ingest run process {pid} is gone (killed)")
                free_pool_slots(self.instance, run)

    def never_materialized(self, plan_key: str | None = None) -> list[str]:
        """The shards of the documents assets (``plan_key`` None) or of ``plan_key``'s chunk
        assets never materialized (see :func:`.partitions.never_materialized`)."""
        unmade = never_materialized(self.instance, plan_key)
        return unmade if plan_key is None else [plan_and_shard(p)[1] for p in unmade]

    def execute(self, job: str, start: str, end: str) -> str:
        """Run ``job`` over the partition range ``start``..``end``; returns the run's id (its
        steps' results are recorded in the store under it).

        The run's failed error-severity checks are added to :attr:`failed_checks`.

        Raises:
            RuntimeError: The run failed; the message names the failed steps.
        """
        result = self.defs.resolve_job_def(job).execute_in_process(
            instance=self.instance,
            tags={
                **range_tags(start, end),
                PID_TAG: str(os.getpid()),
                HOST_TAG: socket.gethostname(),
                STORE_TAG: self.store,
            },
            run_config=self.run_config,
            raise_on_error=False,
        )
        self.failed_checks += [
            _failed_check(check, _partitions(start, end))
            for check in result.get_asset_check_evaluations()
            if not check.passed and check.severity == AssetCheckSeverity.ERROR
        ]
        if not result.success:
            errors = [
                f"{event.step_key}: {_cause(event.event_specific_data.error)}"
                for event in result.all_events
                if event.is_step_failure
            ]
            raise RuntimeError(
                f"run {result.run_id} failed: " + "; ".join(errors or ["see the Dagster run log"])
            )
        return result.run_id


def _cause(error: Any) -> str:
    """The message of a step's failure that says what went wrong: the first error in the chain
    that is not Dagster's wrapper of the step (whose message names only the op)."""
    while error.cls_name.startswith("Dagster") and error.cause is not None:
        error = error.cause
    message = error.message.strip()
    # Dagster's message starts with the class's qualified name: the text is what it says.
    head, _, text = message.partition(": ")
    return text if head.rsplit(".", 1)[-1] == error.cls_name and text else message


def _partitions(start: str, end: str) -> str:
    """A run's partition range as people read it: ``plan default-..., shards 00..07``."""
    plan = ""
    if is_chunk_partition(start):
        (plan, start), (_, end) = plan_and_shard(start), plan_and_shard(end)
        plan = f"plan {plan}, "
    return f"{plan}shard {start}" if start == end else f"{plan}shards {start}..{end}"


def _failed_check(check: Any, partitions: str) -> str:
    """One line of a failed check: asset and check, the run's partitions, each rule it found
    broken with its count (or the error that kept it from running), and its first example."""
    metadata = {name: value.value for name, value in check.metadata.items()}
    broken = [
        f"{name} {count}"
        for name, count in metadata.items()
        if isinstance(count, int) and count and name not in _NOT_VIOLATIONS
    ]
    if "error" in metadata:
        broken.append(f"could not run ({metadata['error']})")
    example = str(metadata.get("examples", "none")).splitlines()[0]
    line = f"{check.asset_key.to_user_string()} {check.check_name} ({partitions}): "
    return line + ", ".join(broken) + ("" if example == "none" else f"; e.g. {example}")
