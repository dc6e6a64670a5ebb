"""Run the jobs of :func:`ingest_assets.engine.workers.run_batches` on a Ray cluster.

Selected by ``INGEST_EXECUTOR=ray`` (see ``ingest_assets.settings``); the local process pool
stays the default. Only the jobs go to Ray: module-level functions of picklable arguments that
return their result or their error (``ingest_assets.engine.tasks``, ``embed.embed_texts``).
Every store read and write stays in the calling process, the Ray driver.

The contract is the pool's: results in order, errors as values, at most two batches in flight,
and a job whose worker dies (after Ray's own retries) costs no batch: it and the rest run
inline. A job that raises raises here, as with the pool.

Each node runs its jobs with its own installed copy of this project, which must be the same
version as the driver's (library versions are part of every fingerprint), and reads source files
at the paths the driver names: the inbox must be at the same path on every node.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["RAY_ADDRESS_ENV", "RayUnavailable", "run_batches", "shutdown", "tasks_by_node"]

RAY_ADDRESS_ENV = "INGEST_RAY_ADDRESS"
# How long the address check waits for the cluster's port to answer.
CONNECT_SECONDS = 5.0

Batch = TypeVar("Batch")
Job = TypeVar("Job")
Result = TypeVar("Result")

_lock = threading.RLock()
_connected: str | None = None  # the address this module connected to ("" for ray.init()'s choice)
_remote: Any = None  # _run_job as a Ray remote function
_nodes: Counter[str] = Counter()


class RayUnavailable(RuntimeError):
    """The Ray executor was chosen but cannot be used; the message names the setting and the fix."""


def _run_job(function: Callable[[Job], Result], job: Job) -> tuple[str, Result]:
    """Run one job on a Ray worker: the id of the node it ran on and ``function(job)``."""
    import ray

    return ray.get_runtime_context().get_node_id(), function(job)


def tasks_by_node() -> dict[str, int]:
    """How many jobs this process has run on each Ray node (by node id) since it first connected."""
    with _lock:
        return dict(_nodes)


def run_batches(
    function: Callable[[Job], Result],
    batches: Iterable[tuple[Batch, list[Job]]],
    address: str | None,
) -> Iterator[tuple[Batch, list[Result]]]:
    """Yield ``(batch, [function(job) for job in jobs])`` for each ``(batch, jobs)``, in order,
    with the jobs run as Ray tasks on the cluster at ``address`` (None: the one ``ray.init()``
    finds or starts).

    The next batch is taken and submitted before the current one is yielded, as in the pool.
    When a Ray worker or node dies and Ray's retries of a job are used up, that batch and the
    rest run inline (a warning says so on stderr).

    Raises:
        RayUnavailable: ``ray`` is not installed, or no cluster answers at ``address``.
    """
    remote = _connect(address)
    import ray
    from ray.exceptions import RayError, RayTaskError

    pending: list[tuple[Batch, list[Job], list[Any]]] = []
    source = iter(batches)

    def submit() -> None:
        item = next(source, None)
        if item is not None:
            batch, jobs = item
            pending.append((batch, jobs, [remote.remote(function, job) for job in jobs]))

    submit()
    while pending:
        submit()
        batch, jobs, refs = pending.pop(0)
        try:
            done = ray.get(refs)
        except RayTaskError:
            raise  # the job itself raised: as with the pool, the caller sees it
        except RayError as error:
            print(
                f"ingest: a Ray worker or node failed ({type(error).__name__}); "
                "this batch and the rest run in this process",
                file=sys.stderr,
            )
            yield batch, [function(job) for job in jobs]
            for _, _, later_refs in pending:
                _cancel(ray, later_refs)
            for later, later_jobs, _ in pending:
                yield later, [function(job) for job in later_jobs]
            for later, later_jobs in source:
                yield later, [function(job) for job in later_jobs]
            return
        with _lock:
            _nodes.update(node for node, _ in done)
        yield batch, [result for _, result in done]


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Ask Ray to drop jobs whose batch now runs inline (best effort: the cluster may be gone)."""
    for ref in refs:
        with contextlib.suppress(Exception):  # nothing to free on a cluster that is gone
            ray.cancel(ref)


def _connect(address: str | None) -> Any:
    """The remote form of :func:`_run_job`, connecting this process to Ray first if needed.

    A connection made here is kept for the life of the process (later steps and runs reuse it);
    one made by the caller's own ``ray.init`` is used as it is.

    Raises:
        RayUnavailable: ``ray`` is not installed, or no cluster answers at ``address``.
    """
    global _connected, _remote
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "INGEST_EXECUTOR=ray needs Ray: pip install 'fingerprint-ingest[ray]' "
            "(or set INGEST_EXECUTOR=process for the local worker pool)"
        ) from None
    wanted = address or ""
    with _lock:
        connect = not ray.is_initialized() or _connected not in (None, wanted)
        if connect and address not in (None, "auto"):
            _check_reachable(address)
        if ray.is_initialized() and _connected not in (None, wanted):
            ray.shutdown()  # this module connected elsewhere before: follow the setting
            _connected = None
        if not ray.is_initialized():
            # Ray would otherwise report usage to its servers from a cluster it starts.
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            try:
                ray.init(address=address)
            except Exception as error:
                raise RayUnavailable(_join_failed(address, error)) from error
            _connected = wanted
        if _remote is None:
            _remote = ray.remote(num_cpus=1)(_run_job)
        return _remote


def _check_reachable(address: str) -> None:
    """Fail fast when nothing listens at ``address``: ``ray.init`` would retry for minutes.

    Raises:
        RayUnavailable: The port does not answer; the message names the setting and the fix.
    """
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as error:
        raise RayUnavailable(_join_failed(address, error)) from None


def _join_failed(address: str | None, error: BaseException) -> str:
    """The message for a cluster that could not be joined."""
    if address is None:
        where = "ray.init() could not join or start a local Ray cluster"
    else:
        where = f"no Ray cluster could be joined at {RAY_ADDRESS_ENV}={address!r}"
    return (
        f"{where} ({type(error).__name__}: {error}). Start one with `ray start --head --port=6379` "
        f"(and `ray start --address=<head>:6379` on this machine if it is another one), then set "
        f"{RAY_ADDRESS_ENV} to the head's host:port; or unset {RAY_ADDRESS_ENV} to start a local "
        "cluster, or set INGEST_EXECUTOR=process for the local worker pool"
    )


def shutdown() -> None:
    """Disconnect from Ray if this module connected (the cluster itself keeps running)."""
    global _connected
    with _lock:
        if _connected is None:
            return
        import ray

        ray.shutdown()
        _connected = None
