"""The embeddings stage on a real DuckDB file: only texts never embedded under the plan's model
go to the model, counted by a wrapper around the real (offline) wordllama model. The reuse
sequences run through the engine's driver (``Pipeline.run_engine``); the check, the per-partition
metadata and the sensor through real Dagster runs."""

from __future__ import annotations

import functools
import importlib.util
import json
import random
import re
import subprocess
import sys
from typing import Any

import duckdb
import numpy as np
import pytest
from dagster import AssetCheckKey, AssetKey
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest_assets.cli import main
from ingest_assets.embeddings import embedded_text, models, texts
from ingest_assets.engine import SHARDS
from ingest_assets.engine.tasks import stored_chunk
from ingest_assets.plans import PlanError, load_plans
from ingest_assets.search import search, served_plan
from ingest_assets.store import SCHEMA_VERSION, IngestStore, invariants
from tests.example_budget import examples
from tests.ingest.conftest import Pipeline, plan_spec
from tests.ingest.test_sensors import _execute, _requests, _settle, _tick
from tests.lake.postgres import on_both_backends
from tests.old_schemas import downgrade_to_schema_5

MODEL = "wordllama:l2_supercat_256"


class Counter:
    """Counts the calls and texts that reach the real model (inline: ``INGEST_WORKERS=1``)."""

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    def take(self) -> tuple[int, int]:
        seen = (self.calls, self.texts)
        self.calls = self.texts = 0
        return seen


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Counter:
    monkeypatch.setenv("INGEST_WORKERS", "1")
    counts = Counter()
    real = models._WordLlama.embed_batch

    def counted(self: Any, texts: list[str]) -> Any:
        counts.calls += 1
        counts.texts += len(texts)
        return real(self, texts)

    monkeypatch.setattr(models._WordLlama, "embed_batch", counted)
    return counts


def embedding_plan(model: str = MODEL, text: str = "contextual", **sizes: int) -> dict[str, Any]:
    return {**plan_spec(**sizes), "embedding": {"model": model, "text": text}}


def _vector_hashes(p: Pipeline) -> set[str]:
    return {r[0] for r in p.rows("SELECT text_hash FROM vectors")}


def _current_hashes(p: Pipeline, plan_key: str) -> set[str]:
    return {r[0] for r in p.rows("SELECT text_hash FROM chunk_vectors WHERE plan_key = ?", plan_key)}


def _children(p: Pipeline, plan_key: str) -> int:
    return p.rows("SELECT count(*) FROM current_chunks WHERE plan_key = ? AND level = 0", plan_key)[0][0]


def _assert_covered(p: Pipeline, plan_key: str) -> None:
    assert p.rows("SELECT count(*) FROM chunk_vectors WHERE plan_key = ?", plan_key)[0][0] == _children(
        p, plan_key
    )
    embedding = next(plan.embedding.key for plan in p.plans() if plan.key == plan_key)
    assert invariants.vector_coverage(p.store, {plan_key: embedding}) == []


