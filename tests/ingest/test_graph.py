"""Graph records: what ``graph_nodes`` shows is ``Chunk.to_node_record()`` of the stored chunks."""

from __future__ import annotations

import json

from ingest_assets.engine.tasks import stored_chunk
from ingest_assets.store import IngestStore
from tests.ingest.conftest import Pipeline


def test_graph_nodes_are_the_node_records_of_the_current_chunks(pipeline: Pipeline) -> None:
    (plan_key,) = pipeline.run_engine()["plans"]
    store = IngestStore(pipeline.db)
    set_keys = [
        key for (key,) in store.query("SELECT set_key FROM current_members WHERE role IN ('parent', 'child')")
    ]
    chunks = [stored_chunk(row) for rows in store.chunk_rows_many(set_keys).values() for row in rows]
    nodes = {
        node_id: (label, json.loads(properties))
        for node_id, label, properties in store.query(
            "SELECT id::VARCHAR, label, properties FROM graph_nodes "
            "WHERE plan_key = ? AND label <> 'Document'",
            [plan_key],
        )
    }
    assert len(nodes) == len(chunks) > 0
    for chunk in chunks:
        record = chunk.to_node_record()
        assert nodes[record.id] == (record.label, record.properties), record.id
