"""Test helpers: a real repository driven through git and the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from harness_gate import lean, templates
from harness_gate.cli import cli

COMMANDS = [{"id": "tests", "command": "python -c pass", "timeout_seconds": 60}]
VERIFICATION: dict[str, Any] = {"kind": "tdd", "required_commands": COMMANDS}
TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
TREE2 = "1111111111111111111111111111111111111111"
V1 = "a" * 64
V2 = "b" * 64
# The interpreter running the tests, as a plan's command spells it.
PY = Path(sys.executable).as_posix()


def lean_audited(args: Sequence[str]) -> bool:
    """Whether `args` is a check of the index at pre-commit the lean path could answer
    (lean.py): every such check the suite runs is audited (`lean_passes`)."""
    if "check" not in args[:1] or "--staged" not in args or {"--plan", "--config", "--reverify"} & set(args):
        return False
    stage = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--stage"] + [
        a.partition("=")[2] for a in args if a.startswith("--stage=")
    ]
    return stage in ([], ["pre-commit"])


def lean_passes(path: Path, args: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
    """What the lean path answers for the staged check `args` in `path` now, before the full
    check runs: a differential audit of every staged check of the suite. A lean pass must be
    a full pass (the callers assert it); the full check, when it passes, may write the record
    the next check's lean path reads."""
    if not lean_audited(args):
        return False
    saved, cwd = dict(os.environ), Path.cwd()
    try:
        os.environ.update(env or {})
        os.chdir(path)
        return lean._passes()
    except Exception:  # lean.run declines on any error the same way
        return False
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


def git_failed(output: str) -> bool:
    """Whether the full check stopped on a git command that failed (HG903: a fault injected
    into a git the test put on PATH, or an object it cannot read). The lean path runs three
    git commands of its own and none of the others, so such a failure is no verdict on the
    change for it to agree with."""
    return "HG903" in output


