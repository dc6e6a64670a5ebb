"""Fixtures every test folder shares: the store backends (tests/lake/postgres.py); the hooks
that print the reliability figures (tests/figures.py), summed over pytest-xdist's workers; the
Hypothesis profiles (tests/example_budget.py): ``quick`` for the default suite, ``full`` for
CI's second pass (``--hypothesis-profile full``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings

from tests.example_budget import FULL, QUICK
from tests.figures import FIGURES, WORKER_OUTPUT_KEY, write_summary
from tests.lake.postgres import backend, postgres_cluster

__all__ = ["backend", "postgres_cluster"]

# Loaded here, before Hypothesis's plugin reads --hypothesis-profile, which then wins.
settings.register_profile("full", max_examples=FULL)
settings.register_profile("quick", max_examples=QUICK)
settings.load_profile("quick")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` go first, in their order: pytest-xdist hands out work in collection
    order, so a long test started last kept one worker busy alone while the others sat idle.
    Grouped tests keep their order (xdist starts the largest groups first anyway)."""
    for item in items:
        if item.get_closest_marker("long") and item.get_closest_marker("xdist_group"):
            raise pytest.UsageError(f"{item.nodeid}: a test of an xdist_group cannot be marked long")
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: False first


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand this worker's figures to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[WORKER_OUTPUT_KEY] = dict(FIGURES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the controller: add up a finished worker's figures."""
    FIGURES.update(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write_summary(terminalreporter)
