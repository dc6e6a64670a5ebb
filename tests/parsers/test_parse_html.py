"""HTML parser: visible text only, heading paths, lists, code and tables."""

from __future__ import annotations

from pathlib import Path

from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_blank_line_layout, assert_exact_offsets


def test_html_sample_drops_chrome_and_keeps_blocks(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "field-notes.html")
    assert document.title == "Field notes: a week of river sampling"
    for dropped in ("analytics", "Home", "Lab blog", "Lake survey", "All rights reserved", "font-family"):
        assert dropped not in document.text
    units = [(s.heading_path, u.content_kind, u.text) for s in document.sections for u in s.units]
    assert units[0] == (("A week of river sampling",), "heading", "A week of river sampling")
    assert units[2][1:] == (
        "heading",
        "Stations",
    )
    assert units[3][1:] == (
        "list",
        "- Upstream weir, above the town\n- Old mill bridge\n- Sewage works outfall\n- Estuary jetty",
    )
    code = next(u for u in units if u[1] == "code")
    assert code == (
        ("A week of river sampling", "Results", "Method"),
        "code",
        "probe calibrate --ph 4.0 7.0 10.0\nprobe read --station weir --repeat 3",
    )
    assert_exact_offsets(document)
    assert_blank_line_layout(document)


def test_html_table_rows_join_cells_and_count_header_rows(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "field-notes.html")
    table = next(u for s in document.sections for u in s.units if u.content_kind == "table")
    rows = [table.text[r.start : r.end] for r in table.rows]
    assert rows[0] == "Station | Temperature (°C) | pH | Turbidity (NTU)"
    assert rows[1] == "Upstream weir | 11.2 | 7.4 | 3.1"
    assert len(rows) == 5
    assert table.header_rows == 1
    assert document.metadata["table_count"] == 1


def test_html_table_rows_leave_out_trailing_empty_cells() -> None:
    html = (
        b"<table><tr><th>op</th><th>result</th><th>notes</th></tr>"
        b"<tr><td>s.append(x)</td><td>appends x</td><td></td></tr>"
        b"<tr><td></td><td>only the middle</td><td> </td></tr></table>"
    )
    document = parse_bytes(html, kind="html", source_uri="mem://t.html")
    table = next(u for s in document.sections for u in s.units if u.content_kind == "table")
    rows = [table.text[r.start : r.end] for r in table.rows]
    assert rows == ["op | result | notes", "s.append(x) | appends x", " | only the middle"]


def test_html_nested_lists_indent_and_number() -> None:
    html = b"<ol><li>first<ul><li>inner a</li><li>inner b</li></ul></li><li>second</li></ol>"
    document = parse_bytes(html, kind="html", source_uri="mem://l.html")
    assert document.sections[0].units[0].text == "1. first\n  - inner a\n  - inner b\n2. second"


def test_html_loose_text_in_divs_becomes_units() -> None:
    html = b"<div>alpha <b>beta</b><div>gamma</div> delta</div><p>para</p>"
    document = parse_bytes(html, kind="html", source_uri="mem://d.html")
    assert [u.text for u in document.sections[0].units] == ["alpha beta", "gamma", "delta", "para"]
    assert_blank_line_layout(document)


def test_html_hidden_and_navigation_roles_are_dropped() -> None:
    html = (
        b'<div role="navigation">menu</div><p hidden>secret</p><h2>T<a class="headerlink">\xc2\xb6</a></h2>'
    )
    document = parse_bytes(html, kind="html", source_uri="mem://h.html")
    assert document.text == "T"
    assert document.sections[0].heading_path == ("T",)


def test_html_declared_legacy_charset_is_used() -> None:
    html = '<meta charset="iso-8859-1"><p>café déjà vu</p>'.encode("latin-1")
    document = parse_bytes(html, kind="html", source_uri="mem://e.html")
    assert document.text == "café déjà vu"
    assert document.metadata["encoding"] == "iso-8859-1"


def _units(html: bytes) -> list[tuple[str, str]]:
    document = parse_bytes(html, kind="html", source_uri="mem://page.html")
    assert_blank_line_layout(document)
    return [(u.content_kind, u.text) for s in document.sections for u in s.units]


