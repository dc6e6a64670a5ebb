"""The private Dagster APIs this project uses, in one place, each with why.

Dagster 1.13 offers no public call for these; when it does, replace them here.
"""

from __future__ import annotations

import fcntl
from pathlib import Path

from dagster import DagsterInstance, DagsterRun

__all__ = ["free_pool_slots", "instance_at"]


def instance_at(home: Path) -> DagsterInstance:
    """The instance configured by ``home/dagster.yaml``, without setting ``DAGSTER_HOME`` for the
    whole process (``DagsterInstance.get()`` reads only that variable): ``ingest run --db`` may
    point at another home than the shell's.

    Two processes opening a new home at once race to create its SQLite tables and to stamp their
    schema version (the loser fails with "table ... already exists" or with a UNIQUE constraint
    on ``alembic_version``): opening holds an exclusive lock on ``home/.instance.lock``, so the
    second process opens what the first one made.
    """
    from dagster._core.instance.ref import InstanceRef

    home.mkdir(parents=True, exist_ok=True)
    with (home / ".instance.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def free_pool_slots(instance: DagsterInstance, run: DagsterRun) -> None:
    """Free the concurrency-pool slots a killed run still holds. The daemon's run monitoring
    does this for runs it launched; ``ingest run`` executes in its own process, so it frees the
    slots of its killed runs itself before the next run (else the writer pool waits forever)."""
    instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
