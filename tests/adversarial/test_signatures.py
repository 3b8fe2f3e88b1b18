"""Signed approvals and reviews (`require_signed_approvals`, `require_signed_reviews`,
`require_distinct_reviewer`): a record counts in a commit check only when the commit
that added it has a good SSH signature by a key the *base* commit's allowed_signers
lists. Real keys, real `git commit -S`, real verification by ssh-keygen."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness_gate import artifacts_tree, history
from tests.helpers import Repo, pass_review

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")

FOLDER = "harness/plans/p1"
SIGNERS = "harness/allowed_signers"


def signer_line(keys: dict[str, Path], name: str) -> str:
    return f"{name}@example.com {(keys[name].with_suffix('.pub')).read_text().strip()}\n"


def commit(repo: Repo, message: str, key: Path | None = None) -> None:
    repo.git("add", "-A")
    if key is None:
        repo.git("commit", "-qm", message, "--no-verify")
    else:
        repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-S", "-qm", message, "--no-verify")


def findings(repo: Repo, *args: str) -> list[tuple[str, str]]:
    res = repo.cli("check", *args, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == doc["exit_code"], res.output
    return [(f["code"], f["path"]) for f in doc["findings"]]


def ci(repo: Repo) -> list[tuple[str, str]]:
    return findings(repo, "--base", "main", "--head", "HEAD", "--stage", "ci")


def adopt(repo: Repo, keys: dict[str, Path], *, signers: tuple[str, ...] = ("alice",), extra: str = "") -> Repo:
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.write(
        ".harness-gate.toml",
        "require_signed_approvals = true\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n" + extra,
    )
    if signers:
        repo.write(SIGNERS, "".join(signer_line(keys, n) for n in signers))
    commit(repo, "adopt")
    repo.git("checkout", "-qb", "work")
    return repo


def plan_and_code(repo: Repo, approval_key: Path | None) -> None:
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    commit(repo, "plan", approval_key)
    repo.write("src/a.py", "x = 1\n")
    commit(repo, "code")


def test_approval_signed_by_an_allowed_key_counts(repo: Repo, keys: dict[str, Path]) -> None:
    """The baseline: a signed approval by a listed key passes, so the others can fail."""
    adopt(repo, keys)
    plan_and_code(repo, keys["alice"])
    assert ci(repo) == []


def test_unsigned_approval_grants_nothing(repo: Repo, keys: dict[str, Path]) -> None:
    """Anyone with write access can write a record; unsigned, it counts for nothing in CI."""
    adopt(repo, keys)
    plan_and_code(repo, None)
    found = ci(repo)
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG202", f"{FOLDER}/plan.md") in found


def test_approval_signed_by_an_unlisted_key(repo: Repo, keys: dict[str, Path]) -> None:
    """A good signature by a key allowed_signers does not list (status U) is not an approval."""
    adopt(repo, keys)
    plan_and_code(repo, keys["mallory"])
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in ci(repo)


def test_the_change_cannot_add_its_own_key(repo: Repo, keys: dict[str, Path]) -> None:
    """allowed_signers is read from the base: adding mallory in the change does not help."""
    adopt(repo, keys)
    repo.write(SIGNERS, signer_line(keys, "alice") + signer_line(keys, "mallory"))
    plan_and_code(repo, keys["mallory"])
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in ci(repo)


def test_no_allowed_signers_on_the_base(repo: Repo, keys: dict[str, Path]) -> None:
    """Signed approvals required but no trust anchor on the base: nothing can count."""
    adopt(repo, keys, signers=())
    repo.write(SIGNERS, signer_line(keys, "alice"))
    plan_and_code(repo, keys["alice"])
    found = ci(repo)
    assert ("HG220", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG202", f"{FOLDER}/plan.md") in found


def test_repository_config_cannot_swap_the_verifier(repo: Repo, keys: dict[str, Path], tmp_path: Path) -> None:
    """`.git/config` naming another allowed-signers file and a lying ssh program changes nothing."""
    adopt(repo, keys)
    plan_and_code(repo, keys["mallory"])
    fake_signers = tmp_path / "signers"
    fake_signers.write_text(signer_line(keys, "mallory"))
    liar = tmp_path / "liar"
    liar.write_text("#!/bin/sh\necho 'Good \"git\" signature for alice@example.com'\nexit 0\n")
    liar.chmod(0o755)
    repo.git("config", "gpg.ssh.allowedSignersFile", str(fake_signers))
    repo.git("config", "gpg.ssh.program", str(liar))
    repo.git("config", "gpg.program", str(liar))
    found = ci(repo)
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG202", f"{FOLDER}/plan.md") in found


def test_blame_ignore_revs_cannot_reattribute_a_record(repo: Repo, keys: dict[str, Path]) -> None:
    """An unsigned commit rewrites alice's record; blame.ignoreRevsFile names that commit so
    blame would hand the line back to alice. The verifier overrides it."""
    adopt(repo, keys)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    commit(repo, "plan", keys["alice"])
    plan = repo.read(f"{FOLDER}/plan.md")
    repo.write(f"{FOLDER}/plan.md", plan.replace(b"src/**", b"lib/**"))
    repo.approve()
    log = repo.path / FOLDER / "approvals.jsonl"
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[1].replace(b'"seq":2', b'"seq":1'))
    commit(repo, "rewrite alice's record, unsigned")
    unsigned = repo.git("rev-parse", "HEAD").decode().strip()
    (repo.path / ".git" / "ignore-revs").write_text(unsigned + "\n")
    repo.git("config", "blame.ignoreRevsFile", ".git/ignore-revs")
    repo.write("lib/a.py", "x = 1\n")
    commit(repo, "code")
    found = ci(repo)
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG211", f"{FOLDER}/approvals.jsonl") in found


def test_approval_beyond_a_shallow_history(repo: Repo, keys: dict[str, Path], tmp_path: Path) -> None:
    """The commit that added a record was cut off by a shallow clone: unattributable, not trusted."""
    adopt(repo, keys)
    plan_and_code(repo, keys["alice"])
    for n in range(3):
        repo.write(f"src/b{n}.py", f"x = {n}\n")
        commit(repo, f"more {n}")
    repo.git("branch", "-f", "main", "HEAD~1")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", "--no-single-branch", f"file://{repo.path}", str(clone)], check=True
    )
    shallow = Repo(clone)
    shallow.git("branch", "-q", "main", "origin/main")
    subprocess.run(["git", "checkout", "-q", "origin/work"], cwd=clone, check=True)
    res = shallow.run("check", "--base", "main", "--head", "HEAD", "--stage", "ci", "--format", "json")
    doc = json.loads(res.stdout)
    assert ("HG220", f"{FOLDER}/approvals.jsonl") in [(f["code"], f["path"]) for f in doc["findings"]], doc


def test_pre_push_range_checks_signatures_too(repo: Repo, keys: dict[str, Path]) -> None:
    """The rule holds for every commit check, not only the pull request's."""
    adopt(repo, keys)
    plan_and_code(repo, None)
    assert ("HG217", f"{FOLDER}/approvals.jsonl") in findings(repo, "--range", "main..HEAD", "--stage", "pre-push")


