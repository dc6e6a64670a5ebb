"""Exports end to end on data/sample: each format read back equals the plan's views row for
row; an incremental export applied to the one before equals a full export; Neo4j CSV headers
are typed and every edge endpoint is a node; bad input is refused with a message naming the fix."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from ingest_assets.cli import main
from ingest_assets.exports import ExportError, apply_increment, export_plan, read_tables
from tests.ingest.conftest import Pipeline, plan_spec, without_bookkeeping
from tests.lake.postgres import on_both_backends


def _views(p: Pipeline, plan_key: str) -> dict[str, list[dict[str, Any]]]:
    """The plan's views as plain rows, sorted by key as exports write them."""
    store = p.store
    chunks = store.query(
        'SELECT id::VARCHAR, document_id::VARCHAR, version_id::VARCHAR, level, "index", text, chunker, '
        "chunker_hash, parent_id::VARCHAR, provenance::VARCHAR, heading_path, content_kind, token_count, "
        "metadata::VARCHAR FROM current_chunks WHERE plan_key = ? ORDER BY id::VARCHAR",
        [plan_key],
    )
    names = ["id", "document_id", "version_id", "level", "index", "text", "chunker", "chunker_hash"]
    names += ["parent_id", "provenance", "heading_path", "content_kind", "token_count", "metadata"]
    rows = [dict(zip(names, r, strict=True)) for r in chunks]
    for row in rows:
        row["provenance"], row["metadata"] = json.loads(row["provenance"]), json.loads(row["metadata"])
    nodes = [
        {"id": i, "label": label, "properties": json.loads(props)}
        for i, label, props in store.query(
            "SELECT id, label, properties::VARCHAR FROM graph_nodes WHERE plan_key = ? ORDER BY id",
            [plan_key],
        )
    ]
    edges = [
        {"source_id": s, "target_id": t, "type": kind, "properties": json.loads(props)}
        for s, t, kind, props in store.query(
            "SELECT source_id, target_id, type, properties::VARCHAR FROM graph_edges WHERE plan_key = ? "
            "ORDER BY source_id || '|' || target_id || '|' || type",
            [plan_key],
        )
    ]
    vectors = [
        dict(zip(("id", "model", "text_mode", "dimension", "text_hash", "vector"), r, strict=True))
        for r in store.query(
            "SELECT id::VARCHAR, model, text_mode, dimension, text_hash, vector FROM chunk_vectors "
            "WHERE plan_key = ? ORDER BY id::VARCHAR",
            [plan_key],
        )
    ]
    return {"chunks": rows, "nodes": nodes, "edges": edges, "vectors": vectors}


@pytest.fixture
def ingested(pipeline: Pipeline) -> tuple[Pipeline, str]:
    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": "wordllama:l2_supercat_256"}})
    (plan_key,) = pipeline.run_engine()["plans"]
    return pipeline, plan_key


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_tabular_exports_read_back_equal_the_views(
    ingested: tuple[Pipeline, str], tmp_path: Path, fmt: str
) -> None:
    p, plan_key = ingested
    result = export_plan(p.store, plan_key, fmt, tmp_path / fmt)
    views = _views(p, plan_key)
    assert read_tables(result.folder) == views
    # The plan embeds: one vector per current child (level 0), float32 kept exactly.
    children = sum(row["level"] == 0 for row in views["chunks"])
    assert len(views["vectors"]) == children > 0
    assert result.manifest["totals"] == {name: len(rows) for name, rows in views.items()}
    if fmt == "parquet":
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(result.folder / "chunks.parquet").metadata
        assert meta.row_group(0).column(0).compression == "ZSTD"