@on_both_backends()
def test_sequence_embeds_only_texts_never_embedded(pipeline: Pipeline, counter: Counter) -> None:
    pipeline.write_plans(default=embedding_plan())
    # Full run: every distinct child text, once.
    first = pipeline.run_engine()
    (key,) = first["plans"]
    calls, texts = counter.take()
    distinct = _current_hashes(pipeline, key)
    assert texts == len(distinct) == len(_vector_hashes(pipeline)) > 0
    assert first["embeddings"]["texts_embedded"] == texts and calls >= 1
    _assert_covered(pipeline, key)

    # No-op: nothing embedded, nothing written.
    before = pipeline.snapshot(), pipeline.rows("SELECT count(*) FROM vectors")
    summary = pipeline.run_engine()
    assert counter.take() == (0, 0) and summary["runs"] == 0
    documents = pipeline.rows("SELECT count(*) FROM current_documents")[0][0]
    assert summary["embeddings"]["sets_reused"] == documents and summary["embeddings"]["texts_embedded"] == 0
    assert (pipeline.snapshot(), pipeline.rows("SELECT count(*) FROM vectors")) == before

    # One edit: only that document's new texts.
    edited = pipeline.inbox / "troubleshooting.md"
    edited.write_text(edited.read_text() + "\n\n## A new section\n\nThe lighthouse keeper polished brass.\n")
    known = _vector_hashes(pipeline)
    pipeline.run_engine()
    _, texts = counter.take()
    new = _vector_hashes(pipeline) - known
    edited_hashes = {
        r[0]
        for r in pipeline.rows(
            "SELECT text_hash FROM chunk_vectors WHERE plan_key = ? "
            "AND source_uri LIKE '%troubleshooting.md'",
            key,
        )
    }
    assert texts == len(new) > 0 and new <= edited_hashes
    _assert_covered(pipeline, key)

    # Child size 200 -> 150: exactly the distinct new child texts; the plan key moves.
    known = _vector_hashes(pipeline)
    pipeline.write_plans(default=embedding_plan(child=150, chat_child=150))
    summary = pipeline.run_engine()
    (smaller,) = summary["plans"]
    _, texts = counter.take()
    assert smaller != key
    fresh = _current_hashes(pipeline, smaller) - known
    assert texts == len(fresh) > 0
    assert summary["embeddings"]["texts_embedded"] == texts
    _assert_covered(pipeline, smaller)

    # The old size back: nothing embedded.
    pipeline.write_plans(default=embedding_plan())
    summary = pipeline.run_engine()
    assert counter.take() == (0, 0) and summary["plans"] == [key]
    _assert_covered(pipeline, key)

    # A model change re-embeds (no chunker call, same plan key); the old model back reuses.
    pipeline.write_plans(default=embedding_plan(model="wordllama:l2_supercat_128"))
    summary = pipeline.run_engine()
    _, texts = counter.take()
    assert summary["plans"] == [key] and summary["chunker_calls"] == 0
    assert texts == len(_current_hashes(pipeline, key)) > 0
    assert pipeline.rows("SELECT DISTINCT len(vector) FROM chunk_vectors WHERE plan_key = ?", key) == [(128,)]
    _assert_covered(pipeline, key)
    pipeline.write_plans(default=embedding_plan())
    summary = pipeline.run_engine()
    assert counter.take() == (0, 0) and summary["chunker_calls"] == 0
    assert pipeline.rows("SELECT DISTINCT len(vector) FROM chunk_vectors WHERE plan_key = ?", key) == [(256,)]
    _assert_covered(pipeline, key)


def test_text_mode_change_embeds_the_texts_that_differ(pipeline: Pipeline, counter: Counter) -> None:
    pipeline.write_plans(default=embedding_plan())
    (key,) = pipeline.run_engine()["plans"]
    known = _vector_hashes(pipeline)
    counter.take()
    pipeline.write_plans(default=embedding_plan(text="text"))
    pipeline.run_engine()
    _, texts = counter.take()
    assert texts == len(_current_hashes(pipeline, key) - known) > 0
    plain = {r[0] for r in pipeline.rows("SELECT text FROM chunk_vectors WHERE plan_key = ?", key)}
    assert len(plain) == len(_current_hashes(pipeline, key))  # one vector per distinct plain text


def test_plan_without_embedding_has_no_stage_until_one_is_added(pipeline: Pipeline, counter: Counter) -> None:
    (key,) = pipeline.run_engine()["plans"]
    assert counter.take() == (0, 0)
    assert pipeline.rows("SELECT count(*) FROM vectors")[0][0] == 0
    assert pipeline.engine().pending().empty
    pipeline.write_plans(default=embedding_plan())
    pending = pipeline.engine().pending()
    assert list(pending.chunks) == [key]
    summary = pipeline.run_engine()
    assert summary["chunker_calls"] == 0 and counter.take()[1] == len(_current_hashes(pipeline, key)) > 0
    # Removing the stage takes the plan's vectors out of the view; they stay stored.
    pipeline.write_plans(default=plan_spec())
    pipeline.run_engine()
    assert pipeline.rows("SELECT count(*) FROM chunk_vectors")[0][0] == 0
    assert pipeline.rows("SELECT count(*) FROM vectors")[0][0] > 0
    assert pipeline.engine().pending().empty
    pipeline.write_plans(default=embedding_plan())
    pipeline.run_engine()
    assert counter.take() == (0, 0)
    _assert_covered(pipeline, key)


