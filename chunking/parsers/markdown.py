"""Markdown: CommonMark plus GitHub pipe tables, parsed with markdown-it-py.

Only the block structure is used: each top-level block becomes one unit whose text is the
block's own source lines (trailing whitespace trimmed), so the document text stays the author's
Markdown. Headings open sections (ATX, setext, and top-level HTML blocks that open with
``<h1>``..``<h6>``); the heading path is the plain text of the open headings, without badge
images, link targets or inline markup. Link reference definitions (``[2.16.1]: https://...``)
are no unit: a renderer shows nothing of them. The bodies of MkDocs admonitions (``!!! note``,
``??? tip``) and content tabs (``=== "Python 3.10"``) are read one indent level out, as MkDocs
renders them, with their opening line a unit of its own.
"""

from __future__ import annotations

import html
import re
from importlib.metadata import version
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from chunking.document import Document
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.encoding import decode
from chunking.parsers.layout import LayoutBuilder, table_text
from chunking.parsers.limits import ParseLimits
from chunking.parsers.plain_headings import (
    COLLECTION_LEVEL_ONES,
    MAX_HEADING_CHARS,
    is_title_position,
    line_per_paragraph,
    wiki_heading,
)

__all__ = ["PARSER_VERSION", "parse"]

# 3: an HTML block opening with a heading: only the heading element is the heading; 4: headings
# have a length limit (setext only under one short line), the title is a level-1 heading at the
# document's start, WikiText heading lines open sections, long-line paragraphs are line units;
# 5: short cp1252 text with curly quotes is read as cp1252 (encoding.py); 6: a block of in-page
# links alone ("[⬆ Back to Index](#index)", a contents list) is a `toc` unit, and a block of
# HTML tags alone (`<a name="v2"></a>`, `</div>`) is no unit; 7: link reference definitions are no
# unit, and MkDocs admonition and tab bodies are prose and code, not one indented code block.
PARSER_VERSION = "7"
LIBRARY = f"markdown-it-py {version('markdown-it-py')}"

