"""Writing a format's records: JSONL, one object a line, the same rows giving the same bytes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# json.dumps(r, ensure_ascii=False), its encoder made once (dumps makes one per call given an option)
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Keys in the order given, text as it is (no \\u escapes), "\\n" line ends."""
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(_ENCODE(r) + "\n")
