"""Strict JSON: duplicate keys, NaN/Infinity and non-object roots are errors.

Python's json module silently keeps the last duplicate key and accepts NaN;
both would let two readers see different objects in the same bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0/C1 controls (terminal escapes among them), bidirectional overrides (text that
# reads differently than it is stored) and lone surrogates (unencodable). The bidi set is
# Unicode's whole Bidi_Control property: U+061C ARABIC LETTER MARK is one of them too.
_UNSAFE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff"
UNSAFE_CHARS = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_UNSAFE}]")
# The same, but newlines and tabs are allowed: captured command output.
UNSAFE_TEXT_CHARS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_UNSAFE}]")


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


def _float(text: str) -> Any:
    # No field of any harness-gate record is fractional; 3.0 or 3e0 standing in for
    # the integer 3 would pass a schema's `const` while reading differently.
    raise StrictJSONError(f"non-integer number {text[:20]} is not allowed")


def _int(text: str) -> int:
    # `-0` is a second spelling of 0: the same reasoning as for 3.0 above. (JSON itself
    # already rules out `+1` and leading zeros.)
    if text == "-0":
        raise StrictJSONError("-0 is not allowed; write 0")
    return int(text)


def _check_strings(value: Any, *, text_ok: bool = False) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if (UNSAFE_TEXT_CHARS if text_ok else UNSAFE_CHARS).search(item):
                raise StrictJSONError(
                    "a string holds a control or bidirectional-override character, or a lone surrogate"
                )
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_JSON_SPACE = " \t\n\r"


def _trailing_comma(text: str, pos: int) -> tuple[int, str] | None:
    """Where a trailing comma is, and what it ends ("object", "array"), when the parser's
    error at `pos` is one; else None.

    Python 3.13 reports a trailing comma at the comma ("Illegal trailing comma"), 3.10-3.12
    at the `}` or `]` after it ("Expecting value"): found here from the text itself, so the
    message and its line are the same on every Python."""
    if not 0 <= pos < len(text):
        return None
    if text[pos] == ",":
        comma = pos
        before = text[:comma].rstrip(_JSON_SPACE)
        if not before or before[-1] in "[{,:":  # `[,]`: no value before it, not a trailing comma
            return None
    elif text[pos] in "}]":
        # The parser stops at `}`/`]` only outside a string: a comma just before it is a separator.
        comma = len(text[:pos].rstrip(_JSON_SPACE)) - 1
        if comma < 0 or text[comma] != ",":
            return None
    else:
        return None
    closer = text[comma + 1 :].lstrip(_JSON_SPACE)[:1]
    if closer not in ("}", "]"):
        return None
    return comma, "object" if closer == "}" else "array"


def loads(text: str, *, text_ok: bool = False) -> Any:
    """Parse JSON text strictly; raise StrictJSONError with a readable reason.

    `text_ok` lets strings hold newlines and tabs (captured command output)."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        trailing = _trailing_comma(text, exc.pos)
        if trailing is not None:
            comma, ends = trailing
            line = text.count("\n", 0, comma) + 1
            column = comma - text.rfind("\n", 0, comma)  # 1-based, as json's own colno
            message = f"trailing comma before the end of an {ends} at line {line} column {column}"
            raise StrictJSONError(message) from None
        raise StrictJSONError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise StrictJSONError("nesting too deep") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise StrictJSONError(str(exc)[:120]) from None
    _check_strings(value, text_ok=text_ok)
    return value


def loads_object(text: str, *, text_ok: bool = False) -> dict[str, Any]:
    value = loads(text, text_ok=text_ok)
    if not isinstance(value, dict):
        raise StrictJSONError(f"expected a JSON object, got {type(value).__name__}")
    return value


def dumps_canonical(value: Any) -> str:
    """The one serialisation harness-gate writes: compact, UTF-8, key order kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
