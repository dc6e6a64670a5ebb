"""HTML: the visible text of headings, paragraphs, lists, ``pre`` and tables, via selectolax.

The lexbor engine parses (it fetches nothing: no network, no external entities). The tree is walked
with an explicit stack, never recursion, so 10,000 nested elements cost a loop, not the Python
stack. Headings build the heading path; ``p`` is a text unit, ``pre`` a code unit, a ``ul`` or
``ol`` one list unit, a ``table`` one table unit whose rows are cells joined by `` | `` (trailing
empty cells left out). Text outside those blocks (in ``div``, ``dd``, ...) becomes text units, split
at block boundaries. A ``dt`` (or an admonition title) and the first text of what follows it are one
unit; a footnote (``aside.footnote``) is one unit, labelled with the heading path of the first
text that points at it (a chapter's footnotes sit at its end, under its last section). An API
entry's signature (Sphinx's ``dt.sig``: ``codecs.lookup(encoding)``) is a heading one level
below the open ones: every paragraph of its description carries it in the heading path, up to
the end of its ``dl``. Layout tables (DocBook admonitions, no row with two cells of text) are
read as text. Chrome is dropped by role and class, not tag alone: scripts, styles, ``nav``,
``header``, ``footer``, asides that are not notes, ARIA navigation landmarks, Sphinx footers and
menus, DocBook navigation headers, footers and tables of contents.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from chunking.document import Document
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.encoding import Decoded, decode
from chunking.parsers.layout import LayoutBuilder, table_text
from chunking.parsers.limits import ParseLimits
from chunking.parsers.plain_headings import MAX_HEADING_CHARS

__all__ = ["PARSER_VERSION", "parse"]

# 3: elements nested deeper than ParseLimits.max_depth are flattened; 4: cp1252 quotes; 5: table
# rows leave out their trailing empty cells; 6: a site's menu, navigation bar, breadcrumbs and
# sidebar are dropped by their element's id too; 7: an API entry's signature (Sphinx's dt.sig) is
# a heading over its description, to the end of its dl; 8: a footnote is labelled with the section
# that points at it
PARSER_VERSION = "8"
LIBRARY = f"selectolax {version('selectolax')} (lexbor)"

_DROP_TAGS = (
    "script style nav header footer noscript template head iframe object embed svg canvas "
    "select button -comment"
)
_DROP = frozenset(_DROP_TAGS.split())
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
# Chrome by class: Sphinx's page footer and mobile menu, DocBook's navigation tables and tables
# of contents. Dropped wherever they sit, whatever their tag.
_DROP_CLASS_NAMES = (
    "footer mobile-nav related sphinxsidebar navheader navfooter toc list-of-tables "
    "list-of-figures list-of-examples"
)
_DROP_CLASSES = frozenset(_DROP_CLASS_NAMES.split())
# Chrome by id: a hand-made site's menu and bars (`<ul id="menu">` with Home, About Us, ...),
# which no tag, role or class marks.
_DROP_IDS = frozenset(
    ["menu", "nav", "navbar", "nav_bar", "navigation", "topbar", "breadcrumb", "breadcrumbs", "sidebar"]
)
# An aside is chrome (its implicit role is complementary) unless its role or class says it is
# part of the text: Sphinx and DocBook footnotes are asides with role="note".
_KEEP_ASIDE_ROLES = frozenset({"note", "doc-footnote", "doc-endnote", "doc-endnotes"})
# DocBook admonitions are tables laid out for an icon; their text is prose, not data.
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
_LAYOUT_ROLES = frozenset({"presentation", "none"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = frozenset({"ul", "ol"})
# Phrasing elements: their text joins the surrounding run instead of starting a unit.
_INLINE_TAGS = (
    "a abbr b bdi bdo cite code data dfn em font i img kbd label mark q s samp small span strong "
    "sub sup time tt u var wbr del ins -text"
)
_INLINE = frozenset(_INLINE_TAGS.split())
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)


def _classes(node: LexborNode) -> set[str]:
    return set((node.attributes.get("class") or "").split())


def _dropped(node: LexborNode) -> bool:
    tag = node.tag
    if tag in _DROP:
        return True
    if tag in _INLINE and tag != "a":
        return False
    attributes = node.attributes
    if tag == "aside":
        role = attributes.get("role")
        if role not in _KEEP_ASIDE_ROLES and not any("footnote" in c for c in _classes(node)):
            return True
    if not attributes:
        return False
    if "hidden" in attributes or attributes.get("aria-hidden") == "true":
        return True
    if attributes.get("role") in _DROP_ROLES:
        return True
    classes = _classes(node)
    if classes & _DROP_CLASSES or attributes.get("id") in _DROP_IDS:
        return True
    # Sphinx's permalink anchors ("¶") are chrome, not heading text.
    return tag == "a" and "headerlink" in classes


def _signature(node: LexborNode) -> str | None:
    """The heading an API entry's ``dt`` gives (Sphinx marks a signature ``dt.sig``, older
    Sphinx a ``dt`` with an id holding a ``descname``), or None for a glossary term or any other
    ``dt``. A signature past :data:`MAX_HEADING_CHARS` keeps its name and an ellipsis for its
    parameters."""
    if node.tag != "dt":
        return None
    classes = _classes(node)
    if "sig" not in classes and not (node.attributes.get("id") and node.css_first(".descname")):
        return None
    text = _inline_text(node)
    if len(text) > MAX_HEADING_CHARS and (cut := text.find("(")) > 0:
        text = text[:cut] + "(...)"
    return text[:MAX_HEADING_CHARS] or None


class _FootnoteLabels:
    """Where each footnote of a page is pointed at: a footnote is labelled with the heading path
    of the first text that links to it (DocBook and Sphinx put a chapter's footnotes at its end,
    under whatever section came last: fhs-3.0's note on /root was labelled "/tmp > Rationale")."""

    def __init__(self, root: LexborNode | None) -> None:
        found = root.css(".footnote") if root is not None else []
        self.ids = {i for node in found if (i := node.attributes.get("id"))}
        self.pointed_from: dict[str, tuple[str, ...]] = {}

    def note(self, node: LexborNode, path: tuple[str, ...]) -> None:
        """Record the footnotes that ``node`` (text being added under ``path``) links to."""
        if not self.ids:
            return
        for link in [node] if node.tag == "a" else node.css("a"):
            href = link.attributes.get("href") or ""
            if href.startswith("#") and href[1:] in self.ids:
                self.pointed_from.setdefault(href[1:], path)

    def path_of(self, node: LexborNode) -> tuple[str, ...] | None:
        """The heading path of the text pointing at footnote ``node``; None when ``node`` is no
        footnote or nothing before it points at it."""
        if not self.ids:
            return None  # most pages: no attribute read for each element
        key = node.attributes.get("id")
        if key not in self.ids or not any("footnote" in c for c in _classes(node)):
            return None
        return self.pointed_from.get(key)


def _is_footnote(node: LexborNode) -> bool:
    return node.tag == "aside" and "footnote" in _classes(node)


def _is_layout_table(table: LexborNode) -> bool:
    """True for a table used for layout: a presentation role, a DocBook admonition, or no row
    with two cells that hold text (an icon beside a paragraph)."""
    attributes = table.attributes
    if attributes.get("role") in _LAYOUT_ROLES:
        return True
    summary = (attributes.get("summary") or "").strip().lower()
    parent = table.parent
    if summary in _ADMONITIONS or (parent is not None and _classes(parent) & _ADMONITIONS):
        return True
    rows = _rows_of(table)
    return bool(rows) and all(
        sum(1 for cell in _children(row) if cell.tag in ("td", "th") and _inline_text(cell)) <= 1
        for row in rows
    )


def _rows_of(table: LexborNode) -> list[LexborNode]:
    """The table's own rows (directly or under thead/tbody/tfoot), not those of nested tables."""
    rows: list[LexborNode] = []
    stack = [table]
    while stack:
        current = stack.pop()
        if current.tag == "tr":
            rows.append(current)
        elif current is table or current.tag in ("thead", "tbody", "tfoot"):
            stack.extend(reversed(_children(current)))
    return rows


def _children(node: LexborNode) -> list[LexborNode]:
    return list(node.iter(include_text=True))


def _raw_text(node: LexborNode, *, pre: bool = False) -> str:
    """Concatenate the visible text under ``node`` (iteratively); ``br`` is a break."""
    parts: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        tag = current.tag
        if tag == "-text":
            parts.append(current.text_content or "")
        elif tag == "br":
            parts.append("\n" if pre else " ")
        elif current is node or not _dropped(current):
            if tag in ("td", "th", "li", "p", "div", "tr") and current is not node and not pre:
                parts.append(" ")
            stack.extend(reversed(_children(current)))
    return "".join(parts)


def _inline_text(node: LexborNode) -> str:
    return " ".join(_raw_text(node).split())


def _pre_text(node: LexborNode) -> str:
    text = _raw_text(node, pre=True)
    # HTML drops one newline right after <pre>; the rest of the layout is the author's.
    return text.strip("\n").rstrip()


def _list_text(node: LexborNode) -> str:
    """Render a list as one line per item, nested items indented by two spaces."""
    lines: list[str] = []
    buffer: list[str] = []
    prefix = [""]
    depth = -1
    counters: list[int] = []

    def flush() -> None:
        text = " ".join("".join(buffer).split())
        if text:
            lines.append("  " * max(depth, 0) + prefix[0] + text)
            prefix[0] = ""
        buffer.clear()

    stack: list[tuple[LexborNode, bool]] = [(node, False)]
    while stack:
        current, leaving = stack.pop()
        tag = current.tag
        if leaving:
            flush()
            if tag in _LISTS:
                depth -= 1
                counters.pop()
            continue
        if tag == "-text":
            buffer.append(current.text_content or "")
            continue
        if current is not node and _dropped(current):
            continue
        if tag in _LISTS:
            flush()
            depth += 1
            counters.append(0)
        elif tag == "li":
            flush()
            counters[-1] = counters[-1] + 1 if counters else 1
            ordered = current.parent is not None and current.parent.tag == "ol"
            prefix[0] = f"{counters[-1]}. " if ordered else "- "
        elif tag == "br" or tag not in _INLINE:
            buffer.append(" ")
        if tag in _LISTS or tag == "li":
            stack.append((current, True))
        stack.extend((child, False) for child in reversed(_children(current)))
    flush()
    return "\n".join(lines)


def _table_rows(table: LexborNode) -> tuple[list[str], int]:
    """Return the table's rows (cells joined by `` | ``) and the number of leading header rows."""
    rows: list[str] = []
    header_rows = 0
    in_header = True
    for current in _rows_of(table):
        cells = [c for c in _children(current) if c.tag in ("td", "th")]
        texts = [_inline_text(c) for c in cells]
        if not any(texts):
            continue
        is_header = all(c.tag == "th" for c in cells) or (
            current.parent is not None and current.parent.tag == "thead"
        )
        if in_header and is_header:
            header_rows += 1
        else:
            in_header = False
        while not texts[-1]:  # trailing empty cells say nothing, and would end the row in " | "
            texts.pop()
        rows.append(" | ".join(texts))
    return rows, header_rows


def _decode(data: bytes, source_uri: str) -> Decoded:
    declared = _META_CHARSET.search(data[:4096])
    if declared is not None and not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        name = declared.group(1).decode("ascii", "replace")
        try:
            # A declaration that decodes the bytes is taken as certain.
            return Decoded(data.decode(name), name.lower(), 1.0)
        except (LookupError, UnicodeDecodeError):
            pass  # A wrong declaration is common; fall back to detection.
    return decode(data, source_uri)


# Tags as the depth scan sees them: comments and raw-text elements (script, style) are skipped
# whole, so tags inside them do not count.
_TAG_SCAN = re.compile(
    r"<!--.*?-->|<(script|style|textarea|title)\b[^>]*>.*?</\1\s*>|<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*?(/?)>",
    re.DOTALL | re.IGNORECASE,
)
# Elements that never nest: void elements, and those whose end tag may be left out (the tree
# builder closes them at the next sibling), so an unclosed <p> or <li> adds no depth.
_NO_DEPTH_TAGS = """
    area base br col embed hr img input link meta param source track wbr
    p li dt dd tr td th option optgroup thead tbody tfoot colgroup rb rt rp html head body
"""
_NO_DEPTH = frozenset(_NO_DEPTH_TAGS.split())


def flatten_deep(text: str, max_depth: int) -> tuple[str, int]:
    """``text`` with the tags of elements nested deeper than ``max_depth`` taken out (their
    content stays, in the element at ``max_depth``), and how many tags went; one linear scan.

    The HTML tree builder spends time in proportion to the depth for each element (100,000
    nested ``<div>``, 1.1 MB, took 35 s), so past ``max_depth`` the structure is flattened
    instead: no visible text is lost, and parsing stays linear in the input.
    """
    depth = excess = dropped = 0
    parts: list[str] = []
    kept = 0  # end of the text copied so far
    for match in _TAG_SCAN.finditer(text):
        name = match.group(3)
        if name is None or match.group(4) or name.lower() in _NO_DEPTH:
            continue
        if match.group(2):  # a closing tag
            if excess:
                excess -= 1
            else:
                depth = max(depth - 1, 0)
                continue
        elif depth < max_depth:
            depth += 1
            continue
        else:
            excess += 1
        parts.append(text[kept : match.start()])
        kept = match.end()
        dropped += 1
    if not dropped:
        return text, 0
    parts.append(text[kept:])
    return "".join(parts), dropped


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse HTML bytes into a document (see the module docstring for what is kept).

    Raises:
        ParseError: The bytes do not decode, or hold no visible text.
    """
    # max_bytes is checked by the caller; the walk is linear in the tree size, and the tree
    # builder is kept linear by flattening what is nested deeper than max_depth.
    text, encoding, confidence = _decode(data, source_uri)
    text, flattened = flatten_deep(text, limits.max_depth)
    tree = LexborHTMLParser(text)
    title_node = tree.css_first("title")
    title = _inline_text(title_node) if title_node is not None else ""
    root = tree.body or tree.root
    builder = LayoutBuilder()
    path: list[tuple[int, str]] = []
    buffer: list[str] = []
    tables = 0
    # Terms (dt) waiting for the first text of their definition (dd), so a term and its
    # definition are one unit; a definition that opens with code or a table leaves it alone.
    terms: list[str] = []

    def add(text: str, kind: str = "text", **table: Any) -> None:
        if not text.strip():
            return
        if terms:
            term = "\n".join(terms)
            terms.clear()
            if kind in ("text", "list"):
                text = f"{term}\n{text}"
            else:
                builder.add(term)
        builder.add(text, kind, **table)

    def flush() -> None:
        add(" ".join("".join(buffer).split()))
        buffer.clear()

    def flush_terms() -> None:
        # Terms left without a text to join are units of their own.
        if terms:
            builder.add("\n".join(terms))
            terms.clear()

    # The heading path each open ``dl`` found on entry: an API entry's signature heads its
    # description up to the end of its dl, and the text after the dl is the section's again.
    entries: list[list[tuple[int, str]]] = []

    footnotes = _FootnoteLabels(root)

    def section() -> tuple[str, ...]:
        return tuple(h for _, h in path)

    def open_section(level: int, heading: str) -> None:
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, heading))
        builder.start_section(section())
        builder.add(heading, "heading")

    stack: list[tuple[LexborNode, bool]] = [(root, False)] if root is not None else []
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            flush()
            if footnotes.path_of(node) is not None:
                builder.start_section(section())  # the footnote's own label ends with it
            if tag == "dl":
                flush_terms()
                outer = entries.pop()
                if path != outer:
                    path[:] = outer
                    builder.start_section(section())
            continue
        if tag == "-text":
            buffer.append(node.text_content or "")
            continue
        if tag == "br":
            buffer.append(" ")
            continue
        if node is not root and _dropped(node):
            continue
        if tag in _INLINE:
            if tag == "a":
                footnotes.note(node, section())
            stack.extend((child, False) for child in reversed(_children(node)))
            continue
        flush()
        pointed_from = footnotes.path_of(node)
        if pointed_from is not None:
            flush_terms()
            builder.start_section(pointed_from)
        elif tag in ("p", "pre", "dt", "th", "table", *_LISTS):
            footnotes.note(node, section())
        if tag in _HEADINGS:
            heading = _inline_text(node)
            if heading:
                flush_terms()
                open_section(_HEADINGS[tag], heading)
                title = title or heading
        elif (signature := _signature(node)) is not None:
            # Overloads (several signatures in one dl) follow each other at the same level.
            flush_terms()
            outer = entries[-1] if entries else path
            open_section((outer[-1][0] if outer else 0) + 1, signature)
        elif tag in ("dt", "th") or "admonition-title" in _classes(node):
            # A term, or the title of an admonition ("Note": a th in DocBook's layout table, a
            # p.admonition-title in Sphinx), goes with the text that follows it.
            terms.append(_inline_text(node))
        elif tag == "p" or _is_footnote(node):
            # A footnote is one unit, its label ("[1]") with its text.
            add(_inline_text(node))
            if pointed_from is not None:
                builder.start_section(section())
        elif tag == "pre":
            add(_pre_text(node), "code")
        elif tag in _LISTS:
            add(_list_text(node), "list")
        elif tag == "table" and not _is_layout_table(node):
            caption = node.css_first("caption")
            if caption is not None:
                add(_inline_text(caption))
            rows, header_rows = _table_rows(node)
            table, spans = table_text(rows)
            add(table, "table", rows=spans, header_rows=header_rows)
            tables += 1
        else:
            if tag == "dl":
                entries.append(list(path))
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
    flush()
    flush_terms()

    body, sections = builder.build()
    return build_document(
        raw=data,
        kind="html",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=body,
        sections=sections,
        title=title or title_from_uri(source_uri),
        metadata={
            "encoding": encoding,
            "encoding_confidence": confidence,
            "parser": LIBRARY,
            "table_count": tables,
            **({"flattened_tags": flattened} if flattened else {}),
        },
    )
