"""Hypothesis strategies: documents with unicode, CJK, emoji, CRLF, long words, tables, turns."""

from __future__ import annotations

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