@on_both_backends()
@pytest.mark.parametrize("mode", ["text", "contextual"])
def test_search_finds_children_by_their_own_text(pipeline: Pipeline, mode: str) -> None:
    """Recall@1 of 100 random children searched with the text their plan embeds (the stored text,
    or the contextual text with its heading path above it)."""
    pipeline.write_plans(default=embedding_plan(child=80, chat_child=80, text=mode))
    (key,) = pipeline.run_engine()["plans"]
    store = pipeline.store
    served = served_plan(store, "default")
    assert served.key == key
    hashes = dict(pipeline.rows("SELECT id::VARCHAR, text_hash FROM chunk_vectors WHERE plan_key = ?", key))
    sets = [r[0] for r in pipeline.rows("SELECT set_key FROM chunk_texts WHERE text_mode = ?", mode)]
    embedded = {
        str(row["id"]): embedded_text(stored_chunk(row), mode)
        for rows in store.chunk_rows_many(sets).values()
        for row in rows
    }
    assert len(hashes) >= 100
    # The step embeds from a few columns of each chunk: the texts of the whole stored chunks.
    assert {chunk_id: texts.text_hash(embedded[chunk_id]) for chunk_id in hashes} == hashes
    picked = random.Random(20).sample(sorted(hashes), 100)
    found = 0
    for chunk_id in picked:
        (hit,) = search(store, served, embedded[chunk_id], k=1)
        found += hashes[hit.id] == hashes[chunk_id]  # the chunk, or one with the same embedded text
    assert found >= 95, f"recall@1 {found}/100"


