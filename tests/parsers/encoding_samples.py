"""A labelled set of legacy-encoded texts, made in code by encoding known strings.

Each sample is ``(label, encoding, text)``; its bytes are ``text.encode(encoding)`` (UTF-16
samples without a BOM use the ``-le``/``-be`` codecs). A detector reads a sample right when the
bytes decode, in the encoding it names, to ``text`` itself: Latin-1 read as cp1252 (its superset)
is right, cp1250 is not. ``python -m tests.parsers.encoding_samples`` prints each detector's
accuracy, the figures in docs/parsers.md.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable

__all__ = ["SAMPLES", "accuracy", "sample_bytes"]

_FRENCH = (
    "Café crème brûlée. Le garçon a commandé un café au lait et une crème brûlée ; "
    "à côté, sa cousine lisait « Les Misérables » près de la fenêtre où l'été dorait déjà les "
    "façades. Où est passé le hérisson ? Il s'est caché sous le vieux chêne, dit-elle."
)
_FRENCH_SHORT = "Café crème brûlée"
_GERMAN = (
    "Größere Übungen für Anfänger: Der Bäcker öffnet früh, die Straße ist noch nass, und "
    "Jürgen trägt die schweren Körbe über den Marktplatz. Süße Brötchen, weiße Äpfel, "
    "grüne Gemüse, alles müßte um acht Uhr fertig sein."
)
# cp1252's own characters (0x80-0x9f): the euro sign, curly quotes, dashes, œ.
_FRENCH_CP1252 = _FRENCH + " « Un cœur à 3 € ? » demanda-t-il – sans réponse…"
_GERMAN_CP1252 = _GERMAN + " „Wie viel kostet das?“ – „Nur 2 €.“"
_SPANISH = (
    "¿Qué haría el niño sin su piñata? ¡Sí, señor! La canción del año pasó por la radio "
    "mientras la señora Núñez cocinaba jamón con azúcar moreno. El pingüino de cartón "
    "seguía en el balcón, junto a la guitarra de Íñigo."
)
_ENGLISH_QUOTES = (
    "“It’s only €5,” she said — “and that’s the last one.” He didn’t answer; the price "
    "tag read €4.99… The shop’s ‘summer sale’ had ended on Monday, and the owner’s dog "
    "was asleep by the door. “Fine,” he sighed, “I’ll take it.”"
)
_POLISH = (
    "Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig. Wczoraj wieczorem "
    "Łukasz pojechał do Gdańska, żeby spotkać się z przyjaciółmi; było zimno, więc "
    "kupił gorącą herbatę i ciepłe rękawiczki."
)
_CZECH = (
    "Příliš žluťoučký kůň úpěl ďábelské ódy. V pátek ráno jsme šli přes most do "
    "města, kde se prodávaly čerstvé rohlíky a horký čaj. Děti běhaly po náměstí a "
    "babička vyprávěla o dávných časech."
)
_RUSSIAN = (
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Вчера вечером мы гуляли "
    "по набережной, смотрели на реку и разговаривали о книгах. Погода была тёплая, и "
    "никто не хотел уходить домой."
)
_JAPANESE = (
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗い"
    "じめじめした所でニャーニャー泣いていた事だけは記憶している。東京の夏はとても暑い。"
)
_CHINESE_SIMPLIFIED = (
    "今天天气很好，我们一起去公园散步。公园里有很多人，有的在跑步，有的在打太极拳。"
    "孩子们在草地上玩耍，老人们坐在长椅上聊天。这是一个美丽的城市。"
)
_CHINESE_TRADITIONAL = (
    "今天天氣很好，我們一起去公園散步。公園裡有很多人，有的在跑步，有的在打太極拳。"
    "孩子們在草地上玩耍，老人們坐在長椅上聊天。這是一個美麗的城市。"
)
_ENGLISH_PLAIN = (
    "The quick brown fox jumps over the lazy dog. This file was saved by an old editor "
    "that writes two bytes for every character, and nothing marks which byte comes first."
)

SAMPLES: tuple[tuple[str, str, str], ...] = (
    ("french-latin1", "latin-1", _FRENCH),
    ("french-latin1-short", "latin-1", _FRENCH_SHORT),
    ("german-latin1", "latin-1", _GERMAN),
    ("spanish-latin1", "latin-1", _SPANISH),
    ("french-cp1252", "cp1252", _FRENCH_CP1252),
    ("german-cp1252", "cp1252", _GERMAN_CP1252),
    ("spanish-cp1252", "cp1252", _SPANISH),
    ("english-quotes-euro-cp1252", "cp1252", _ENGLISH_QUOTES),
    ("polish-cp1250", "cp1250", _POLISH),
    ("czech-cp1250", "cp1250", _CZECH),
    ("russian-cp1251", "cp1251", _RUSSIAN),
    ("russian-koi8r", "koi8-r", _RUSSIAN),
    ("japanese-shift-jis", "shift_jis", _JAPANESE),
    ("japanese-euc-jp", "euc-jp", _JAPANESE),
    ("chinese-gbk", "gbk", _CHINESE_SIMPLIFIED),
    ("chinese-big5", "big5", _CHINESE_TRADITIONAL),
    ("english-utf16-bom", "utf-16", _ENGLISH_PLAIN),
    ("french-utf16-bom", "utf-16", _FRENCH),
    ("english-utf16le", "utf-16-le", _ENGLISH_PLAIN),
    ("french-utf16be", "utf-16-be", _FRENCH),
    ("russian-utf16le", "utf-16-le", _RUSSIAN),
)


def sample_bytes(encoding: str, text: str) -> bytes:
    """The sample's bytes: ``text`` in ``encoding`` (``utf-16`` writes a BOM, ``-le``/``-be`` none)."""
    return text.encode(encoding)


def _reads_right(data: bytes, name: str | None, text: str) -> bool:
    if not name:
        return False
    try:
        return data.decode(codecs.lookup(name).name) == text
    except (LookupError, UnicodeDecodeError):
        return False


def accuracy(detect: Callable[[bytes], str | None]) -> tuple[int, list[str]]:
    """Return how many samples ``detect`` reads right and the labels of those it gets wrong."""
    wrong = []
    for label, encoding, text in SAMPLES:
        data = sample_bytes(encoding, text)
        try:
            name = detect(data)
        except Exception:  # a detector that raises reads the sample wrong
            name = None
        if not _reads_right(data, name, text):
            wrong.append(f"{label}->{name}")
    return len(SAMPLES) - len(wrong), wrong


def _detectors() -> dict[str, Callable[[bytes], str | None]]:  # pragma: no cover - measuring by hand
    from chunking.parsers.encoding import decode_text

    found: dict[str, Callable[[bytes], str | None]] = {
        "chunking.decode_text": lambda b: decode_text(b, "m")[1]
    }
    try:
        from charset_normalizer import from_bytes

        found["charset-normalizer"] = lambda b: getattr(from_bytes(b).best(), "encoding", None)
    except ImportError:
        pass
    try:
        import chardet

        found[f"chardet {chardet.__version__}"] = lambda b: chardet.detect(b)["encoding"]
    except ImportError:
        pass
    try:
        import cchardet

        found["cchardet"] = lambda b: cchardet.detect(b)["encoding"]
    except ImportError:
        pass
    return found


if __name__ == "__main__":  # pragma: no cover
    for name, detect in _detectors().items():
        right, wrong = accuracy(detect)
        print(f"{name}: {right}/{len(SAMPLES)} wrong: {', '.join(wrong) or '-'}", file=sys.stdout)
