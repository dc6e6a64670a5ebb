"""LangChain ``index()`` and LlamaIndex ``IngestionPipeline`` embedding for real and persisting to
local disk: the peers of ``bench_end_to_end.py``.

Each step is one run of a user's indexing script, less Python's start-up and the model's load:
it opens its stores on disk, parses every file with our ``parse_file`` (the loader), splits,
embeds what its bookkeeping says is new, writes, and closes (LlamaIndex writes its JSON files
back). The model is the plan's wordllama model behind each framework's embedding interface, with
a counter of the texts it is given.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from benchmarks.bench_incremental import _load_texts as load_texts
from benchmarks.common import start_clock

MODEL = "wordllama:l2_supercat_256"
TOKENIZER = "cl100k_base"
# Texts per call to the model, for both peers (LangChain's index() batch, LlamaIndex's
# embed_batch_size): the engine's batches are larger, so the peers get large ones too.
BATCH = 256

# index()'s note on its default SHA-1 keys (the default is what is measured), and
# langchain-community's on its own future.
warnings.filterwarnings("ignore", message=".*SHA-1.*")
warnings.filterwarnings("ignore", message=".*langchain-community.*")


def wordllama_as_its_users_load_it() -> Any:
    """The plan's model as a LangChain, LlamaIndex or CocoIndex user loads it: WordLlama's own
    object (offline, from the files its wheel ships), whose ``embed(texts, norm=True)`` the peers
    call. ``ingest run`` embeds with the project's pooling over the same matrix, which gives the
    same vectors to the bit in less time (docs/embeddings.md): that is ours, not the peers'."""
    from ingest_assets.embeddings import models

    config, _, dimension = MODEL.partition(":")[2].rpartition("_")  # l2_supercat, 256
    return models._wordllama().WordLlama.load(
        config=config, cache_dir=models._wordllama_dir(), disable_download=True, dim=int(dimension)
    )


class ModelCounter:
    """The plan's model, loaded offline once per process as its users load it, and what it was
    asked to embed."""

    def __init__(self) -> None:
        self.model = wordllama_as_its_users_load_it()
        self.reset()

    def reset(self) -> None:
        self.texts = self.calls = 0
        self.seconds = 0.0

    def embed(self, texts: list[str]) -> list[list[float]]:
        began = time.perf_counter()
        vectors = self.model.embed(list(texts), norm=True).tolist()
        self.seconds += time.perf_counter() - began
        self.calls += 1
        self.texts += len(texts)
        return vectors

    def counts(self) -> dict[str, Any]:
        return {
            "texts_embedded": self.texts,
            "embed_calls": self.calls,
            "model_seconds": round(self.seconds, 3),
        }


def token_sizes(texts: list[str]) -> dict[str, Any]:
    """How many chunks and their mean and largest size in our cl100k tokens (not timed)."""
    from chunking import load_tokenizer

    count = load_tokenizer(TOKENIZER).count
    sizes = [count(text) for text in texts]
    return {
        "chunks": len(sizes),
        "mean_tokens": round(sum(sizes) / len(sizes), 1) if sizes else 0,
        "largest_tokens": max(sizes, default=0),
    }


def _langchain_duckdb_store() -> type:
    """langchain-community's DuckDB vector store with the ``delete`` that ``index()`` needs
    (it has none) and its rows inserted as one Arrow table (without pandas it inserts them one
    statement a row)."""
    import pyarrow as pa
    from langchain_community.vectorstores import DuckDB

    class DuckDBStore(DuckDB):
        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            import json

            texts = list(texts)
            ids = kwargs.get("ids") or [str(i) for i in range(len(texts))]
            vectors = self._embedding.embed_documents(texts)
            meta = [json.dumps(m) if m else None for m in (metadatas or [None] * len(texts))]
            batch = pa.table(
                {
                    self._id_key: ids,
                    self._text_key: texts,
                    self._vector_key: pa.array(vectors, pa.list_(pa.float32())),
                    "metadata": meta,
                }
            )
            self._connection.register("lc_batch", batch)
            self._connection.execute(f"INSERT OR REPLACE INTO {self._table_name} SELECT * FROM lc_batch")
            self._connection.unregister("lc_batch")
            return list(ids)

        def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
            if ids:
                self._connection.register("lc_gone", pa.table({"id": list(ids)}))
                self._connection.execute(
                    f"DELETE FROM {self._table_name} WHERE {self._id_key} IN (SELECT id FROM lc_gone)"
                )
                self._connection.unregister("lc_gone")
            return True

    return DuckDBStore


