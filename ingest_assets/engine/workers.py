"""Worker processes for the CPU-bound work of a step: parsing, chunking, graph records.

Parsing and chunking are pure Python for the most part, so threads would wait on each other;
the engine hands such jobs to a small process pool instead and keeps every store read and write
in its own process (DuckDB allows one writer). A job is a module-level function and its
arguments, all picklable; its result comes back in order. Jobs catch their own errors and return
them as values, so one bad document never breaks the pool or stops the others.

The pool is started on first use (from a fork server, so no DuckDB or Dagster thread is ever
forked) and kept for the life of the process, so later steps and runs reuse warm workers. Small
amounts of work run inline: starting workers costs more than it saves below
:data:`PARALLEL_MIN_BYTES`.

The settings the caller passes choose the executor: ``workers`` (``INGEST_WORKERS``) sets the
number of processes, ``1`` (or ``0``) runs everything inline, the default is the number of CPUs
this process may use, at most 4 (see :meth:`Settings.worker_count`). ``executor="ray"``
(``INGEST_EXECUTOR=ray``) sends the jobs to a Ray cluster instead (:mod:`.ray_executor`, same
contract); ``workers`` then plays no part, the cluster's CPUs do.
"""

from __future__ import annotations

import atexit
import gc
import itertools
import multiprocessing
import os
import queue
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from multiprocessing import forkserver
from typing import Any, TypeVar

from ingest_assets.settings import Settings

__all__ = [
    "PARALLEL_MIN_BYTES",
    "PREFETCH_BYTES",
    "WORKER_NICENESS",
    "FollowUp",
    "forget_prefetched",
    "prefetch",
    "run_batches",
    "start_pool",
]

# Below this much input (bytes of source or text) a batch runs inline: a worker round trip and,
# on first use, starting the pool (about half a second) cost more than the work.
PARALLEL_MIN_BYTES = 2 * 1024 * 1024
# At most this much input is started ahead of the step that asks for it (:func:`prefetch`):
# about what two rounds of a step hold, which is what a step keeps in flight itself.
PREFETCH_BYTES = 16 * 1024 * 1024
# Workers yield the CPU to the process that owns them: what it does (reading, writing, starting
# runs) is the part no worker can do for it, so it goes first; workers take every core it leaves.
WORKER_NICENESS = 10

Batch = TypeVar("Batch")
Job = TypeVar("Job")
Result = TypeVar("Result")

_pool: ProcessPoolExecutor | None = None
_pool_size = 0
_lock = threading.RLock()
# Jobs started by prefetch() and not asked for yet: function -> the job's key -> its future.
_prefetched: dict[Callable[..., object], dict[Hashable, Future[object]]] = {}
# Bumped whenever the prefetched jobs are forgotten: a follow-up of an older prefetch starts nothing.
_generation = 0
# The thread still submitting a background prefetch (see prefetch), joined before a lookup.
_submitting: threading.Thread | None = None
# Prefetched jobs done whose follow-ups are to start, and the thread that starts them.
_done_jobs: queue.SimpleQueue[tuple[Callable[[Any], Iterable[Any]], int, Future[Any]]] = queue.SimpleQueue()
_follower: threading.Thread | None = None


@dataclass(frozen=True)
class FollowUp:
    """A job :func:`prefetch` starts once the job before it is done, from that job's result:
    ``function(job)``, matched later by ``key`` as :func:`prefetch`'s ``key`` names a result,
    and what to start once it is done in turn (``then``, given its result)."""

    function: Callable[[Any], Any]
    job: Any
    key: Hashable
    then: Callable[[Any], Iterable[FollowUp]] | None = None


def _itself(job: Job) -> Hashable:
    return job  # type: ignore[return-value]


def prefetch(
    function: Callable[[Job], Result],
    jobs: Iterable[tuple[Job, int]],
    settings: Settings,
    key: Callable[[Job], Hashable] = _itself,
    *,
    then: Callable[[Result], Iterable[FollowUp]] | None = None,
    background: bool = False,
) -> int:
    """Start ``function(job)`` on the worker pool now for the first :data:`PREFETCH_BYTES` of
    ``jobs`` (each given with its size in bytes), for a step that will run the same jobs later.

    A later :func:`run_batches` of ``function`` with the same ``key`` function takes the
    result of a job with an equal key from here instead of running it again; any other job is
    run as usual. The key must determine the result: by default it is the job itself (every
    input of the work); a job that is not hashable needs a key that names its result (a chunk
    set's key). This lets the workers compute while the caller's own process does something
    else first (``ingest run`` imports Dagster and creates its runs). ``jobs`` is read lazily,
    up to the bound. Nothing is started with Ray, one worker, or less work than
    :data:`PARALLEL_MIN_BYTES`. Returns how many jobs were started.

    ``then(result)`` names the jobs to start once a job is done (:class:`FollowUp`: the next
    steps' work on the same input), so the workers go on while this process writes what the
    steps before made; a follow-up that fails, or whose result no step asks for, costs only
    the workers' time. With ``background``, the jobs are submitted from a thread, so that this
    process goes on while the first submission waits for the pool's processes to start.
    """
    if settings.executor == "ray" or settings.worker_count() < 2:
        return 0
    chosen: list[Job] = []
    total = 0
    for job, size in jobs:
        if total >= PREFETCH_BYTES:
            break
        chosen.append(job)
        total += max(size, 0)
    if not chosen or total < PARALLEL_MIN_BYTES:
        return 0
    submit = partial(_submit_prefetch, function, chosen, key, then, settings.worker_count())
    if background:
        global _submitting
        with _lock:
            _join_submitting()
            _submitting = threading.Thread(target=submit, name="ingest-prefetch", daemon=True)
            _submitting.start()
    else:
        submit()
    return len(chosen)


