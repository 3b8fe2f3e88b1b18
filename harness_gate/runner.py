"""Run one verification command: no shell unless asked, a timeout that kills the whole
process group, output kept as a bounded tail, and a git environment scrubbed of the
variables a hook inherits (a command that runs git must see the repository, not the
hook's temporary index)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

TAIL_BYTES = 64 * 1024
# `git rev-parse --local-env-vars`: what git itself clears when it enters another repository.
GIT_LOCAL_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
)  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    status: str  # PASS, FAIL or TIMEOUT
    exit_code: int | None
    output: str  # the tail
    duration_ms: int


# A CI step's channels back to the runner and its tokens: code being verified gets none.
RUNNER_CHANNELS = (
    "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_CACHE_URL",
    "ACTIONS_RUNTIME_URL", "ACTIONS_RESULTS_URL",
)  # fmt: skip


def scrubbed_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RUNNER_CHANNELS}
    for name in GIT_LOCAL_ENV:
        env.pop(name, None)
    for name in [n for n in env if n.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        env.pop(name)
    return env


def run(command: str, *, shell: bool, timeout: float, cwd: Path) -> Outcome:
    argv: list[str] | str
    if shell:
        argv = command
    else:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return Outcome("FAIL", None, f"[harness-gate] cannot split the command: {exc}", 0)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            shell=shell,
            cwd=cwd,
            env=scrubbed_env(),
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