def test_html_sphinx_footnotes_are_kept_as_one_unit_each() -> None:
    html = (
        b'<p>JSON is not a subset of JavaScript <a class="footnote-reference brackets" href="#e">1</a>.</p>'
        b'<aside class="footnote-list brackets"><aside class="footnote brackets" id="e" role="note">'
        b'<span class="label"><span class="fn-bracket">[</span><a href="#r">1</a>'
        b'<span class="fn-bracket">]</span></span><p>As noted in the errata for RFC 7159, JSON '
        b"permits literal U+2028.</p></aside></aside>"
        b"<aside>Related articles: nothing to see</aside>"
    )
    units = _units(html)
    assert ("text", "[1] As noted in the errata for RFC 7159, JSON permits literal U+2028.") in units
    assert not any("Related articles" in text for _, text in units)


def test_html_chrome_is_dropped_by_class() -> None:
    html = (
        b'<div class="navheader"><table summary="Navigation header"><tr><th colspan="3">Chapter 10. '
        b"Kernel</th></tr><tr><td><a href='p.html'>Prev</a></td><td></td><td><a href='n.html'>Next"
        b"</a></td></tr></table></div>"
        b'<h1>Chapter 10. Kernel</h1><div class="toc"><p><strong>Table of Contents</strong></p>'
        b'<dl class="toc"><dt><a href="#a">10.1. Can I compile a kernel?</a></dt></dl></div>'
        b"<p>Body text.</p>"
        b'<div class="navfooter"><table><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table></div>'
        b'<div class="footer">&copy; Copyright 2001-2023, Python Software Foundation. '
        b"Created using <a href='https://www.sphinx-doc.org/'>Sphinx</a> 7.2.6.</div>"
    )
    assert _units(html) == [("heading", "Chapter 10. Kernel"), ("text", "Body text.")]