def _submit_prefetch(
    function: Callable[[Job], Result],
    jobs: list[Job],
    key: Callable[[Job], Hashable],
    then: Callable[[Result], Iterable[FollowUp]] | None,
    workers: int,
) -> None:
    with _lock:
        pool = _shared_pool(workers)
        generation = _generation
        try:
            with _main_module_hidden():
                started = _prefetched.setdefault(function, {})
                for job in jobs:
                    if key(job) not in started:  # started once, however often asked
                        started[key(job)] = future = pool.submit(function, job)
                        if then is not None:
                            future.add_done_callback(partial(_follow, then, generation))
        except BrokenProcessPool:
            _prefetched.clear()


def _follow(then: Callable[[Any], Iterable[FollowUp]], generation: int, future: Future[Any]) -> None:
    """A prefetched job is done: hand it to the thread that starts its follow-ups (the pool's
    own thread, which runs this, must not submit: it is the one that reads the pool's
    wake-ups)."""
    global _follower
    with _lock:
        if _follower is None:
            _follower = threading.Thread(target=_start_follow_ups, name="ingest-follow-ups", daemon=True)
            _follower.start()
    _done_jobs.put((then, generation, future))


def _start_follow_ups() -> None:
    """Forever: start the follow-ups of each prefetched job that is done (see :func:`prefetch`)."""
    while True:
        then, generation, future = _done_jobs.get()
        if future.cancelled() or future.exception() is not None:
            continue
        try:
            follow_ups = list(then(future.result()))
        except Exception:  # a follow-up only saves time: without it, its step does the work
            continue
        with _lock:
            if generation != _generation or _pool is None:
                continue  # forgotten meanwhile: nobody will ask
            try:
                with _main_module_hidden():
                    for follow_up in follow_ups:
                        started = _prefetched.setdefault(follow_up.function, {})
                        if follow_up.key in started:
                            continue
                        started[follow_up.key] = later = _pool.submit(follow_up.function, follow_up.job)
                        if follow_up.then is not None:
                            later.add_done_callback(partial(_follow, follow_up.then, generation))
            except (BrokenProcessPool, RuntimeError):  # the pool broke or shut down
                continue


def _join_submitting() -> None:
    """Wait for a background prefetch to have submitted its jobs (they are then looked up)."""
    thread = _submitting
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def start_pool(settings: Settings, total_bytes: int) -> None:
    """Start the pool's fork server now, without waiting for it to be ready, so that it imports
    the task modules while the caller reads the jobs (of ``total_bytes`` of input) it will
    :func:`prefetch` (the first submission waits for that import). Nothing starts with Ray, one
    worker, or less work than :data:`PARALLEL_MIN_BYTES`."""
    if settings.executor == "ray" or settings.worker_count() < 2 or total_bytes < PARALLEL_MIN_BYTES:
        return
    with _lock:
        _shared_pool(settings.worker_count())  # no process yet: the preload list is set
        forkserver.ensure_running()


def forget_prefetched() -> None:
    """Drop the prefetched jobs nobody asked for (their results are not needed any more), and
    start none of their follow-ups."""
    global _generation
    _join_submitting()
    with _lock:
        _generation += 1
        for futures in list(_prefetched.values()):
            for future in futures.values():
                future.cancel()
        _prefetched.clear()


def _take_prefetched(
    function: Callable[[Job], Result], job: Job, key: Callable[[Job], Hashable] = _itself
) -> Future[Result] | None:
    _join_submitting()
    if function not in _prefetched:  # also: another function's keys are never computed here
        return None
    with _lock:
        started = _prefetched.get(function)
        future = None if started is None else started.pop(key(job), None)
        if started is not None and not started:
            del _prefetched[function]
        return future  # type: ignore[return-value]


