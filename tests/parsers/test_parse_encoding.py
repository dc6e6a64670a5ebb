"""Decoding: BOMs, UTF-8, UTF-16, legacy single-byte detection, binary refusal."""

from __future__ import annotations

import codecs

import pytest

from chunking.errors import ParseError
from chunking.parsers import parse_bytes
from chunking.parsers.encoding import decode, decode_text
from tests.parsers.encoding_samples import SAMPLES, accuracy, sample_bytes

TEXT = "Déjà vu à Paris.\n\nÇa commence à l'aube, près du fleuve; les élèves étaient là.\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8-sig"),
        (TEXT.encode("utf-16"), "utf-16"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16"),
    ],
)
def test_decode_text_reads_unicode_encodings(data: bytes, encoding: str) -> None:
    assert decode_text(data, "mem://x") == (TEXT, encoding)


FRENCH = (
    "Le matin, la brume recouvrait encore la vallée quand les pêcheurs sont partis. "
    "À midi, le vent s'est levé et la mer est devenue grise; personne n'a voulu rentrer avant "
    "d'avoir rempli les caisses. Le soir, au café près du port, on a parlé de la saison, des prix "
    "trop bas et de l'été qui n'arrivait pas. Les enfants jouaient sur la jetée, les mouettes "
    "criaient au-dessus des bateaux, et la vieille horloge de l'église a sonné neuf heures. "
    "Élodie a raconté qu'elle avait vu un phoque derrière le phare; son frère ne l'a pas crue.\n\n"
    "Le lendemain, tout était calme. On a réparé les filets, repeint la coque et rangé le matériel.\n"
)


def test_decode_text_detects_legacy_single_byte() -> None:
    text = FRENCH
    decoded, encoding = decode_text(text.encode("iso-8859-1"), "mem://latin1")
    assert decoded == text
    assert codecs.lookup(encoding).name in {"iso8859-1", "cp1252", "iso8859-15", "latin-1"}


def test_text_document_records_detected_encoding() -> None:
    document = parse_bytes(FRENCH.encode("cp1252"), kind="text", source_uri="mem://l.txt")
    assert document.text == FRENCH
    assert document.metadata["encoding"] != "utf-8"


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        b"\x7fELF\x02\x01\x01" + b"\x00" * 64,
        bytes(range(1, 32)) * 64,
    ],
    ids=["png", "elf", "controls"],
)
def test_decode_text_refuses_binary(data: bytes) -> None:
    with pytest.raises(ParseError, match="not a text file"):
        decode_text(data, "mem://bin.txt")


@pytest.mark.parametrize(("label", "encoding", "text"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_decode_reads_labelled_legacy_samples(label: str, encoding: str, text: str) -> None:
    decoded = decode(sample_bytes(encoding, text), f"mem://{label}")
    assert decoded.text == text
    assert 0.0 < decoded.confidence <= 1.0


def test_decode_reads_the_whole_labelled_set() -> None:
    right, wrong = accuracy(lambda data: decode(data, "mem://sample").encoding)
    assert wrong == [] and right == len(SAMPLES)


@pytest.mark.parametrize(
    ("kind", "encoding", "text"),
    [
        ("text", "latin-1", "Café crème brûlée, à côté du marché où l'été dure.\n"),
        ("markdown", "cp1252", "# Prix\n\n“Un café coûte 2 €,” dit-il — c’est tout.\n"),
        ("html", "cp1251", "<p>Съешь же ещё этих мягких французских булок, да выпей чаю.</p>"),
        ("csv", "cp1250", "miasto,opis\nGdańsk,Zażółć gęślą jaźń\nŁódź,Pchnąć w tę łódź jeża\n"),
    ],
)
def test_documents_record_encoding_and_confidence(kind: str, encoding: str, text: str) -> None:
    document = parse_bytes(text.encode(encoding), kind=kind, source_uri=f"mem://sample.{kind}")
    assert text.encode(encoding).decode(document.metadata["encoding"]) == text
    assert 0.0 < document.metadata["encoding_confidence"] <= 1.0


def test_utf8_and_bom_are_certain() -> None:
    assert decode(TEXT.encode("utf-8"), "mem://u").confidence == 1.0
    assert decode(TEXT.encode("utf-16"), "mem://b").confidence == 1.0


CURLY = [
    "“It’s fine,” she said.",
    "“It’s fine.”",
    "Don’t worry – it’s “fine”.",
    "He said “yes”.",
    "It’s",
    "Price: 5 € – cheap…",
]


@pytest.mark.parametrize("kind", ["text", "markdown", "html", "csv", "chat"])
@pytest.mark.parametrize("sentence", CURLY)
def test_short_cp1252_text_with_curly_quotes_is_read_as_cp1252(kind: str, sentence: str) -> None:
    """chardet names a Mac or EBCDIC code page for these ('ďItís fine,Ē'); their bytes are
    cp1252's quotes, apostrophes, dashes (issue 30)."""
    if kind == "chat":
        data = ('{"turns": [{"speaker": "a", "text": "' + sentence + '"}]}').encode("cp1252")
    elif kind == "html":
        data = f"<html><body><p>{sentence}</p></body></html>".encode("cp1252")
    else:
        data = sentence.encode("cp1252")
    document = parse_bytes(data, kind=kind, source_uri=f"mem://curly.{kind}")
    assert sentence in document.text


def test_cyrillic_with_curly_quotes_is_not_taken_for_cp1252() -> None:
    text = "Он сказал: “Всё хорошо”. Мы пошли домой – было поздно. " * 4
    document = parse_bytes(text.encode("cp1251"), kind="text", source_uri="mem://ru.txt")
    assert document.text == text.strip() or "Всё хорошо" in document.text
