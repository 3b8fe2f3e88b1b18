"""`harness-gate demo`: the whole lifecycle in a throwaway repository, step by step.

Each step prints the command a user would type, then runs the real command against a
real git repository in a temporary directory, and says whether it behaved as shown.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from harness_gate import git, runs, templates
from harness_gate.commands import approve, check, complete, init, plan, review, status, verify
from harness_gate.errors import usage
from harness_gate.report import Report, write_text

CALC = "def add(a, b):\n    return a + b\n"
TEST = """\
import unittest

from src.calc import add


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""


@contextmanager
def _chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class _Indented(io.StringIO):
    """The approval prompt, indented like every other step's output."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self.out = out

    def flush(self) -> None:
        text = self.getvalue()
        if "\n" in text:
            done, _, rest = text.rpartition("\n")
            self.out.write("".join(f"  {line}\n" for line in done.split("\n")))
            self.seek(0)
            self.truncate()
            super().write(rest)

    def write(self, s: str) -> int:
        n = super().write(s)
        self.flush()
        return n


class _Demo:
    def __init__(self, repo: Path, out: TextIO) -> None:
        self.repo = repo
        self.out = out
        self.ok = True

    def git(self, *args: str) -> None:
        git.act(args, cwd=self.repo)

    def write(self, rel: str, text: str) -> None:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def say(self, title: str, typed: str) -> None:
        self.out.write(f"\n== {title}\n$ {typed}\n")

    def step(self, title: str, typed: str, body: Callable[[], Report], expect: int) -> None:
        self.say(title, typed)
        with _chdir(self.repo):
            report = runs.report_of("demo", body)  # a refusal is a report, as on the command line
        buf = io.StringIO()
        write_text(report, buf, color=False)
        self.out.write("".join(f"  {line}\n" for line in buf.getvalue().splitlines()))
        verdict = "as expected" if report.exit_code == expect else "UNEXPECTED"
        self.out.write(f"  -> exit {report.exit_code} ({verdict})\n")
        self.ok = self.ok and report.exit_code == expect

    def shell(self, title: str, typed: str, *gits: tuple[str, ...]) -> None:
        self.say(title, typed)
        for args in gits:
            self.git(*args)


@contextmanager
def _isolated() -> Iterator[None]:
    """The demo's git must see only its throwaway repository: a caller's GIT_DIR,
    GIT_WORK_TREE or GIT_INDEX_FILE would point every command at theirs."""
    from harness_gate.runner import GIT_LOCAL_ENV  # noqa: PLC0415

    saved = {k: os.environ.pop(k) for k in list(os.environ) if k in GIT_LOCAL_ENV or k.startswith("GIT_CONFIG")}
    try:
        yield
    finally:
        os.environ.update(saved)


def run(out: TextIO, keep: Path | None = None) -> int:
    """Walk the lifecycle; return 0 when every step behaved as shown. With `keep`, the
    repository is made there (a new or empty directory) and left for you to look at."""
    with _isolated():
        if keep is None:
            with tempfile.TemporaryDirectory(prefix="harness-gate-demo-") as tmp:
                return _run(out, Path(tmp))
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            raise usage(f"{keep} is not an empty directory", "Name a new directory for --keep.")
        keep.mkdir(parents=True, exist_ok=True)
        code = _run(out, keep.resolve())
        out.write(f"The repository is kept in {keep.resolve()}.\n")
        return code


def _run(out: TextIO, repo: Path) -> int:
    d = _Demo(repo, out)
    d.git("init", "-q", "-b", "main")
    d.git("config", "user.name", "Demo User")
    d.git("config", "user.email", "demo@example.com")
    d.write("README.md", "# calc\n")
    d.write(".gitignore", "__pycache__/\n")  # what running the tests leaves behind is not the project
    d.git("add", "-A")
    d.git("commit", "-qm", "calc: an existing project")
    out.write(f"A throwaway repository: {repo}\n")
    test_cmd = f"{Path(sys.executable).as_posix()} -m unittest discover -s tests -t ."

    def answer(text: bytes) -> Callable[[], Report]:
        prompt = _Indented(out)
        return lambda: approve.approve(repo, None, None, io.BytesIO(text), prompt, tty=False)

    def gate(stage: str, *, base: str | None = None) -> Callable[[], Report]:
        mode = (
            check.ChangeSetRequest(check.ChangeSet.BASE, base, "HEAD")
            if base
            else check.ChangeSetRequest(check.ChangeSet.STAGED)
        )
        return lambda: check.run_check(repo, stage=stage, mode=mode, plan_id=None, config_file=None)

    d.step("Adopt harness-gate", "harness-gate init", lambda: init.init(repo), 0)
    d.shell(
        "Commit the set-up (the adopting commit is not judged)",
        "git add .harness-gate.toml .gitattributes .pre-commit-config.yaml harness "
        "&& git commit -m 'Adopt harness-gate'",
        ("add", ".harness-gate.toml", ".gitattributes", ".pre-commit-config.yaml", "harness"),
        ("commit", "-qm", "Adopt harness-gate"),
    )
    d.step(
        "Plan: objective, write boundary, verification",
        f"harness-gate plan new add --objective 'Add add()' --boundary 'src/**' --boundary 'tests/**' "
        f"--verify 'tests={test_cmd}'",
        lambda: plan.plan_new(
            repo,
            "add",
            objective="Add add()",
            acceptance=(),
            scope=None,
            boundary=("src/**", "tests/**"),
            verify=(f"tests={test_cmd}",),
            timeout=120,
            kind="tdd",
            mode="native",
            risks=(),
        ),
        0,
    )
    d.step("Anything but exactly `y` is refused", "printf 'yes\\n' | harness-gate approve", answer(b"yes\n"), 1)
    d.step("Approve with exactly `y`", "printf 'y\\n' | harness-gate approve", answer(b"y\n"), 0)
    d.shell(
        "Commit the approved plan",
        "git add harness && git commit -m 'Plan: add'",
        ("add", "harness"),
        ("commit", "-qm", "Plan: add"),
    )
    d.write("src/__init__.py", "")
    d.write("src/calc.py", CALC)
    d.write("tests/__init__.py", "")
    d.write("tests/test_calc.py", TEST)
    d.write("README.md", "# calc\n\nNow with add().\n")
    d.git("add", "-A")
    d.step(
        "Work, but also touch README.md: outside the boundary",
        "git add -A && harness-gate check --staged",
        gate("pre-commit"),
        1,
    )
    d.git("reset", "-q", "README.md")
    d.git("checkout", "-q", "--", "README.md")
    d.step(
        "Leave README.md alone: the commit is inside the boundary",
        "git restore --staged README.md && git checkout README.md && harness-gate check --staged",
        gate("pre-commit"),
        0,
    )
    d.step(
        "Verify: run the plan's required commands on the work tree",
        "harness-gate verify",
        lambda: verify.verify(repo, None, ()),
        0,
    )
    d.write("src/calc.py", CALC.replace("a + b", "b + a"))
    d.git("add", "-A")
    d.step(
        "Change a file after verifying: the evidence is for another tree (pre-push warns, CI blocks)",
        "sed -i 's/a + b/b + a/' src/calc.py && git add -A && harness-gate check --stage pre-push --staged",
        gate("pre-push"),
        0,
    )
    d.step("Verify again", "harness-gate verify", lambda: verify.verify(repo, None, ()), 0)
    d.step(
        "Ask for a review of exactly this tree, by someone who did not write it",
        "harness-gate review new --reviewer 'Rae Viewer'",
        lambda: review.review_new(repo, None, "Rae Viewer"),
        0,
    )
    review_path = repo / "harness/plans/add/001-review.md"
    review_path.write_text(
        review_path.read_text()
        .replace(templates.VERDICT_PLACEHOLDER, "PASS")
        .replace(templates.SCOPE_PLACEHOLDER, "The diff, the plan and the evidence.")
    )
    d.say(
        "The reviewer reads the diff, says what they read, and fills in the verdict: PASS",
        "$EDITOR harness/plans/add/001-review.md",
    )
    d.shell(
        "Commit the work with its evidence and review",
        "git add -A && git commit -m 'Add add()'",
        ("add", "-A"),
        ("commit", "-qm", "Add add()"),
    )
    d.step(
        "Before it merges, CI wants the plan finished",
        "harness-gate check --stage ci --base HEAD~2",
        gate("ci", base="HEAD~2"),
        1,
    )
    d.step(
        "Complete: a fresh passing review and fresh evidence are required",
        "harness-gate complete",
        lambda: complete.complete(repo, None, None),
        0,
    )
    d.shell(
        "Commit the completion",
        "git add harness && git commit -m 'Complete: add'",
        ("add", "harness"),
        ("commit", "-qm", "Complete: add"),
    )
    d.step(
        "CI judges every commit since the adoption, then the head's evidence and review",
        "harness-gate check --stage ci --base HEAD~3",
        gate("ci", base="HEAD~3"),
        0,
    )
    d.step(
        "The plan is completed: it grants no more write authority",
        "harness-gate status",
        lambda: status.status(repo, None),
        0,
    )
    out.write("\nDemo " + ("finished: every step behaved as shown.\n" if d.ok else "FAILED: see UNEXPECTED above.\n"))
    return 0 if d.ok else 1
