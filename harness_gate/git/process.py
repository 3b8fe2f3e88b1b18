"""The one way harness-gate starts git: its hardened environment, failure report and prefetch.

Every git process is built by `_popen` (hardening flags, the hardened environment, and
`GitNotRunnable` when git cannot start) and every exit code is judged by `check_exit`
(one `GitError` shape: the command and git's last line of complaint). No other module
imports subprocess for git.

The prefetch contract. Who starts: a check (the console script's staged check before its
imports, `artifacts_tree.prefetch`; `check.run_check`) and the agent hook judging a write
(`agent.judge`, the same `artifacts_tree.prefetch`), through the `prefetch_*` functions of
the git modules, each of which starts exactly the command its matching read runs (`start`
underneath), ahead of knowing whether the answer will be read. Every caller that may start
something calls `discard_started` in a `finally` (check, the console script, the agent hook).

- `start(ARGS)` runs `git ARGS` now, its output going to a scratch file. A later
  `run(ARGS)` with the same directory, arguments, input and GIT_INDEX_FILE (`run` with an
  `env` of its own never matches) takes that answer, once, instead of starting another;
  any other question starts a new process. The answer is as of when it was started: a
  prefetch is only made for what the same check reads before anything it does changes it.
- `start_work(KEY, FN)` runs `FN` in a thread (the index checksum); `finish_work(KEY)`
  joins it and raises what it raised.
- Consumed or discarded: whatever is not asked for is ended by `discard_started`, which the
  starter calls on every way out (an early end, an error). Nothing outlives the check.
- Failure closes: a started command that failed raises its `GitError` when its answer is
  read, exactly as `run` would have; a mismatch is never an answer (a new process runs);
  `discard_started` never raises, since what nobody asked for decides nothing.

git runs as a subprocess on hardened plumbing: replace refs and grafts off, optional
locks off (the index lock is never taken), NUL-separated output, and any non-zero exit
is an error rather than an empty answer. GitPython is not used: its import alone costs
~90 ms on the hook's start-up path (docs/design.md).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from harness_gate.errors import GitError
from harness_gate.plumbing import HARDENING, UNTRUSTED_ENV, hardened_env

# The flags and environment of every git process (plumbing.py: the lean path uses them too).
_HARDENING = HARDENING
_UNTRUSTED_ENV = UNTRUSTED_ENV

# Set by `scratch_objects` when the object store cannot be written: where new objects go.
_SCRATCH: dict[str, str] = {}


def scratch_objects(objects: Path) -> None:
    """When the repository's object store cannot be written (a coding agent's sandbox
    makes `.git` read-only, so that its shell cannot replace an object), the objects git
    writes for the gate's own answers (a work tree's fingerprint, a merge's tree) go to a
    scratch folder removed at exit, the store read beside it as an alternate: nothing is
    added to the repository, and a tree id named in evidence may be one this clone lacks
    (freshness says so). Once a process; a store named by GIT_OBJECT_DIRECTORY is left
    alone."""
    if _SCRATCH or os.environ.get("GIT_OBJECT_DIRECTORY") or os.access(objects, os.W_OK):
        return
    import atexit  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    scratch = tempfile.mkdtemp(prefix="harness-gate-objects-")
    atexit.register(shutil.rmtree, scratch, True)
    alternates = [str(objects), *filter(None, os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(":"))]
    _SCRATCH.update(GIT_OBJECT_DIRECTORY=scratch, GIT_ALTERNATE_OBJECT_DIRECTORIES=":".join(alternates))


def _env() -> dict[str, str]:
    return hardened_env(_SCRATCH)


class GitNotRunnable(GitError):
    """git itself could not be started (not installed, not on PATH)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot run git: {exc}", "Install git and make sure it is on PATH.")


