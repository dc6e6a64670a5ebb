"""A real ``dagster dev`` (webserver + daemon) on a free loopback port, driven over GraphQL.

:class:`DagsterDev` writes a DAGSTER_HOME (the project's ``dagster.yaml``) under a tmp folder,
starts ``dagster dev`` in the project root (so ``[tool.dagster]`` of pyproject.toml names the
module and the code location ``ingest``) in its own process group, with the store, inbox and
plans file of the test, waits until the location lists its assets and the daemon is healthy,
and stops the whole group at the end: SIGINT, then SIGKILL (``dagster dev`` in the background
can ignore SIGINT/SIGTERM for a long time).

Every wait is bounded; a timeout raises :class:`DagsterDevError` with the tail of the
``dagster dev`` log (``<tmp>/dagster-dev.log``). The GraphQL client uses only the stdlib.
Field names come from the schema of the installed dagster-graphql and were checked against
the running server.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest_assets.defs.sensors import RANGE_END_TAG, RANGE_START_TAG

__all__ = ["ROOT", "CheckExecution", "DagsterDev", "DagsterDevError", "Run", "group_pids"]

ROOT = Path(__file__).resolve().parents[2]
LOCATION = "ingest"  # [tool.dagster] code_location_name
REPOSITORY = "__repository__"  # the repository Dagster makes of a Definitions object
ASSET_JOB = "__ASSET_JOB"  # the implicit job the UI launches asset selections in
PARTITION_TAG = "dagster/partition"
ACTIVE = frozenset({"QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING"})
_REPO = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}


class DagsterDevError(AssertionError):
    """``dagster dev`` did not do what a wait expected in time, or GraphQL answered an error.

    The message ends with the tail of the ``dagster dev`` log.
    """


@dataclass(frozen=True)
class Run:
    """One run as GraphQL lists it."""

    run_id: str
    status: str
    job_name: str
    tags: dict[str, str]
    assets: list[str]
    creation_time: float
    start_time: float | None = None  # None until it starts
    end_time: float | None = None  # None until it ends

    @property
    def partition(self) -> str | None:
        """The run's ``dagster/partition`` tag (None for a range run or an unpartitioned one)."""
        return self.tags.get(PARTITION_TAG)

    @property
    def covers(self) -> tuple[str, str] | None:
        """The first and last partition of the run (both its partition for a one-partition run;
        the range tags' ends for a range run), None for an unpartitioned run."""
        if self.partition:
            return self.partition, self.partition
        start, end = self.tags.get(RANGE_START_TAG), self.tags.get(RANGE_END_TAG)
        return (start, end) if start and end else None


@dataclass(frozen=True)
class CheckExecution:
    """One asset check execution: name, status, severity and metadata of its evaluation."""

    name: str
    status: str
    run_id: str
    partition: str | None
    severity: str | None
    passed: bool | None
    metadata: dict[str, Any] = field(default_factory=dict)


_ERROR = "__typename ... on Error { message }"
_METADATA = """metadataEntries { __typename label
  ... on IntMetadataEntry { intValue } ... on FloatMetadataEntry { floatValue }
  ... on TextMetadataEntry { text } ... on JsonMetadataEntry { jsonString }
  ... on MarkdownMetadataEntry { mdStr } ... on BoolMetadataEntry { boolValue }
  ... on PathMetadataEntry { path } ... on UrlMetadataEntry { url } }"""
_RUN = "runId status jobName creationTime startTime endTime tags { key value } assetSelection { path }"

Q_WORKSPACE = f"""{{ workspaceOrError {{ {_ERROR}
  ... on Workspace {{ locationEntries {{ name loadStatus
    locationOrLoadError {{ {_ERROR} ... on PythonError {{ causes {{ message }} }}
      ... on RepositoryLocation {{ repositories {{ name }} }} }} }} }} }} }}"""
Q_REPOSITORY = f"""query Repo($repo: RepositorySelector!) {{ repositoryOrError(repositorySelector: $repo) {{
  {_ERROR}
  ... on Repository {{ assetNodes {{ assetKey {{ path }} }} jobs {{ name }}
    sensors {{ name sensorType sensorState {{ status }} }}
    schedules {{ name scheduleState {{ status }} }} }} }} }}"""
