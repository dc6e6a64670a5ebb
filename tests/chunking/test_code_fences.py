"""Pieces of a split code block stay code: content kind ``code``, contextual text fenced again."""

from __future__ import annotations

from chunking import ParentChildChunker, SectionChunker, parse_bytes

CODE = "\n".join(f"    total_{i} = compute(value_{i}, factor={i})  # step {i}" for i in range(60))
MARKDOWN = (
    "# Script\n\nThe script below sums the steps.\n\n"
    f"```python\ndef run():\n{CODE}\n    return total_0\n```\n\nAfter the code.\n"
)


def fences(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip().startswith("```"))


def test_split_code_block_pieces_are_code_and_fenced_for_embedding() -> None:
    document = parse_bytes(MARKDOWN.encode(), kind="markdown", source_uri="mem://code.md")
    chunks = SectionChunker(chunk_size=200, tokenizer="cl100k_base").chunk(document)
    code = [c for c in chunks if "compute(" in c.text]
    assert len(code) >= 3
    for chunk in code:
        assert chunk.content_kind == "code"
        assert document.text[chunk.provenance.start : chunk.provenance.end] == chunk.text  # stored: exact
        assert fences(chunk.contextual_text) == 2, chunk.contextual_text[:80]
        body = chunk.contextual_text.split("\n\n", 1)[1]  # under the heading label
        assert body.split("\n", 1)[0] in ("```python", "The script below sums the steps.", "# Script")
    assert code[1].contextual_text.split("\n\n", 1)[1].startswith("```python\n")
    assert code[-1].contextual_text.rstrip().endswith("```")


def test_children_of_a_parent_holding_part_of_a_code_block_are_fenced() -> None:
    document = parse_bytes(MARKDOWN.encode(), kind="markdown", source_uri="mem://code.md")
    leveled = ParentChildChunker(
        parent=SectionChunker(chunk_size=400, tokenizer="cl100k_base"),
        child=SectionChunker(chunk_size=120, tokenizer="cl100k_base"),
    )
    for chunk in leveled.chunk(document):
        assert fences(chunk.contextual_text) % 2 == 0, (chunk.level, chunk.contextual_text[:120])
        if "compute(" in chunk.text:
            assert chunk.content_kind == "code"