def _read_graphml(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A GraphML export's nodes and edges as the views' rows (JSON attributes decoded)."""
    graph = nx.read_graphml(folder / "graph.graphml", force_multigraph=True)
    node_json = set(filter(None, graph.graph["node_json_keys"].split(",")))
    edge_json = set(filter(None, graph.graph["edge_json_keys"].split(",")))

    def decoded(attrs: dict[str, Any], json_keys: set[str], drop: str) -> dict[str, Any]:
        return {k: json.loads(v) if k in json_keys else v for k, v in attrs.items() if k != drop}

    nodes = [
        {"id": n, "label": attrs.get("label"), "properties": decoded(attrs, node_json, "label")}
        for n, attrs in sorted(graph.nodes(data=True))
    ]
    edges = sorted(
        (
            {
                "source_id": s,
                "target_id": t,
                "type": attrs["type"],
                "properties": decoded(attrs, edge_json, "type"),
            }
            for s, t, attrs in graph.edges(data=True)
        ),
        key=lambda e: f"{e['source_id']}|{e['target_id']}|{e['type']}",
    )
    return nodes, edges


def test_graphml_reads_back_equal_to_graph_views(ingested: tuple[Pipeline, str], tmp_path: Path) -> None:
    p, plan_key = ingested
    export_plan(p.store, plan_key, "graphml", tmp_path / "g")
    nodes, edges = _read_graphml(tmp_path / "g")
    views = _views(p, plan_key)
    assert nodes == views["nodes"] and edges == views["edges"]
    assert {n["label"] for n in nodes} == {"Document", "ParentChunk", "Chunk"}


def test_a_graphml_increment_holds_every_node_its_edges_join_in_full(
    ingested: tuple[Pipeline, str], tmp_path: Path
) -> None:
    """A new edge to a node the edit kept needs that node in the file: written bare (no label,
    no properties), an insert-or-replace by id downstream would blank the kept node."""
    p, plan_key = ingested
    first = export_plan(p.store, plan_key, "graphml", tmp_path / "g1")
    edited = p.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nA paragraph added after the first export.\n")
    p.run_engine()
    increment = export_plan(p.store, plan_key, "graphml", tmp_path / "g2", since=first.folder)
    nodes, edges = _read_graphml(increment.folder)
    views = _views(p, plan_key)
    ends = {e["source_id"] for e in edges} | {e["target_id"] for e in edges}
    assert edges and all(e in views["edges"] for e in edges)
    assert ends <= {n["id"] for n in nodes}
    assert all(n in views["nodes"] for n in nodes)  # each written as the views hold it
    assert increment.manifest["rows"]["nodes"] == len(nodes) < len(views["nodes"])


@on_both_backends()
def test_incremental_export_applied_to_the_previous_equals_a_full_export(
    ingested: tuple[Pipeline, str], tmp_path: Path
) -> None:
    p, plan_key = ingested
    first = export_plan(p.store, plan_key, "parquet", tmp_path / "full-1")
    edited = p.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nA paragraph added after the first export.\n")
    (p.inbox / "lighthouse-log.txt").unlink()
    p.run_engine()
    delta = export_plan(p.store, plan_key, "parquet", tmp_path / "delta", since=first.manifest["export_id"])
    full = export_plan(p.store, plan_key, "parquet", tmp_path / "full-2")
    assert delta.manifest["base"]["export_id"] == first.manifest["export_id"]
    assert 0 < delta.manifest["rows"]["chunks"] < full.manifest["rows"]["chunks"]
    assert delta.manifest["removed"]["chunks"] > 0 and delta.manifest["removed"]["nodes"] > 0
    # Applied to the export before, the increment gives the full export, but for what the digests
    # leave out (issue 31): the chunks the edit left alone keep the version id and node creation
    # time they were first exported with. The rows it writes are the full export's exactly.
    applied, whole = apply_increment(read_tables(first.folder), delta.folder), read_tables(full.folder)
    assert without_bookkeeping(applied) == without_bookkeeping(whole)
    written = read_tables(delta.folder)
    for name, rows in written.items():
        assert all(row in whole[name] for row in rows)
    # Chunks of the edited document that kept their span and text were not written again.
    (edited_id,) = {r["document_id"] for r in written["chunks"]}
    assert len(written["chunks"]) < sum(r["document_id"] == edited_id for r in whole["chunks"])
    # Nothing changed since: an empty increment, and applying it changes nothing.
    again = export_plan(p.store, plan_key, "jsonl", tmp_path / "none", since=delta.folder)
    assert again.manifest["rows"] == {"chunks": 0, "nodes": 0, "edges": 0, "vectors": 0}
    assert 0 < delta.manifest["rows"]["vectors"] < full.manifest["rows"]["vectors"]
    assert sum(again.manifest["removed"].values()) == 0


def test_neo4j_csv_headers_are_typed_and_edges_end_at_nodes(
    ingested: tuple[Pipeline, str], tmp_path: Path
) -> None:
    p, plan_key = ingested
    result = export_plan(p.store, plan_key, "neo4j-csv", tmp_path / "neo")
    node_ids, endpoints = set(), set()
    headers = {}
    for name in result.manifest["files"]:
        if not name.endswith(".csv"):
            continue
        with (result.folder / name).open(encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        headers[name] = rows[0]
        if name.startswith("nodes_"):
            assert rows[0][:2] == ["id:ID", ":LABEL"]
            node_ids |= {r[0] for r in rows[1:]}
        else:
            assert rows[0][:3] == [":START_ID", ":END_ID", ":TYPE"]
            endpoints |= {r[0] for r in rows[1:]} | {r[1] for r in rows[1:]}
    assert "token_count:int" in headers["nodes_Chunk.csv"] and "level:int" in headers["nodes_Chunk.csv"]
    assert endpoints and endpoints <= node_ids
    assert len(node_ids) == len(_views(p, plan_key)["nodes"])
    assert result.manifest["neo4j_import"].startswith("neo4j-admin database import full --nodes=")
    # An increment never carries that command: imported with it, its rows alone would replace
    # the database.
    increment = export_plan(p.store, plan_key, "neo4j-csv", tmp_path / "neo-next", since=result.folder)
    assert "neo4j_import" not in increment.manifest
    assert "DETACH DELETE" in increment.manifest["neo4j_apply"]
    assert "removed.jsonl" in increment.manifest["files"]


def test_bad_export_input_is_refused_with_the_fix(
    ingested: tuple[Pipeline, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p, plan_key = ingested
    db = ["--db", str(p.db)]
    cases = [
        (["--plan", "nosuch", "--out", str(tmp_path / "a")], "--plan nosuch: no plan"),
        (
            ["--plan", "default", "--format", "xml", "--out", str(tmp_path / "b")],
            "--format xml: unknown; use one of",
        ),
        (
            ["--plan", "default", "--out", str(tmp_path / "c"), "--since", "nothing"],
            "--since nothing: names no export",
        ),
    ]
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    import os

    if os.access(locked, os.W_OK):  # root writes anywhere: use a path under a file instead
        blocker = tmp_path / "file"
        blocker.write_text("")
        cases.append((["--plan", "default", "--out", str(blocker / "out")], "cannot write there"))
    else:
        cases.append((["--plan", "default", "--out", str(locked / "out")], "cannot write there"))
    export_plan(p.store, plan_key, "jsonl", tmp_path / "used")
    cases.append((["--plan", "default", "--out", str(tmp_path / "used")], "not an empty folder"))
    for argv, needle in cases:
        assert main(["export", *db, *argv]) == 1
        err = capsys.readouterr().err
        assert needle in err, err
    with pytest.raises(ExportError, match="pass a new folder"):
        export_plan(p.store, plan_key, "parquet", tmp_path / "used")
