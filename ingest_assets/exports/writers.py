"""The export formats: each writer puts the ``chunks``, ``nodes`` and ``edges`` tables (and
for the tabular formats ``vectors``; see :mod:`.views`, without their ``_key`` / ``_digest``
columns) into a folder and returns the files it wrote. No Dagster here.

* ``parquet``: ``chunks.parquet``, ``nodes.parquet``, ``edges.parquet``, ``vectors.parquet``
  (zstd; a vector is a list of float32); JSON columns as JSON text. The main format.
* ``jsonl``: ``chunks.jsonl``, ``nodes.jsonl``, ``edges.jsonl``, ``vectors.jsonl``, one object
  per line, JSON columns as objects.
* ``graphml``: ``graph.graphml`` through networkx, a directed multigraph: each node has
  ``label`` and its properties as attributes, each edge ``type`` (also its key) and its
  properties. A property that is not one plain type across all nodes (lists, objects, nulls,
  mixed types) is JSON text; the graph attributes ``node_json_keys`` / ``edge_json_keys`` name
  those (comma-separated) so a reader decodes them (:func:`ingest_assets.exports.read_graphml`).
  Chunks are the graph's ``Chunk`` / ``ParentChunk`` nodes.
* ``neo4j-csv``: CSV for ``neo4j-admin database import full``: ``nodes_<Label>.csv`` with
  ``id:ID``, ``:LABEL`` and typed property columns (``token_count:int``, ``level:int``,
  ``exact:boolean``...), ``edges_<TYPE>.csv`` with ``:START_ID``, ``:END_ID``, ``:TYPE``; lists
  and objects as JSON text. A full export's manifest holds the import command
  (``neo4j_import``); an increment's says how to apply it (``neo4j_apply``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ingest_assets.exports.views import JSON_COLUMNS

__all__ = ["FORMATS", "NEO4J_INCREMENT", "graph_attributes", "neo4j_import_command"]

# How an increment's CSV files go into a database its first export was imported into (never
# with ``import full``, which would replace the database with the increment's rows alone).
NEO4J_INCREMENT = (
    "into the database the first export was imported into (not with neo4j-admin import full, "
    "which would replace it with these rows alone): DETACH DELETE the nodes and edges whose ids "
    "removed.jsonl lists, then LOAD CSV each nodes_<Label>.csv and MERGE by id, setting its "
    "properties, then each edges_<TYPE>.csv, MERGE by its two ids and type"
)

Tables = dict[str, pa.Table]


def _public(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in ("_key", "_digest") if c in table.column_names])


def write_parquet(tables: Tables, out: Path) -> list[str]:
    for name, table in tables.items():
        pq.write_table(_public(table), out / f"{name}.parquet", compression="zstd")
    return [f"{name}.parquet" for name in tables]


def _records(name: str, table: pa.Table) -> list[dict[str, Any]]:
    rows = _public(table).to_pylist()
    for row in rows:
        for column in JSON_COLUMNS.get(name, ()):
            if row.get(column) is not None:
                row[column] = json.loads(row[column])
    return rows


def write_jsonl(tables: Tables, out: Path) -> list[str]:
    for name, table in tables.items():
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for row in _records(name, table):
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    return [f"{name}.jsonl" for name in tables]


_PLAIN = (str, int, float, bool)


def graph_attributes(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """``records`` as GraphML-safe attribute dicts, and the keys stored as JSON text (those
    whose values are not all of one plain type)."""
    types: dict[str, set[type]] = {}
    for record in records:
        for key, value in record.items():
            types.setdefault(key, set()).add(type(value))
    json_keys = sorted(k for k, seen in types.items() if len(seen) != 1 or not seen <= set(_PLAIN))
    out = [
        {k: json.dumps(v, sort_keys=True) if k in json_keys else v for k, v in record.items()}
        for record in records
    ]
    return out, json_keys


def write_graphml(tables: Tables, out: Path) -> list[str]:
    import networkx as nx

    graph = nx.MultiDiGraph()
    nodes = _records("nodes", tables["nodes"])
    attrs, node_json = graph_attributes([{**n["properties"]} for n in nodes])
    for node, attributes in zip(nodes, attrs, strict=True):
        graph.add_node(node["id"], label=node["label"], **attributes)
    edges = _records("edges", tables["edges"])
    attrs, edge_json = graph_attributes([{**e["properties"]} for e in edges])
    for edge, attributes in zip(edges, attrs, strict=True):
        graph.add_edge(
            edge["source_id"], edge["target_id"], key=edge["type"], type=edge["type"], **attributes
        )
    graph.graph.update(node_json_keys=",".join(node_json), edge_json_keys=",".join(edge_json))
    nx.write_graphml(graph, out / "graph.graphml", encoding="utf-8")
    return ["graph.graphml"]


_NEO4J_TYPES = {bool: "boolean", int: "int", float: "float"}


def _neo4j_header(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(property, header) per property: typed when every value is one plain type."""
    types: dict[str, set[type]] = {}
    for record in records:
        for key, value in record.items():
            if value is not None:
                types.setdefault(key, set()).add(type(value))
    header = []
    for key in sorted(types):
        seen = types[key]
        suffix = _NEO4J_TYPES.get(next(iter(seen))) if len(seen) == 1 else None
        header.append((key, f"{key}:{suffix}" if suffix else key))
    return header


def _neo4j_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return value


def _write_csv(path: Path, fixed: list[str], rows: list[tuple[list[Any], dict[str, Any]]]) -> None:
    header = _neo4j_header([props for _, props in rows])
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(fixed + [h for _, h in header])
        for values, props in rows:
            writer.writerow(values + [_neo4j_value(props.get(key)) for key, _ in header])


def write_neo4j_csv(tables: Tables, out: Path) -> list[str]:
    tokens = {r["id"]: r["token_count"] for r in tables["chunks"].select(["id", "token_count"]).to_pylist()}
    by_label: dict[str, list[tuple[list[Any], dict[str, Any]]]] = {}
    for node in _records("nodes", tables["nodes"]):
        props = dict(node["properties"])
        if node["id"] in tokens:  # a chunk's count, top level, so Cypher can filter on it
            props["token_count"] = tokens[node["id"]]
        by_label.setdefault(node["label"], []).append(([node["id"], node["label"]], props))
    by_type: dict[str, list[tuple[list[Any], dict[str, Any]]]] = {}
    for edge in _records("edges", tables["edges"]):
        values = [edge["source_id"], edge["target_id"], edge["type"]]
        by_type.setdefault(edge["type"], []).append((values, edge["properties"]))
    files = []
    for label, rows in sorted(by_label.items()):
        files.append(f"nodes_{label}.csv")
        _write_csv(out / files[-1], ["id:ID", ":LABEL"], rows)
    for kind, rows in sorted(by_type.items()):
        files.append(f"edges_{kind}.csv")
        _write_csv(out / files[-1], [":START_ID", ":END_ID", ":TYPE"], rows)
    return files


def neo4j_import_command(files: list[str], database: str = "neo4j") -> str:
    """The ``neo4j-admin`` command that imports an export's CSV files (run in its folder)."""
    nodes = " ".join(f"--nodes={f}" for f in files if f.startswith("nodes_"))
    edges = " ".join(f"--relationships={f}" for f in files if f.startswith("edges_"))
    return f"neo4j-admin database import full {nodes} {edges} {database}"


FORMATS: dict[str, Callable[[Tables, Path], list[str]]] = {
    "parquet": write_parquet,
    "jsonl": write_jsonl,
    "graphml": write_graphml,
    "neo4j-csv": write_neo4j_csv,
}
