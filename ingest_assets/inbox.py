"""The one walk of the inbox folder, shared by the scan step and the sensors (no Dagster here).

Only regular, non-hidden files inside the inbox are sources. ``os.walk`` does not descend into
linked folders; a linked file would resolve to its target (possibly outside the inbox, or a
second name of an inbox file) and a FIFO would block a read, so links and special files are
skipped and counted, using ``lstat`` (which does not follow links and, of a regular file, is
its stat). Names that are not valid UTF-8 are skipped too (the store holds names as text), and
so is a folder that cannot be listed. A file that vanishes during the walk is skipped; nothing
here raises for one entry.
"""

from __future__ import annotations

import os
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

__all__ = ["GONE", "InboxFile", "InboxWalk", "file_name", "require_inbox", "walk_inbox"]

# Why an entry that vanished while the inbox was read is skipped.
GONE = "gone while the inbox was read"


def file_name(uri: str) -> str:
    """The file name of a ``file://`` source URI (the URI itself when it has none)."""
    return PurePosixPath(unquote(urlparse(uri).path)).name or uri


@dataclass(frozen=True)
class InboxFile:
    """A source file found by the walk, with its ``lstat``."""

    path: Path
    stat: os.stat_result

    @property
    def uri(self) -> str:
        """The file's ``file://`` URI: the source URI a document id derives from."""
        return self.path.as_uri()


@dataclass(frozen=True)
class InboxWalk:
    """What one walk found: source files sorted by path, and the entries it skipped (each
    path with why, for people to read), sorted by path."""

    files: tuple[InboxFile, ...]
    skipped_paths: tuple[tuple[Path, str], ...] = ()

    @property
    def skipped(self) -> int:
        """How many entries the walk skipped."""
        return len(self.skipped_paths)


def require_inbox(inbox: str | Path) -> Path:
    """``inbox`` as a path, checked to be a folder (a command checks it before it creates a
    store or launches a run).

    Raises:
        FileNotFoundError: ``inbox`` is not a folder; the message says how to set it.
    """
    path = Path(inbox)
    if not path.is_dir():
        raise FileNotFoundError(f"inbox {path} is not a folder; pass --inbox or set INGEST_INBOX")
    return path


def walk_inbox(inbox: str | Path) -> InboxWalk:
    """Walk ``inbox`` (resolved) for source files, never through a link.

    Raises:
        FileNotFoundError: ``inbox`` is not a folder; the message says how to set it.
    """
    root_path = require_inbox(inbox)
    found: list[InboxFile] = []
    skipped: list[tuple[Path, str]] = []

    def unlisted(error: OSError) -> None:
        skipped.append((Path(error.filename), "a folder that cannot be listed (check its permissions)"))

    for root, dirs, files in os.walk(root_path.resolve(), onerror=unlisted, followlinks=False):
        links = [d for d in dirs if not d.startswith(".") and os.path.islink(os.path.join(root, d))]
        skipped += [(Path(root, d), "a link to a folder (links are never followed)") for d in links]
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in links]
        for name in files:
            if name.startswith("."):
                continue
            path = Path(root, name)
            try:
                stat = path.lstat()
                str(path).encode("utf-8")  # a name the store cannot hold as text
            except OSError:
                skipped.append((path, GONE))
                continue
            except UnicodeEncodeError:
                skipped.append((path, "a name that is not UTF-8 (rename the file)"))
                continue
            # Inside the inbox by construction: ``root`` comes from walking the resolved inbox
            # without entering linked folders, and the file itself is no link.
            if stat_module.S_ISLNK(stat.st_mode):
                skipped.append((path, "a link (links are never followed: copy the file into the inbox)"))
                continue
            if not stat_module.S_ISREG(stat.st_mode):
                skipped.append((path, "not a regular file (a pipe, socket or device)"))
                continue
            found.append(InboxFile(path, stat))
    found.sort(key=lambda f: f.path)
    return InboxWalk(tuple(found), tuple(sorted(skipped)))