Q_DAEMONS = "{ instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } } }"
M_START_SENSOR = f"""mutation Start($s: SensorSelector!) {{ startSensor(sensorSelector: $s) {{
  {_ERROR} ... on Sensor {{ name sensorState {{ status }} }} }} }}"""
Q_SENSOR = f"""query Sensor($s: SensorSelector!) {{ sensorOrError(sensorSelector: $s) {{
  {_ERROR} ... on Sensor {{ name sensorState {{ id selectorId status }} }} }} }}"""
Q_SENSOR_TICKS = f"""query Ticks($s: SensorSelector!) {{ sensorOrError(sensorSelector: $s) {{
  {_ERROR} ... on Sensor {{ sensorState {{ ticks(limit: 50) {{ timestamp }} }} }} }} }}"""
M_STOP_SENSOR = f"""mutation Stop($id: String!) {{ stopSensor(id: $id) {{
  {_ERROR} ... on StopSensorMutationResult {{ instigationState {{ status }} }} }} }}"""
M_START_SCHEDULE = f"""mutation Start($s: ScheduleSelector!) {{ startSchedule(scheduleSelector: $s) {{
  {_ERROR} ... on ScheduleStateResult {{ scheduleState {{ status }} }} }} }}"""
Q_SCHEDULE = f"""query Schedule($s: ScheduleSelector!) {{ scheduleOrError(scheduleSelector: $s) {{
  {_ERROR} ... on Schedule {{ name scheduleState {{ id selectorId status }} }} }} }}"""
M_STOP_SCHEDULE = f"""mutation Stop($id: String!) {{ stopRunningSchedule(id: $id) {{
  {_ERROR} ... on ScheduleStateResult {{ scheduleState {{ status }} }} }} }}"""
M_LAUNCH_RUN = f"""mutation Launch($p: ExecutionParams!) {{ launchRun(executionParams: $p) {{
  {_ERROR} ... on LaunchRunSuccess {{ run {{ runId }} }} }} }}"""
M_BACKFILL = f"""mutation Backfill($p: LaunchBackfillParams!) {{
  launchPartitionBackfill(backfillParams: $p) {{ {_ERROR}
    ... on LaunchBackfillSuccess {{ backfillId }} }} }}"""
Q_RUNS = f"""query Runs($limit: Int) {{ runsOrError(limit: $limit) {{
  {_ERROR} ... on Runs {{ results {{ {_RUN} }} }} }} }}"""
Q_BACKFILLS = f"""{{ partitionBackfillsOrError(limit: 100) {{ {_ERROR}
  ... on PartitionBackfills {{ results {{ id status }} }} }} }}"""
Q_RUN = f"""query Run($id: ID!) {{ runOrError(runId: $id) {{ {_ERROR} ... on Run {{ {_RUN} }} }} }}"""
Q_RUN_ERRORS = """query Logs($id: ID!) { logsForRun(runId: $id, limit: 1000) { __typename
  ... on EventConnection { events { __typename
    ... on ExecutionStepFailureEvent { stepKey error { message } }
    ... on RunFailureEvent { message error { message } } } } } }"""
Q_MATERIALIZATION = f"""query Mat($key: AssetKeyInput!, $partitions: [String!]) {{
  assetNodeOrError(assetKey: $key) {{ {_ERROR}
    ... on AssetNode {{ latestMaterializationByPartition(partitions: $partitions) {{
      runId partition {_METADATA} }} }} }} }}"""
Q_MATERIALIZATION_ANY = f"""query Mat($key: AssetKeyInput!) {{ assetOrError(assetKey: $key) {{ {_ERROR}
  ... on Asset {{ assetMaterializations(limit: 1) {{ runId partition {_METADATA} }} }} }} }}"""
Q_CHECK_NAMES = f"""query Checks($key: AssetKeyInput!) {{ assetNodeOrError(assetKey: $key) {{ {_ERROR}
  ... on AssetNode {{ assetChecksOrError {{ {_ERROR} ... on AssetChecks {{ checks {{ name }} }} }} }} }} }}"""
