"""Incremental exports: the state an export leaves, what changed since it, and how a
downstream copy applies a change (no Dagster here).

Every export folder holds ``state.parquet``: (table, key, digest) of every row of the plan's
views at export time, a full export's and an incremental one's alike, so exports chain. An
export ``--since`` a base writes only the rows whose key is new or whose digest changed
(upserts), and ``removed.jsonl``: one ``{"table", "key"}`` line per row of the base that is
gone. Applying it: delete the removed keys, then insert-or-replace the written rows by key
(:func:`apply_increment` does exactly that over rows read back with :func:`read_tables`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingest_assets.exports.views import JSON_COLUMNS, TABLES

__all__ = [
    "apply_increment",
    "changed_rows",
    "read_state",
    "read_tables",
    "row_key",
    "state_table",
    "with_endpoints",
]

STATE = pa.schema([("table", pa.string()), ("key", pa.string()), ("digest", pa.string())])


def state_table(tables: dict[str, pa.Table]) -> pa.Table:
    """The ``state.parquet`` rows of the full ``tables``."""
    parts = [
        pa.table(
            {
                "table": pa.array([name] * t.num_rows, pa.string()),
                "key": t.column("_key").cast(pa.string()),
                "digest": t.column("_digest").cast(pa.string()),
            },
            schema=STATE,
        )
        for name, t in tables.items()
    ]
    return pa.concat_tables(parts) if parts else STATE.empty_table()


def read_state(folder: Path) -> dict[str, dict[str, str]]:
    """The state an earlier export left: table -> key -> digest."""
    state: dict[str, dict[str, str]] = {name: {} for name in TABLES}
    for row in pq.read_table(folder / "state.parquet").to_pylist():
        state.setdefault(row["table"], {})[row["key"]] = row["digest"]
    return state


def changed_rows(
    tables: dict[str, pa.Table], base: dict[str, dict[str, str]]
) -> tuple[dict[str, pa.Table], list[dict[str, str]]]:
    """The rows of ``tables`` new or changed since ``base``, and the removals (base keys gone)."""
    upserts, removed = {}, []
    for name, table in tables.items():
        known = base.get(name, {})
        keys, digests = table.column("_key").to_pylist(), table.column("_digest").to_pylist()
        keep = [known.get(k) != d for k, d in zip(keys, digests, strict=True)]
        upserts[name] = table.filter(pa.array(keep, pa.bool_()))
        present = set(keys)
        removed += [{"table": name, "key": key} for key in sorted(known) if key not in present]
    return upserts, removed


def with_endpoints(upserts: dict[str, pa.Table], tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """``upserts`` with, among the nodes, every node an upserted edge joins (from the full
    ``tables``): a graph file cannot hold an edge without its two nodes, and a node written
    bare (no label or properties) would blank the kept node it replaces downstream."""
    nodes, edges = upserts["nodes"], upserts["edges"]
    ends = set(edges.column("source_id").to_pylist()) | set(edges.column("target_id").to_pylist())
    missing = ends - set(nodes.column("id").to_pylist())
    if not missing:
        return upserts
    full = tables["nodes"]
    kept = full.filter(
        pc.is_in(full.column("id"), value_set=pa.array(sorted(missing), full.schema.field("id").type))
    )
    return {**upserts, "nodes": pa.concat_tables([nodes, kept])}


def row_key(table: str, row: dict[str, Any]) -> str:
    """A row's key as ``state.parquet`` and ``removed.jsonl`` name it."""
    if table == "edges":
        return f"{row['source_id']}|{row['target_id']}|{row['type']}"
    return str(row["id"])


def read_tables(folder: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The rows a ``parquet`` or ``jsonl`` export folder holds, by table, JSON columns decoded
    (so both formats read back the same)."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    tables: dict[str, list[dict[str, Any]]] = {}
    for name in TABLES:
        if manifest["format"] == "parquet":
            rows = pq.read_table(folder / f"{name}.parquet").to_pylist()
            for row in rows:
                for column in JSON_COLUMNS[name]:
                    if row.get(column) is not None:
                        row[column] = json.loads(row[column])
        elif manifest["format"] == "jsonl":
            lines = (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
            rows = [json.loads(line) for line in lines]
        else:
            raise ValueError(
                f"{folder}: read_tables reads parquet and jsonl exports, not {manifest['format']}"
            )
        tables[name] = rows
    return tables


def apply_increment(
    base: dict[str, list[dict[str, Any]]], folder: str | Path
) -> dict[str, list[dict[str, Any]]]:
    """``base`` (rows of the export the increment in ``folder`` was made since) with the
    increment applied: removed keys deleted, written rows inserted or replaced by key. Rows come
    back sorted by key, as a full export writes them."""
    folder = Path(folder)
    gone: dict[str, set[str]] = {name: set() for name in TABLES}
    removed = folder / "removed.jsonl"
    for line in removed.read_text(encoding="utf-8").splitlines() if removed.exists() else []:
        entry = json.loads(line)
        gone[entry["table"]].add(entry["key"])
    delta = read_tables(folder)
    result = {}
    for name in TABLES:
        rows = {row_key(name, r): r for r in base.get(name, []) if row_key(name, r) not in gone[name]}
        rows.update({row_key(name, r): r for r in delta[name]})
        result[name] = [rows[k] for k in sorted(rows)]
    return result
