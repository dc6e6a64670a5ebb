"""A new plan key's forecast in the UI (headless Chromium over a real ``dagster dev``): after
an edit of the plans file, ``ingest_sensor`` reports ``ingest plans --diff``'s figures as an
observation on each of the new key's ``parent_chunks`` partitions, and the partition's page
shows them. Needs Debian's ``chromium`` and the ``playwright`` package; no browser download."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from ingest_assets.plans import load_plans
from tests.daemon.conftest import Workspace
from tests.daemon.harness import DagsterDev
from tests.daemon.test_browser import CHROMIUM, _skip_community_dialog

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api")

# The nearest element around a partition's link in the events list that holds the event's time.
EVENT_ROW = "xpath=ancestor::*[contains(., ' PM') or contains(., ' AM')][1]"
Q_OBSERVATIONS = """
query ($key: AssetKeyInput!, $partitions: [String!]) {
  assetOrError(assetKey: $key) {
    __typename
    ... on Asset { assetObservations(partitions: $partitions, limit: 5) {
      partition metadataEntries { label ... on IntMetadataEntry { intValue } } } }
  }
}
"""


@pytest.mark.long
def test_a_new_plan_keys_forecast_shows_on_its_partition_page(
    start_dagster_dev: Callable[..., DagsterDev], workspace: Workspace, tmp_path: Path
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does)")
    dev = start_dagster_dev(env={"INGEST_SENSOR_SECONDS": "2", "INGEST_WORKERS": "1"}, seed=True)
    plans = yaml.safe_load(workspace.plans_file.read_text())
    plans["plans"]["default"]["routes"]["*"]["child"]["chunk_size"] = 200
    workspace.plans_file.write_text(yaml.safe_dump(plans))
    (new_key,) = [plan.key for plan in load_plans(workspace.plans_file)]
    shard = workspace.busiest_shard()
    partition = f"{new_key}|{shard}"
    dev.start_sensor("ingest_sensor")
    deadline, figures = time.monotonic() + 120, {}
    while time.monotonic() < deadline and not figures:
        result = dev.graphql(Q_OBSERVATIONS, {"key": {"path": ["parent_chunks"]}, "partitions": [partition]})
        for event in result["assetOrError"].get("assetObservations", []):
            found = {e["label"]: e.get("intValue") for e in event["metadataEntries"]}
            if any(label.startswith("forecast_") for label in found):  # not a plan_state observation
                figures = found
        time.sleep(1)
    assert figures, dev.log_tail()
    assert figures["forecast_parent_sets_created"] == 0 and figures["forecast_child_sets_created"] > 0
    dev.stop_sensor("ingest_sensor")
    # The sensor launched the new key's backfill: let it end, so the events list holds still.
    dev.wait_until_idle(quiet=5, timeout=400)

    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            # en-US: the events list shows times as "Dec 4, 5:51 PM" (EVENT_ROW looks for it).
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="en-US")
            page.set_default_timeout(30_000)
            page.goto(f"{dev.url}/assets/parent_chunks?view=events", wait_until="networkidle")
            _skip_community_dialog(page)
            # The events list holds every partition's events, newest first: filter it to the
            # partition as a user does (Filter, Partition, the key), then open its events from
            # the oldest, the forecast observed when the plans file changed.
            page.get_by_role("button", name="Filter").click()
            popover = page.locator("[data-radix-popper-content-wrapper]").last
            popover.get_by_text("Partition", exact=True).click()
            page.keyboard.type(partition)
            popover.get_by_text(partition, exact=True).click()
            page.wait_for_url(f"**partitions%5B0%5D={quote(partition, safe='')}*")
            page.goto(page.url, wait_until="networkidle")  # the filtered list, its popover closed
            forecast = page.get_by_text("forecast_child_sets_created")
            # Each event of the list is a row: its time on top (selects the event), the
            # partition below (a link to the partition's page).
            links = page.get_by_text(partition, exact=True)
            try:
                links.first.wait_for()
                for index in reversed(range(links.count())):
                    row = links.nth(index).locator(EVENT_ROW)
                    row.click(position={"x": 20, "y": 8})
                    try:  # an event's details take a moment to render (longer on a loaded machine)
                        forecast.first.wait_for(timeout=5_000)
                        break
                    except sync_api.TimeoutError:
                        continue
                forecast.first.wait_for()
            finally:  # what the page showed, found or not
                page.screenshot(path=shots / "forecast-observation.png", full_page=True)
            assert page.get_by_text(f"Partition {partition} observed").count() == 1
        finally:
            browser.close()
