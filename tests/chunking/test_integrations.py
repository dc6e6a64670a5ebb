"""LangChain and LlamaIndex wrappers: tested against those libraries (the ``frameworks`` extra,
which the test extra installs)."""

from __future__ import annotations

from chunking import ParentChildChunker, SectionChunker

TEXT = "\n\n".join(
    f"Paragraph {i} tells of the orchard. The plums were picked in week {i}. Then came the pears."
    for i in range(20)
)
MARKDOWN = "# Orchard\n\n## Plums\n\n" + TEXT + "\n\n## Pears\n\nPears ripen late.\n"


def _leveled() -> ParentChildChunker:
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=200, tokenizer="cl100k_base"),
        child=SectionChunker(chunk_size=60, tokenizer="cl100k_base"),
    )


def test_langchain_splitter_keeps_offsets_headings_and_parent_ids() -> None:
    from langchain_core.documents import Document as LangChainDocument

    from chunking.integrations.langchain import ChunkingTextSplitter

    splitter = ChunkingTextSplitter(SectionChunker(chunk_size=60, tokenizer="cl100k_base"))
    texts = splitter.split_text(TEXT)
    assert len(texts) > 3 and all(t in TEXT for t in texts)
    docs = splitter.split_documents(
        [LangChainDocument(page_content=TEXT, metadata={"source": "orchard.txt"})]
    )
    assert [d.page_content for d in docs] == texts
    for doc in docs:
        meta = doc.metadata
        assert meta["source"] == "orchard.txt" and meta["offsets_into_input"]
        assert TEXT[meta["start_index"] : meta["end_index"]] == doc.page_content
    leveled = ChunkingTextSplitter(_leveled(), kind="markdown").transform_documents(
        [LangChainDocument(page_content=MARKDOWN, metadata={"source": "orchard.md"})]
    )
    parents = {d.metadata["chunk_id"] for d in leveled if d.metadata["level"] == 1}
    children = [d for d in leveled if d.metadata["level"] == 0]
    assert parents and children and all(d.metadata["parent_id"] in parents for d in children)
    assert any(d.metadata["heading_path"] == ["Orchard", "Plums"] for d in children)
    assert all(d.metadata["contextual_text"].startswith("Orchard") for d in children)


def test_llamaindex_node_parser_keeps_offsets_ids_and_relationships() -> None:
    from llama_index.core import Document as LlamaDocument
    from llama_index.core.schema import NodeRelationship

    from chunking.integrations.llamaindex import ChunkingNodeParser

    document = LlamaDocument(text=TEXT, id_="orchard")
    chunker = SectionChunker(chunk_size=60, tokenizer="cl100k_base")
    nodes = ChunkingNodeParser(chunker=chunker).get_nodes_from_documents([document])
    assert len(nodes) > 3
    for node in nodes:
        assert TEXT[node.start_char_idx : node.end_char_idx] == node.text
        assert node.relationships[NodeRelationship.SOURCE].node_id == "orchard"
        assert "contextual_text" not in node.get_content(metadata_mode="embed")
    again = ChunkingNodeParser(chunker=chunker).get_nodes_from_documents([document])
    assert [n.node_id for n in nodes] == [n.node_id for n in again]  # deterministic ids
    leveled = ChunkingNodeParser(chunker=_leveled(), kind="markdown").get_nodes_from_documents(
        [LlamaDocument(text=MARKDOWN, id_="orchard-md")]
    )
    ids = {n.node_id for n in leveled}
    children = [n for n in leveled if n.metadata["level"] == 0]
    assert children and all(n.relationships[NodeRelationship.PARENT].node_id in ids for n in children)
    assert all(n.metadata["parent_id"] in ids for n in children)
    assert any(n.metadata["heading_path"] == ["Orchard", "Plums"] for n in children)
    for node in leveled:  # offsets into the parsed layout, which the metadata says
        assert node.metadata["start_index"] < node.metadata["end_index"]
        assert node.metadata["offsets_into_input"] is False