def run_batches(
    function: Callable[[Job], Result],
    batches: Iterable[tuple[Batch, list[Job]]],
    total_bytes: int,
    settings: Settings,
    key: Callable[[Job], Hashable] = _itself,
) -> Iterator[tuple[Batch, list[Result]]]:
    """Yield ``(batch, [function(job) for job in jobs])`` for each ``(batch, jobs)``, in order.

    With workers, the next batch is taken (``batches`` may read the store to make its jobs) and
    its jobs are started before the current batch is yielded, so the workers compute while the
    caller writes. At most two batches are in flight, so memory stays bounded by the batch size.
    ``function`` must be a module-level function that does not raise for bad input (return the
    error instead). A job whose ``key`` a :func:`prefetch` of ``function`` started takes that
    result. When a worker dies (killed, or a crash in native code), the pool is dropped
    and the rest runs inline.

    ``settings`` choose the executor and the number of workers. With ``executor="ray"`` the
    jobs of work above :data:`PARALLEL_MIN_BYTES` run on Ray under the same contract (see
    :mod:`.ray_executor`).

    Raises:
        ray_executor.RayUnavailable: Ray was chosen but cannot be used (the message says why).
    """
    if settings.executor == "ray" and total_bytes >= PARALLEL_MIN_BYTES:
        from ingest_assets.engine import ray_executor

        yield from ray_executor.run_batches(function, batches, settings.ray_address)
        return
    workers = settings.worker_count()
    if workers < 2 or total_bytes < PARALLEL_MIN_BYTES:
        for batch, jobs in batches:
            yield batch, [_inline(function, job, key) for job in jobs]
        return
    pool = _shared_pool(workers)
    pending: deque[tuple[Batch, list[Job], list[Future[Result]] | None]] = deque()
    source = iter(batches)

    def submit(batch: Batch, jobs: list[Job]) -> None:
        try:
            # Submitting starts any missing worker.
            with _main_module_hidden():
                futures = [_take_prefetched(function, job, key) or pool.submit(function, job) for job in jobs]
                pending.append((batch, jobs, futures))
        except BrokenProcessPool:
            pending.append((batch, jobs, None))

    for batch, jobs in itertools.islice(source, 1):
        submit(batch, jobs)
    while pending:
        for batch, jobs in itertools.islice(source, 1):
            submit(batch, jobs)
        batch, jobs, futures = pending.popleft()
        try:
            if futures is None:
                raise BrokenProcessPool("the pool broke before this batch started")
            results = [future.result() for future in futures]
        except BrokenProcessPool:
            _drop_pool()
            results = [function(job) for job in jobs]
            yield batch, results
            # No pool any more: the batches in flight and the rest run inline.
            for later, later_jobs, _ in pending:
                yield later, [function(job) for job in later_jobs]
            for later, later_jobs in source:
                yield later, [function(job) for job in later_jobs]
            return
        yield batch, results


def _inline(function: Callable[[Job], Result], job: Job, key: Callable[[Job], Hashable]) -> Result:
    """``function(job)`` here, or the result of the same job prefetched (if its worker lived)."""
    future = _take_prefetched(function, job, key)
    if future is not None:
        try:
            return future.result()
        except (BrokenProcessPool, CancelledError):
            pass
    return function(job)


def _prepare_worker(owner: int) -> None:
    """Run once in each new worker.

    Moves what is alive now (the imported libraries) out of the garbage collector's reach:
    chunking makes many small objects, so collections run often, and without this each full
    one walks every object of every library again. Then watches the process that owns the pool:
    if it is killed, nothing else tells the worker (its task queue stays open), so the worker
    exits by itself instead of waiting forever.
    """
    gc.freeze()
    os.nice(WORKER_NICENESS)
    threading.Thread(target=_exit_after, args=(owner,), name="ingest-owner-watch", daemon=True).start()


def _exit_after(owner: int) -> None:
    """Return never: exit this process once process ``owner`` has ended."""
    try:
        handle = os.pidfd_open(owner)
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+): look every second
        handle = None
    if handle is not None:
        select.select([handle], [], [])  # readable once the process has ended
    else:
        while True:
            time.sleep(1.0)
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                continue
    os._exit(0)


def _shared_pool(workers: int) -> ProcessPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != workers:
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
                _prefetched.clear()
            context = multiprocessing.get_context("forkserver")
            # Workers fork from a server that has imported the libraries once.
            context.set_forkserver_preload(["ingest_assets.engine.tasks"])
            _pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=_prepare_worker,
                initargs=(os.getpid(),),
            )
            _pool_size = workers
        return _pool


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start workers without the caller's main script.

    A new worker imports the main module of its parent unless that has no file; a script
    without an ``if __name__ == "__main__"`` guard would run again in every worker. The jobs
    live in this package, never in ``__main__``, so the workers do not need it.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _lock:
        saved = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
        main.__dict__.pop("__file__", None)
        main.__spec__ = None
        try:
            yield
        finally:
            main.__dict__.update(saved)
            if "__spec__" not in saved:
                del main.__spec__


def _drop_pool() -> None:
    global _pool, _generation
    with _lock:
        _generation += 1
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        _prefetched.clear()


@atexit.register
def _shutdown() -> None:
    _drop_pool()
