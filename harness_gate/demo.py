"""`harness-gate demo`: the lifecycle in a throwaway repository, step by step.

Each step prints the command a user would type, then runs the real command
in-process against a real git repository in a temporary directory.
"""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from harness_gate import commands
from harness_gate.report import Report, write_text


@contextmanager
def _chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Demo User",
        "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "Demo User",
        "GIT_COMMITTER_EMAIL": "demo@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def run(out: TextIO) -> int:
    """Walk the lifecycle; return 0 when every step behaved as shown."""
    with tempfile.TemporaryDirectory(prefix="harness-gate-demo-") as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q")
        _git(repo, "config", "user.name", "Demo User")
        _git(repo, "config", "user.email", "demo@example.com")
        ok = True

        def step(title: str, typed: str, body: Callable[[], Report], expect: int) -> None:
            nonlocal ok
            out.write(f"\n== {title}\n$ {typed}\n")
            with _chdir(repo):
                report = body()
            buf = io.StringIO()
            write_text(report, buf, color=False)
            out.write("".join(f"  {line}\n" for line in buf.getvalue().splitlines()))
            verdict = "as expected" if report.exit_code == expect else "UNEXPECTED"
            out.write(f"  -> exit {report.exit_code} ({verdict})\n")
            ok = ok and report.exit_code == expect

        def answer(text: bytes) -> Callable[[], Report]:
            return lambda: commands.approve(repo, None, None, io.BytesIO(text), out, tty=False)

        out.write(f"A throwaway repository: {repo}\n")
        step("Set up harness-gate", "harness-gate init", lambda: commands.init(repo), 0)
        step(
            "Write a plan: objective, write boundary, verification",
            "harness-gate plan new fix-login --objective 'Fix the login bug' "
            "--boundary 'src/auth/**' --verify 'tests=pytest -q'",
            lambda: commands.plan_new(
                repo,
                "fix-login",
                objective="Fix the login bug",
                acceptance=(),
                scope=None,
                boundary=("src/auth/**",),
                verify=("tests=pytest -q",),
                timeout=600,
                kind="tdd",
                mode="native",
                risks=(),
            ),
            0,
        )
        step(
            "Only an approved plan grants write authority",
            "harness-gate status",
            lambda: commands.status(repo, None),
            0,
        )
        step("Anything but exactly `y` is refused", "printf 'yes\\n' | harness-gate approve", answer(b"yes\n"), 1)
        step("Approve with exactly `y`", "printf 'y\\n' | harness-gate approve", answer(b"y\n"), 0)
        plan = repo / "harness/plans/fix-login/plan.md"
        plan.write_bytes(plan.read_bytes().replace(b"src/auth/**", b"src/**"))
        step(
            "Widen the boundary after approval: the approval no longer counts",
            "sed -i 's#src/auth/\\*\\*#src/**#' harness/plans/fix-login/plan.md && harness-gate lint",
            lambda: commands.lint(repo, ()),
            1,
        )
        step("Approve the changed plan", "printf 'y\\n' | harness-gate approve", answer(b"y\n"), 0)
        step("Everything is valid again", "harness-gate lint", lambda: commands.lint(repo, ()), 0)
        step("The plan is executing", "harness-gate status", lambda: commands.status(repo, None), 0)
        out.write("\nDemo " + ("finished: every step behaved as shown.\n" if ok else "FAILED: see UNEXPECTED above.\n"))
        return 0 if ok else 1
