"""A LlamaIndex ``NodeParser`` over the project's chunkers.

    from chunking import SectionChunker
    from chunking.integrations.llamaindex import ChunkingNodeParser

    parser = ChunkingNodeParser(chunker=SectionChunker(chunk_size=400, tokenizer="cl100k_base"))
    nodes = parser.get_nodes_from_documents(documents)

Each node is a ``TextNode`` whose text is a chunk's stored text, whose id is the chunk's
(deterministic) id, with ``start_char_idx``/``end_char_idx`` into the input, a ``SOURCE``
relationship to its document and, for a child of a :class:`chunking.ParentChildChunker`, a
``PARENT`` relationship to its parent's node; its metadata is
:func:`chunking.integrations.common.chunk_metadata` (the contextual text is excluded from what
LlamaIndex embeds and sends to an LLM). Needs ``llama-index-core``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode
from pydantic import ConfigDict, Field

from chunking.integrations.common import chunk_metadata, chunk_text

__all__ = ["ChunkingNodeParser"]

_HIDDEN = ["contextual_text", "chunker_hash", "document_id", "exact_slice", "offsets_into_input"]


class ChunkingNodeParser(NodeParser):
    """Parse nodes with a project chunker (and, for ``kind`` other than ``"text"``, a parser)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chunker: Any = Field(description="A chunking BaseChunker (SectionChunker, ParentChildChunker, ...).")
    kind: str = Field(default="text", description="How to parse each text: text, markdown, html, csv, chat.")

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in nodes:
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            uri = f"mem://llamaindex/{node.node_id}"
            document, chunks = chunk_text(self.chunker, text, kind=self.kind, source_uri=uri)
            for chunk in chunks:
                metadata = chunk_metadata(document, chunk, text)
                piece = TextNode(
                    id_=metadata["chunk_id"],
                    text=chunk.text,
                    metadata=metadata,
                    excluded_embed_metadata_keys=list(_HIDDEN),
                    excluded_llm_metadata_keys=list(_HIDDEN),
                    start_char_idx=metadata.get("start_index") if metadata["offsets_into_input"] else None,
                    end_char_idx=metadata.get("end_index") if metadata["offsets_into_input"] else None,
                )
                piece.relationships[NodeRelationship.SOURCE] = node.as_related_node_info()
                if metadata["parent_id"]:
                    piece.relationships[NodeRelationship.PARENT] = RelatedNodeInfo(
                        node_id=metadata["parent_id"]
                    )
                out.append(piece)
        return out
