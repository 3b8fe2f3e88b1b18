"""Atomic file writes: a kill at any moment leaves the old file or the new one.

Appends copy the old bytes and the new line into a temporary file in the same
directory, fsync it and rename it over the log, under an exclusive lock on the
directory so that concurrent writers queue instead of losing each other's lines.
A temporary file left by a killed writer is removed by the next writer.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

TMP_SUFFIX = ".tmp"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace_with(path, lambda out: out.write(data))


def _replace_with(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Write a temporary file beside `path` with `fill`, fsync it, rename it over `path`."""
    import tempfile  # noqa: PLC0415  (~3 ms to import: only when writing)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
            out.flush()
            os.fsync(out.fileno())
        Path(tmp).chmod(path.stat().st_mode & 0o777 if path.exists() else 0o644)
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _refuse_special(path: Path) -> None:
    """A log is a regular file or nothing: opening a FIFO in its place would wait forever
    for a writer, and a symlink would be replaced by a copy of whatever it points at."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path} is not a regular file; refusing to append")


def append_line_atomic(path: Path, line: bytes) -> None:
    """Append one whole line: the old file plus the line, swapped in by rename."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("exactly one line, ending with a newline")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.parent):
        for stale in path.parent.glob(f".{path.name}.*{TMP_SUFFIX}"):
            with contextlib.suppress(OSError):
                stale.unlink()  # a killed writer's leftover: we hold the lock, it is not live
        _refuse_special(path)
        if path.exists():
            with path.open("rb") as check:
                check.seek(0, os.SEEK_END)
                if check.tell() and (check.seek(-1, os.SEEK_END), check.read(1))[1] != b"\n":
                    raise ValueError(f"{path} does not end with a newline; refusing to append")

        def fill(out: BinaryIO) -> None:
            import shutil  # noqa: PLC0415

            if path.exists():
                with path.open("rb") as old:
                    shutil.copyfileobj(old, out, 1 << 20)  # streamed: memory stays flat
            out.write(line)

        _replace_with(path, fill)


def append_record(path: Path, line: str) -> None:
    """Append one record line to a log (approvals, evidence); a log that cannot take it is HG903."""
    from harness_gate.errors import HarnessGateError  # noqa: PLC0415

    try:
        append_line_atomic(path, line.encode("utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessGateError("HG903", f"cannot append to {path}: {exc}") from None


def require_writable(root: Path, rels: Sequence[str]) -> None:
    """A usage error (HG904) naming each of `rels` (paths under `root`) that cannot be
    written as a file: something not a file stands there (a directory), or one of its
    parents is not a directory. Checked before a command's first write, so that a command
    that cannot write one of its files writes none of them."""
    from harness_gate.errors import usage  # noqa: PLC0415

    blocked: list[str] = []
    for rel in rels:
        path = root / rel
        parents = [root / p for p in Path(rel).parents if p != Path()]
        if (path.exists() and not path.is_file()) or any(p.exists() and not p.is_dir() for p in parents):
            blocked.append(rel)
    if blocked:
        raise usage(
            f"cannot write {', '.join(blocked)} as a file: something else stands in the way; nothing was written",
            "Move it out of the way, then run the command again.",
        )


def refuse_links(root: Path, rels: Sequence[str]) -> None:
    """A usage error (HG904) naming every symbolic link among `rels` (paths under `root`)
    and the folders leading to them: a command that writes those files, or reads them to
    merge, would otherwise write through the link or copy its target's bytes (any file
    outside the repository) into what gets committed. Checked before the first write, so
    that nothing is written."""
    from harness_gate.errors import usage  # noqa: PLC0415

    links: list[str] = []
    for rel in rels:
        parts = Path(rel).parts
        for cut in range(1, len(parts) + 1):
            step = Path(*parts[:cut]).as_posix()
            if (root / step).is_symlink():
                if step not in links:
                    links.append(step)
                break  # what lies beyond it is the link's, not the repository's
    if links:
        raise usage(
            f"{', '.join(links)} {'is a symbolic link' if len(links) == 1 else 'are symbolic links'}: "
            "not followed, nothing was written",
            "Replace it with a regular file or folder (or remove it), then run the command again.",
        )


def repository_path(root: Path, cwd: Path, name: str) -> str:
    """`name`, given relative to `cwd`, as a path in the repository at `root` (its `..`
    resolved, symlinks not); a name outside the repository is a usage error (HG904)."""
    from harness_gate.errors import usage  # noqa: PLC0415

    try:
        return Path(os.path.normpath(cwd / name)).relative_to(root).as_posix()
    except ValueError:
        raise usage(f"{name} is outside the repository") from None


def read_regular(path: Path, cap: int, *, what: str = "file") -> bytes:
    """The bytes of the regular file at `path`, at most `cap` of them. Opened without
    blocking and judged by `fstat` on what was opened (no race with a rename): a FIFO would
    wait forever for a writer and a device like /dev/zero never ends, so anything but a
    regular file is refused, and so is a file over the cap. Raises ValueError (or OSError)
    with a message naming `path`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} is not a regular file; a {what} must be one")
        if st.st_size > cap:
            raise ValueError(f"{path} is larger than the {cap} byte cap for a {what}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:  # it grew while being read
        raise ValueError(f"{path} is larger than the {cap} byte cap for a {what}")
    return data
