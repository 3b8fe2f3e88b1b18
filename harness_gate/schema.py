"""JSON Schemas shipped as package data, validated with jsonschema.

jsonschema costs ~90 ms to import, so it is imported on first use only.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.cache
def load(name: str) -> dict[str, Any]:
    text = resources.files("harness_gate.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator  # noqa: PLC0415  (lazy: start-up time)

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, instance: Any) -> list[str]:
    """Return readable schema violations, best first; empty when valid."""
    validator = _validator(name)
    out = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        message = err.message if len(err.message) <= 200 else err.message[:197] + "..."
        out.append(f"{name}: {where}: {message}")
    return out
