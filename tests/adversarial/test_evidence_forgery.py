"""Evidence and review forgery: hand-edited records, records for other trees or policies,
reordered and truncated logs, reviews bound to other states, completions without a pass;
and the scrubbed git environment of the commands `verify` runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_gate import runner, templates
from tests.adversarial.util import EVIDENCE_AT_PRE_PUSH, FOLDER, PY, check, commit, executable, report, setup_gated
from tests.helpers import Repo, plan_sha

LOG = f"{FOLDER}/evidence.jsonl"
# Passes only while src/a.py says "good", and never when HG_ADV_FAIL is set.
CHECKER = """import os, sys
sys.exit(0 if open("src/a.py").read() == "good\\n" and not os.environ.get("HG_ADV_FAIL") else 1)
"""
EVIDENCE_ONLY = EVIDENCE_AT_PRE_PUSH
WITH_REVIEW = 'artifacts_dir = "harness"\ncompletion_stages = []\n'
PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"
SCOPE = "FILL_IN: what the reviewer read (the diff, the plan, the evidence)."


def _setup(repo: Repo, config: str = EVIDENCE_ONLY) -> Repo:
    """Plan p1 (`src/**`) whose required command is src/check.py; src/a.py is "good"."""
    repo.write("src/check.py", CHECKER)
    setup_gated(repo, config=config, verify=f"{PY} src/check.py")
    repo.write("src/a.py", "good\n")
    return repo


@pytest.fixture
def verified(repo: Repo) -> Repo:
    """Fresh passing evidence for the staged work tree (pre-push passes)."""
    _setup(repo)
    assert report(repo, "verify")["exit_code"] == 0
    repo.git("add", "-A")
    assert pre_push(repo) == (0, [])
    return repo


def pre_push(repo: Repo) -> tuple[int, list[tuple[str, str]]]:
    return check(repo, "--stage", "pre-push", "--staged")


def _lines(repo: Repo) -> list[bytes]:
    return repo.read(LOG).splitlines(keepends=True)


def _rewrite_last(repo: Repo, edit: Callable[[bytes], bytes]) -> None:
    lines = _lines(repo)
    lines[-1] = edit(lines[-1].rstrip(b"\n")) + b"\n"
    repo.write(LOG, b"".join(lines))
    repo.git("add", "-A")


def _failed(repo: Repo) -> Repo:
    """The work fails its command: a FAIL record, and pre-push says so (HG305)."""
    _setup(repo)
    repo.write("src/a.py", "bad\n")
    assert report(repo, "verify")["exit_code"] == 1
    repo.git("add", "-A")
    assert pre_push(repo) == (1, [("HG305", LOG)])
    return repo


NON_CANONICAL_PASS = {
    "spacing": lambda ln: ln.replace(b'"exit_code":1,"status":"FAIL"', b'"exit_code": 0, "status": "PASS"'),
    "escaped": lambda ln: ln.replace(b'"exit_code":1,"status":"FAIL"', b'"exit_code":0,"status":"\\u0050ASS"'),
    "float-exit": lambda ln: ln.replace(b'"exit_code":1,"status":"FAIL"', b'"exit_code":0.0,"status":"PASS"'),
    "pass-nonzero": lambda ln: ln.replace(b'"status":"FAIL"', b'"status":"PASS"'),
    "duplicate": lambda ln: ln[:-1] + b',"status":"PASS"}',
    "key-order": lambda ln: json.dumps(dict(reversed(json.loads(ln).items())), separators=(",", ":")).encode(),
    "string-exit": lambda ln: ln.replace(b'"exit_code":1,"status":"FAIL"', b'"exit_code":"0","status":"PASS"'),
}


@pytest.mark.parametrize("how", sorted(NON_CANONICAL_PASS))
def test_fail_record_forged_into_a_non_canonical_pass(repo: Repo, how: str) -> None:
    """The FAIL record, hand-edited to read PASS in a form `verify` never writes: invalid
    (HG307), and with no valid record left, evidence is missing (HG301)."""
    _failed(repo)
    _rewrite_last(repo, NON_CANONICAL_PASS[how])
    assert pre_push(repo) == (1, [("HG301", LOG), ("HG307", LOG)])


def test_canonical_forgery_is_caught_by_reverify(repo: Repo) -> None:
    """A FAIL rewritten canonically to PASS is a valid record (the repository is only as
    trustworthy as its writers); CI's --reverify runs the command itself: HG305."""
    _failed(repo)
    _rewrite_last(repo, lambda ln: ln.replace(b'"exit_code":1,"status":"FAIL"', b'"exit_code":0,"status":"PASS"'))
    assert pre_push(repo) == (0, [])
    assert check(repo, "--stage", "ci", "--staged", "--reverify") == (1, [("HG305", LOG)])


