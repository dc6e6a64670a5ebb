"""A LangChain ``TextSplitter`` (a document transformer) over the project's chunkers.

    from chunking import SectionChunker
    from chunking.integrations.langchain import ChunkingTextSplitter

    splitter = ChunkingTextSplitter(SectionChunker(chunk_size=400, tokenizer="cl100k_base"))
    docs = splitter.split_documents(loaded)  # or transform_documents / create_documents

Each LangChain document's ``page_content`` is a chunk's stored text; its metadata is the source
document's plus :func:`chunking.integrations.common.chunk_metadata` (``start_index`` and
``end_index`` into the input, heading path, parent id, contextual text, ...). A leveled chunker
(:class:`chunking.ParentChildChunker`) gives parents and children, told apart by ``level``.
Needs ``langchain-text-splitters``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.documents import Document as LangChainDocument
from langchain_text_splitters import TextSplitter

from chunking.chunkers.base import BaseChunker
from chunking.integrations.common import chunk_metadata, chunk_text

__all__ = ["ChunkingTextSplitter"]


class ChunkingTextSplitter(TextSplitter):
    """Split texts with a project chunker (and, for ``kind`` other than ``"text"``, a parser).

    Args:
        chunker: The chunker (its budget and tokenizer are its own).
        kind: How to parse each text: ``"text"`` (paragraphs, offsets into the text as given),
            ``"markdown"``, ``"html"``, ``"csv"`` or ``"chat"``.
    """

    def __init__(self, chunker: BaseChunker, kind: str = "text", **kwargs: Any) -> None:
        size = int(getattr(chunker, "chunk_size", 0) or 4000)
        kwargs.setdefault("chunk_size", size)
        kwargs.setdefault("chunk_overlap", 0)
        super().__init__(**kwargs)
        self.chunker = chunker
        self.kind = kind

    def split_text(self, text: str) -> list[str]:
        """The chunks' stored texts, in order (for a leveled chunker: the children)."""
        _, chunks = chunk_text(self.chunker, text, kind=self.kind, source_uri="mem://langchain")
        return [c.text for c in chunks if c.level == 0]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[LangChainDocument]:
        """One LangChain document per chunk of each text, metadata merged (chunk's wins)."""
        out: list[LangChainDocument] = []
        for index, text in enumerate(texts):
            base = dict(metadatas[index]) if metadatas else {}
            uri = str(base.get("source") or f"mem://langchain/{index}")
            document, chunks = chunk_text(self.chunker, text, kind=self.kind, source_uri=uri)
            out.extend(
                LangChainDocument(page_content=c.text, metadata={**base, **chunk_metadata(document, c, text)})
                for c in chunks
            )
        return out

    def split_documents(self, documents: Iterable[LangChainDocument]) -> list[LangChainDocument]:
        """Split LangChain documents, keeping each one's metadata on its chunks."""
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])
