"""The main scenarios on the real corpus (../shared/corpus), with the BPE tokenizer: slow. The
fresh ingest runs through Dagster (``ingest run``); the no-op, the child-size change and the
edit through the engine's driver (the same steps; tests/ingest/test_pending.py checks that both
report the same)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.chunking.conftest import CORPUS
from tests.ingest.conftest import Pipeline
from tests.ingest.test_scenarios import _assert_invariants, _current_ids


def corpus_plan(child: int = 256) -> dict[str, Any]:
    return {
        "routes": {
            "chat": {
                "parent": {"strategy": "turn-window", "chunk_size": 1024},
                "child": {"strategy": "recursive", "chunk_size": child},
            },
            "*": {
                "parent": {"strategy": "section", "chunk_size": 1024},
                "child": {"strategy": "section", "chunk_size": child},
            },
        }
    }


@pytest.mark.long
@pytest.mark.slow
def test_corpus_fresh_noop_child_change_and_edit(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    pipeline = Pipeline(tmp_path)
    shutil.rmtree(pipeline.inbox)
    shutil.copytree(CORPUS, pipeline.inbox, ignore=shutil.ignore_patterns("MANIFEST.tsv", "README.md"))
    files = sum(1 for f in pipeline.inbox.rglob("*") if f.is_file())
    pipeline.write_plans(default=corpus_plan())

    first = pipeline.run()
    documents = first["documents"]
    assert documents["parsed"] + documents["failed"] == files and documents["parsed"] >= files - 2
    assert first["chunk_sets"]["parent"]["created"] == documents["parsed"]
    _assert_invariants(pipeline)

    before = pipeline.snapshot()
    noop = pipeline.run_engine()
    assert noop["chunker_calls"] == 0 and noop["runs"] == 0 and pipeline.snapshot() == before

    (old_key,) = first["plans"]
    parents = _current_ids(pipeline, old_key, 1)
    pipeline.write_plans(default=corpus_plan(child=200))
    changed = pipeline.run_engine()
    assert changed["chunk_sets"]["parent"] == {"created": 0, "reused": documents["parsed"]}
    assert changed["chunk_sets"]["child"] == {"created": documents["parsed"], "reused": 0}
    assert _current_ids(pipeline, changed["plans"][0], 1) == parents
    _assert_invariants(pipeline)

    edited = next(pipeline.inbox.glob("markdown/*.md"))
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\n\n## Added\n\nOne more paragraph.\n", encoding="utf-8"
    )
    one = pipeline.run_engine()
    assert one["documents"]["parsed"] == 1 and one["chunk_sets"]["parent"]["created"] == 1
    _assert_invariants(pipeline)
