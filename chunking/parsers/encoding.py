"""Decoding source bytes to text: BOMs, UTF-8, then detection for legacy encodings.

Detection uses charset-normalizer (a measured guess over the bytes), never a blind fallback to
Latin-1, so a binary file with a text extension fails instead of becoming mojibake.
"""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

from chunking.errors import ParseError

__all__ = ["decode_text", "normalize_newlines"]

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


def _binary(source: str, why: str) -> ParseError:
    return ParseError(
        source,
        f"not a text file ({why})",
        "pass the right kind= if this is a PDF, or convert the file to UTF-8 text",
    )


def decode_text(data: bytes, source: str) -> tuple[str, str]:
    """Decode ``data`` to text and name the encoding used.

    Order: a byte-order mark (UTF-8, UTF-16, UTF-32) wins; otherwise strict UTF-8; otherwise
    charset-normalizer's best match. NUL bytes outside a UTF-16/32 file, an undecodable file and
    text full of control characters are treated as binary.

    Args:
        data: The raw bytes of the source.
        source: The source URI, for error messages.

    Returns:
        ``(text, encoding)`` where ``encoding`` is a Python codec name such as ``utf-8``.

    Raises:
        ParseError: The bytes are empty, binary or in no encoding that can be detected.
    """
    if not data:
        raise ParseError(source, "the file is empty", "check the file was written completely")
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return _checked(data.decode(name), name, source)
            except UnicodeDecodeError as exc:
                raise _binary(source, f"it starts with a {name} byte-order mark but {exc.reason}") from exc
    if b"\x00" in data[:_SNIFF]:
        raise _binary(source, "it contains NUL bytes and no UTF-16 byte-order mark")
    try:
        return _checked(data.decode("utf-8"), "utf-8", source)
    except UnicodeDecodeError:
        pass
    best = from_bytes(data).best()
    if best is None or best.encoding is None:
        raise _binary(source, "no text encoding decodes it")
    name = codecs.lookup(best.encoding).name
    try:
        text = data.decode(name)
    except (UnicodeDecodeError, LookupError) as exc:
        raise _binary(source, f"detected as {name} but it does not decode") from exc
    return _checked(text, name, source)


def _checked(text: str, name: str, source: str) -> tuple[str, str]:
    # A decoded file that is mostly control characters was binary that happened to decode.
    sample = text[:_SNIFF]
    if sample and len(_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise _binary(source, f"it decodes as {name} but is full of control characters")
    return text, name


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR turned into LF (offsets then point into the result)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
