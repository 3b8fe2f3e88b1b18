"""Run one verification command: no shell unless asked, a timeout that kills the whole
process group, output kept as a bounded tail, and a git environment scrubbed of the
variables a hook inherits (a command that runs git must see the repository, not the
hook's temporary index)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TAIL_BYTES = 64 * 1024
# `git rev-parse --local-env-vars`: what git itself clears when it enters another repository.
GIT_LOCAL_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)


@dataclass(frozen=True)
class Outcome:
    status: str  # PASS, FAIL or TIMEOUT
    exit_code: int | None
    output: str  # the tail
    duration_ms: int


# A CI step's channels back to the runner and its tokens: code being verified gets none.
RUNNER_CHANNELS = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_RESULTS_URL",
)


# The runner's file commands: files a step appends to, read by the runner when the step
# ends (outputs, environment and PATH of later steps, the summary, post-step state).
FILE_COMMANDS = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
# Guarded as they are: those, and the event payload later steps read their context from.
GUARDED_FILES = (*FILE_COMMANDS, "GITHUB_EVENT_PATH")
# Temporary folders a command may write: each run gets one of its own instead. RUNNER_TEMP
# is the runner's, where its file-command files and the gate's own venv and reports live.
TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")


def scrubbed_env(temp: Path | None = None) -> dict[str, str]:
    """The environment a command runs with: no runner channel or token, no git variable a
    hook inherits, and (given `temp`) its own temporary folder in TMPDIR and, on a runner,
    RUNNER_TEMP."""
    env = {k: v for k, v in os.environ.items() if k not in RUNNER_CHANNELS}
    for name in GIT_LOCAL_ENV:
        env.pop(name, None)
    for name in [n for n in env if n.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        env.pop(name)
    if temp is not None:
        env.update(dict.fromkeys(TEMP_VARIABLES, str(temp)))
        if "RUNNER_TEMP" in env:
            env["RUNNER_TEMP"] = str(temp)
    return env


@dataclass(frozen=True)
class Channel:
    """One file-command file as it was before the commands ran."""

    name: str
    path: str
    data: bytes | None  # None: absent, or not a regular file
    identity: tuple[int, ...] | None  # (device, inode, mode) of what stood there


CHANNEL_CAP = 64 * 1024 * 1024  # a step summary is capped at 1 MiB by GitHub: far below


def channels() -> tuple[Channel, ...]:
    """The runner's file-command files and event payload (those the environment names) as
    they are now."""
    out = []
    for name in GUARDED_FILES:
        path = os.environ.get(name)
        if path:
            out.append(_channel(name, path))
    return tuple(out)


def _channel(name: str, path: str) -> Channel:
    try:
        st = os.lstat(path)
    except OSError:
        return Channel(name, path, None, None)
    identity = (st.st_dev, st.st_ino, st.st_mode)
    if not stat.S_ISREG(st.st_mode):
        return Channel(name, path, None, identity)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return Channel(name, path, None, identity)
    with os.fdopen(fd, "rb") as fh:
        return Channel(name, path, fh.read(CHANNEL_CAP + 1), identity)


def restore_channels(before: Sequence[Channel]) -> list[str]:
    """The names of the file-command files that changed since `before`, each put back as
    it was (a new file in its place, never written through what a command left there), so
    the runner reads nothing a command wrote into them."""
    changed = []
    for old in before:
        now = _channel(old.name, old.path)
        if now == old:
            continue
        changed.append(old.name)
        if old.data is not None and len(old.data) > CHANNEL_CAP:
            continue  # too large to have been kept whole: left as it is (the check blocks)
        Path(old.path).unlink(missing_ok=True)
        if old.data is not None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            with os.fdopen(os.open(old.path, flags, 0o644), "wb") as fh:
                fh.write(old.data)
    return changed


def run(command: str, *, shell: bool, timeout: float, cwd: Path) -> Outcome:
    argv: list[str] | str
    if shell:
        argv = command
    else:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return Outcome("FAIL", None, f"[harness-gate] cannot split the command: {exc}", 0)
    import shutil  # noqa: PLC0415  (only when a command runs)
    import tempfile  # noqa: PLC0415

    # Its own temporary folder, removed when it ended (and every process of its group with it).
    temp = Path(tempfile.mkdtemp(prefix="harness-gate-run-"))
    try:
        return _run(argv, shell=shell, timeout=timeout, cwd=cwd, env=scrubbed_env(temp))
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _run(argv: list[str] | str, *, shell: bool, timeout: float, cwd: Path, env: dict[str, str]) -> Outcome:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            shell=shell,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as exc:
        return Outcome("FAIL", 127, f"[harness-gate] cannot start the command: {exc}", 0)
    tail = bytearray()

    stream = proc.stdout
    fd = stream.fileno() if stream is not None else -1

    def pump() -> None:
        while fd >= 0:
            chunk = os.read(fd, 8192)
            if not chunk:
                break
            tail.extend(chunk)
            del tail[:-TAIL_BYTES]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        code: int | None = proc.wait(timeout=timeout)
        status = "PASS" if code == 0 else "FAIL"
        # Background children left behind would outlive the evidence they belong to.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        code, status = None, "TIMEOUT"
    reader.join(timeout=5)
    if stream is not None:
        stream.close()
    duration = int((time.monotonic() - start) * 1000)
    text = bytes(tail).decode("utf-8", "replace")
    if status == "TIMEOUT":
        text += f"\n[harness-gate] timed out after {timeout:g}s; the process group was killed"
    return Outcome(status, code, text, duration)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # Children that outlived their parent still hold the group: end them too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
