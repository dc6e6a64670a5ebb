"""Counts a retrieval engineer looks at, measured on the shared corpus with the project's plan.

Every corpus file is parsed with ``parse_file`` and chunked by the route of ``plans.yaml`` for its
kind (parents, then children). Run ``python -m tests.chunking.corpus_quality`` from the project
root to print the counts; the slow test in ``test_corpus_quality.py`` asserts them.

What each count means:

* ``table_children`` / ``table_children_named``: children made from a table with more than one
  row, and those whose text carries the table's column names (the header line, or
  ``column: value`` lines).
* ``table_header_only``: table chunks (any level) that hold only header rows.
* ``prose_children`` / ``prose_mid_sentence``: ``text`` children of ``text/`` and ``pdf/``
  documents, and those that start mid-sentence: no blank line and no sentence end (``.!?:;``,
  CJK stops, closing quotes) before them, not starting with a list marker, and not beside a
  table-of-contents line (dot leaders).
* ``heading_only``: chunks (any level) that are only headings, in documents with other text.
* ``chat_children`` / ``chat_children_on_turns``: children of chat documents, and those that
  start where a turn starts or inside a turn over the child budget.
* ``chat_children_with_speakers``: chat children whose metadata names their speakers.
* ``odd_fence_contextual``: chunks whose ``contextual_text`` holds an odd number of fence lines.
* ``cjk_mid_word_cuts``: chunk ends (any level) inside a unit between two CJK letters (whitespace
  between them aside), in documents that hold CJK stops (``。！？；：、``) a cut could have used.
* ``cjk_children_cut_near_stop`` / ``cjk_children_cut_at_stop``: children that end inside a
  unit and inside a line (the text goes on after them on the same line: a cut inside a sentence
  unless a stop is right before it), with CJK in their last 40 characters and a ``。！？`` in
  their last third (so a cut after a stop was near), in documents that hold those stops; and
  those of them that end right after ``。！？`` (closing quotes and brackets aside).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chunking import Chunk, Document, PageProvenance, ParentChildChunker, parse_file
from chunking.errors import IngestError
from chunking.plans import leveler_for, plan_routes

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
PLANS = ROOT / "plans.yaml"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
_SENTENCE_END = set(".!?:;。！？；：…\"'”’)]»」』")
_LIST_MARKER = re.compile(r"^(?:[-*+•·]\s|\d{1,3}[.)]\s|[A-Za-z][.)]\s|\(\w{1,3}\)\s|#)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_STOP = re.compile(r"[。！？；：、]")
_CJK_FULL_STOP = re.compile(r"[。！？]")
_CLOSERS = "」』）)”’\"'"


@dataclass
class Chunked:
    """One parsed corpus file and the chunks its plan route made."""

    path: Path
    document: Document
    leveler: ParentChildChunker
    parents: list[Chunk]
    children: list[Chunk]


def chunk_corpus(corpus: Path = CORPUS, plans: Path = PLANS) -> Iterator[Chunked]:
    """Parse and chunk every corpus file with the default plan (files that fail to parse are skipped)."""
    routes = plan_routes(plans)
    for path in sorted(p for p in corpus.glob("*/*") if p.is_file() and p.name not in ("MANIFEST.tsv",)):
        try:
            document = parse_file(path)
        except IngestError:
            continue
        leveler = leveler_for(routes, document.kind)
        if leveler is None:
            continue
        parents = leveler.chunk_parents(document)
        yield Chunked(path, document, leveler, parents, leveler.chunk_children(document, parents))


def _header_of(document: Document, chunk: Chunk) -> tuple[str, list[str]] | None:
    """The header line and column names of the table a text-provenance chunk lies in."""
    if isinstance(chunk.provenance, PageProvenance):
        return None
    start = chunk.provenance.start
    for section in document.sections:
        for unit in section.units:
            if unit.content_kind != "table" or unit.start is None or not unit.start <= start < unit.end:
                continue
            if not unit.header_rows or len(unit.rows) <= unit.header_rows:
                return None
            line = unit.text[unit.rows[0].start : unit.rows[unit.header_rows - 1].end]
            names = [n.strip().strip('"') for n in re.split(r"[,|\t;]", line.splitlines()[0])]
            return line, [n for n in names if n and set(n) != {"-"}]
    return None


def _names_carried(text: str, header: tuple[str, list[str]]) -> bool:
    line, names = header
    if line in text:
        return True
    pairs = [row.split(":", 1)[0].strip() for row in text.splitlines() if ":" in row]
    return bool(pairs) and any(name in pairs for name in names)


def _mid_sentence(before: str, text: str) -> bool:
    """True when ``text`` starts mid-sentence after ``before`` (the text preceding it)."""
    stripped = before.rstrip()
    gap = before[len(stripped) :]
    if not stripped or "\n\n" in gap or "\f" in gap:
        return False
    if ". . ." in stripped.rsplit("\n", 1)[-1] or ". . ." in text.split("\n", 1)[0]:
        return False  # a table of contents line (dot leaders), not prose
    return not (stripped[-1] in _SENTENCE_END or _LIST_MARKER.match(text))


def _turn_of(document: Document, offset: int) -> int | None:
    for number, turn in enumerate(document.turns or ()):
        following = (
            document.turns[number + 1].start if number + 1 < len(document.turns) else len(document.text)
        )
        if turn.start <= offset < following:
            return number
    return None


def measure(chunked: Iterator[Chunked]) -> dict[str, int]:
    """Return every count of the module docstring over ``chunked``."""
    tally: Counter[str] = Counter()
    for item in chunked:
        document, kind = item.document, item.path.parent.name
        everything = [*item.parents, *item.children]
        other_text = any(u.content_kind != "heading" for s in document.sections for u in s.units)
        tally["chunks"] += len(everything)
        tally["heading_only"] += sum(c.content_kind == "heading" for c in everything) if other_text else 0
        tally["odd_fence_contextual"] += sum(len(_FENCE.findall(c.contextual_text)) % 2 for c in everything)
        tally["odd_fence_children"] += sum(len(_FENCE.findall(c.text)) % 2 for c in item.children)
        tally["table_header_only"] += sum(_header_only(document, c) for c in everything)
        for child in item.children:
            header = _header_of(document, child)
            if header is not None:
                tally["table_children"] += 1
                tally["table_children_named"] += _names_carried(child.text, header)
        if kind in ("text", "pdf"):
            parents = {p.id: p for p in item.parents}
            for child in item.children:
                if child.content_kind != "text":
                    continue
                tally["prose_children"] += 1
                tally["prose_mid_sentence"] += _mid_sentence(
                    _before(document, parents[child.parent_id], child), child.text
                )
        if document.turns:
            _measure_chat(item, tally)
        if _CJK_STOP.search(document.text):
            tally["cjk_mid_word_cuts"] += sum(_cjk_cut(document, item, c) for c in everything)
        if _CJK_FULL_STOP.search(document.text):
            for child in item.children:
                cut = _cjk_sentence_cut(document, item, child)
                if cut is not None:
                    tally["cjk_children_cut_near_stop"] += 1
                    tally["cjk_children_cut_at_stop"] += cut
    return dict(sorted(tally.items()))


def _header_only(document: Document, chunk: Chunk) -> bool:
    header = _header_of(document, chunk) if chunk.content_kind == "table_row" else None
    return header is not None and chunk.text.strip() == header[0].strip()


def _before(document: Document, parent: Chunk, child: Chunk) -> str:
    """The text before a child: from the document for text provenance, else from its parent."""
    if isinstance(child.provenance, PageProvenance):
        at = parent.text.find(child.text)
        return parent.text[max(0, at - 200) : max(at, 0)]
    start = child.provenance.start
    return document.text[max(0, start - 200) : start]


def _measure_chat(item: Chunked, tally: Counter[str]) -> None:
    document, child_chunker = item.document, item.leveler.child
    budget = child_chunker.chunk_size
    turn_starts = {t.start for t in document.turns or ()}
    for child in item.children:
        tally["chat_children"] += 1
        tally["chat_children_with_speakers"] += bool(child.metadata.get("speakers"))
        start = child.provenance.start
        if start in turn_starts:
            tally["chat_children_on_turns"] += 1
            continue
        number = _turn_of(document, start)
        if number is not None:
            turn = document.turns[number]
            if child_chunker.count_tokens(document.text[turn.start : turn.end]) > budget:
                tally["chat_children_on_turns"] += 1


def _cjk_cut(document: Document, item: Chunked, chunk: Chunk) -> bool:
    """True when a chunk ends inside a unit between two CJK letters (whitespace between them
    aside); for a page child, inside its parent's text and not at a blank line."""
    if isinstance(chunk.provenance, PageProvenance):
        parent = next((p for p in item.parents if p.id == chunk.parent_id), None)
        if parent is None:
            return False
        text, end = parent.text, parent.text.find(chunk.text) + len(chunk.text)
        if "\n\n" in text[end : end + 2]:
            return False
    else:
        text, end = document.text, chunk.provenance.end
        inside = any(
            u.start is not None and u.start < end < u.end for s in document.sections for u in s.units
        )
        if not inside:
            return False
    after = text[end:].lstrip()
    return bool(end > 0 and after and _CJK.match(text[end - 1]) and _CJK.match(after[0]))


def _cjk_sentence_cut(document: Document, item: Chunked, chunk: Chunk) -> bool | None:
    """For a CJK child cut inside a line of a unit with a ``。！？`` in its last third: whether it
    ends right after one. None for any other child (see the module docstring)."""
    text = chunk.text.rstrip()
    if len(text) < 3 or not _CJK.search(text[-40:]) or not _CJK_FULL_STOP.search(text[-(len(text) // 3) :]):
        return None
    if isinstance(chunk.provenance, PageProvenance):
        parent = next((p for p in item.parents if p.id == chunk.parent_id), None)
        at = -1 if parent is None else parent.text.find(chunk.text)
        if at < 0:
            return None
        source, end = parent.text, at + len(chunk.text)
    else:
        source, end = document.text, chunk.provenance.end
        if not any(u.start is not None and u.start < end < u.end for s in document.sections for u in s.units):
            return None
    following = source[end : end + 200]
    if not following.strip() or "\n" in following[: len(following) - len(following.lstrip())]:
        return None  # the cut is at a line end (a list item, a table row, a paragraph)
    return text.rstrip(_CLOSERS)[-1:] in "。！？"


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    print(json.dumps(measure(chunk_corpus(corpus)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
