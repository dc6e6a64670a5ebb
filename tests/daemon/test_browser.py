"""The UI in headless Chromium: the asset page of ``child_chunks`` and its *Materialize* dialog
for one partition, as a user clicks them, with the run checked over GraphQL.

Needs Debian's ``chromium`` (``.ci/run`` installs it) and the ``playwright`` package; no browser
is downloaded. Screenshots go to the test's tmp folder (``screenshots/``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.daemon.conftest import Workspace
from tests.daemon.harness import DagsterDev, Run

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
TITLE = "Launch runs to materialize child_chunks"

sync_api = pytest.importorskip("playwright.sync_api")


def _skip_community_dialog(page: Any) -> bool:
    """Click *Skip* on the first-visit community dialog; return whether it was shown."""
    skip = page.get_by_role("button", name="Skip")
    try:
        skip.wait_for(state="visible", timeout=15_000)
    except sync_api.TimeoutError:
        return False
    skip.click()
    skip.wait_for(state="hidden", timeout=10_000)
    return True


def _pick(page: Any, dialog: Any, index: int, key: str) -> None:
    """Choose ``key`` in the ``index``-th partition selector of the launch dialog."""
    dialog.get_by_text("Select a partition or create one").nth(index).click()
    popover = page.locator("[data-radix-popper-content-wrapper]").last
    popover.get_by_placeholder("Filter partitions").fill(key)
    popover.get_by_text(key, exact=True).first.click()
    dialog.get_by_text(TITLE).click()  # closes the popover, keeps the dialog
    popover.wait_for(state="hidden", timeout=10_000)


def _error_dialog(page: Any) -> Any:
    """The UI's error dialog (the launch dialog itself can say "Error loading base asset job")."""
    return page.get_by_role("dialog").filter(has_not_text=TITLE).filter(has_text="Error")


def _new_run(dev: DagsterDev, before: set[str], partition: str, page: Any, timeout: float) -> Run | None:
    """Wait for a new run (not in ``before``) of ``child_chunks`` at ``partition``.

    Returns None when the UI shows an error dialog instead.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for run in dev.runs(limit=20):
            if run.run_id not in before and "child_chunks" in run.assets and run.partition == partition:
                return run
        if _error_dialog(page).count():
            return None
        time.sleep(0.5)
    raise dev.fail(f"no run of child_chunks at {partition} within {timeout:.0f} s of the launch")


@pytest.mark.long
def test_materialize_one_child_chunks_partition_from_the_asset_page(
    start_dagster_dev: Callable[..., DagsterDev], workspace: Workspace, tmp_path: Path
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does)")
    dev = start_dagster_dev(seed=True)  # `ingest run` first: store, upstream partitions, plan key
    (plan_key,) = dev.plan_keys()
    shard = workspace.busiest_shard()
    partition = f"{plan_key}|{shard}"
    assert dev.latest_materialization("parent_chunks", partition) is not None  # upstream is there
    shots = tmp_path / "screenshots"
    shots.mkdir()
    before = {run.run_id for run in dev.runs()}

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)
            page.goto(f"{dev.url}/assets/child_chunks", wait_until="networkidle")
            assert _skip_community_dialog(page), "the first visit showed no community dialog"
            page.get_by_text("Latest materialization").wait_for()
            page.screenshot(path=shots / "1-asset-page.png")
            assert page.get_by_text(plan_key).count() >= 1  # the latest materialized partition

            page.get_by_role("button", name="Materialize…").click()
            dialog = page.get_by_role("dialog").filter(has_text=TITLE)
            dialog.wait_for()
            _pick(page, dialog, 0, plan_key)
            _pick(page, dialog, 0, shard)  # the plan selector no longer shows the placeholder
            dialog.get_by_text("1 partition", exact=True).wait_for()
            page.screenshot(path=shots / "2-launch-dialog.png")
            job_error = dialog.get_by_text("Error loading base asset job").count() > 0

            dialog.get_by_role("button", name="Launch 1 run").click()
            run = _new_run(dev, before, partition, page, timeout=60)
            if run is None:
                page.screenshot(path=shots / "3-launch-error.png")
                message = _error_dialog(page).inner_text()
                pytest.fail(
                    f"the launch showed an error (the dialog had 'Error loading base asset job': "
                    f"{job_error}):\n{message[:3000]}"
                )
            dialog.wait_for(state="hidden")
            page.screenshot(path=shots / "3-launched.png")

            done = dev.wait_for_run(run.run_id, timeout=180)
            page.goto(f"{dev.url}/runs/{run.run_id}", wait_until="networkidle")
            page.screenshot(path=shots / "4-run-page.png")
        finally:
            browser.close()

    assert done.status == "SUCCESS", dev.run_errors(run.run_id)
    assert not job_error, "the launch dialog showed 'Error loading base asset job'"
    assert done.assets == ["child_chunks"]
    metadata = dev.latest_materialization("child_chunks", partition)
    assert metadata is not None and metadata["_run_id"] == run.run_id
    assert metadata["failed"] == 0 and metadata["created"] == 0  # the store had every set: all reused
