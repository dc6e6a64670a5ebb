"""The scan reads a file only when its stat says it may have changed, and never misses a change.

A stat is trusted when it matches the one recorded at the last hash (size, mtime, ctime, inode)
and the file had settled before that hash began; anything else is hashed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ingest_assets.engine import IngestEngine
from ingest_assets.engine import scan as engine_module
from ingest_assets.store import IngestStore


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the scan reads, in order."""
    read: list[Path] = []
    real = engine_module._hash_file

    def counting(path: Path) -> str:
        read.append(path)
        return real(path)

    monkeypatch.setattr(engine_module, "_hash_file", counting)
    return read


def _inbox(tmp_path: Path, count: int = 3) -> Path:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for i in range(count):
        (inbox / f"note-{i}.md").write_text(f"# Note {i}\n\nSome text about pears, number {i}.\n")
    return inbox


@pytest.fixture(autouse=True)
def margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A settling margin of 20 ms for every file system (FAT-like stamps get 3 s otherwise), so
    the tests do not depend on the stamps' resolution."""
    monkeypatch.setattr(engine_module, "SETTLED_NS", 20_000_000)
    monkeypatch.setattr(engine_module, "SETTLED_COARSE_NS", 20_000_000)


def _settle() -> None:
    time.sleep(3 * engine_module.SETTLED_NS / 1e9)


def _engine(tmp_path: Path, inbox: Path) -> IngestEngine:
    return IngestEngine(IngestStore(tmp_path / "s.duckdb"), inbox, [])


def _updated(tmp_path: Path) -> list[tuple[str, object]]:
    return IngestStore(tmp_path / "s.duckdb").query("SELECT uri, updated_at FROM sources ORDER BY uri")


def test_settled_unchanged_files_are_not_read_again(tmp_path: Path, hashes: list[Path]) -> None:
    inbox = _inbox(tmp_path)
    _settle()
    engine = _engine(tmp_path, inbox)
    assert engine.scan().total.new == 3 and len(hashes) == 3
    before = _updated(tmp_path)
    hashes.clear()
    again = engine.scan().total
    assert again.unchanged == 3 and hashes == []
    assert _updated(tmp_path) == before
    assert engine.pending().documents and hashes == []  # never parsed yet: parse work only


def test_same_size_edit_with_mtime_put_back_is_found(tmp_path: Path, hashes: list[Path]) -> None:
    inbox = _inbox(tmp_path)
    _settle()
    engine = _engine(tmp_path, inbox)
    engine.scan()
    target = inbox / "note-1.md"
    stat = target.stat()
    text = target.read_text()
    target.write_text(text.replace("pears", "plums"))  # same length
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as rsync -t or tar would
    assert target.stat().st_size == stat.st_size and target.stat().st_mtime_ns == stat.st_mtime_ns
    hashes.clear()
    stats = engine.scan().total
    assert stats.changed == 1 and stats.unchanged == 2 and hashes == [target]


def test_a_file_hashed_as_it_changed_is_read_every_time(
    tmp_path: Path, hashes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A margin of an hour: the file's last change is always "within" it, however slow the
    # machine is between the write and the hash.
    monkeypatch.setattr(engine_module, "SETTLED_NS", 3600 * 10**9)
    monkeypatch.setattr(engine_module, "SETTLED_COARSE_NS", 3600 * 10**9)
    inbox = _inbox(tmp_path, count=1)
    target = inbox / "note-0.md"
    engine = _engine(tmp_path, inbox)
    engine.scan()  # within the settling margin of the write: the stat proves nothing yet
    before = _updated(tmp_path)
    for _ in range(2):
        hashes.clear()
        assert engine.scan().total.unchanged == 1 and hashes == [target]
    assert _updated(tmp_path) == before  # re-reading it writes nothing


def test_touched_file_is_hashed_and_nothing_is_written(tmp_path: Path, hashes: list[Path]) -> None:
    inbox = _inbox(tmp_path)
    _settle()
    engine = _engine(tmp_path, inbox)
    engine.scan()
    before = _updated(tmp_path)
    target = inbox / "note-2.md"
    os.utime(target)  # new mtime and ctime, same bytes
    hashes.clear()
    assert engine.scan().total.unchanged == 3 and hashes == [target]
    assert _updated(tmp_path) == before