def test_record_replayed_for_another_tree(verified: Repo) -> None:
    """The PASS record appended again after the code changed: it names the old tree."""
    verified.write("src/a.py", "good\n# changed after verification\n")
    verified.write(LOG, verified.read(LOG) + _lines(verified)[-1])
    verified.git("add", "-A")
    assert pre_push(verified) == (1, [("HG302", LOG)])


@pytest.mark.parametrize(("field", "code"), [("policy", "HG304"), ("plan_sha256", "HG303"), ("command", "HG304")])
def test_record_for_another_policy_or_plan(verified: Repo, field: str, code: str) -> None:
    """A record whose policy hash, plan hash or command is not the current one."""

    def edit(line: bytes) -> bytes:
        obj = json.loads(line)
        obj[field] = "f" * 64 if field != "command" else obj["command"] + " --skip-slow"
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()

    _rewrite_last(verified, edit)
    assert pre_push(verified) == (1, [(code, LOG)])


def test_fail_then_older_pass_reordered(verified: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed [PASS, FAIL] log (same tree) reordered to [FAIL, PASS]: rewritten (HG211)."""
    monkeypatch.setenv("HG_ADV_FAIL", "1")
    assert report(verified, "verify")["exit_code"] == 1
    monkeypatch.delenv("HG_ADV_FAIL")
    verified.git("add", "-A")
    assert pre_push(verified) == (1, [("HG305", LOG)])
    commit(verified, "work with a failing last run")
    passed, failed = _lines(verified)
    verified.write(LOG, failed + passed)
    verified.git("add", "-A")
    assert pre_push(verified) == (1, [("HG211", LOG)])


@pytest.mark.parametrize("cut", ["last-line", "mid-line", "edited"])
def test_committed_evidence_log_rewritten(verified: Repo, cut: str) -> None:
    """A committed log loses its last record, half of it, or has a record edited."""
    verified.cli("verify")
    commit(verified, "work and evidence")
    first, second = _lines(verified)
    if cut == "last-line":
        data = first
    elif cut == "mid-line":
        data = first + second[: len(second) // 2]
    else:
        data = first.replace(b'"status":"PASS"', b'"status":"PASS","note":"x"') + second
    verified.write(LOG, data)
    verified.git("add", "-A")
    assert pre_push(verified) == (1, [("HG211", LOG)])


# -- reviews and completion ------------------------------------------------------------------

REVIEW = f"{FOLDER}/001-review.md"
VERDICT_PASS = '"verdict": "PASS"'  # noqa: S105  (a review verdict, not a password)


@pytest.fixture
def reviewed(repo: Repo) -> Repo:
    """Fresh evidence and a PASS review of exactly the staged tree: the ci stage passes."""
    _setup(repo, WITH_REVIEW)
    assert report(repo, "verify")["exit_code"] == 0
    assert report(repo, "review", "new", "--reviewer", "Rae")["exit_code"] == 0
    repo.write(REVIEW, repo.read(REVIEW).replace(PLACEHOLDER.encode(), b"PASS").replace(SCOPE.encode(), b"Read."))
    repo.git("add", "-A")
    assert ci(repo) == (0, [])
    return repo


def ci(repo: Repo) -> tuple[int, list[tuple[str, str]]]:
    return check(repo, "--stage", "ci", "--staged")


def _edit_review(repo: Repo, old: str, new: str) -> None:
    text = repo.read(REVIEW)
    assert old.encode() in text
    repo.write(REVIEW, text.replace(old.encode(), new.encode()))
    repo.git("add", "-A")


def _binding(repo: Repo) -> dict[str, object]:
    text = repo.read(REVIEW).decode()
    start = text.index("```json\n", text.index("## Binding")) + len("```json\n")
    binding: dict[str, object] = json.loads(text[start : text.index("```", start)])["binding"]
    return binding


def test_review_bound_to_another_tree(reviewed: Repo) -> None:
    """The PASS review's tree swapped for another tree id: not a review of this state."""
    tree = str(_binding(reviewed)["tree"])
    _edit_review(reviewed, tree, "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
    assert ci(reviewed) == (1, [("HG413", REVIEW)])


def test_review_of_an_older_tree(reviewed: Repo) -> None:
    """The code changed (and was verified again) after the PASS review."""
    reviewed.write("src/a.py", "good\n")
    reviewed.write("src/b.py", "b = 1\n")
    assert report(reviewed, "verify")["exit_code"] == 0
    reviewed.git("add", "-A")
    assert ci(reviewed) == (1, [("HG413", REVIEW)])


def test_review_bound_to_another_plan_hash(reviewed: Repo) -> None:
    """A review written against other plan bytes: a stale binding (HG410), no review (HG413)."""
    _edit_review(reviewed, plan_sha(reviewed, FOLDER), "e" * 64)
    assert ci(reviewed) == (1, [("HG410", REVIEW), ("HG413", REVIEW)])


def test_review_with_the_placeholder_verdict(reviewed: Repo) -> None:
    """The verdict never filled in: the review does not validate, so nothing passes."""
    _edit_review(reviewed, VERDICT_PASS, f'"verdict": "{PLACEHOLDER}"')
    assert ci(reviewed) == (1, [("HG413", f"{FOLDER}/plan.md"), ("HG509", REVIEW)])


def _repair_required(repo: Repo) -> None:
    _edit_review(repo, VERDICT_PASS, '"verdict": "REPAIR_REQUIRED"')
    finding = '{"id": "F1", "severity": "major", "path": "src/a.py", "summary": "off by one"}'
    _edit_review(repo, '"findings": []', f'"findings": [{finding}]')


def test_review_that_does_not_pass(reviewed: Repo) -> None:
    """The latest review says REPAIR_REQUIRED: the ci stage blocks and quotes it (HG414)."""
    _repair_required(reviewed)
    assert ci(reviewed) == (1, [("HG414", REVIEW)])


def test_completion_without_a_passing_review(reviewed: Repo) -> None:
    """A Completion bound to a REPAIR_REQUIRED review, written by hand: HG405."""
    _repair_required(reviewed)
    completion = f"{FOLDER}/002-completion.md"
    reviewed.write(
        completion,
        templates.completion(
            binding={
                "plan_sha256": plan_sha(reviewed, FOLDER),
                "amendment_sha256": None,
                "review": "001-review.md",
                "review_sha256": hashlib.sha256(reviewed.read(REVIEW)).hexdigest(),
                "tree": str(_binding(reviewed)["tree"]),
            },
            summary="Done.",
            evidence=[],
            outcome="completed",
        ),
    )
    reviewed.git("add", "-A")
    assert ci(reviewed) == (1, [("HG405", completion), ("HG414", REVIEW)])


# -- the git environment of verified commands ----------------------------------------------


def test_runner_scrubs_every_local_git_variable() -> None:
    """GIT_LOCAL_ENV covers `git rev-parse --local-env-vars`, and scrubbed_env drops them."""
    local = subprocess.run(
        ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert local
    assert set(local) <= set(runner.GIT_LOCAL_ENV)
    polluted = dict.fromkeys(local, "x") | {"GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"}
    with pytest.MonkeyPatch.context() as m:
        for name, value in polluted.items():
            m.setenv(name, value)
        left = set(runner.scrubbed_env())
    assert not left & set(polluted)


def test_verified_commands_get_no_git_repository_variables(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify` run from a hook (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_* ... set): the
    command it runs sees none of `git rev-parse --local-env-vars`."""
    local = subprocess.run(
        ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True, check=True
    ).stdout.split()
    probe = executable(
        tmp_path / "probe.py",
        "import os, sys\n"
        f"names = {sorted(set(local) | {'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0'})!r}\n"
        "leaked = [n for n in names if n in os.environ]\n"
        "print('leaked:', leaked)\n"
        "sys.exit(1 if leaked else 0)\n",
    )
    setup_gated(repo, config=EVIDENCE_ONLY, verify=f"{PY} {probe}")
    git_dir = repo.path / ".git"
    hook_like = {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(repo.path),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_OBJECT_DIRECTORY": str(git_dir / "objects"),
        "GIT_COMMON_DIR": str(git_dir),
        "GIT_CONFIG_PARAMETERS": "'user.name'='Hook'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "user.email",
        "GIT_CONFIG_VALUE_0": "hook@example.com",
        "GIT_PREFIX": "",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_REPLACE_REF_BASE": "refs/replace/",
        "GIT_SHALLOW_FILE": str(git_dir / "shallow"),
        "GIT_GRAFT_FILE": str(git_dir / "info" / "grafts"),
        "GIT_CONFIG": str(git_dir / "config"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git_dir / "objects"),
        "GIT_IMPLICIT_WORK_TREE": "1",
    }
    for name, value in hook_like.items():
        monkeypatch.setenv(name, value)
    doc = report(repo, "verify")
    record = json.loads(repo.read(LOG).splitlines()[-1])
    assert (doc["exit_code"], record["status"]) == (0, "PASS"), record["key_output"]
    assert "leaked: []" in record["key_output"]
