"""The two big inputs of the bad-input list through ``ingest run``: a 50 MB file with no newline
and a CSV of 200k rows. Slow (they are big), so they run with ``-m slow``."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ingest_assets.store import IngestStore, invariants
from tests.reliability.conftest import FIGURES, copy_sample, run_cli, write_plans


@pytest.mark.long
@pytest.mark.slow
def test_fifty_megabyte_line_and_200k_row_csv(tmp_path: Path) -> None:
    inbox = copy_sample(tmp_path / "inbox")
    good = sum(1 for f in inbox.iterdir() if f.is_file())
    with (inbox / "one-line.txt").open("w") as handle:  # 50 MB, no newline
        for _ in range(51_300):  # 1,022 characters each
            handle.write("lorem ipsum dolor sit amet consectetur " * 26 + "x" * 8)
    with (inbox / "rows.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name", "note"])
        writer.writerows([i, f"name {i}", "a note, with a comma"] for i in range(200_000))
    db = tmp_path / "i.duckdb"
    # Completes (run_cli's timeout bounds a hang); how fast is for the benchmarks, not a wall
    # clock here, which a loaded CI machine stretches past any fixed bound.
    summary = run_cli(tmp_path, inbox, db, write_plans(tmp_path / "plans.yaml"))
    store = IngestStore(db)
    failures = dict(store.query("SELECT source_uri, error FROM ingest_failures"))
    (line_uri,) = [uri for uri in failures if uri.endswith("one-line.txt")]
    # Over the pipeline's byte limit: refused, with the limit and the way to raise it named.
    assert "max_bytes" in failures[line_uri] or "INGEST_MAX_BYTES" in failures[line_uri]
    # The table is ingested: every row lands in a chunk, the header repeated in each row group.
    rows_doc = store.query("SELECT count(*) FROM current_documents WHERE source_uri LIKE '%rows.csv'")
    assert rows_doc == [(1,)]
    assert summary["documents"]["parsed"] == good + 1 and summary["documents"]["failed"] == 1
    parents = store.query(
        "SELECT count(*), min(starts_with(text, 'id,name,note')::INT) FROM current_chunks "
        "WHERE level = 1 AND document_id IN (SELECT document_id FROM current_documents "
        "WHERE source_uri LIKE '%rows.csv')"
    )[0]
    assert parents[0] > 100 and parents[1] == 1
    assert invariants.all_violations(store) == []
    FIGURES["bad_tried"] += 2
    FIGURES["bad_recovered"] += 2
    FIGURES["bad_ingested"] += 1
    FIGURES["bad_recorded"] += 1