def test_html_docbook_admonition_table_is_text() -> None:
    html = (
        b'<p>Before.</p><div class="note"><table border="0" summary="Note"><tr>'
        b'<td rowspan="2"><img alt="[Note]" src="note.png"/></td><th align="left">Note</th></tr>'
        b'<tr><td><p>"/etc/gshadow" is not really used.</p></td></tr></table></div>'
        b"<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    )
    document = parse_bytes(html, kind="html", source_uri="mem://note.html")
    units = [(u.content_kind, u.text) for s in document.sections for u in s.units]
    assert units == [
        ("text", "Before."),
        ("text", 'Note\n"/etc/gshadow" is not really used.'),
        ("table", "a | b\n1 | 2"),
    ]
    assert document.metadata["table_count"] == 1


def test_html_definition_term_and_definition_are_one_unit() -> None:
    html = (
        b"<dl><dt>-h, --help</dt><dd>Show the help message.</dd>"
        b"<dt>json.dump(obj, fp)</dt><dd><p>Serialize obj to fp.</p><pre>json.dump(x, f)</pre></dd>"
        b"<dt>--lonely</dt><dd><pre>code first</pre></dd><dt>dangling</dt></dl>"
    )
    assert _units(html) == [
        ("text", "-h, --help\nShow the help message."),
        ("text", "json.dump(obj, fp)\nSerialize obj to fp."),
        ("code", "json.dump(x, f)"),
        ("text", "--lonely"),
        ("code", "code first"),
        ("text", "dangling"),
    ]


def test_html_menu_bars_are_dropped_by_their_id() -> None:
    """A hand-made site's menu (`<ul id="menu">`: Home, Solutions, About Us, Contact) led the
    first chunk of reportlab's pages: no tag, role or class marks it as chrome; its id does."""
    html = (
        b'<div id="topbar"><ul id="menu"><li><a href="/">Home</a></li><li><a href="/about">About Us</a></li>'
        b'</ul></div><div id="breadcrumb"><a href="/">Home</a> &gt; Docs</div>'
        b'<div id="content"><h1>Canvas</h1><p>The canvas draws pages.</p></div>'
    )
    assert _units(html) == [("heading", "Canvas"), ("text", "The canvas draws pages.")]


SPHINX_API = b"""<html><body><h1>codecs</h1><p>Codec registry.</p>
<dl class="py function"><dt class="sig sig-object py" id="codecs.lookup">
<span class="sig-prename descclassname">codecs.</span><span class="sig-name descname">lookup</span>\
<span class="sig-paren">(</span><em class="sig-param">encoding</em><span class="sig-paren">)</span>\
<a class="headerlink" href="#codecs.lookup">\xc2\xb6</a></dt>
<dd><p>Looks up the codec info.</p><p>Raises a LookupError if the encoding is not found.</p></dd></dl>
<dl class="py class"><dt class="sig sig-object py" id="codecs.Codec"><em class="property">class </em>\
<span class="sig-prename descclassname">codecs.</span><span class="sig-name descname">Codec</span></dt>
<dd><p>The base class.</p>
<dl class="py method"><dt class="sig sig-object py" id="codecs.Codec.encode">
<span class="sig-name descname">encode</span>(<em>input</em>)</dt>
<dd><p>Encodes input.</p></dd></dl>
<p>New in version 3.1: the class.</p></dd></dl>
<p>After the entries.</p>
<dl><dt>glossary term</dt><dd>Its meaning.</dd></dl>
<dl class="py function"><dt class="sig sig-object py" id="codecs.open">codecs.open(filename, mode='r', \
encoding=None, errors='strict', buffering=-1, and, many, more, parameters, than, fit, a, heading, line)</dt>
<dd><p>Opens a file.</p></dd></dl>
</body></html>"""


def test_html_api_signatures_head_their_descriptions() -> None:
    """In Python's docs a function's signature was a term joined to the first paragraph of its
    description, and every later paragraph ("Raises a LookupError ...", "New in version 3.1")
    was labelled with the page alone: about a quarter of the library pages' children began
    mid-entry with no word of what they describe. A signature (Sphinx's ``dt.sig``) is a heading
    one level below the open ones, over its whole description (a method's under its class's),
    and the text after its ``dl`` is the section's again; a glossary term stays a term."""
    document = parse_bytes(SPHINX_API, kind="html", source_uri="mem://codecs.html")
    assert_exact_offsets(document)
    assert_blank_line_layout(document)
    units = [(s.heading_path, u.content_kind, u.text) for s in document.sections for u in s.units]
    lookup = ("codecs", "codecs.lookup(encoding)")
    codec = ("codecs", "class codecs.Codec")
    long = "codecs.open(...)"
    assert units == [
        (("codecs",), "heading", "codecs"),
        (("codecs",), "text", "Codec registry."),
        (lookup, "heading", "codecs.lookup(encoding)"),
        (lookup, "text", "Looks up the codec info."),
        (lookup, "text", "Raises a LookupError if the encoding is not found."),
        (codec, "heading", "class codecs.Codec"),
        (codec, "text", "The base class."),
        ((*codec, "encode(input)"), "heading", "encode(input)"),
        ((*codec, "encode(input)"), "text", "Encodes input."),
        (codec, "text", "New in version 3.1: the class."),
        (("codecs",), "text", "After the entries."),
        (("codecs",), "text", "glossary term\nIts meaning."),
        (("codecs", long), "heading", long),
        (("codecs", long), "text", "Opens a file."),
    ]


FOOTNOTES = b"""<html><body><h1>Chapter 3</h1>
<h2>3.7. /etc</h2><p>Host files.<a href="#ftn.n1" class="footnote" name="n1"><sup>[1]</sup></a></p>
<h2>3.8. /home</h2><p>User homes.</p>
<ul><li>one <a class="footnote-reference brackets" href="#sph">2</a></li></ul>
<h2>3.18. /tmp</h2><h3>Rationale</h3><p>Temporary files.</p>
<div class="footnotes"><div id="ftn.n1" class="footnote"><p><a href="#n1">[1] </a>About /etc.</p></div>
<aside class="footnote brackets" id="sph" role="note">[2] About homes.</aside>
<div id="ftn.n3" class="footnote"><p>[3] Never pointed at.</p></div></div>
<p>After the notes.</p>
</body></html>"""


def test_html_footnotes_carry_the_label_of_the_text_that_points_at_them() -> None:
    """DocBook and Sphinx put a chapter's footnotes at its end, where they took the last
    section's label: fhs-3.0's note on the root account read "/tmp : Temporary files >
    Rationale" (13 of its children). A footnote is labelled with the heading path of the first
    text linking to it (a paragraph, a list item, loose text); one nothing points at keeps the
    place it sits in, and the text after the notes is the section's again."""
    document = parse_bytes(FOOTNOTES, kind="html", source_uri="mem://fhs.html")
    assert_exact_offsets(document)
    labels = {u.text: s.heading_path for s in document.sections for u in s.units}
    assert labels["[1] About /etc."] == ("Chapter 3", "3.7. /etc")
    assert labels["[2] About homes."] == ("Chapter 3", "3.8. /home")
    assert labels["[3] Never pointed at."] == ("Chapter 3", "3.18. /tmp", "Rationale")
    assert labels["After the notes."] == ("Chapter 3", "3.18. /tmp", "Rationale")
