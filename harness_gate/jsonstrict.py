"""Strict JSON: duplicate keys, NaN/Infinity and non-object roots are errors.

Python's json module silently keeps the last duplicate key and accepts NaN;
both would let two readers see different objects in the same bytes.
"""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    def __init__(self, message: str, *, duplicate: bool = False) -> None:
        super().__init__(message)
        self.duplicate = duplicate


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r}", duplicate=True)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON")


def loads(text: str) -> Any:
    """Parse JSON text strictly; raise StrictJSONError with a readable reason."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise StrictJSONError("nesting too deep") from None


def loads_object(text: str) -> dict[str, Any]:
    value = loads(text)
    if not isinstance(value, dict):
        raise StrictJSONError(f"expected a JSON object, got {type(value).__name__}")
    return value


def dumps_canonical(value: Any) -> str:
    """The one serialisation harness-gate writes: compact, UTF-8, key order kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
