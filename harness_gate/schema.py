"""JSON Schemas shipped as package data, validated with jsonschema.

jsonschema costs ~90 ms to import, so it is imported on first use only.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any


@functools.cache
def load(name: str) -> dict[str, Any]:
    from importlib import resources  # noqa: PLC0415  (~4 ms to import; the hook needs no schema)

    text = resources.files("harness_gate.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _ecma_regex(pattern: str) -> re.Pattern[str]:
    """A schema `pattern` (ECMA-262) as a Python regex with ECMA's `$`.

    In ECMA-262 (what JSON Schema specifies) `$` matches only at the end of the input;
    Python's `$` also matches before a final newline, so `"tests\\n"` would pass
    `^[a-z0-9]+$` (an evidence record's command id, or `artifacts_dir = "harness\\n"`).
    Every unescaped `$` outside a character class becomes `\\Z`.
    """
    out = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError  # noqa: PLC0415  (lazy: start-up time)

    if validator.is_type(instance, "string") and not _ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator, validators  # noqa: PLC0415  (lazy: start-up time)

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    strict = validators.extend(Draft202012Validator, {"pattern": _pattern})  # type: ignore[no-untyped-call]
    return strict(schema)


def violations(name: str, instance: Any) -> list[Any]:
    """The schema's violations (jsonschema ValidationErrors), best first; empty when valid."""
    return sorted(_validator(name).iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message))


def errors(name: str, instance: Any) -> list[str]:
    """Return readable schema violations, best first; empty when valid."""
    validator = _validator(name)
    out = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        message = err.message
        if err.validator == "pattern" and isinstance(err.schema, dict) and "description" in err.schema:
            # A pattern says what it refuses poorly; the schema's words say what is wanted.
            message = f"must be {err.schema['description']}, not {err.instance!r}"
        message = message if len(message) <= 200 else message[:197] + "..."
        out.append(f"{name}: {where}: {message}")
    return out
