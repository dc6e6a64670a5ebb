"""The private Dagster APIs this project uses, in one place, each with why.

Dagster 1.13 offers no public call for these; when it does, replace them here.
"""

from __future__ import annotations

import time
from pathlib import Path

from dagster import DagsterInstance, DagsterRun

__all__ = ["free_pool_slots", "instance_at"]


def instance_at(home: Path) -> DagsterInstance:
    """The instance configured by ``home/dagster.yaml``, without setting ``DAGSTER_HOME`` for the
    whole process (``DagsterInstance.get()`` reads only that variable): ``ingest run --db`` may
    point at another home than the shell's.

    Two processes opening a new home at once race to create its SQLite tables (one fails with
    "table ... already exists"); the loser opens it again once the winner is done.
    """
    from dagster._core.instance.ref import InstanceRef

    for attempt in range(5):
        try:
            return DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))
        except Exception as error:  # sqlalchemy's OperationalError, wrapped or not
            if "already exists" not in str(error) or attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def free_pool_slots(instance: DagsterInstance, run: DagsterRun) -> None:
    """Free the concurrency-pool slots a killed run still holds. The daemon's run monitoring
    does this for runs it launched; ``ingest run`` executes in its own process, so it frees the
    slots of its killed runs itself before the next run (else the writer pool waits forever)."""
    instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
