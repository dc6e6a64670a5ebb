"""What a long step tells people while it runs: log lines, and a progress bar on a terminal.

No Dagster here. Each step logs through the ``ingest_assets.engine`` logger: a line when it
ends (what it did, how long it took) and, while it runs, a line every
:data:`PROGRESS_SECONDS`. Dagster shows them in the run's log (``python_logs`` in
``dagster.yaml``); ``ingest run -v`` prints them. ``ingest run`` on a terminal (not ``--json``)
also turns on a progress bar per step (:func:`show_bars`), drawn on stderr by ``tqdm``.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

__all__ = ["LOG", "PROGRESS_SECONDS", "StepProgress", "show_bars"]

LOG = logging.getLogger("ingest_assets.engine")
# A progress line every this many seconds, once a step has run this long.
PROGRESS_SECONDS = 10.0
_bars = False


def show_bars(on: bool = True) -> None:
    """Draw a progress bar per step on stderr from now on (``ingest run`` on a terminal)."""
    global _bars
    _bars = on


class StepProgress:
    """Progress of one step over ``total`` units of work (bytes parsed, characters chunked),
    for ``name`` (``parse``, ``child_chunks default-...``). Use as a context manager; call
    :meth:`advance` after each batch."""

    def __init__(self, name: str, total: int, unit: str) -> None:
        self.name, self.total, self.unit = name, max(total, 1), unit
        self.done = 0
        self.started = self.last = time.monotonic()
        self._bar: Any = None

    def __enter__(self) -> StepProgress:
        if _bars and self.total > 1:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total,
                desc=self.name,
                unit=self.unit,
                unit_scale=True,
                file=sys.stderr,
                leave=False,
            )
        return self

    def advance(self, size: int, note: str = "") -> None:
        """``size`` more units done (``note``: what the batch did, for the log line)."""
        self.done += size
        if self._bar is not None:
            self._bar.update(size)
        now = time.monotonic()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            LOG.info(
                "%s: %d%% of %s %s%s, %.0f s",
                self.name, 100 * self.done // self.total, self.total, self.unit,
                f" ({note})" if note else "", now - self.started,
            )  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def finished(self, summary: str) -> None:
        """Log the step's end: ``summary`` (what it did) and the seconds it took."""
        LOG.info("%s: %s in %.2f s", self.name, summary, time.monotonic() - self.started)