class LangChainIndex:
    """``index()`` with a ``SQLRecordManager`` on a sqlite file, ``cleanup="full"``, into
    langchain-community's DuckDB vector store on a DuckDB file; ``RecursiveCharacterTextSplitter``
    counting our cl100k tokens."""

    name = "LangChain index() (SQLRecordManager on sqlite, DuckDB vector store)"

    def __init__(self, ws: Any, model: ModelCounter) -> None:
        from langchain_core.embeddings import Embeddings

        class Wrapped(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return model.embed(texts)

            def embed_query(self, text: str) -> list[float]:
                return model.embed([text])[0]

        self.ws, self.model, self.embeddings = ws, model, Wrapped()
        self.records_url = f"sqlite:///{ws.root / 'langchain-records.sqlite'}"
        self.vectors_path = ws.root / "langchain-vectors.duckdb"
        self.store_class = _langchain_duckdb_store()

    def _rows(self) -> dict[str, str]:
        import duckdb

        if not self.vectors_path.exists():
            return {}
        with duckdb.connect(str(self.vectors_path), read_only=True) as con:
            return dict(con.execute("SELECT id, text FROM embeddings").fetchall())

    def step(self) -> dict[str, Any]:
        import duckdb
        from langchain_classic.indexes import SQLRecordManager
        from langchain_core.documents import Document as LCDocument
        from langchain_core.indexing import index
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        from chunking import load_tokenizer

        before = self._rows()
        self.model.reset()
        started = start_clock()
        records = SQLRecordManager("bench", db_url=self.records_url)
        records.create_schema()
        connection = duckdb.connect(str(self.vectors_path))
        try:
            store = self.store_class(connection=connection, embedding=self.embeddings)
            splitter = RecursiveCharacterTextSplitter(
                chunk_size=self.ws.child, chunk_overlap=0, length_function=load_tokenizer(TOKENIZER).count
            )
            docs = [
                LCDocument(page_content=text, metadata={"source": source})
                for source, text in load_texts(self.ws.inbox)
            ]
            result = index(
                splitter.split_documents(docs),
                records,
                store,
                cleanup="full",
                source_id_key="source",
                batch_size=BATCH,
            )
        finally:
            connection.close()
            records.engine.dispose()
        wall = time.perf_counter() - started
        rows = self._rows()
        return {
            "seconds": round(wall, 3),
            **self.model.counts(),
            "index_result": dict(result),
            "after": token_sizes(list(rows.values())),
            **changes(before, rows),
        }


class LlamaIndexPipeline:
    """``IngestionPipeline`` with ``SentenceSplitter`` (our cl100k encoding), the docstore
    (``UPSERTS_AND_DELETE``), the ingestion cache and a ``SimpleVectorStore``, all loaded from
    and persisted to a folder of JSON files each step (LlamaIndex's own local persistence)."""

    name = "LlamaIndex IngestionPipeline (docstore, cache, vector store: JSON on disk)"

    def __init__(self, ws: Any, model: ModelCounter) -> None:
        from llama_index.core.base.embeddings.base import BaseEmbedding

        class Wrapped(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return model.embed([query])[0]

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return model.embed([query])[0]

            def _get_text_embedding(self, text: str) -> list[float]:
                return model.embed([text])[0]

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return model.embed(texts)

        self.ws, self.model = ws, model
        self.embedding = Wrapped(model_name=MODEL, embed_batch_size=BATCH)
        self.folder = ws.root / "llamaindex-storage"
        self.vectors_file = self.folder / "vector_store.json"

    def _ids(self) -> dict[str, None]:
        """Node ids in the vector store (it keeps no text; the docstore keeps the documents)."""
        from llama_index.core.vector_stores import SimpleVectorStore

        if not self.vectors_file.exists():
            return {}
        return dict.fromkeys(SimpleVectorStore.from_persist_path(str(self.vectors_file)).data.embedding_dict)

    def step(self) -> dict[str, Any]:
        from llama_index.core import Document as LIDocument
        from llama_index.core.ingestion import DocstoreStrategy, IngestionCache, IngestionPipeline
        from llama_index.core.node_parser import SentenceSplitter
        from llama_index.core.storage.docstore import SimpleDocumentStore
        from llama_index.core.vector_stores import SimpleVectorStore

        from chunking import load_tokenizer

        encode = load_tokenizer(TOKENIZER).chonkie.tokenizer.encode_ordinary
        before = self._ids()
        self.model.reset()
        started = start_clock()
        exists = self.vectors_file.exists()
        vectors = (
            SimpleVectorStore.from_persist_path(str(self.vectors_file)) if exists else SimpleVectorStore()
        )
        pipeline = IngestionPipeline(
            transformations=[
                SentenceSplitter(chunk_size=self.ws.child, chunk_overlap=0, tokenizer=encode),
                self.embedding,
            ],
            docstore=SimpleDocumentStore(),
            cache=IngestionCache(),
            vector_store=vectors,
            docstore_strategy=DocstoreStrategy.UPSERTS_AND_DELETE,
        )
        if exists:
            pipeline.load(str(self.folder))
        docs = [LIDocument(text=text, id_=source) for source, text in load_texts(self.ws.inbox)]
        nodes = pipeline.run(documents=docs)
        pipeline.persist(str(self.folder))
        vectors.persist(str(self.vectors_file))
        wall = time.perf_counter() - started
        return {
            "seconds": round(wall, 3),
            **self.model.counts(),
            "nodes_processed": len(nodes),
            # Its vector store keeps no text: the sizes are those of the nodes this step made.
            "made": token_sizes([node.get_content() for node in nodes]),
            **changes(before, self._ids()),
        }


def changes(before: dict[Any, str | None], after: dict[Any, str | None]) -> dict[str, int | None]:
    """Chunk ids written, deleted and kept between two states of a store (id -> text), and
    ``new_texts``: texts after that no chunk had before (None where a store keeps no text): an
    edit that re-ids chunks whose text did not change writes more than it has new texts."""
    ids_before, ids_after = set(before), set(after)
    texts = None
    if any(text is not None for text in after.values()):
        texts = len(set(after.values()) - set(before.values()))
    return {
        "written": len(ids_after - ids_before),
        "deleted": len(ids_before - ids_after),
        "kept": len(ids_after & ids_before),
        "new_texts": texts,
    }