# Block kinds by the opening token of a top-level block; anything else is plain text.
_KIND_BY_TOKEN = {
    "heading_open": "heading",
    "fence": "code",
    "code_block": "code",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "table_open": "table",
}
_SKIP = {"hr"}
# A heading's source (markup, link targets, badges) over this many characters is no heading: its
# plain text could not be within MAX_HEADING_CHARS, and an inline parse of 100,000 `*` took 2 s.
_HEADING_SOURCE_CHARS = 2000
# A trailing attribute list (`## Title { #anchor }`, MkDocs/Pandoc) is markup, not heading text.
_ATTR_LIST = re.compile(r"\s*\{:?\s*[#.][^{}]*\}\s*$")
# A top-level HTML block that opens with <h1>..<h6> is a heading (README banners).
_HTML_HEADING = re.compile(r"\s*<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
# A link to an anchor of the same page, and what may stand beside such links in a navigation
# block: list markers, emphasis, arrows, separators, entities and space (no word).
_ANCHOR_LINK = re.compile(r"\[[^\[\]]*\]\(#[^()\s]*\)")
_ENTITY = re.compile(r"&#?\w+;")
_LIST_NUMBER = re.compile(r"(?m)^\s*\d+[.)]")
_NO_WORDS = re.compile(r"[\W_]*")
# Badges and reference links whose definitions are missing stay literal after the inline parse:
# images go, links keep their text.
_LEFTOVER_IMAGE = re.compile(r"!\[[^\[\]]*\](?:\[[^\[\]]*\]|\([^()]*\))?")
_LEFTOVER_LINK = re.compile(r"\[([^\[\]]*)\](?:\[[^\[\]]*\]|\([^()]*\))")
# The opening line of a MkDocs admonition (``!!! note "Title"``, collapsible ``??? tip`` or
# ``???+ tip``) or content tab (``=== "Python 3.10"``), whose body is indented one level.
_MKDOCS_OPENING = re.compile(
    r'(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+"[^"\n]*")?[ \t]*'  # !!! note "Title"
    r'|===\+?[ \t]+"[^"\n]*"[ \t]*'  # === "Tab"
)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _block_parser() -> MarkdownIt:
    # The inline pass is disabled for speed and for bounded time on one huge line; headings get
    # their own inline parse below, the only place plain text is needed.
    return MarkdownIt("commonmark").enable("table").disable("inline")


_BLOCKS = _block_parser()
_INLINE = MarkdownIt("commonmark").enable("table")


def _normalize(text: str) -> str:
    # The same normalization markdown-it applies, so its line numbers index our lines.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")


def _front_matter_end(lines: list[str]) -> int:
    """Return the number of lines of a leading YAML front matter block (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, min(len(lines), 500)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def _heading_text(token: Token, env: dict[str, Any]) -> str:
    """The plain text of a heading: inline markup, images (badges) and link targets removed.

    ``env`` holds the document's link reference definitions, so ``[![badge][img]][url]``
    resolves to an image inside a link and leaves no text.
    """
    parsed = _INLINE.parseInline(token.content, env)
    parts: list[str] = []
    for child in (parsed[0].children or ()) if parsed else ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    text = _clean("".join(parts)) or token.content.strip()
    return _ATTR_LIST.sub("", text) or text


def _clean(text: str) -> str:
    for _ in range(3):  # nested: [![alt][img]][url] -> [][url] -> ""
        text = _LEFTOVER_LINK.sub(r"\1", _LEFTOVER_IMAGE.sub("", text))
    return " ".join(text.split())


def _html_heading(content: str) -> tuple[int, str, int] | None:
    """The level and plain text of an HTML block that opens with a heading element, if any, and
    how many of the block's lines the heading element takes (the rest of the block is text)."""
    match = _HTML_HEADING.match(content)
    if match is None:
        return None
    text = _clean(html.unescape(_TAG.sub(" ", match.group(2))))
    return (int(match.group(1)), text, content.count("\n", 0, match.end()) + 1) if text else None


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse Markdown bytes into a document (see the module docstring for the layout).

    Raises:
        ParseError: The bytes do not decode, or hold no text.
    """
    del limits  # max_bytes is checked by the caller; block parsing is linear.
    decoded, encoding, confidence = decode(data, source_uri)
    source = _normalize(decoded)
    lines = source.split("\n")
    skipped = _front_matter_end(lines)
    metadata: dict[str, object] = {"encoding": encoding, "encoding_confidence": confidence, "parser": LIBRARY}
    if skipped:
        metadata["front_matter"] = "\n".join(lines[1 : skipped - 1])
        # Blank the front matter instead of cutting it so token line numbers still index `lines`.
        source = "\n" * skipped + "\n".join(lines[skipped:])
        lines = source.split("\n")
    openings = _read_mkdocs_blocks(lines, skipped)
    if openings:
        source = "\n".join(lines)
    env: dict[str, Any] = {}
    tokens = _BLOCKS.parse(source, env)

    builder = LayoutBuilder()
    stack: list[tuple[int, str]] = []
    title = ""
    seen = _Seen()
    # Lines no block claims are link reference definitions: they make no unit.
    for index, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or token.map is None:
            continue
        first, last = token.map
        if token.type in _SKIP:
            continue
        kind = _KIND_BY_TOKEN.get(token.type, "text")
        if kind in ("text", "list"):
            navigation = _navigation(lines[first:last])
            if navigation == "markup":
                continue  # tags alone: no text anyone searches for
            if navigation == "links":
                kind = "toc"
        heading = None
        heading_lines = last - first
        if kind == "heading" and len(tokens[index + 1].content) > _HEADING_SOURCE_CHARS:
            kind = "text"  # no heading: and its inline parse would take time (emphasis runs)
        if kind == "heading":
            heading = int(token.tag[1]), _heading_text(tokens[index + 1], env)
            # A heading is a short line: a setext underline below a paragraph of several lines
            # or a long one (a lone `=` under 700 characters) makes no heading.
            setext_lines = last - first - 1 if token.markup in ("=", "-") else 1
            if setext_lines != 1 or len(heading[1]) > MAX_HEADING_CHARS:
                heading, kind = None, "text"
        elif token.type == "html_block" and (found := _html_heading(token.content)):
            # Only the heading element is the heading; what follows it in the block is text.
            *heading, heading_lines = found
            kind = "heading"
        if heading is not None:
            level, text = heading
            title = _keep(title, _open_heading(builder, stack, level, text, seen))
        if kind == "text":
            if first in openings and last - first > 1:
                # An admonition's opening line without a blank line under it: its own unit,
                # which announces the body.
                _add_block(builder, [lines[first]], "text")
                seen.units += 1
                first += 1
            title = _keep(title, _add_text(builder, stack, lines[first:last], seen))
            continue
        _add_block(builder, lines[first : first + heading_lines], kind)
        seen.units += 1
        if first + heading_lines < last:
            title = _keep(title, _add_text(builder, stack, lines[first + heading_lines : last], seen))

    if seen.level_ones >= COLLECTION_LEVEL_ONES:
        # Articles one after another (a wiki dump): no one heading is the whole document's.
        title = ""
    text, sections = builder.build()
    return build_document(
        raw=data,
        kind="markdown",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=text,
        sections=sections,
        title=title or title_from_uri(source_uri),
        metadata=metadata,
    )


def _read_mkdocs_blocks(lines: list[str], start: int) -> set[int]:
    """Take the bodies of MkDocs admonitions and content tabs one indent level out, in place
    (four spaces or a tab; blank lines stay), so their paragraphs, lists and fences parse as
    MkDocs renders them instead of as one indented code block. Nested blocks are read the same
    way; nothing inside a fenced code block is touched. Return the opening lines' indexes.

    The line count stays, so markdown-it's line numbers still index ``lines``.
    """
    openings: set[int] = set()
    ranges = [(start, len(lines))]
    while ranges:
        index, end = ranges.pop()
        fence = ""
        while index < end:
            line = lines[index]
            found = _FENCE.match(line)
            if fence:
                if found and line.strip() == found.group(1) and found.group(1).startswith(fence):
                    fence = ""
            elif found:
                fence = found.group(1)
            elif _MKDOCS_OPENING.fullmatch(line):
                body = index + 1
                while body < end and (not lines[body].strip() or lines[body].startswith(("    ", "\t"))):
                    body += 1
                while body > index + 1 and not lines[body - 1].strip():
                    body -= 1
                if body > index + 1:
                    openings.add(index)
                    for inner in range(index + 1, body):
                        text = lines[inner]
                        lines[inner] = text[1:] if text.startswith("\t") else text[4:]
                    ranges.append((index + 1, body))
                    index = body
                    continue
            index += 1
    return openings


def _navigation(block_lines: list[str]) -> str | None:
    """``"links"`` for a block of links to anchors of the same page and nothing else that reads
    (a "Back to Index" line, a README's contents list); ``"markup"`` for HTML tags alone (an
    anchor `<a name="v2"></a>`, a closing `</div>`, `<br>`); else None."""
    text = "\n".join(block_lines)
    links = _ANCHOR_LINK.findall(text)
    rest = _LIST_NUMBER.sub(" ", _ENTITY.sub(" ", _TAG.sub(" ", _ANCHOR_LINK.sub(" ", text))))
    if _NO_WORDS.fullmatch(rest) is None:
        return None
    if links:
        return "links"
    return "markup" if _TAG.search(text) else None


def _keep(title: str, found: str) -> str:
    # The first title found stays (the step that may find one always runs).
    return title or found


class _Seen:
    """What the blocks before the current one held: units and characters (a title is a
    level-1 heading before anything but a few short blocks)."""

    __slots__ = ("chars", "level_ones", "units")

    def __init__(self) -> None:
        self.units = 0
        self.chars = 0
        self.level_ones = 0


def _open_heading(
    builder: LayoutBuilder, stack: list[tuple[int, str]], level: int, text: str, seen: _Seen
) -> str:
    """Open a section under a heading; return the heading when it may be the document's title
    (the first heading, level 1, at the document's start), else ""."""
    first_heading = not stack
    seen.level_ones += level == 1
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, text))
    builder.start_section(tuple(t for _, t in stack))
    if first_heading and level == 1 and is_title_position(seen.units, seen.chars):
        return text
    return ""


