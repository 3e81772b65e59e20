"""The project's own configuration files (models, judges, templates, build rules): TOML, or
YAML where a command takes it, read into a table. Every way such a file can be unreadable
(gone, not UTF-8, not TOML or YAML, nested past what the parser can hold) is an InputError
naming the file and, where the parser says, the line: never a traceback."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, InputProblem

YAML_SUFFIXES = (".yaml", ".yml")


def read_table(path: str | Path, *, yaml_ok: bool = False, what: str = "file") -> dict[str, Any]:
    """The top-level table of a TOML file (or a YAML one when ``yaml_ok`` and it is named so)."""
    p = Path(path)

    def bad(message: str, line: int | None = None) -> InputError:
        return InputError([InputProblem(str(p), line, None, message)])

    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise bad(f"{what} not found") from None
    except IsADirectoryError:
        raise bad(f"{what} is a folder") from None
    except UnicodeDecodeError as e:
        raise bad(f"not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None
    except OSError as e:
        raise bad(f"cannot read the {what}: {e.strerror}") from None
    try:
        data = _yaml(text) if yaml_ok and p.suffix.lower() in YAML_SUFFIXES else _toml(text)
    except RecursionError:
        raise bad("nested too deeply") from None
    except _Unparsed as e:
        raise bad(e.message, e.line) from None
    if not isinstance(data, dict):
        raise bad(f"expected a table at the top of the {what}")
    return data


class _Unparsed(Exception):
    def __init__(self, message: str, line: int | None):
        self.message, self.line = message, line


def _toml(text: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+)", str(e))
        raise _Unparsed(f"not valid TOML: {e}", int(m.group(1)) if m else None) from None


def _yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text) or {}  # an empty file: an empty table, as in TOML
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise _Unparsed(f"not valid YAML: {getattr(e, 'problem', e)}", mark.line + 1 if mark else None) from None
