"""The reliability tests' figures (bad inputs, kill trials, concurrent runs), added up over the
session and printed at its end. Under pytest-xdist each worker adds up its own; the hooks in
tests/conftest.py send them to the controller, which prints the sum."""

from __future__ import annotations

from collections import Counter
from typing import Any

# Filled by the tests, printed by ``write_summary``.
FIGURES: Counter[str] = Counter()
WORKER_OUTPUT_KEY = "reliability_figures"


def write_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    f = FIGURES
    write = terminalreporter.write_line
    terminalreporter.section("reliability figures")
    write(
        f"bad inputs tried: {f['bad_tried']}; documents recovered: {f['bad_recovered']} "
        f"({f['bad_ingested']} ingested, {f['bad_recorded']} recorded in ingest_failures), "
        f"unaccounted: {f['bad_tried'] - f['bad_recovered']}"
    )
    write(
        f"hostile inputs: {f['hostile_tried']} tried, links/special files skipped: {f['links_skipped']}, "
        f"network connects during parsing: {f['network_connects']}"
    )
    write(
        f"kill trials (SIGKILL of `ingest run`): {f['kill_trials']} ({f['kill_real']} killed a "
        f"running process); store consistent after: "
        f"{f['kill_consistent']}; next run completed without redoing committed sets: "
        f"{f['kill_completed']}; sets committed before a kill and reused: {f['kill_reused_sets']}"
    )
    write(
        f"concurrent runs: {f['concurrent_runs']}; succeeded: {f['concurrent_ok']}; "
        f"lock errors shown to the user: {f['lock_errors']}; rows lost: {f['rows_lost']}"
    )
