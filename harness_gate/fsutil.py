"""Atomic file writes: a kill at any moment leaves the old file or the new one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            Path(tmp).chmod(path.stat().st_mode & 0o777)
        else:
            Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


def append_line_atomic(path: Path, line: bytes) -> None:
    """Append one whole line: old bytes + line are written to a new file and swapped in."""
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        raise ValueError(f"{path} does not end with a newline; refusing to append")
    write_atomic(path, old + line)