def _add_text(
    builder: LayoutBuilder, stack: list[tuple[int, str]], block_lines: list[str], seen: _Seen
) -> str:
    """Add a block of text lines: WikiText heading lines (``= = Gameplay = =``) in it open
    sections, and a run of long lines (one paragraph a line) becomes a unit per line. Return
    the title a heading line gave, if any."""
    run: list[str] = []
    title = ""

    def flush() -> None:
        if not any(line.strip() for line in run):
            run.clear()
            return
        if line_per_paragraph(run):
            for line in run:
                _add_block(builder, [line], "text")
        else:
            _add_block(builder, run, "text")
        seen.units += 1
        seen.chars += sum(len(line) for line in run)
        run.clear()

    for line in block_lines:
        found = wiki_heading(line)
        if found is None:
            run.append(line)
            continue
        flush()
        level, text = found
        title = _keep(title, _open_heading(builder, stack, level, text, seen))
        _add_block(builder, [line.strip()], "heading")
        seen.units += 1
    flush()
    return title


def _add_block(builder: LayoutBuilder, block_lines: list[str], kind: str) -> None:
    # Lines no block claimed can start blank; a unit starts on its first non-blank line.
    start = 0
    while start < len(block_lines) and not block_lines[start].strip():
        start += 1
    text = "\n".join(block_lines[start:]).rstrip()
    if kind != "table":
        builder.add(text, kind)
        return
    # Header line + delimiter line are the two header rows repeated in every row group.
    rows = [line.rstrip() for line in text.split("\n")]
    table, spans = table_text(rows)
    builder.add(table, "table", rows=spans, header_rows=min(2, len(spans)))
