"""Decoding source bytes to text: BOMs, UTF-8, then detection for legacy encodings.

Detection uses chardet 7 (a measured choice: it reads every sample of the labelled set in
``tests/parsers/encoding_samples.py``, charset-normalizer and cchardet do not; figures in
docs/parsers.md), never a blind fallback to Latin-1, so a binary file with a text extension fails
instead of becoming mojibake. Where chardet names another code page for short cp1252 text whose
bytes 0x80-0x9f are all quotes, apostrophes and dashes in place (``“It’s fine,”`` read as Mac
Central European: ``ďItís fine,Ē``), the text is read as cp1252.
"""

from __future__ import annotations

import codecs
import re
from typing import NamedTuple

import chardet

from chunking.errors import ParseError

__all__ = ["Decoded", "decode", "decode_text", "normalize_newlines"]

# Longest BOM first: the UTF-32 LE BOM starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# C0 controls other than tab, newline, vertical tab, form feed and carriage return, plus DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_SNIFF = 64 * 1024
# Codecs whose text holds NUL bytes: the only answers accepted for bytes with NULs and no BOM.
_WIDE = ("utf-16", "utf-32")


class Decoded(NamedTuple):
    """Decoded text, the Python codec name that decoded it and how sure the choice is (0..1)."""

    text: str
    encoding: str
    confidence: float


def _binary(source: str, why: str) -> ParseError:
    return ParseError(
        source,
        f"not a text file ({why})",
        "convert the file to UTF-8 text or to a supported format (Markdown, HTML, CSV, chat JSON, PDF), "
        "or move it out of the inbox",
    )


def decode_text(data: bytes, source: str) -> tuple[str, str]:
    """Decode ``data`` to text and name the encoding used (see :func:`decode`).

    Returns:
        ``(text, encoding)`` where ``encoding`` is a Python codec name such as ``utf-8``.
    """
    decoded = decode(data, source)
    return decoded.text, decoded.encoding


def decode(data: bytes, source: str) -> Decoded:
    """Decode ``data`` to text, naming the encoding and the confidence of the choice.

    Order: a byte-order mark (UTF-8, UTF-16, UTF-32) wins; otherwise strict UTF-8; otherwise
    chardet's answer (bytes with NULs are accepted only as UTF-16/32 without a BOM). A BOM or
    valid UTF-8 has confidence 1.0; a detected encoding has chardet's confidence. An
    undecodable file and text full of control characters are treated as binary.

    Args:
        data: The raw bytes of the source.
        source: The source URI, for error messages.

    Raises:
        ParseError: The bytes are empty, binary or in no encoding that can be detected.
    """
    if not data:
        raise ParseError(source, "the file is empty", "check the file was written completely")
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return _checked(data.decode(name), name, 1.0, source)
            except UnicodeDecodeError as exc:
                raise _binary(source, f"it starts with a {name} byte-order mark but {exc.reason}") from exc
    has_nul = b"\x00" in data[:_SNIFF]
    if not has_nul:
        try:
            return _checked(data.decode("utf-8"), "utf-8", 1.0, source)
        except UnicodeDecodeError:
            pass
    guess = chardet.detect(data)
    if guess["encoding"] is not None and _cp1252_typography(data, guess["encoding"]):
        # Short English text with curly quotes: chardet can name a Mac or EBCDIC code page
        # ("ďItís fine,Ē"), where the bytes are cp1252's quotes, apostrophes and dashes.
        guess = {"encoding": "cp1252", "confidence": _TYPOGRAPHY_CONFIDENCE}
    if guess["encoding"] is None:
        raise _binary(source, "no text encoding decodes it")
    try:
        name = codecs.lookup(guess["encoding"]).name
    except LookupError as exc:
        raise _binary(source, f"detected as {guess['encoding']}, which Python cannot decode") from exc
    if has_nul and not name.startswith(_WIDE):
        raise _binary(source, "it contains NUL bytes and no UTF-16 byte-order mark")
    try:
        text = data.decode(name)
    except UnicodeDecodeError as exc:
        raise _binary(source, f"detected as {name} but it does not decode") from exc
    return _checked(text, name, round(float(guess["confidence"] or 0.0), 4), source)


# cp1252's typographic bytes where they stand in text: a quote or apostrophe (0x91-0x94) next to
# a letter, a dash (0x96, 0x97) between spaces or digits, an ellipsis (0x85) or euro sign (0x80).
_TYPOGRAPHIC = re.compile(
    rb"(?<=[A-Za-z])[\x91\x92](?=[A-Za-z])"  # it's, rock'n'roll
    rb"|(?:^|(?<=[\s(\[>\"']))[\x91\x93](?=[A-Za-z0-9])"  # opening quotes
    rb"|(?<=[A-Za-z0-9.,!?;:])[\x92\x94](?=[\s.,!?;:)\]<\"']|$)"  # closing quotes
    rb"|(?<=[\s0-9])[\x96\x97](?=[\s0-9])"  # dashes
    rb"|(?<=[A-Za-z.!?])\x85|(?<=[0-9\s])\x80|\x80(?=[0-9\s])"
)
_C1 = re.compile(rb"[\x80-\x9f]")
# Three bytes over 0x7f in a row: words of another script (Cyrillic, CJK), not Latin-1 letters.
_HIGH_RUN = re.compile(rb"[\x80-\xff]{3}")
_WESTERN = frozenset({"cp1252", "latin_1", "iso8859-15"})
_TYPOGRAPHY_CONFIDENCE = 0.9


def _cp1252_typography(data: bytes, detected: str) -> bool:
    """True when ``data`` is cp1252 text that chardet named otherwise: its bytes 0x80-0x9f are
    (nine in ten) cp1252 quotes, apostrophes, dashes, ellipses or euro signs in place, and no
    run of high bytes says another script."""
    try:
        if codecs.lookup(detected).name in _WESTERN:
            return False
        data.decode("cp1252")
    except (LookupError, UnicodeDecodeError):
        return False
    c1 = len(_C1.findall(data))
    if not c1 or _HIGH_RUN.search(data):
        return False
    return len(_TYPOGRAPHIC.findall(data)) * 10 >= c1 * 9


def _checked(text: str, name: str, confidence: float, source: str) -> Decoded:
    # A decoded file that is mostly control characters was binary that happened to decode.
    sample = text[:_SNIFF]
    if sample and len(_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise _binary(source, f"it decodes as {name} but is full of control characters")
    return Decoded(text, name, confidence)


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR turned into LF (offsets then point into the result)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