Q_CHECK_EXECUTIONS = f"""query Executions($key: AssetKeyInput!, $name: String!, $limit: Int!) {{
  assetCheckExecutions(assetKey: $key, checkName: $name, limit: $limit) {{ runId status partition
    evaluation {{ severity success {_METADATA} }} }} }}"""
Q_PARTITION_KEYS = f"""query Keys($key: AssetKeyInput!) {{ assetNodeOrError(assetKey: $key) {{ {_ERROR}
  ... on AssetNode {{ partitionKeysByDimension {{ name partitionKeys }} }} }} }}"""
M_RELOAD = f"""mutation Reload($name: String!) {{ reloadRepositoryLocation(repositoryLocationName: $name) {{
  {_ERROR} ... on WorkspaceLocationEntry {{ loadStatus locationOrLoadError {{ {_ERROR} }} }} }} }}"""


def free_port() -> int:
    """Return a loopback TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def group_pids(pgid: int) -> list[int]:
    """Return the live (not zombie) processes of process group ``pgid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp ...
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return sorted(found)


def _metadata(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Metadata entries as plain values (JSON decoded); types without a value field give None."""
    values: dict[str, Any] = {}
    for entry in entries:
        value = next((v for k, v in entry.items() if k not in ("__typename", "label")), None)
        values[entry["label"]] = json.loads(value) if entry["__typename"] == "JsonMetadataEntry" else value
    return values


def _run(node: dict[str, Any]) -> Run:
    return Run(
        run_id=node["runId"],
        status=node["status"],
        job_name=node["jobName"],
        tags={t["key"]: t["value"] for t in node["tags"]},
        assets=["/".join(k["path"]) for k in node["assetSelection"] or []],
        creation_time=node["creationTime"],
        start_time=node.get("startTime"),
        end_time=node.get("endTime"),
    )


class DagsterDev:
    """``dagster dev`` for one test: its own DAGSTER_HOME, store, inbox and plans file.

    Use as a context manager (``with DagsterDev(...) as dev:``) or call :meth:`start` and
    :meth:`stop` (always in a ``finally``). The process group is stopped even when the start
    fails.

    Args:
        workdir: A tmp folder: DAGSTER_HOME (``home/``) and the log (``dagster-dev.log``) go here.
        database: The DuckDB store (``INGEST_DUCKDB``).
        inbox: The inbox folder (``INGEST_INBOX``).
        plans_file: The plans file (``INGEST_PLANS``); tests edit it, then call :meth:`reload`.
        env: Extra environment for dagster dev (e.g. ``{"INGEST_SENSOR_SECONDS": "5"}``).
        start_timeout: Seconds to wait for the code location and the daemon.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        database: Path,
        inbox: Path,
        plans_file: Path,
        env: Mapping[str, str] | None = None,
        start_timeout: float = 180.0,
    ) -> None:
        self.workdir = Path(workdir)
        self.home = self.workdir / "home"
        self.log_path = self.workdir / "dagster-dev.log"
        self.start_timeout = start_timeout
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.pgid = 0  # the process group, kept after stop() for checks
        self.env = {
            **os.environ,
            "DAGSTER_HOME": str(self.home),
            "DAGSTER_TELEMETRY_DISABLED": "1",
            "PYTHONUNBUFFERED": "1",
            "INGEST_DUCKDB": str(database),
            "INGEST_INBOX": str(inbox),
            "INGEST_PLANS": str(plans_file),
            **(env or {}),
        }
        self.home.mkdir(parents=True, exist_ok=True)
        if not (self.home / "dagster.yaml").exists():
            shutil.copyfile(ROOT / "dagster.yaml", self.home / "dagster.yaml")

    # The folder the command starts in.
    cwd: Path = ROOT

    def command(self) -> list[str]:
        """The command line :meth:`start` runs, serving on ``self.port``."""
        # No -m: dagster dev then loads [tool.dagster] of pyproject.toml (cwd), whose
        # code_location_name is "ingest"; with -m the location is named after the module.
        return [sys.executable, "-m", "dagster", "dev", "-h", "127.0.0.1", "-p", str(self.port)]

    @property
    def url(self) -> str:
        """The webserver's base URL (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.port}"

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> DagsterDev:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> DagsterDev:
        """Start dagster dev; return once the code location lists its assets and the daemon is up.

        Raises:
            DagsterDevError: The location failed to load, dagster dev exited, or the wait timed out.
        """
        self.port = free_port()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self.wait_loaded(self.start_timeout)
            self._wait("the daemon to be healthy", self._daemon_healthy, self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, grace: float = 10.0) -> float:
        """Stop the whole process group: SIGINT, up to ``grace`` seconds, then SIGKILL.

        Returns the seconds it took (0 when not running); idempotent. Afterwards
        ``group_pids(self.pgid)`` is empty, or this raises :class:`DagsterDevError`.
        """
        if self.process is None:
            return 0.0
        started = time.monotonic()
        self.pgid = self.process.pid  # start_new_session: the group's id is the leader's pid
        for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and group_pids(self.pgid):
                self.process.poll()  # reap the leader
                time.sleep(0.2)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.process = None
        if group_pids(self.pgid):
            raise self.fail(f"process group {self.pgid} still has {group_pids(self.pgid)} after SIGKILL")
        return time.monotonic() - started

    def ingest_run(self, timeout: float = 300.0) -> dict[str, Any]:
        """Run ``ingest run --json`` with this instance's env and DAGSTER_HOME; return its summary.

        Before :meth:`start` it seeds the store, the ``plan`` partitions and the run history.

        Raises:
            DagsterDevError: The command failed (its stderr is included) or timed out.
        """
        command = [sys.executable, "-m", "ingest_assets.cli", "run", "--json"]
        try:
            done = subprocess.run(
                command, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise self.fail(f"ingest run timed out after {timeout:.0f} s") from error
        if done.returncode != 0:
            raise self.fail(f"ingest run exited {done.returncode}: {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def log_tail(self, lines: int = 60) -> str:
        """Return the last ``lines`` lines of the dagster dev log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def fail(self, message: str) -> DagsterDevError:
        """Return a :class:`DagsterDevError` with ``message`` and the log tail (for ``raise``)."""
        return DagsterDevError(f"{message}\n--- tail of {self.log_path} ---\n{self.log_tail()}")

    def _wait(self, what: str, probe: Any, timeout: float, interval: float = 0.5) -> Any:
        """Call ``probe()`` until it returns something truthy; raise with the log tail at ``timeout``."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise self.fail(f"dagster dev exited while waiting for {what}")
            try:
                found = probe()
                last = found
            except (OSError, ValueError) as error:  # not listening yet, or not answering JSON yet
                last, found = error, None
            if found:
                return found
            time.sleep(interval)
        raise self.fail(f"timed out after {timeout:.0f} s waiting for {what} (last: {last})")

    def _daemon_healthy(self) -> bool:
        statuses = self.graphql(Q_DAEMONS)["instance"]["daemonHealth"]["allDaemonStatuses"]
        return all(s["healthy"] for s in statuses if s["required"])

    def wait_loaded(self, timeout: float = 120.0) -> list[str]:
        """Wait until the ``ingest`` location is loaded and return its asset keys.

        Raises:
            DagsterDevError: The location has a load error (its message is included) or the wait timed out.
        """

        def probe() -> list[str] | None:
            workspace = self.graphql(Q_WORKSPACE)["workspaceOrError"]
            entries = workspace.get("locationEntries", [])
            entry = next((e for e in entries if e["name"] == LOCATION), None)
            if entries and entry is None:
                raise self.fail(f"no code location {LOCATION}; found {[e['name'] for e in entries]}")
            if entry is None or entry["loadStatus"] != "LOADED":
                return None
            location = entry["locationOrLoadError"]
            if location and location["__typename"] == "PythonError":
                causes = "".join(f"\ncaused by: {c['message'].strip()}" for c in location["causes"])
                raise self.fail(f"code location {LOCATION} failed to load: {location['message']}{causes}")
            repo = self.graphql(Q_REPOSITORY, {"repo": _REPO})["repositoryOrError"]
            return ["/".join(n["assetKey"]["path"]) for n in repo.get("assetNodes", [])] or None

        return self._wait(f"code location {LOCATION} to load", probe, timeout)

    # -- GraphQL -------------------------------------------------------------------------------

    def graphql(self, query: str, variables: Mapping[str, Any] | None = None, timeout: float = 60) -> Any:
        """POST one query to ``/graphql``; return its ``data``.

        Raises:
            DagsterDevError: The answer has ``errors`` (a query that does not fit the schema).
            OSError: The server does not answer (not up yet, or gone).
        """
        body = json.dumps({"query": query, "variables": dict(variables or {})}).encode()
        request = urllib.request.Request(
            f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as error:  # 400 for a query that does not fit the schema
            answer = json.loads(error.read() or b"{}")
        if answer.get("errors") or "data" not in answer:
            raise self.fail(f"GraphQL errors: {json.dumps(answer.get('errors'))[:2000]}\nquery: {query}")
        return answer["data"]

    def _ok(self, result: dict[str, Any], what: str, *typenames: str) -> dict[str, Any]:
        """Return ``result`` when its ``__typename`` is one of ``typenames``, else raise its message."""
        if result["__typename"] not in typenames:
            raise self.fail(f"{what}: {result['__typename']}: {result.get('message')}")
        return result

    def repository(self) -> dict[str, Any]:
        """Return the ``ingest`` repository: asset nodes, jobs, sensors, schedules with their state."""
        repo = self.graphql(Q_REPOSITORY, {"repo": _REPO})["repositoryOrError"]
        return self._ok(repo, "repositoryOrError", "Repository")

    def sensors(self) -> dict[str, str]:
        """Return every sensor's status by name (``RUNNING`` or ``STOPPED``)."""
        return {s["name"]: s["sensorState"]["status"] for s in self.repository()["sensors"]}

    def schedules(self) -> dict[str, str]:
        """Return every schedule's status by name (``RUNNING`` or ``STOPPED``)."""
        return {s["name"]: s["scheduleState"]["status"] for s in self.repository()["schedules"]}

    def start_sensor(self, name: str) -> str:
        """Turn sensor ``name`` on; return its new status."""
        selector = {**_REPO, "sensorName": name}
        result = self._ok(self.graphql(M_START_SENSOR, {"s": selector})["startSensor"], name, "Sensor")
        return result["sensorState"]["status"]

    def sensor_ticks(self, name: str) -> list[float]:
        """Return when sensor ``name``'s newest ticks (at most 50) began, oldest first."""
        selector = {**_REPO, "sensorName": name}
        sensor = self._ok(self.graphql(Q_SENSOR_TICKS, {"s": selector})["sensorOrError"], name, "Sensor")
        return sorted(tick["timestamp"] for tick in sensor["sensorState"]["ticks"])

    def stop_sensor(self, name: str) -> str:
        """Turn sensor ``name`` off; return its new status."""
        selector = {**_REPO, "sensorName": name}
        sensor = self._ok(self.graphql(Q_SENSOR, {"s": selector})["sensorOrError"], name, "Sensor")
        result = self.graphql(M_STOP_SENSOR, {"id": sensor["sensorState"]["id"]})["stopSensor"]
        return self._ok(result, name, "StopSensorMutationResult")["instigationState"]["status"]

    def start_schedule(self, name: str) -> str:
        """Turn schedule ``name`` on; return its new status."""
        selector = {**_REPO, "scheduleName": name}
        result = self.graphql(M_START_SCHEDULE, {"s": selector})["startSchedule"]
        return self._ok(result, name, "ScheduleStateResult")["scheduleState"]["status"]

    def stop_schedule(self, name: str) -> str:
        """Turn schedule ``name`` off; return its new status."""
        selector = {**_REPO, "scheduleName": name}
        schedule = self._ok(self.graphql(Q_SCHEDULE, {"s": selector})["scheduleOrError"], name, "Schedule")
        result = self.graphql(M_STOP_SCHEDULE, {"id": schedule["scheduleState"]["id"]})["stopRunningSchedule"]
        return self._ok(result, name, "ScheduleStateResult")["scheduleState"]["status"]

    def launch_job(self, job: str, tags: Mapping[str, str] | None = None) -> str:
        """Launch a run of ``job`` with ``tags`` (``range_tags(...)``, a partition tag); return its id."""
        return self._launch({"jobName": job, **_REPO}, tags or {})

    def launch_assets(
        self,
        assets: Sequence[str],
        partition: str | None = None,
        *,
        checks: Sequence[tuple[str, str]] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        """Launch one run of the asset selection, as the UI's *Materialize* does; return its id.

        Args:
            assets: Asset keys (``"documents"``); one partitions definition per run.
            partition: One partition key (``"03"``, or ``"<plan key>|03"`` for the chunk assets).
            checks: ``(asset, check name)`` pairs to run with them; None: Dagster's default (every
                check of the selected assets); ``[]``: none.
            tags: Extra run tags.
        """
        selector: dict[str, Any] = {"jobName": ASSET_JOB, **_REPO}
        selector["assetSelection"] = [{"path": a.split("/")} for a in assets]
        if checks is not None:
            selector["assetCheckSelection"] = [
                {"assetKey": {"path": a.split("/")}, "name": n} for a, n in checks
            ]
        run_tags = {**(tags or {}), **({PARTITION_TAG: partition} if partition else {})}
        return self._launch(selector, run_tags)

    def _launch(self, selector: dict[str, Any], tags: Mapping[str, str]) -> str:
        params = {
            "selector": selector,
            "runConfigData": {},
            "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
        }
        result = self.graphql(M_LAUNCH_RUN, {"p": params})["launchRun"]
        return self._ok(result, f"launchRun {selector}", "LaunchRunSuccess")["run"]["runId"]

    def backfill(self, assets: Sequence[str], partitions: Sequence[str]) -> str:
        """Launch an asset backfill of ``assets`` over ``partitions``; return the backfill id."""
        params = {
            "assetSelection": [{"path": a.split("/")} for a in assets],
            "partitionNames": list(partitions),
        }
        result = self.graphql(M_BACKFILL, {"p": params})["launchPartitionBackfill"]
        return self._ok(result, "launchPartitionBackfill", "LaunchBackfillSuccess")["backfillId"]

    def runs(self, limit: int = 200) -> list[Run]:
        """Return the newest ``limit`` runs, newest first."""
        result = self._ok(self.graphql(Q_RUNS, {"limit": limit})["runsOrError"], "runsOrError", "Runs")
        return [_run(node) for node in result["results"]]

    def backfills(self) -> dict[str, str]:
        """Return the newest backfills' statuses by id (``REQUESTED`` while it still launches runs)."""
        result = self.graphql(Q_BACKFILLS)["partitionBackfillsOrError"]
        return {b["id"]: b["status"] for b in self._ok(result, "backfills", "PartitionBackfills")["results"]}

    def run(self, run_id: str) -> Run:
        """Return one run."""
        return _run(self._ok(self.graphql(Q_RUN, {"id": run_id})["runOrError"], run_id, "Run"))

    def run_errors(self, run_id: str) -> list[str]:
        """Return the step and run failure messages of a run (``"<step>: <message>"``)."""
        events = self.graphql(Q_RUN_ERRORS, {"id": run_id})["logsForRun"].get("events", [])
        errors = []
        for event in events:
            if event["__typename"] == "ExecutionStepFailureEvent":
                errors.append(f"{event['stepKey']}: {event['error']['message'].strip()}")
            elif event["__typename"] == "RunFailureEvent":
                errors.append(f"run: {(event.get('error') or {}).get('message') or event['message']}".strip())
        return errors

    def wait_for_run(self, run_id: str, timeout: float = 180.0) -> Run:
        """Wait until run ``run_id`` has ended (any status but queued/starting/started); return it."""
        return self._wait(
            f"run {run_id} to end", lambda: (r := self.run(run_id)).status not in ACTIVE and r, timeout
        )

    def wait_until_idle(self, quiet: float = 10.0, timeout: float = 300.0) -> list[Run]:
        """Wait until no run is active, no backfill is ``REQUESTED`` or ``CANCELING``, and ``quiet``
        seconds passed without a new run; return all runs, newest first.

        Raises:
            DagsterDevError: Runs kept coming or stayed active past ``timeout``.
        """
        state: dict[str, Any] = {"count": -1, "since": time.monotonic()}

        def probe() -> list[Run] | None:
            runs = self.runs()
            busy = any(status in ("REQUESTED", "CANCELING") for status in self.backfills().values())
            if busy or len(runs) != state["count"] or any(r.status in ACTIVE for r in runs):
                state["count"], state["since"] = len(runs), time.monotonic()
                return None
            return runs if time.monotonic() - state["since"] >= quiet else None

        return self._wait(f"no run for {quiet:.0f} s", probe, timeout, interval=1.0)

    def latest_materialization(self, asset: str, partition: str | None = None) -> dict[str, Any] | None:
        """Return the metadata of the latest materialization of ``asset`` (at ``partition``), or None.

        The result also holds ``"run_id"`` and ``"partition"`` under the keys ``_run_id``/``_partition``.
        """
        key = {"path": asset.split("/")}
        if partition is None:
            node = self.graphql(Q_MATERIALIZATION_ANY, {"key": key})["assetOrError"]
            events = self._ok(node, asset, "Asset")["assetMaterializations"]
        else:
            node = self.graphql(Q_MATERIALIZATION, {"key": key, "partitions": [partition]})[
                "assetNodeOrError"
            ]
            events = self._ok(node, asset, "AssetNode")["latestMaterializationByPartition"]
        event = next((e for e in events if e), None)
        if event is None:
            return None
        return {
            **_metadata(event["metadataEntries"]),
            "_run_id": event["runId"],
            "_partition": event["partition"],
        }

    def check_executions(self, asset: str, limit: int = 20) -> list[CheckExecution]:
        """Return the newest ``limit`` executions of every check of ``asset``, newest first per check."""
        key = {"path": asset.split("/")}
        node = self._ok(self.graphql(Q_CHECK_NAMES, {"key": key})["assetNodeOrError"], asset, "AssetNode")
        checks = self._ok(node["assetChecksOrError"], asset, "AssetChecks")["checks"]
        found = []
        for name in sorted(c["name"] for c in checks):
            variables = {"key": key, "name": name, "limit": limit}
            for execution in self.graphql(Q_CHECK_EXECUTIONS, variables)["assetCheckExecutions"]:
                evaluation = execution["evaluation"] or {}
                found.append(
                    CheckExecution(
                        name=name,
                        status=execution["status"],
                        run_id=execution["runId"],
                        partition=execution["partition"],
                        severity=evaluation.get("severity"),
                        passed=evaluation.get("success"),
                        metadata=_metadata(evaluation.get("metadataEntries", [])),
                    )
                )
        return found

    def plan_keys(self, asset: str = "parent_chunks") -> list[str]:
        """Return the dynamic ``plan`` partition keys (as the chunk asset ``asset`` shows them)."""
        node = self.graphql(Q_PARTITION_KEYS, {"key": {"path": [asset]}})["assetNodeOrError"]
        dims = self._ok(node, asset, "AssetNode")["partitionKeysByDimension"]
        return next(d["partitionKeys"] for d in dims if d["name"] == "plan")

    def reload(self, timeout: float = 120.0) -> list[str]:
        """Reload the code location (after editing the plans file); return its asset keys.

        Raises:
            DagsterDevError: The reload failed or the location has a load error (a bad plan).
        """
        result = self.graphql(M_RELOAD, {"name": LOCATION}, timeout=timeout)["reloadRepositoryLocation"]
        self._ok(result, "reloadRepositoryLocation", "WorkspaceLocationEntry")
        return self.wait_loaded(timeout)
