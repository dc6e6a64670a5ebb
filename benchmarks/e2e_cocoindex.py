"""CocoIndex 1.0 as a peer of ``bench_end_to_end.py``: its Rust engine, its state in LMDB, a SQLite
table as the target, the plan's wordllama model as a memoized, batched function.

The app walks the inbox (``localfs.walk_dir``), mounts one component a file (``mount_each``);
a file's component (memoized on the file's content and the chunk size) parses it with our
``parse_file``, splits it with CocoIndex's own ``RecursiveSplitter`` and declares one row a
chunk, its vector from ``Embedder.embed`` (memoized on the text, so a text seen before is not
embedded again; concurrent calls are batched). Ids come from ``IdGenerator`` seeded with the
chunk's text, as in CocoIndex's text-embedding example: stable while the text is.

Its splitter counts bytes, not tokens: the token sizes are turned into bytes at the corpus's own
ratio of UTF-8 bytes to cl100k tokens (measured before the clock starts), so its chunks come out
about as many and as large as the others'. Vectors are stored as float32 BLOBs: this Python's
``sqlite3`` cannot load extensions, so sqlite-vec's ``float[N]`` columns are out.

Each step opens the LMDB state and the SQLite file, runs ``update_blocking()`` and closes both.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import start_clock
from benchmarks.e2e_peers import BATCH, MODEL, TOKENIZER, ModelCounter, changes, load_texts, token_sizes

# No usage report from a benchmark (the machine has no network for it anyway).
os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

TABLE = "chunks"


def _app_parts(model: ModelCounter) -> tuple[Any, Any, Any]:
    """The app's main function and its context keys, defined once per process (CocoIndex
    registers functions by name)."""
    import cocoindex as coco
    from cocoindex.connectors import localfs, sqlite
    from cocoindex.ops.text import RecursiveSplitter
    from cocoindex.resources.file import FileLike
    from cocoindex.resources.id import IdGenerator

    from chunking import parse_file
    from chunking.errors import IngestError

    db_key = coco.ContextKey[sqlite.ManagedConnection]("bench_db")
    splitter = RecursiveSplitter()

    class Embedder:
        """The plan's model behind CocoIndex's batching and memoization."""

        @coco.fn.as_async(batching=True, max_batch_size=BATCH)
        def _embed(self, texts: list[str]) -> list[bytes]:
            vectors = model.embed(texts)
            import numpy as np

            return [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]

        @coco.fn(memo=True)
        async def embed(self, text: str) -> bytes:
            return await self._embed(text)

        def __coco_memo_key__(self) -> object:
            return MODEL

    embedder = Embedder()

    @dataclass
    class Row:
        id: int
        filename: str
        chunk_start: int
        text: str
        embedding: bytes

    @coco.fn
    async def process_chunk(chunk: Any, filename: str, ids: Any, table: Any) -> None:
        table.declare_row(
            row=Row(
                id=await ids.next_id(chunk.text),
                filename=filename,
                chunk_start=chunk.start.char_offset,
                text=chunk.text,
                embedding=await embedder.embed(chunk.text),
            )
        )

    @coco.fn(memo=True)
    async def process_file(file: FileLike, table: Any, chunk_bytes: int) -> None:
        try:
            text = parse_file(Path(file.file_path.resolve())).text
        except IngestError:
            return
        chunks = splitter.split(text, chunk_size=chunk_bytes, chunk_overlap=0)
        filename = str(file.file_path.path)
        await coco.map(process_chunk, chunks, filename, IdGenerator(filename), table)

    @coco.fn
    async def app_main(sourcedir: Path, chunk_bytes: int) -> None:
        table = await sqlite.mount_table_target(
            db_key, TABLE, await sqlite.TableSchema.from_class(Row, primary_key=["id"])
        )
        files = localfs.walk_dir(sourcedir, recursive=True)
        await coco.mount_each(process_file, files.items(), table, chunk_bytes)

    return app_main, db_key, sqlite


_PARTS: tuple[Any, Any, Any] | None = None


def _bytes_per_token(inbox: Path) -> float:
    """UTF-8 bytes per cl100k token over the parsed corpus (CocoIndex's splitter counts bytes)."""
    from chunking import load_tokenizer

    texts = [text for _, text in load_texts(inbox)]
    tokens = sum(load_tokenizer(TOKENIZER).count(text) for text in texts)
    return sum(len(text.encode()) for text in texts) / max(tokens, 1)


class CocoIndexApp:
    name = "CocoIndex 1.0 (Rust engine, LMDB state, SQLite target)"

    def __init__(self, ws: Any, model: ModelCounter, bytes_per_token: float | None = None) -> None:
        """``bytes_per_token``: the corpus's ratio, when the caller measured it already (a new
        process of ``e2e_cold`` is given it rather than parsing the corpus again)."""
        global _PARTS
        import cocoindex  # noqa: F401  (ImportError: not installed)

        if _PARTS is None:
            _PARTS = _app_parts(model)
        self.ws, self.model, self.runs = ws, model, 0
        self.bytes_per_token = bytes_per_token or _bytes_per_token(ws.inbox)
        self.state = ws.root / "cocoindex-state"
        self.target = ws.root / "cocoindex-target.sqlite"

    def _rows(self) -> dict[int, str]:
        if not self.target.exists():
            return {}
        with sqlite3.connect(self.target) as con:
            try:
                return dict(con.execute(f"SELECT id, text FROM {TABLE}").fetchall())
            except sqlite3.OperationalError:  # no table yet
                return {}

    def step(self) -> dict[str, Any]:
        import cocoindex as coco

        assert _PARTS is not None
        app_main, db_key, sqlite = _PARTS
        chunk_bytes = round(self.ws.child * self.bytes_per_token)
        before = self._rows()
        self.model.reset()
        started = start_clock()
        provider = coco.ContextProvider()
        connection = sqlite.connect(self.target, load_vec=False)
        provider.provide(db_key, connection)
        env = coco.Environment(coco.Settings(db_path=self.state), context_provider=provider)
        try:
            app = coco.App(
                coco.AppConfig(name="bench_end_to_end", environment=env),
                app_main,
                sourcedir=self.ws.inbox,
                chunk_bytes=chunk_bytes,
            )
            app.update_blocking()
        finally:
            env.close()
            connection.close()
        wall = time.perf_counter() - started
        rows = self._rows()
        return {
            "seconds": round(wall, 3),
            **self.model.counts(),
            "chunk_bytes": chunk_bytes,
            "after": token_sizes(list(rows.values())),
            **changes(before, rows),
        }
