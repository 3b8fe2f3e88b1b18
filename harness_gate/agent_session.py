"""What the agent hook remembers of one agent session, under the git directory: the commit
HEAD was at when the session's first hook call came (Stop judges the commits made since,
as `check --range` does), and the set of findings its last Stop block reported (a Stop
blocks again only when that set changed, a bounded number of times).

One small JSON file a session, `.git/harness-gate/cache/agent-sessions/<sha256 of the
id>.json`: never in the work tree, never committed; the runtime's sandbox rules
(`agent-sandbox`) keep the agent's shell from writing it. A file that cannot be read as
this module wrote it counts as no record (the fork point then stands in for the start).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

MAX_SESSIONS = 256  # files kept; the oldest go first
MAX_BLOCKS = 8  # Stop blocks in one session: a guard against a loop that never ends
_MAX_BYTES = 4096
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Session:
    start: str  # HEAD at the session's first hook call
    blocked: str = ""  # the digest of the findings the last block reported ("" none)
    blocks: int = 0


def _path(cache_dir: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir / "agent-sessions" / f"{digest}.json"


def load(cache_dir: Path, session_id: str) -> Session | None:
    try:
        with _path(cache_dir, session_id).open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
        data = json.loads(raw) if len(raw) <= _MAX_BYTES else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    start, blocked, blocks = data.get("start"), data.get("blocked", ""), data.get("blocks", 0)
    if not isinstance(start, str) or not _OID.fullmatch(start) or not isinstance(blocked, str):
        return None
    if not isinstance(blocks, int) or isinstance(blocks, bool) or not 0 <= blocks <= MAX_BLOCKS:
        return None
    if blocked and (not _DIGEST.fullmatch(blocked) or not blocks):
        return None  # not as `save` writes it (a block always counts): no record
    return Session(start, blocked, blocks)


def save(cache_dir: Path, session_id: str, session: Session) -> None:
    from harness_gate import fsutil  # noqa: PLC0415

    path = _path(cache_dir, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"start": session.start, "blocked": session.blocked, "blocks": session.blocks}
    fsutil.write_atomic(path, json.dumps(data).encode() + b"\n")


def begin(cache_dir: Path, session_id: str, head: str) -> None:
    """Record `head` as the session's start, unless the session has a record already. Best
    effort: a git directory the hook cannot write leaves Stop with the fork point."""
    if _path(cache_dir, session_id).exists():
        return
    with contextlib.suppress(OSError):
        save(cache_dir, session_id, Session(head))
        _prune(cache_dir / "agent-sessions")


def _prune(folder: Path) -> None:
    entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
    if len(entries) <= MAX_SESSIONS:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for entry in entries[: len(entries) - MAX_SESSIONS]:
        with contextlib.suppress(OSError):
            Path(entry.path).unlink()


def digest(findings: list[tuple[str, str, str]]) -> str:
    """One name for a set of findings: equal sets, equal digests, whatever their order."""
    text = json.dumps(sorted(set(findings)))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
