"""What the file index knows about one file: its kind, searchable metadata words and its text."""
from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAX_TEXT_BYTES = 1_000_000  # read at most this much of a text file (bytes)
MAX_TEXT_CHARS = 200_000  # keep at most this much extracted text a file (characters)

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".csv", ".json", ".ics", ".vcf", ".srt", ".vtt", ".log"})
KIND_BY_SUFFIX: dict[str, str] = {
    **{s: "document" for s in (".pdf", ".txt", ".md", ".markdown", ".doc", ".docx", ".odt", ".rtf", ".srt", ".vtt")},
    **{s: "spreadsheet" for s in (".csv", ".xls", ".xlsx", ".ods")},
    **{s: "image" for s in (".jpg", ".jpeg", ".png", ".heic", ".gif", ".webp", ".tif", ".tiff", ".bmp")},
    **{s: "audio" for s in (".mp3", ".m4a", ".wav", ".ogg", ".flac", ".aac", ".opus")},
    **{s: "video" for s in (".mp4", ".mov", ".mkv", ".avi", ".webm")},
}
KIND_WORDS: dict[str, str] = {
    "document": "document",
    "spreadsheet": "spreadsheet table",
    "image": "image photo picture",
    "audio": "audio recording voice memo",
    "video": "video recording clip",
    "other": "file",
}
"""Words a description of the file might use for its kind ("the photo of ...")."""


class ExtractionError(Exception):
    """The file's text could not be read (it is still indexed by name and metadata)."""


@dataclass(frozen=True)
class Extracted:
    """The searchable facts of one file."""

    kind: str
    """document | spreadsheet | image | audio | video | other."""
    meta: str
    """Words for the kind and format ("pdf document")."""
    text: str
    """Extracted text ("" for binary files)."""


def kind_of(path: Path) -> str:
    return KIND_BY_SUFFIX.get(path.suffix.lower(), "other")


def _read_text(path: Path) -> str:
    # Opened without blocking and checked on the open descriptor: a named pipe called pipe.txt
    # would otherwise wait for a writer forever (and a swap after the walk's check is caught too).
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ExtractionError("not a regular file")
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(MAX_TEXT_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _read_pdf(path: Path) -> str:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its per-object warnings are not ours to show
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("the PDF is encrypted")
        parts = []
        for page in reader.pages:
            parts.append(page.extract_text() or "")
            if sum(len(p) for p in parts) > MAX_TEXT_CHARS:
                break
        return "\n".join(parts)
    except ExtractionError:
        raise
    except Exception as err:  # pypdf raises many types on malformed input; any of them means "unreadable"
        raise ExtractionError(f"unreadable PDF: {type(err).__name__}: {err}") from err


def describe(path: Path) -> Extracted:
    """Kind and metadata words of `path`, without its text."""
    kind = kind_of(path)
    meta = " ".join(filter(None, [path.suffix.lower().lstrip("."), KIND_WORDS[kind]]))
    return Extracted(kind=kind, meta=meta, text="")


def extract(path: Path) -> Extracted:
    """Kind, metadata words and text of `path`; raises ExtractionError when its text is unreadable."""
    suffix = path.suffix.lower()
    facts = describe(path)
    if suffix == ".pdf":
        text = _read_pdf(path)
    elif suffix in TEXT_SUFFIXES:
        try:
            text = _read_text(path)
        except OSError as err:
            raise ExtractionError(f"cannot read: {err.strerror or err}") from err
    else:
        return facts
    return Extracted(kind=facts.kind, meta=facts.meta, text=text[:MAX_TEXT_CHARS])
