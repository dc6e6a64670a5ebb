"""Exports: one plan's chunks, graph nodes and edges (and vectors, in parquet and jsonl), in
full or as what changed since an earlier export, for a vector or graph store downstream (no
Dagster here; ``ingest export`` and the ``export_job`` in Dagster both call :func:`export_plan`).

=================  ==================================================================
module             job
=================  ==================================================================
``views``          the rows exported, read from the store's views as Arrow tables
``writers``        the formats: parquet (zstd), jsonl, graphml (networkx), neo4j-csv
``increments``     state, what changed since a base export, and applying a change
=================  ==================================================================

An export folder holds the format's files, ``state.parquet`` (every row's key and digest) and
``manifest.json``: ``export_id``, ``plan_key``, ``format``, ``created_at``, ``base`` (None, or
the base export's ``export_id`` and folder), ``rows`` (rows written per table), ``removed``
(removals per table), ``totals`` (rows in the plan's views), ``files``, and for neo4j-csv the
import command. The incremental contract is in :mod:`.increments`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ingest_assets.exports.increments import (
    apply_increment,
    changed_rows,
    read_state,
    read_tables,
    state_table,
    with_endpoints,
)
from ingest_assets.exports.views import GRAPH_TABLES, TABLES, read_view
from ingest_assets.exports.writers import FORMATS, NEO4J_INCREMENT, neo4j_import_command
from ingest_assets.store import IngestStore

__all__ = [
    "FORMATS",
    "TABLES",
    "ExportError",
    "ExportResult",
    "apply_increment",
    "export_plan",
    "find_export",
    "read_tables",
]


class ExportError(ValueError):
    """Bad export input (format, folder, base); the message names the option and the fix."""


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: its folder, manifest and the seconds it took."""

    folder: Path
    manifest: dict[str, Any]
    seconds: float


def find_export(since: str, out: Path) -> Path:
    """The folder of the export ``since`` names: a folder holding a ``manifest.json``, or the
    ``export_id`` of an export in a folder beside ``out``.

    Raises:
        ExportError: No such export.
    """
    folder = Path(since)
    if (folder / "manifest.json").is_file():
        return folder
    parent = out.resolve().parent
    for candidate in sorted(parent.glob("*/manifest.json")) if parent.is_dir() else []:
        try:
            if json.loads(candidate.read_text()).get("export_id") == since:
                return candidate.parent
        except (OSError, ValueError):
            continue
    raise ExportError(
        f"--since {since}: names no export (neither a folder with a manifest.json nor the export_id "
        f"of an export beside {out} in {parent}); pass the folder of an earlier export"
    )


def _prepare(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"--out {out}: exists and is not an empty folder; pass a new folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise ExportError(
            f"--out {out}: cannot write there ({error.strerror or error}); pass a writable folder"
        ) from error


def export_plan(
    store: IngestStore, plan_key: str, fmt: str, out: str | Path, since: str | Path | None = None
) -> ExportResult:
    """Export ``plan_key``'s current chunks, graph nodes and edges as ``fmt`` into ``out``
    (a new or empty folder); with ``since`` (an earlier export's folder or id), only the rows
    added or changed since it and the list of rows removed.

    Raises:
        ExportError: Unknown format, ``out`` not a writable empty folder, ``since`` names no
            export (or one of another format).
    """
    started = time.perf_counter()
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt}: unknown; use one of {', '.join(FORMATS)}")
    out = Path(out)
    base_folder = find_export(str(since), out) if since is not None else None
    base_manifest = json.loads((base_folder / "manifest.json").read_text()) if base_folder else None
    _prepare(out)
    with store.connect() as con:
        names = GRAPH_TABLES if fmt in ("graphml", "neo4j-csv") else TABLES
        tables = {name: read_view(con, name, plan_key) for name in names}
    written, removed = tables, []
    if base_folder is not None:
        written, removed = changed_rows(tables, read_state(base_folder))
        if fmt == "graphml":
            written = with_endpoints(written, tables)
    files = FORMATS[fmt](written, out)
    pq.write_table(state_table(tables), out / "state.parquet", compression="zstd")
    if base_folder is not None:
        with (out / "removed.jsonl").open("w", encoding="utf-8") as handle:
            for entry in removed:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
        files.append("removed.jsonl")
    now = datetime.now(UTC)
    manifest: dict[str, Any] = {
        "export_id": f"{plan_key}-{now:%Y%m%dT%H%M%S%fZ}",
        "plan_key": plan_key,
        "format": fmt,
        "created_at": now.isoformat(),
        "store": str(store.path),
        "base": None
        if base_manifest is None
        else {"export_id": base_manifest["export_id"], "folder": os.path.abspath(base_folder)},
        "rows": {name: t.num_rows for name, t in written.items()},
        "removed": {name: sum(1 for r in removed if r["table"] == name) for name in tables},
        "totals": {name: t.num_rows for name, t in tables.items()},
        "files": [*files, "state.parquet"],
    }
    if fmt == "neo4j-csv" and base_folder is None:
        manifest["neo4j_import"] = neo4j_import_command(files)
    elif fmt == "neo4j-csv":
        # An increment's files imported with ``import full`` would replace the database with
        # its upserts alone: it says how to apply them instead.
        manifest["neo4j_apply"] = NEO4J_INCREMENT
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return ExportResult(out, manifest, time.perf_counter() - started)
