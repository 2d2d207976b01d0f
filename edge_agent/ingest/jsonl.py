"""Reading JSON Lines files record by record: each bad line is a reject, never a crash."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class SourceError(Exception):
    """The whole source could not be read (missing, not a file, not text)."""


def explain(err: ValidationError) -> str:
    """A one-line reason from a pydantic error: the first problem, with its field."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as err:
        raise SourceError(f"{path}: no such file") from err
    except IsADirectoryError as err:
        raise SourceError(f"{path}: is a folder, not a file") from err
    except UnicodeDecodeError as err:
        raise SourceError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from err
    except OSError as err:
        raise SourceError(f"{path}: cannot read: {err.strerror or err}") from err


def records(path: Path, model: type[M], rejects: list[str]) -> Iterator[tuple[int, M]]:
    """(line number, validated record) for each good line; appends "file:line: why" for bad ones."""
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            rejects.append(f"{path}:{number}: not valid JSON ({err.msg} at column {err.colno})")
            continue
        if not isinstance(data, dict):
            rejects.append(f"{path}:{number}: expected a JSON object, got {type(data).__name__}")
            continue
        try:
            yield number, model.model_validate(data)
        except ValidationError as err:
            rejects.append(f"{path}:{number}: {explain(err)}")


def count_records(path: Path) -> int:
    """Non-blank lines, for the progress total."""
    return sum(1 for line in read_lines(path) if line.strip())
