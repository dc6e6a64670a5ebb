"""Hypothesis strategies: documents with unicode, CJK, emoji, CRLF, long words, tables, turns."""

from __future__ import annotations

import re

from hypothesis import strategies as st

from chunking import Document, Section, Span, Unit

WORDS = st.one_of(
    st.sampled_from(["the", "chunk", "Größe", "naïve", "Ünïcode", "token", "a", "I", "42", "3.14"]),
    st.sampled_from(["日本語", "中文文本", "한국어", "🙂", "👩‍💻", "🦛🦛", "ملف", "Привет", "\u200b"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=40, max_size=400),  # very long words
)
PUNCT = st.sampled_from([" ", " ", " ", ", ", ". ", "! ", "? ", "; ", ": ", " - ", "\t"])
SENTENCE = st.lists(st.tuples(WORDS, PUNCT), min_size=1, max_size=40).map(
    lambda pairs: "".join(w + p for w, p in pairs).strip()
)
LINE_BREAK = st.sampled_from(["\n", "\r\n", " \n"])
PARAGRAPH = st.lists(SENTENCE, min_size=1, max_size=6).flatmap(
    lambda sentences: LINE_BREAK.map(lambda br: br.join(sentences))
)
BLANK = st.sampled_from(["\n\n", "\r\n\r\n", "\n\n\n", "\n \n", "\n\t\n"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    paragraphs = draw(st.lists(PARAGRAPH, min_size=1, max_size=10))
    parts = []
    for paragraph in paragraphs:
        parts.append(paragraph)
        parts.append(draw(BLANK))
    if draw(st.booleans()):
        parts.insert(0, draw(st.sampled_from(["  ", "\n", "\ufeff"])))
    return "".join(parts[:-1])


@st.composite
def text_documents(draw: st.DrawFn) -> Document:
    text = draw(texts())
    return Document.from_text(text, source_uri=f"mem://text/{abs(hash(text))}")


@st.composite
def chat_documents(draw: st.DrawFn) -> Document:
    speakers = draw(st.lists(st.sampled_from(["ana", "bo", "cé", "段"]), min_size=1, max_size=12))
    turns = [(speaker, draw(SENTENCE)) for speaker in speakers]
    return Document.from_turns(turns, source_uri=f"mem://chat/{abs(hash(str(turns)))}")


@st.composite
def table_documents(draw: st.DrawFn) -> Document:
    """A document of headed sections with paragraphs and a pipe table with a header."""
    blocks: list[tuple[str, str]] = []  # (kind, text)
    header = (
        "| "
        + " | ".join(draw(st.lists(WORDS.map(lambda w: w.replace("\n", " ")), min_size=1, max_size=4)))
        + " |"
    )
    rows = [header, "|---|"]
    for _ in range(draw(st.integers(min_value=1, max_value=40))):
        rows.append("| " + draw(SENTENCE).replace("\n", " ").replace("\r", " ") + " |")
    blocks.append(("text", draw(PARAGRAPH)))
    blocks.append(("table", "\n".join(rows)))
    blocks.append(("text", draw(PARAGRAPH)))
    text = "\n\n".join(b for _, b in blocks)
    units = []
    offset = 0
    for kind, block in blocks:
        row_spans: tuple[Span, ...] = ()
        header_rows = 0
        if kind == "table":
            position = 0
            spans = []
            for line in block.split("\n"):
                spans.append(Span(start=position, end=position + len(line)))
                position += len(line) + 1
            row_spans, header_rows = tuple(spans), 2
        units.append(
            Unit(
                text=block,
                content_kind=kind,
                start=offset,
                end=offset + len(block),
                rows=row_spans,
                header_rows=header_rows,
            )
        )
        offset += len(block) + 2
    sections = (
        Section(heading_path=("Data",), units=tuple(units[:2])),
        Section(heading_path=("Data", "After"), units=tuple(units[2:])),
    )
    return Document.create(
        source_uri=f"mem://table/{abs(hash(text))}", text=text, sections=sections, kind="markdown"
    )


documents = st.one_of(text_documents(), chat_documents(), table_documents())


def build_document(
    blocks: list[tuple[tuple[str, ...], str, str]],
    *,
    header_rows: int = 2,
    source_uri: str | None = None,
    kind: str = "markdown",
) -> Document:
    """A document of blocks ``(heading path, unit kind, text)`` joined by blank lines; a table
    block's rows are its lines, the first ``header_rows`` its header (by default a pipe header
    and its delimiter row)."""
    text = "\n\n".join(block for _, _, block in blocks)
    sections: list[Section] = []
    offset = 0
    for path, unit_kind, block in blocks:
        rows: tuple[Span, ...] = ()
        if unit_kind == "table":
            position, spans = 0, []
            for line in block.split("\n"):
                spans.append(Span(start=position, end=position + len(line)))
                position += len(line) + 1
            rows = tuple(spans)
        unit = Unit(
            text=block,
            content_kind=unit_kind,
            start=offset,
            end=offset + len(block),
            rows=rows,
            header_rows=min(header_rows, len(rows)),
        )
        if sections and sections[-1].heading_path == path:
            sections[-1] = Section(heading_path=path, units=(*sections[-1].units, unit))
        else:
            sections.append(Section(heading_path=path, units=(unit,)))
        offset += len(block) + 2
    uri = source_uri or f"mem://structured/{abs(hash(text))}"
    return Document.create(source_uri=uri, text=text, sections=sections, kind=kind)


CELL = st.text(alphabet="abcdefghij 0123456789", min_size=1, max_size=30).map(lambda s: s.strip() or "x")


@st.composite
def pipe_tables(draw: st.DrawFn) -> str:
    columns = draw(st.integers(min_value=1, max_value=12))
    names = [
        f"col{i}_" + draw(st.sampled_from(["name", "value", "a_rather_long_column_name"]))
        for i in range(columns)
    ]
    rows = ["| " + " | ".join(names) + " |", "|" + "---|" * columns]
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        rows.append("| " + " | ".join(draw(CELL) for _ in range(columns)) + " |")
    return "\n".join(rows)


@st.composite
def code_blocks(draw: st.DrawFn) -> str:
    language = draw(st.sampled_from(["python", "js", ""]))
    lines = draw(
        st.lists(
            st.text(alphabet="abcdefxyz =()+.:0123456789", min_size=0, max_size=60), min_size=1, max_size=40
        )
    )
    fence = draw(st.sampled_from(["```", "~~~"]))
    return f"{fence}{language}\n" + "\n".join(line.rstrip() or "pass" for line in lines) + f"\n{fence}"


# A line that opens or closes a fenced code block in Markdown: a Markdown paragraph or list item
# never holds one (the parser would read a code block there), so the structured documents'
# prose draws none. Nor a fence's marker inside a line: a cut before it (a word over the budget
# next to it) starts a chunk with it, and the fence-balance property would count the prose's
# own backticks as a code block the chunker opened.
FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
FENCE_MARK = re.compile(r"`{3,}|~{3,}")
MARKDOWN_PARAGRAPH = PARAGRAPH.filter(lambda p: FENCE_MARK.search(p) is None)

BLOCK = st.one_of(
    MARKDOWN_PARAGRAPH.map(lambda p: ("text", p)),
    pipe_tables().map(lambda t: ("table", t)),
    code_blocks().map(lambda c: ("code", c)),
    st.lists(SENTENCE, min_size=1, max_size=12)
    .map(lambda items: ("list", "\n".join(f"- {i}" for i in items)))
    .filter(lambda block: FENCE_MARK.search(block[1]) is None),
)


@st.composite
def structured_documents(draw: st.DrawFn) -> Document:
    """Headed sections (headings nested up to three deep) of paragraphs, pipe tables, fenced
    code and lists; some sections hold only their heading."""
    blocks: list[tuple[tuple[str, ...], str, str]] = []
    path: tuple[str, ...] = ()
    if draw(st.booleans()):
        blocks.append(((), "text", draw(MARKDOWN_PARAGRAPH)))
    for number in range(draw(st.integers(min_value=1, max_value=6))):
        depth = draw(st.integers(min_value=1, max_value=min(3, len(path) + 1)))
        title = f"Part {number} " + draw(st.sampled_from(["of the orchard", "data", "日本語の見出し", "x"]))
        path = (*path[: depth - 1], title)
        blocks.append((path, "heading", "#" * depth + " " + title))
        for kind, block in draw(st.lists(BLOCK, min_size=0, max_size=3)):
            blocks.append((path, kind, block))
    return build_document(blocks)
