"""A cache of parsed artifacts under the git directory, for the hook's start-up time.

Parsing a plan needs markdown-it-py and jsonschema (~100 ms to import) before any
work is done; a commit rarely changes the plan. Entries are keyed by the sha256 of
the artifact's exact bytes and by a fingerprint of harness-gate's own rules (its
source and schemas), written atomically, and used only when both match: a changed
byte or a changed rule is a miss, never a stale hit. Only clean parses are cached.

The cache lives in `$(git rev-parse --git-path harness-gate)/cache`. Whoever can
write `.git/` can poison it, as they can replace the hook itself: the local hook's
threat model (README) already grants that. CI starts with no cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from harness_gate import fsutil

T = TypeVar("T")
_directory: list[Path | None] = [None]


@functools.cache
def rules_fingerprint() -> str:
    """sha256 over harness-gate's own source and schemas: any change is a new cache. Their
    bytes, not their size and time: builds that keep both (reproducible wheels, `cp -p`,
    Nix) would otherwise share one cache across different rules."""
    pkg = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted([*pkg.rglob("*.py"), *pkg.rglob("*.json")]):
        digest.update(path.relative_to(pkg).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def configure(directory: Path | None) -> None:
    _directory[0] = directory


def cached(
    namespace: str,
    data: bytes,
    compute: Callable[[], tuple[T | None, Any]],
    dump: Callable[[Any], Any],
    load: Callable[[Any], T],
) -> tuple[T | None, Any]:
    """`compute()` returns (value, problems); a value without problems is cached."""
    directory = _directory[0]
    if directory is None:
        return compute()
    key = hashlib.sha256(data).hexdigest()
    path = directory / namespace / f"{key}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        doc = json.loads(path.read_bytes())
        if doc["rules"] == rules_fingerprint() and doc["key"] == key:
            return load(doc["value"]), []
    value, problems = compute()
    if value is not None and not problems:
        doc = {"rules": rules_fingerprint(), "key": key, "value": dump(value)}
        with contextlib.suppress(OSError, TypeError, ValueError):
            fsutil.write_atomic(path, json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    return value, problems