def test_signed_range_is_judged_as_with_per_commit_reads(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit that leaves the artifacts root alone reuses its parent's vouched state (and
    blame); judging every commit with its own read and blame must find the same."""
    adopt(repo, keys)
    plan_and_code(repo, keys["alice"])  # a signed approval, then unsigned code
    repo.write("src/b.py", "y = 1\n")
    commit(repo, "more code")
    repo.new_plan("p2", ("src/**",))
    repo.approve()
    commit(repo, "plan p2, approved in an unsigned commit")
    repo.write("src/a.py", "x = 2\n")
    commit(repo, "code under p2")
    repo.write("src/c.py", "z = 1\n")
    commit(repo, "more code under p2")
    args = ("--range", "main..HEAD", "--stage", "pre-push")
    derived = findings(repo, *args)
    assert ("HG217", "harness/plans/p2/approvals.jsonl") in derived
    assert ("HG217", f"{FOLDER}/approvals.jsonl") not in derived
    monkeypatch.setattr(
        history.RangeStates, "artifacts_tree", lambda self, oid: artifacts_tree.from_commit(self.root, oid, self.cfg)
    )
    monkeypatch.setattr(history.RangeStates, "config", lambda self, oid: artifacts_tree.read_config(self.root, oid))
    monkeypatch.setattr(history.RangeStates, "shares_parent_state", lambda self, commit: False)
    assert findings(repo, *args) == derived


def test_index_check_does_not_claim_signatures(repo: Repo, keys: dict[str, Path]) -> None:
    """Before the commit exists there is no signature to check: pre-commit judges consistency only."""
    adopt(repo, keys)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    assert findings(repo, "--staged") == []


# -- reviews -------------------------------------------------------------------------


def reviewed(repo: Repo, keys: dict[str, Path], code_key: Path | None, review_key: Path | None) -> None:
    """A plan approved by alice, code, fresh evidence, and a PASS review, each in its own commit."""
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    commit(repo, "plan", keys["alice"])
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    assert repo.cli("verify").exit_code == 0
    commit(repo, "code", code_key)
    pass_review(repo)
    commit(repo, "review", review_key)


def config(repo: Repo, text: str) -> None:
    (repo.path / ".harness-gate.toml").write_text(text)
    commit(repo, "config")
    repo.git("branch", "-f", "main", "HEAD")


BASE = 'require_signed_approvals = true\nevidence_stages = []\nreview_stages = ["ci"]\ncompletion_stages = []\n'


def test_signed_review_counts(repo: Repo, keys: dict[str, Path]) -> None:
    """The baseline for the review rules: bob signs the review, nobody signs the code."""
    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE + "require_signed_reviews = true\n")
    reviewed(repo, keys, None, keys["bob"])
    assert ci(repo) == []


def test_unsigned_review(repo: Repo, keys: dict[str, Path]) -> None:
    """require_signed_reviews: a PASS review in an unsigned commit is not a review."""
    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE + "require_signed_reviews = true\n")
    reviewed(repo, keys, None, None)
    assert ci(repo) == [("HG218", f"{FOLDER}/001-review.md")]


def test_reviewer_signed_the_code_too(repo: Repo, keys: dict[str, Path]) -> None:
    """require_distinct_reviewer: the key that signed the review signed a code commit."""
    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE + "require_distinct_reviewer = true\n")
    reviewed(repo, keys, keys["bob"], keys["bob"])
    assert ci(repo) == [("HG219", f"{FOLDER}/001-review.md")]


def test_distinct_reviewer_passes(repo: Repo, keys: dict[str, Path]) -> None:
    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE + "require_distinct_reviewer = true\n")
    reviewed(repo, keys, keys["alice"], keys["bob"])
    assert ci(repo) == []


# -- review findings: the trust anchor, foreign histories, independence ----------------


def test_allowed_signers_changed_by_an_unsigned_commit(repo: Repo, keys: dict[str, Path]) -> None:
    """Adding a key to the trust anchor needs a signature by a key the base already lists
    (and, as for any protected path, a plan naming the file exactly)."""
    adopt(repo, keys)
    repo.write(SIGNERS, signer_line(keys, "alice") + signer_line(keys, "mallory"))
    commit(repo, "trust mallory, with no plan")
    assert ci(repo) == [("HG201", "harness/plans"), ("HG221", SIGNERS)]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.new_plan("p1", (SIGNERS,))
    repo.approve()
    commit(repo, "plan: the team's keys", keys["alice"])
    repo.write(SIGNERS, signer_line(keys, "alice") + signer_line(keys, "mallory"))
    commit(repo, "trust mallory")
    assert ci(repo) == [("HG221", SIGNERS)]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.write(SIGNERS, signer_line(keys, "alice") + signer_line(keys, "mallory"))
    commit(repo, "trust mallory", keys["mallory"])  # signed, but by the key being added
    assert ci(repo) == [("HG221", SIGNERS)]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.write(SIGNERS, signer_line(keys, "alice") + signer_line(keys, "bob"))
    commit(repo, "trust bob", keys["alice"])
    assert ci(repo) == []


def test_signed_record_from_another_repository_merged_in(
    repo: Repo, keys: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice signed an approval of plan p1 in another repository; merging that history in
    does not make it this repository's approval."""
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    subprocess.run(["git", "init", "-q", str(other.path)], check=True)
    monkeypatch.chdir(other.path)
    other.write(
        ".harness-gate.toml",
        "require_signed_approvals = true\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n",
    )
    assert other.cli("init").exit_code == 0
    commit(other, "other root")
    other.new_plan("p1", ("src/**",))
    other.approve()
    commit(other, "plan", keys["alice"])
    monkeypatch.chdir(repo.path)
    adopt(repo, keys)
    repo.git("fetch", "-q", str(other.path), "HEAD:refs/heads/other")
    repo.git("merge", "-q", "--allow-unrelated-histories", "--no-edit", "other", "-X", "ours")
    repo.write("src/evil.py", "x = 1\n")
    commit(repo, "code")
    found = ci(repo)
    assert ("HG214", f"{FOLDER}/approvals.jsonl") in found
    # The plan came in by merging another branch: it governs nothing here, signed or not.
    assert ("HG201", "harness/plans") in found


def test_distinct_reviewer_needs_signed_code(repo: Repo, keys: dict[str, Path]) -> None:
    """bob writes the code unsigned and signs his own review: independence is not shown."""
    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE + "require_distinct_reviewer = true\n")
    reviewed(repo, keys, None, keys["bob"])
    assert ci(repo) == [("HG219", f"{FOLDER}/001-review.md")]


def test_without_ssh_keygen_the_check_stops(repo: Repo, keys: dict[str, Path], tmp_path: Path) -> None:
    """No verifier on PATH: exit 2 with HG906, never a pass and never a traceback."""
    adopt(repo, keys)
    plan_and_code(repo, keys["alice"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "git")
    res = repo.run("check", "--base", "main", "--stage", "ci", "--format", "json", env={"PATH": str(bin_dir)})
    assert res.returncode == 2, res.stderr
    assert json.loads(res.stdout)["error"]["code"] == "HG906"
    assert b"Traceback" not in res.stderr