@dataclass(frozen=True)
class Repo:
    path: Path

    def git(self, *args: str, input: bytes | None = None) -> bytes:
        return subprocess.run(["git", *args], cwd=self.path, input=input, capture_output=True, check=True).stdout

    def write(self, rel: str, data: str | bytes) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        return p

    def read(self, rel: str) -> bytes:
        return (self.path / rel).read_bytes()

    def cli(self, *args: str, input: str | bytes | None = None) -> Result:
        lean_passed = lean_passes(self.path, args)
        res = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
        if lean_passed and not git_failed(res.output):  # the full check ran: what the lean path passed, it passes
            assert res.exit_code == 0, f"the lean path passed what the full check refuses:\n{res.output}"
        return res

    def run(
        self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """The CLI as a real subprocess (`python -m harness_gate`)."""
        lean_passed = lean_passes(self.path, args, env)
        proc = subprocess.run(
            [sys.executable, "-m", "harness_gate", *args],
            cwd=self.path,
            input=input,
            capture_output=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
        if lean_passed:  # the same check by the full path (`--format text` is never the lean one's)
            full = subprocess.run(
                [sys.executable, "-m", "harness_gate", *args, "--format", "text"],
                cwd=self.path,
                capture_output=True,
                env={**os.environ, **(env or {})},
                check=False,
            )
            if not git_failed(full.stdout.decode(errors="replace")):
                assert full.returncode == 0, f"the lean path passed what the full check refuses:\n{full.stdout!r}"
        return proc

    def new_plan(self, plan_id: str = "p1", boundary: tuple[str, ...] = ("src/**",)) -> str:
        args = ["plan", "new", plan_id, "--objective", "Do it", "--verify", "tests=python -c pass"]
        for b in boundary:
            args += ["--boundary", b]
        res = self.cli(*args)
        assert res.exit_code == 0, res.output
        return f"harness/plans/{plan_id}"

    def approve(self, artifact: str | None = None, plan: str | None = None) -> Result:
        args = ["approve"] + (["--plan", plan] if plan else []) + ([artifact] if artifact else [])
        res = self.cli(*args, input="y\n")
        assert res.exit_code == 0, res.output
        return res


def plan_sha(repo: Repo, folder: str) -> str:
    import hashlib

    return hashlib.sha256(repo.read(f"{folder}/plan.md")).hexdigest()


def sha(repo: Repo, rel: str) -> str:
    import hashlib

    return hashlib.sha256(repo.read(rel)).hexdigest()


def review_md(plan_sha256: str, verdict: str, finding_ids: tuple[str, ...] = (), amendment: str | None = None) -> str:
    return templates.review(
        binding={"plan_sha256": plan_sha256, "amendment_sha256": amendment, "tree": TREE, "evidence": []},
        identity="reviewer-1",
        scope="The whole diff.",
        findings=[{"id": i, "severity": "major", "path": "src/a.py", "summary": "bug"} for i in finding_ids],
        verdict=verdict,
    )


def amendment_md(plan_sha256: str, *, material: bool, boundary: tuple[str, ...] = ("src/**", "docs/**")) -> str:
    """A Plan Amendment of the fixture plan that adds `docs/` (a material change or not)."""
    deltas = {
        k: {"material": False, "summary": "unchanged"}
        for k in ("objective", "acceptance_criteria", "scope", "write_boundary", "verification", "risk")
    }
    deltas["write_boundary"] = {"material": material, "summary": "add docs/"}
    return templates.amendment(
        plan_sha256=plan_sha256,
        amendment_sha256=None,
        deltas=deltas,
        objective="Do it",
        acceptance=["works"],
        scope="src and docs",
        boundary=boundary,
        verification=VERIFICATION,
    )


def repair_md(
    plan_sha256: str,
    review: str,
    round_: int,
    *,
    boundary: tuple[str, ...] = ("src/**",),
    verification: dict[str, Any] | None = None,
    progress: bool = True,
    amendment: str | None = None,
    finding_ids: tuple[str, ...] = ("F1",),
    changed: tuple[str, ...] = ("src/a.py",),
) -> str:
    return templates.repair(
        binding={"plan_sha256": plan_sha256, "amendment_sha256": amendment, "review": review, "round": round_},
        finding_ids=list(finding_ids),
        changed=list(changed),
        boundary=boundary,
        verification=verification or VERIFICATION,
        progress={
            "diff_before": TREE,
            "diff_after": TREE2 if progress else TREE,
            "verification_before": V1,
            "verification_after": V2 if progress else V1,
        },
    )


def completion_md(
    repo: Repo, folder: str, plan_sha256: str, review: str | None = "001-review.md", *, outcome: str = "completed"
) -> str:
    """A Completion bound to `review` at its current bytes (or to none, for a cancel)."""
    return templates.completion(
        binding={
            "plan_sha256": plan_sha256,
            "amendment_sha256": None,
            "review": review,
            "review_sha256": sha(repo, f"{folder}/{review}") if review else None,
            "tree": TREE,
        },
        summary="Done.",
        evidence=[],
        outcome=outcome,
    )


def complete_by_hand(repo: Repo, plan_id: str = "p1") -> str:
    """A PASS review (001) and a completion bound to it (002) written into the plan's folder
    (not committed). Returns the folder."""
    folder = f"harness/plans/{plan_id}"
    psha = plan_sha(repo, folder)
    repo.write(f"{folder}/001-review.md", review_md(psha, "PASS"))
    repo.write(f"{folder}/002-completion.md", completion_md(repo, folder, psha))
    return folder


def built_once(factory: Any, name: str, build: Any) -> Path:
    """`build(path)` run once per test run, not once per pytest-xdist worker.

    The workers share the parent of their base temporary directories; the first to take the
    lock builds, the others wait for it and reuse the result (a venv with the package
    installed, a team's repositories). Without xdist the base directory itself is used.
    """
    import fcntl

    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = shared / f"built-once-{name}"
    with (shared / f"built-once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = path.with_name(path.name + ".done")
        if not done.exists():
            if path.exists():  # a build that failed halfway: start again
                import shutil

                shutil.rmtree(path)
            path.mkdir()
            build(path)
            done.touch()
    return path


def from_template(repo: Repo, factory: Any, name: str, build: Any) -> Repo:
    """`repo` (new, empty) made a copy of the repository `build(Repo)` sets up, built once per
    test run (`built_once`): the same commits, index and files as building it here (the
    identity and clock are pinned), without a dozen git and CLI calls per test. Only for a
    set-up that depends on nothing but that pinned environment."""
    import shutil

    def make(path: Path) -> None:
        subprocess.run(["git", "init", "-q", str(path)], check=True)
        here = Path.cwd()
        os.chdir(path)  # the CLI runs in-process, in the working directory
        try:
            build(Repo(path))
        finally:
            os.chdir(here)

    template = built_once(factory, name, make)
    shutil.rmtree(repo.path / ".git")
    shutil.copytree(template, repo.path, symlinks=True, dirs_exist_ok=True)
    return repo


# The fuzz suites' depth: each run draws anew (no example database), so CI runs add up; a deep
# run on demand is `HG_FUZZ_SCALE=10 python -m pytest tests/adversarial -k fuzz`.
FUZZ_SCALE = float(os.environ.get("HG_FUZZ_SCALE", "0.5"))


def examples(n: int) -> int:
    """`n` examples scaled by HG_FUZZ_SCALE (never fewer than 20)."""
    return max(20, round(n * FUZZ_SCALE))


def adopted_main(repo: Repo) -> Repo:
    """`main`: a first commit (README.md), then the commit that adopts harness-gate (`init`)."""
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    return repo


def planned_branch(
    repo: Repo,
    *,
    objective: str = "x",
    verify: tuple[str, ...] = (f"tests={PY} -c pass",),
    boundary: tuple[str, ...] = ("src/**",),
    message: str = "plan",
) -> Repo:
    """A branch `feature` off the current commit: plan `p1` (`verify`: `ID=COMMAND` each)
    created, approved and committed with `message`."""
    repo.git("checkout", "-qb", "feature")
    args = ["plan", "new", "p1", "--objective", objective]
    for b in boundary:
        args += ["--boundary", b]
    for v in verify:
        args += ["--verify", v]
    res = repo.cli(*args)
    assert res.exit_code == 0, res.output
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", message)
    return repo


# The scope placeholder `review new` writes, and what a test's reviewer says they read.
SCOPE_READ = (templates.SCOPE_PLACEHOLDER, "Read.")


def filled_review(text: str, verdict: str = "PASS") -> str:
    """A review `review new` wrote, as its reviewer fills it in: what they read, the verdict."""
    return text.replace(*SCOPE_READ).replace(templates.VERDICT_PLACEHOLDER, verdict)


def pass_review(repo: Repo, reviewer: str = "Rae") -> Path:
    """`review new` by `reviewer` for plan `p1`'s current evidence, its verdict filled in as PASS."""
    res = repo.cli("review", "new", "--reviewer", reviewer)
    assert res.exit_code == 0, res.output
    review = repo.path / "harness/plans/p1/001-review.md"
    review.write_text(filled_review(review.read_text()))
    return review


def verified_work(repo: Repo, message: str = "work", *, reviewer: str | None = None) -> None:
    """`src/a.py` written and the plan's commands run (`verify`); with `reviewer`, a PASS
    review by them of that tree; all committed with `message`."""
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    assert repo.cli("verify").exit_code == 0
    if reviewer is not None:
        pass_review(repo, reviewer)
    repo.git("add", "-A")
    repo.git("commit", "-qm", message)


def completed_branch(repo: Repo) -> Repo:
    """main adopts harness-gate; `feature` plans, works, verifies, is reviewed and
    completes: a pull request that passes."""
    planned_branch(adopted_main(repo))
    verified_work(repo, reviewer="Rae")
    assert repo.cli("complete").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "complete")
    return repo


def blocked_branch(repo: Repo, verify: str = f"{PY} -c pass") -> str:
    """On an adopted `main`: a branch `feature` with an approved plan `p1` (`src/**`), work
    verified and committed, then a commit outside the boundary made with --no-verify.
    Returns that commit: a pull request CI blocks with HG101 there (and HG302 at the head)."""
    planned_branch(repo, verify=(f"tests={verify}",))
    verified_work(repo)
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "outside", "--no-verify")
    return repo.git("rev-parse", "HEAD").decode().strip()