def _popen(  # noqa: PLR0913  (subprocess.Popen's own arguments)
    args: Sequence[str], *, cwd: Path | str, stdin: Any, stdout: Any, stderr: Any, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `git ARGS` hardened: the one place a git process is made."""
    try:
        return subprocess.Popen(
            ["git", *_HARDENING, *args],
            cwd=cwd,
            env={**_env(), **(env or {})},
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
        )
    except OSError as exc:
        raise GitNotRunnable(exc) from None


def check_exit(args: Sequence[str], code: int, stderr: bytes) -> None:
    """The one report of a failed git command: what ran, and git's last line about it."""
    if code != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {code}"
        start = 0
        while start + 1 < len(args) and args[start] == "-c":  # settings pinned for one command
            start += 2
        raise GitError(f"`git {' '.join(args[start : start + 3])}` failed: {detail}")


def run_raw(
    args: Sequence[str], *, cwd: Path | str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run `git ARGS` to its end: (exit code, stdout, stderr), unjudged. The readers below
    judge them; so does a caller whose own report of a failure says more (`locate`: not a
    repository)."""
    proc = _popen(
        args,
        cwd=cwd,
        stdin=None if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    with proc:
        try:
            out, err = proc.communicate(stdin)
        except BaseException:  # an interrupt: no git left behind
            proc.kill()
            raise
    return proc.returncode, out, err


def run(
    args: Sequence[str], *, cwd: Path | str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    """Run `git ARGS` and return stdout; raise GitError on any failure. A command started
    ahead with the same question (`start`) answers instead."""
    if _STARTED and env is None:
        started = _STARTED.pop(_started_key(args, cwd, stdin), None)
        if started is not None:
            return started.result()
    code, out, err = run_raw(args, cwd=cwd, stdin=stdin, env=env)
    check_exit(args, code, err)
    return out


@contextlib.contextmanager
def answer(args: Sequence[str], *, cwd: Path | str) -> Iterator[IO[bytes]]:
    """`run(ARGS)`'s answer as a file to read in pieces, so that a large one is never held
    whole: the output of a command started ahead with the same question (`start`), judged
    first, or else git's pipe (`streamed`), judged on leaving."""
    started = _STARTED.pop(_started_key(args, cwd, None), None) if _STARTED else None
    if started is None:
        with streamed(args, cwd=cwd) as out:
            yield out
        return
    with started.answer() as out:
        yield out


def run_code(args: Sequence[str], *, cwd: Path | str, codes: frozenset[int]) -> tuple[int, bytes]:
    """Run `git ARGS`; an exit code in `codes` is an answer, any other an error."""
    code, out, err = run_raw(args, cwd=cwd)
    if code not in codes:
        check_exit(args, code or 1, err)
    return code, out


def run_status(args: Sequence[str], *, cwd: Path | str) -> bytes | None:
    """Like run(), but exit code 1 (git's "no such thing") is None instead of an error."""
    code, out, err = run_raw(args, cwd=cwd)
    if code == 1 and not err.strip():
        return None
    check_exit(args, code, err)
    return out


def act(args: Sequence[str], *, cwd: Path | str) -> None:
    """Run `git ARGS` for what it changes (a commit, a configuration value), not for an
    answer: never answered by a started command, and a failure is a GitError."""
    code, _, err = run_raw(args, cwd=cwd)
    check_exit(args, code, err)


@contextlib.contextmanager
def streamed(args: Sequence[str], *, cwd: Path | str, stdin: bytes | None = None) -> Iterator[IO[bytes]]:
    """`git ARGS`'s output as a pipe, read as git writes it (a huge answer is never held
    whole); `stdin` is fed from a thread, since git answers while it reads. On leaving,
    git's failure is raised (its own reason says more than the reader's), else a GitError
    the reader raised. git's messages go to a scratch file: never a full pipe."""
    errors = _scratch_file()
    try:
        proc = _popen(
            args, cwd=cwd, stdin=None if stdin is None else subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        )
    except GitError:
        errors.close()
        raise
    if proc.stdout is None:  # never: a pipe (for the type checker)
        raise GitError(f"`git {args[0]}` has no output pipe")
    writer = None
    if stdin is not None and proc.stdin is not None:
        writer = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
        writer.start()
    problem: GitError | None = None
    try:
        yield proc.stdout
    except GitError as exc:
        problem = exc
    finally:
        proc.stdout.close()
        code = proc.wait()
        if writer is not None:
            writer.join()
        errors.seek(0)
        stderr = errors.read()
        errors.close()
    check_exit(args, code, stderr)
    if problem is not None:
        raise problem


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), pipe:  # git stopped reading: its exit code tells why
        pipe.write(data)


def terminated(out: bytes, what: str) -> bytes:
    """`-z` output ends with a NUL. Without it the last name was cut short (`src/x.pyc`
    read as `src/x.py`), even when git exited 0: an error, never a shorter path."""
    if out and not out.endswith(b"\0"):
        raise GitError(f"truncated {what} output (no final NUL)")
    return out


# -- commands started ahead of need (the prefetch contract, above) -----------------------


class _Started:
    """A git command started ahead of need, its output going to a temporary file (a pipe
    would stall git once full, with nobody reading it yet)."""

    def __init__(self, args: Sequence[str], cwd: Path, stdin: bytes | None) -> None:
        self.args = list(args)
        self.out = _scratch_file()
        try:
            self.proc = _popen(
                args,
                cwd=cwd,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=self.out,
                stderr=subprocess.PIPE,  # a few lines at most: never fills its pipe
            )
        except GitError:
            self.out.close()
            raise
        if stdin is not None and self.proc.stdin is not None:
            # git's answer goes to a file, never blocks: it reads all of its input.
            with contextlib.suppress(OSError), self.proc.stdin as pipe:
                pipe.write(stdin)
            self.proc.stdin = None  # closed: communicate() has nothing to send

    def result(self) -> bytes:
        try:
            _, stderr = self.proc.communicate()
            check_exit(self.args, self.proc.returncode, stderr)
            self.out.seek(0)
            return self.out.read()
        finally:
            self.out.close()

    @contextlib.contextmanager
    def answer(self) -> Iterator[IO[bytes]]:
        """`result()`'s bytes as the file holding them, read from its start."""
        try:
            _, stderr = self.proc.communicate()
            check_exit(self.args, self.proc.returncode, stderr)
            self.out.seek(0)
            yield self.out
        finally:
            self.out.close()

    def discard(self) -> None:
        try:
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.proc.communicate()
        finally:
            self.out.close()


def _scratch_file() -> IO[bytes]:
    """An anonymous file for a started command's output, closed by its reader."""
    if hasattr(os, "memfd_create"):  # Linux: in memory, and no tempfile import (~3 ms)
        return open(os.memfd_create("harness-gate"), "w+b")  # noqa: PTH123
    import tempfile  # noqa: PLC0415

    return tempfile.TemporaryFile()


# Commands started ahead of need, by (directory, arguments, GIT_INDEX_FILE): `run` with
# the same arguments takes the started command's answer instead of starting another.
_StartedKey = tuple[str, tuple[str, ...], bytes | None, str | None]
_STARTED: dict[_StartedKey, _Started] = {}


def _started_key(args: Sequence[str], cwd: Path | str, stdin: bytes | None) -> _StartedKey:
    return (str(cwd), tuple(args), stdin, os.environ.get("GIT_INDEX_FILE"))


def start(args: Sequence[str], *, cwd: Path, stdin: bytes | None = None) -> None:
    """Start `git ARGS` now; `run(ARGS)` with the same input later reads its answer
    (exit code and all) instead of starting another."""
    key = _started_key(args, cwd, stdin)
    if key not in _STARTED:
        _STARTED[key] = _Started(args, cwd, stdin)


class _Work:
    """Work started in a thread ahead of need (reading and hashing a large index releases
    the interpreter lock, so it runs while the main thread imports and parses)."""

    def __init__(self, work: Callable[[], None]) -> None:
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, args=(work,), daemon=True)
        self.thread.start()

    def _work(self, work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:
            self.error = exc

    def join(self) -> None:
        self.thread.join()
        if self.error is not None:
            raise self.error


_WORK: dict[object, _Work] = {}


def start_work(key: object, work: Callable[[], None]) -> None:
    """Run `work` in a thread now, unless work under `key` is already running."""
    if key not in _WORK:
        _WORK[key] = _Work(work)


def finish_work(key: object) -> bool:
    """Wait for the work started under `key`, if any, and raise what it raised; whether
    there was any."""
    started = _WORK.pop(key, None)
    if started is not None:
        started.join()
    return started is not None


def discard_started() -> None:
    """Stop and forget whatever was started and never asked for (a check that ended early).
    Never raises: what a discarded command or checksum found was not asked for (an inactive
    repository's index is not judged), and the check's own error, if any, is the one shown."""
    while _STARTED:
        with contextlib.suppress(Exception):
            _STARTED.popitem()[1].discard()
    while _WORK:
        _WORK.popitem()[1].thread.join()
