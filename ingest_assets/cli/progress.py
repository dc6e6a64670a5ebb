"""What ``ingest run`` shows on stderr while it runs: a progress bar per step on a terminal
(none with ``--json``), and with ``-v`` the steps' log lines (the ``ingest_assets.engine``
logger, as Dagster's run log shows them)."""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["show_progress"]


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines to whatever ``sys.stderr`` is when they are written (added once per process)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


def show_progress(*, verbose: bool, quiet: bool) -> None:
    """Draw a bar per step on a terminal unless ``quiet``; with ``verbose``, log each step's
    lines on stderr (and without, not: a command run in the same process before with ``-v``
    leaves no handler behind)."""
    from ingest_assets.engine.progress import LOG, show_bars

    show_bars(sys.stderr.isatty() and not quiet)
    if not verbose:
        for handler in [h for h in LOG.handlers if isinstance(h, _Stderr)]:
            LOG.removeHandler(handler)
    elif not any(isinstance(h, _Stderr) for h in LOG.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        LOG.addHandler(handler)
        LOG.setLevel(logging.INFO)