def test_search_command_prints_parent_label_source_and_score(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline.write_plans(default=embedding_plan())
    pipeline.run_engine()
    # From the store alone: the plan, its live key and its model are there (no plans file).
    pipeline.plans_file.unlink()
    args = ["search", "harvest of the orchard", "--db", str(pipeline.db)]
    assert main([*args, "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("parent ") == 3 and "orchard" in out
    assert main([*args, "--json", "-k", "2"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert len(hits) == 2 and hits[0]["score"] >= hits[1]["score"]
    assert {"parent_id", "label", "source_uri", "score"} <= set(hits[0])
    assert main([*args, "--plan", "nosuch"]) == 1
    assert "no plan 'nosuch' in the store; its plans are: default" in capsys.readouterr().err
    pipeline.write_plans(default=plan_spec())  # the plan no longer embeds
    pipeline.run_engine()
    assert main(args) == 1
    assert "no plan in the store serves vectors; add embedding: to a plan" in capsys.readouterr().err
    assert main([*args, "--plan", "default"]) == 1
    assert "plan 'default' serves no vectors: add embedding: to it" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("embedding", "expected"),
    [
        ({"model": "nope:thing"}, "is unknown"),
        ({"model": "wordllama:l2_supercat_1024"}, "would need a download"),
        ({"model": "chonkie:Model2VecEmbeddings:minishlab/potion-base-8M"}, "would need a download"),
        ({"model": "chonkie:OpenAIEmbeddings:text-embedding-3-small"}, "over the network"),
        ({"model": "chonkie:NoSuchEmbeddings:/tmp"}, "has no class"),
        ({"model": MODEL, "text": "summary"}, "embedding.text"),
        ({"model": MODEL, "colour": "red"}, "colour"),
    ],
)
def test_bad_embedding_config_names_the_file_and_plan(
    pipeline: Pipeline, embedding: dict[str, str], expected: str
) -> None:
    pipeline.write_plans(default={**plan_spec(), "embedding": embedding})
    with pytest.raises(PlanError) as raised:
        load_plans(pipeline.plans_file)
    message = str(raised.value)
    assert str(pipeline.plans_file) in message and "default" in message and expected in message


def test_local_chonkie_model_folder_is_checked_at_plan_load(pipeline: Pipeline, tmp_path: Any) -> None:
    folder = tmp_path / "empty-model"
    folder.mkdir()
    pipeline.write_plans(
        default={**plan_spec(), "embedding": {"model": f"chonkie:Model2VecEmbeddings:{folder}"}}
    )
    installed = importlib.util.find_spec("model2vec") is not None
    expected = "did not load" if installed else "needs the model2vec package (pip install model2vec)"
    with pytest.raises(PlanError, match=re.escape(expected)) as raised:
        load_plans(pipeline.plans_file)
    assert "plan 'default', embedding" in str(raised.value)


def test_embedding_check_runs_in_dagster_and_flags_a_missing_vector(pipeline: Pipeline) -> None:
    pipeline.write_plans(default=embedding_plan())
    (key,) = pipeline.run()["plans"]
    record = pipeline.instance.get_latest_asset_check_evaluation_record(
        AssetCheckKey(AssetKey("embeddings"), "coverage")
    )
    assert record is not None and record.evaluation is not None and record.evaluation.passed
    # Each partition's metadata: texts embedded and reused, model seconds; they add up.
    made = pipeline.instance.fetch_materializations(AssetKey("embeddings"), limit=100).records
    metadata = [r.asset_materialization.metadata for r in made]
    # One per shard: a new store's run covers every shard; one without documents embeds nothing.
    assert sorted(r.partition_key.split("|")[1] for r in made) == list(SHARDS)
    assert all({"texts_reused", "embedding_seconds"} <= set(m) for m in metadata)
    filled = {shard for (shard,) in pipeline.rows("SELECT DISTINCT shard FROM current_documents")}
    assert all(
        r.asset_materialization.metadata["texts_embedded"].value == 0
        for r in made
        if r.partition_key.split("|")[1] not in filled
    )
    assert sum(m["texts_embedded"].value for m in metadata) == len(_vector_hashes(pipeline))
    with pipeline.store.transaction() as con:
        con.execute("DELETE FROM vectors WHERE text_hash = (SELECT min(text_hash) FROM vectors)")
    (plan,) = pipeline.plans()
    violations = invariants.vector_coverage(pipeline.store, {key: plan.embedding.key})
    assert len(violations) == 1 and "without a vector" in violations[0]


def test_schema_5_store_gains_the_embedding_tables(pipeline: Pipeline, counter: Counter) -> None:
    pipeline.run_engine()
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_5(con)
    store = IngestStore(pipeline.db)
    assert store.query("SELECT max(version) FROM schema_version")[0][0] == SCHEMA_VERSION
    assert store.query("SELECT count(*) FROM chunk_vectors")[0][0] == 0
    pipeline.write_plans(default=embedding_plan())
    summary = pipeline.run_engine()
    assert summary["chunker_calls"] == 0 and counter.take()[1] > 0


def test_sensor_launches_exactly_the_embedding_work_of_a_model_change(
    pipeline: Pipeline, counter: Counter
) -> None:
    pipeline.write_plans(default=embedding_plan())
    _settle(pipeline)
    (key,) = [plan.key for plan in pipeline.plans()]
    first = counter.take()[1]
    assert first == len(_current_hashes(pipeline, key)) > 0
    assert _requests(_tick(pipeline)) == []  # settled: nothing pending, no run
    pipeline.write_plans(default=embedding_plan(model="wordllama:l2_supercat_64"))
    result = _tick(pipeline)
    requested = _requests(result)
    assert requested and all(job == "chunks_job" and key in partitions for job, partitions, _ in requested)
    _execute(pipeline, result)
    _settle(pipeline)
    assert counter.take()[1] == first
    assert _requests(_tick(pipeline)) == []
    _assert_covered(pipeline, key)


def test_loading_the_default_model_leaves_logging_as_it_was() -> None:
    """wordllama calls ``logging.basicConfig(level=INFO)`` when imported; the pipeline reads the
    model's files without importing it (nor its download code), so the INFO records of every
    library (Dagster's database migrations on a new instance among them) do not land on a
    user's terminal, and where wordllama is imported (the fallback that finds it) that set-up is
    undone. A fresh process each: a package is imported once per process."""
    script = (
        "import logging, sys\n"
        "from ingest_assets.embeddings import models\n"
        "models.model_info(models.DEFAULT_MODEL)\n"
        "models.load_model(models.DEFAULT_MODEL).embed_batch(['a text'])\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), logging.getLevelName(root.level), 'wordllama' in sys.modules,"
        " 'requests' in sys.modules)\n"
        "models._wordllama()\n"
        "print(len(root.handlers), logging.getLevelName(root.level))\n"
        "logging.getLogger('alembic.runtime.migration').info('must not print')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "WARNING", "False", "False", "0", "WARNING"]
    assert "must not print" not in done.stderr


def test_a_vector_stored_twice_is_served_once_and_compaction_keeps_one(pipeline: Pipeline) -> None:
    """Writers of two shards may store the vector of one text at once (they share no lock):
    chunk_vectors still serves each chunk once, and compaction deletes the second row."""
    pipeline.write_plans(default=embedding_plan())
    pipeline.engine().run_pending()
    served = pipeline.rows("SELECT plan_key, id, text_hash FROM chunk_vectors ORDER BY ALL")
    assert served
    with pipeline.store.transaction() as con:
        con.execute("INSERT INTO vectors SELECT * FROM vectors")  # every vector a second time
    assert pipeline.rows("SELECT plan_key, id, text_hash FROM chunk_vectors ORDER BY ALL") == served
    stored = pipeline.rows("SELECT count(*) FROM vectors")[0][0]
    assert pipeline.store.compact()["vectors_deleted"] == stored // 2
    assert pipeline.rows("SELECT count(DISTINCT (text_hash, model)) = count(*) FROM vectors") == [(True,)]
    assert pipeline.rows("SELECT plan_key, id, text_hash FROM chunk_vectors ORDER BY ALL") == served


def _wordllama_texts() -> list[str]:
    """Texts of every shape a batch mixes: the sample's chunks (short and long side by side, so
    WordLlama pads), whitespace alone, one token, emoji, CJK, accents, a long repeated text."""
    from chunking import ParentChildChunker, RecursiveChunker, SectionChunker, parse_file
    from tests.ingest.conftest import SAMPLE

    chunker = ParentChildChunker(parent=SectionChunker(chunk_size=512), child=RecursiveChunker(chunk_size=96))
    chunks = [
        chunk.text
        for path in sorted(SAMPLE.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
        for chunk in chunker.chunk(parse_file(path))
    ]
    odd = [" ", "\n\n", "a", "héllo 🙂 世界", "東京は日本の首都です。", "x" * 5000, "word " * 2000]
    mixed: list[str] = []
    for index, chunk in enumerate(chunks):
        mixed += [chunk, odd[index % len(odd)]]
    return mixed


@functools.cache
def _wordllama_itself(model: str) -> Any:
    """WordLlama's own object for ``model`` (wordllama:l2_supercat_<dim>), loaded by its own
    loader from the files its wheel ships, as its users load it."""
    dimension = int(model.rpartition("_")[2])
    return models._wordllama().WordLlama.load(
        config="l2_supercat",
        cache_dir=models._wordllama_dir(),
        disable_download=True,
        dim=256,
        trunc_dim=None if dimension == 256 else dimension,
    )


@pytest.mark.parametrize("model", ["wordllama:l2_supercat_256", "wordllama:l2_supercat_64"])
def test_wordllama_vectors_are_the_models_own_to_the_bit(model: str) -> None:
    """The pooled embedding gives exactly what WordLlama's ``embed(norm=True)`` gives, batch
    after batch of mixed lengths, at the full and a truncated dimension; the matrix read from
    the wheel's files is the one WordLlama's loader makes."""
    loaded = models.load_model(model)
    itself = _wordllama_itself(model)
    assert loaded._matrix.dtype == itself.embedding.dtype  # type: ignore[attr-defined]
    assert np.array_equal(loaded._matrix, itself.embedding)  # type: ignore[attr-defined]
    texts = _wordllama_texts()
    assert len(texts) > 100
    for start in range(0, len(texts), 64):
        batch = texts[start : start + 64]
        ours = loaded.embed_batch(batch)
        theirs = itself.embed(batch, norm=True)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == (len(batch), loaded.dimension)
        assert np.array_equal(ours, theirs), f"batch at {start} differs"


def test_a_text_without_tokens_gets_the_zero_vector_not_nan() -> None:
    """WordLlama divides an empty text's zero sum by a zero norm (NaN); a stored NaN would poison
    every search score, so an empty text's vector is zeros, and its neighbours' are unchanged."""
    loaded = models.load_model(MODEL)
    vectors = loaded.embed_batch(["", "a text", ""])
    assert not vectors[[0, 2]].any()
    assert np.array_equal(vectors[1:2], loaded.embed_batch(["a text"]))


@settings(max_examples=examples(100), deadline=None)
@given(batch=st.lists(st.text(max_size=400), min_size=1, max_size=12))
def test_wordllama_pooling_matches_the_model_on_any_text(batch: list[str]) -> None:
    """On any batch of any text: a text with tokens has WordLlama's own vector, to the bit; a
    text without has zeros."""
    loaded = models.load_model(MODEL)
    ours = loaded.embed_batch(batch)
    with np.errstate(invalid="ignore"):  # WordLlama's NaN for a text without tokens
        theirs = _wordllama_itself(MODEL).embed(batch, norm=True)
    empty = np.isnan(theirs).any(axis=1)
    assert np.array_equal(ours[~empty], theirs[~empty])
    assert not ours[empty].any()


def test_contextual_vectors_are_named_by_the_version_of_contextual_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A change of what contextual text holds re-embeds the contextual vectors (their texts'
    # hashes reuse whatever did not change), never the vectors of the stored text alone.
    model = models.ModelInfo("wordllama:x", "wordllama", "x", 4, "1", {"wordllama": "0"})
    contextual, plain = texts.EmbeddingPlan(model, "contextual"), texts.EmbeddingPlan(model, "text")
    before = (contextual.key, plain.key)
    monkeypatch.setattr(texts, "CONTEXTUAL_TEXT_VERSION", "next")
    assert contextual.key != before[0] and plain.key == before[1]


def test_search_leaves_out_contents_pages(pipeline: Pipeline) -> None:
    """A contents page lists section titles and pages and holds none of the sections' text: a
    hit on it answers nothing. Search serves every other child of the plan; the contents chunk
    stays in the views (``content_kind`` ``toc``) for a reader that wants it."""
    import warnings

    from tests.parsers.pdf_fixtures import manual

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fpdf2's note on the A5 size
        (pipeline.inbox / "manual.pdf").write_bytes(manual())
    pipeline.write_plans(default=embedding_plan(text="text"))
    pipeline.run_engine()
    store = pipeline.store
    kinds = dict(pipeline.rows("SELECT id::VARCHAR, content_kind FROM chunk_vectors"))
    contents = {i for i, kind in kinds.items() if kind == "toc"}
    assert contents and all(
        ". . ." in t for (t,) in pipeline.rows("SELECT text FROM chunk_vectors WHERE content_kind = 'toc'")
    )
    hits = search(
        store,
        served_plan(store, "default"),
        "1 Pruning 1.1 Winter pruning 2 Harvest 2.1 Storing",
        k=len(kinds),
    )
    assert {hit.id for hit in hits} == set(kinds) - contents


def test_a_key_the_views_no_longer_serve_is_named_with_what_its_plan_serves(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a settings change, ``search --plan <old key>`` searched the new key without a word,
    and ``export --plan <old key>`` wrote '0 written, 0 in view' and exited 0. Both now say the
    key is retired and which key its plan serves."""
    pipeline.write_plans(default=embedding_plan())
    (old,) = pipeline.run_engine()["plans"]
    pipeline.write_plans(default=embedding_plan(child=90))
    (new,) = pipeline.run_engine()["plans"]
    assert old != new
    db = ["--db", str(pipeline.db)]
    expected = (
        f"--plan {old}: that key is retired: the views serve nothing of it; plan 'default' serves {new}"
    )
    assert main(["search", "orchard", "--plan", old, *db]) == 1
    assert expected in capsys.readouterr().err
    assert main(["export", "--plan", old, "--out", str(pipeline.inbox.parent / "out"), *db]) == 1
    assert expected in capsys.readouterr().err
    assert not (pipeline.inbox.parent / "out").exists()
    assert main(["search", "orchard", "--plan", new, *db]) == 0
    assert f"plan {new}" in capsys.readouterr().out
