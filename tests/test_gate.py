"""`harness-gate check` in real repositories: the index, commit ranges, merges, names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import templates
from tests.helpers import TREE, Repo, complete_by_hand, from_template, plan_sha

BOUNDARY_ONLY = 'artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n'
HOOK = f"""#!/bin/sh
exec "{sys.executable}" -m harness_gate check --stage pre-commit --staged
"""


def findings(repo: Repo, *args: str) -> tuple[int, list[tuple[str, str]]]:
    res = repo.cli("check", *args, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == doc["exit_code"]
    return res.exit_code, sorted((f["code"], f["path"]) for f in doc["findings"])


def staged(repo: Repo) -> tuple[int, list[tuple[str, str]]]:
    return findings(repo, "--staged")


@pytest.fixture
def gated(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """A repository with harness-gate set up and an approved plan for `src/**`, committed.

    Evidence and reviews are switched off here: these tests are about the boundary
    (tests/test_evidence.py covers the stages that require them)."""
    return from_template(repo, tmp_path_factory, "test-gate-gated", _gated)


def _gated(repo: Repo) -> None:
    repo.write("README.md", "hello\n")
    repo.write("src/a.py", "a = 1\n")
    repo.write("other.py", "x = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt harness-gate")  # the adopting commit: inactive before it
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.git("add", "-A")
    assert staged(repo) == (0, [])
    repo.git("commit", "-qm", "plan p1")


def commit(repo: Repo, message: str, *, verify: bool = False) -> None:
    repo.git("add", "-A")
    repo.git("commit", "-qm", message, *([] if verify else ["--no-verify"]))


# -- the index ---------------------------------------------------------------------------


def test_inside_the_boundary_passes(gated: Repo) -> None:
    gated.write("src/a.py", "a = 2\n")
    gated.write("src/new/b.py", "b = 1\n")
    gated.git("add", "-A")
    assert staged(gated) == (0, [])


@pytest.mark.parametrize("action", ["add", "modify", "delete", "chmod"])
def test_outside_the_boundary_blocks(gated: Repo, action: str) -> None:
    if action == "add":
        gated.write("lib/new.py", "n = 1\n")
        gated.git("add", "-A")
        path = "lib/new.py"
    elif action == "modify":
        gated.write("other.py", "x = 2\n")
        gated.git("add", "-A")
        path = "other.py"
    elif action == "delete":
        gated.git("rm", "-q", "other.py")
        path = "other.py"
    else:
        gated.git("update-index", "--chmod=+x", "other.py")
        path = "other.py"
    assert staged(gated) == (1, [("HG101", path)])


def test_renames_count_on_both_sides(gated: Repo) -> None:
    gated.git("mv", "other.py", "src/other.py")  # rename in: the old side leaves the boundary
    assert staged(gated) == (1, [("HG101", "other.py")])
    gated.git("reset", "-q", "--hard")
    gated.git("mv", "src/a.py", "moved.py")  # rename out
    assert staged(gated) == (1, [("HG101", "moved.py")])


def test_unapproved_stale_completed_and_paused_plans(gated: Repo) -> None:
    folder = "harness/plans/p1"
    gated.write("src/a.py", "a = 3\n")
    # an unapproved plan
    gated.new_plan("p2", ("src/**",))
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert ("HG202", "harness/plans/p2/plan.md") in found
    # without p2, p1 governs again; completing it ends its authority
    gated.git("rm", "-rq", "--cached", "harness/plans/p2")
    shutil.rmtree(gated.path / "harness/plans/p2")
    complete_by_hand(gated)
    psha = plan_sha(gated, folder)
    gated.git("add", "-A")
    assert staged(gated) == (0, [])  # the work and the Completion that ends it, together
    gated.git("commit", "-qm", "work, and the plan completed")
    gated.write("src/a.py", "a = 4\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG209", f"{folder}/plan.md")])  # after its end: nothing more
    gated.git("reset", "-q", "--hard", "HEAD~1")
    gated.write("src/a.py", "a = 3\n")
    # paused instead of completed
    gated.write(
        f"{folder}/001-review.md",
        templates.review(
            binding={"plan_sha256": psha, "amendment_sha256": None, "tree": TREE, "evidence": []},
            identity="r",
            scope="all",
            findings=[{"id": "F1", "severity": "blocking", "path": None, "summary": "x"}],
            verdict="BLOCKED",
        ),
    )
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG209", f"{folder}/plan.md")])


def test_edited_approved_plan_is_blocked(gated: Repo) -> None:
    folder = "harness/plans/p1"
    plan = gated.path / folder / "plan.md"
    plan.write_bytes(plan.read_bytes().replace(b"`src/**`", b"`**/*.py`"))
    gated.write("other.py", "x = 9\n")
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert ("HG210", f"{folder}/plan.md") in found  # the approved artifact changed
    assert ("HG203", f"{folder}/plan.md") in found  # and its approval no longer counts
    # Re-approving the edited bytes still leaves the approved artifact modified.
    gated.approve()
    gated.git("add", "-A")
    code, found = staged(gated)
    assert ("HG210", f"{folder}/plan.md") in found


def test_logs_only_grow(gated: Repo) -> None:
    log = gated.path / "harness/plans/p1/approvals.jsonl"
    original = log.read_bytes()
    log.write_bytes(original.replace(b'"approver":"Ada Author', b'"approver":"Eve Author'))
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert ("HG211", "harness/plans/p1/approvals.jsonl") in found
    log.write_bytes(b"")
    gated.git("add", "-A")
    assert ("HG211", "harness/plans/p1/approvals.jsonl") in staged(gated)[1]
    log.write_bytes(original)
    gated.git("add", "-A")
    assert staged(gated) == (0, [])


def test_artifact_only_changes_need_no_plan(gated: Repo) -> None:
    gated.write("harness/plans/p9/plan.md", gated.read("harness/plans/p1/plan.md"))
    gated.git("add", "-A")
    assert staged(gated) == (0, [])
    # With code, the plan this change starts governs it (not the base's p1): unapproved.
    gated.write("src/a.py", "a = 5\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG202", "harness/plans/p9/plan.md")])


def test_invalid_artifact_blocks_its_commit(gated: Repo) -> None:
    gated.write("harness/plans/p1/001-review.md", "# Review\n")
    gated.write("harness/notes.txt", "x")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG501", "harness/plans/p1/001-review.md"), ("HG516", "harness/notes.txt")])


def test_protected_paths_need_an_exact_pattern(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.cli("init")
    commit(repo, "adopt")
    repo.new_plan("p1", ("src/**", ".github/**", ".gitignore"))
    repo.approve()
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write(".gitignore", "*.pyc\n")
    repo.write("src/.gitignore", "x\n")
    repo.write(".GitHub/x", "x\n")
    repo.git("add", "-A")
    code, found = staged(repo)
    assert code == 1
    assert found == [
        ("HG102", ".github/workflows/ci.yml"),
        ("HG102", "src/.gitignore"),
        ("HG106", ".GitHub/x"),
        ("HG101", ".GitHub/x"),
    ] or sorted(found) == sorted(
        [
            ("HG102", ".github/workflows/ci.yml"),
            ("HG102", "src/.gitignore"),
            ("HG106", ".GitHub/x"),
            ("HG101", ".GitHub/x"),
        ]
    )


def test_first_commit_adopts_and_the_second_is_judged(repo: Repo) -> None:
    """A repository's first commit has nothing to trust: it adopts harness-gate (config,
    hooks, even a plan and code) and is not judged; the next commit is."""
    repo.cli("init")
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.write("src/a.py", "1\n")
    repo.write("stray.py", "1\n")
    repo.git("add", "-A")
    res = repo.run("check", "--staged")
    assert res.returncode == 0, res.stdout
    assert b"first commit adopts harness-gate" in res.stdout
    repo.git("commit", "-qm", "adopt")
    repo.write("stray.py", "2\n")
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG101", "stray.py")])


# -- names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [b"src/with space.py", b"src/quo\"te's.py", "src/ünï.py".encode(), b"src/\xff\xfe.py"],
    ids=["space", "quotes", "utf8", "non-utf8"],
)
def test_unusual_names_inside_the_boundary(gated: Repo, name: bytes) -> None:
    Path(os.fsdecode(gated.path / os.fsdecode(name))).write_bytes(b"x\n")
    gated.git("add", "-A")
    assert staged(gated) == (0, [])


def test_non_utf8_name_outside_is_shown_escaped(gated: Repo) -> None:
    (gated.path / os.fsdecode(b"\xffbad.py")).write_bytes(b"x\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG101", "\\xffbad.py")])


def test_control_characters_always_block(gated: Repo) -> None:
    (gated.path / "src" / "new\nline.py").write_bytes(b"x\n")
    (gated.path / "src" / "tab\there.py").write_bytes(b"x\n")
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert [c for c, _ in found] == ["HG103", "HG103"]


def test_symlinks(gated: Repo) -> None:
    src = gated.path / "src"
    (src / "ok").symlink_to("a.py")
    gated.git("add", "-A")
    assert staged(gated) == (0, [])
    (src / "abs").symlink_to("/etc/passwd")
    (src / "up").symlink_to("../../outside")
    (src / "dotgit").symlink_to("../.git/config")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG104", "src/abs"), ("HG104", "src/dotgit"), ("HG104", "src/up")])


def test_submodules(gated: Repo) -> None:
    oid = gated.git("rev-parse", "HEAD").decode().strip()
    gated.git("update-index", "--add", "--cacheinfo", f"160000,{oid},src/vendor")
    assert staged(gated) == (1, [("HG105", "src/vendor")])
    gated.git("rm", "-q", "--cached", "src/vendor")
    gated.git("update-index", "--add", "--cacheinfo", f"160000,{oid},lib/vendor")
    gated.git("commit", "-qm", "submodule", "--no-verify")
    newer = gated.git("rev-parse", "HEAD").decode().strip()
    assert newer != oid
    gated.git("update-index", "--cacheinfo", f"160000,{newer},lib/vendor")
    assert staged(gated) == (1, [("HG101", "lib/vendor")])


# -- real commits through a git hook --------------------------------------------------------


@pytest.fixture
def hooked(gated: Repo) -> Repo:
    hook = gated.path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK)
    hook.chmod(0o755)
    return gated


def _commit_rc(repo: Repo, *args: str) -> int:
    return subprocess.run(
        ["git", "commit", "-qm", "x", *args], cwd=repo.path, capture_output=True, check=False
    ).returncode


def test_commit_all_is_judged_on_the_index_git_commits(hooked: Repo) -> None:
    head = hooked.git("rev-parse", "HEAD")
    hooked.write("other.py", "x = 5\n")  # tracked, modified, not staged
    assert _commit_rc(hooked, "--allow-empty") == 0  # nothing staged: passes
    assert _commit_rc(hooked, "-a") == 1  # `-a` stages other.py into a temporary index
    assert hooked.git("rev-parse", "HEAD") != head  # the empty commit landed
    assert not (hooked.path / ".git" / "index.lock").exists()


def test_commit_path_ignores_other_staged_files(hooked: Repo) -> None:
    hooked.write("other.py", "x = 6\n")
    hooked.git("add", "other.py")  # staged, outside the boundary
    hooked.write("src/a.py", "a = 6\n")
    assert _commit_rc(hooked, "--", "src/a.py") == 0  # commits only src/a.py
    assert _commit_rc(hooked) == 1  # the staged other.py is blocked


# -- ranges and merges -------------------------------------------------------------------


def test_range_catches_a_no_verify_commit(gated: Repo) -> None:
    base = gated.git("rev-parse", "HEAD").decode().strip()
    gated.write("other.py", "sneaky\n")
    commit(gated, "bad", verify=False)
    bad = gated.git("rev-parse", "HEAD").decode().strip()
    gated.write("src/a.py", "good\n")
    commit(gated, "good")
    res = gated.cli("check", "--range", f"{base}..HEAD", "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == 1
    assert [(f["code"], f["path"]) for f in doc["findings"]] == [("HG101", "other.py")]
    assert doc["findings"][0]["message"].startswith(f"commit {bad[:12]}: ")
    assert doc["data"]["commits"] == 2
    # Reverting the file later does not make the bad commit pass.
    gated.write("other.py", "x = 1\n")
    commit(gated, "revert")
    assert findings(gated, "--range", f"{base}..HEAD")[0] == 1


def test_base_mode_and_merges(gated: Repo) -> None:
    gated.git("checkout", "-qb", "feature")
    gated.write("src/a.py", "feature\n")
    commit(gated, "feature work")
    gated.git("checkout", "-q", "main")
    gated.write("other.py", "main moved on\n")
    commit(gated, "main work")
    gated.git("checkout", "-q", "feature")
    gated.git("merge", "-q", "--no-edit", "--no-verify", "main")
    # main's change arrives through the merge: not the branch's own.
    assert findings(gated, "--base", "main") == (0, [])
    assert findings(gated, "--stage", "ci", "--base", "main", "--head", "feature") == (0, [])
    # An evil merge: the merge commit itself adds a change outside the boundary.
    gated.write("evil.py", "evil\n")
    gated.git("add", "evil.py")
    gated.git("commit", "-q", "--amend", "--no-edit", "--no-verify")
    code, found = findings(gated, "--base", "main")
    assert (code, found) == (1, [("HG101", "evil.py")])


def test_merge_being_committed_is_judged_by_what_it_adds(gated: Repo) -> None:
    gated.git("checkout", "-qb", "feature")
    gated.write("src/a.py", "feature\n")
    commit(gated, "feature")
    gated.git("checkout", "-q", "main")
    gated.write("other.py", "main\n")
    commit(gated, "main")
    gated.git("checkout", "-q", "feature")
    gated.git("merge", "-q", "--no-commit", "main")
    assert staged(gated) == (0, [])
    gated.write("evil.py", "evil\n")
    gated.git("add", "evil.py")
    assert staged(gated) == (1, [("HG101", "evil.py")])


def test_shallow_clone_without_merge_base_is_an_error(gated: Repo, tmp_path: Path) -> None:
    gated.git("checkout", "-qb", "feature")
    gated.write("src/a.py", "f\n")
    commit(gated, "f")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{gated.path}", str(clone)], check=True
    )
    res = subprocess.run(
        [sys.executable, "-m", "harness_gate", "check", "--base", "origin/main", "--head", "origin/feature"],
        cwd=clone,
        capture_output=True,
        check=False,
    )
    assert res.returncode == 2
    assert b"HG905" in res.stdout
    assert b"fetch-depth: 0" in res.stdout


# -- modes -------------------------------------------------------------------------------


@pytest.mark.slow
def test_no_mode_is_a_usage_error(gated: Repo) -> None:
    res = gated.run("check")
    assert res.returncode == 2
    assert b"HG904" in res.stdout
    assert gated.run("check", "--stage", "ci").returncode == 2
    assert gated.run("check", "--staged", "--base", "main").returncode == 2
    assert gated.run("check", "--range", "main").returncode == 2
    assert gated.run("check", "--range", "nope..main").returncode == 2


def test_pre_commit_environment_picks_the_mode(gated: Repo) -> None:
    gated.write("other.py", "x = 7\n")
    gated.git("add", "-A")
    assert gated.run("check", env={"PRE_COMMIT": "1"}).returncode == 1
    base = gated.git("rev-parse", "HEAD").decode().strip()
    commit(gated, "bad")
    head = gated.git("rev-parse", "HEAD").decode().strip()
    env = {"PRE_COMMIT": "1", "PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head}
    res = gated.run("check", "--stage", "pre-push", env=env)
    assert res.returncode == 1
    assert b"HG101" in res.stdout


def test_inactive_repository(repo: Repo) -> None:
    repo.write("x.py", "1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "a project without harness-gate")
    repo.write("x.py", "2\n")
    repo.git("add", "-A")
    res = repo.run("check", "--staged")
    assert res.returncode == 0
    assert b"inactive" in res.stdout


def test_git_failure_is_exit_2(gated: Repo) -> None:
    (gated.path / ".git" / "index").write_bytes(b"garbage")
    res = gated.run("check", "--staged")
    assert res.returncode == 2
    assert b"HG903" in res.stdout


def test_explain(gated: Repo) -> None:
    res = gated.cli("explain", "src/a.py", "other.py", ".github/x", "harness/active", "--format", "json")
    assert res.exit_code == 1
    rows = {r["path"]: r["verdict"] for r in json.loads(res.output)["data"]["paths"]}
    assert rows == {"src/a.py": "allowed", "other.py": "blocked", ".github/x": "blocked", "harness/active": "allowed"}
    ok = gated.cli("explain", "src/x/y.py")
    assert ok.exit_code == 0
    assert "by pattern `src/**`" in ok.output


@pytest.mark.parametrize(
    "path", ["codeowners", "Codeowners", ".GITIGNORE", "src/.GitAttributes", ".Github/workflows/x.yml", "HARNESS/x"]
)
def test_case_variants_always_block(repo: Repo, path: str) -> None:
    repo.write("README.md", "x\n")
    repo.cli("init")
    commit(repo, "adopt")
    repo.new_plan("p1", ("src/**", "codeowners", "Codeowners"))  # listing a variant does not help
    repo.approve()
    repo.write(path, "x\n")
    repo.git("add", "-A")
    code, found = staged(repo)
    assert code == 1
    assert ("HG106", path) in found


# -- attacks found in review -----------------------------------------------------------------


def test_merge_that_drops_the_base_changes_is_blocked(gated: Repo) -> None:
    gated.git("checkout", "-qb", "feature")
    gated.write("src/a.py", "feature\n")
    commit(gated, "feature")
    gated.git("checkout", "-q", "main")
    gated.write("other.py", "main moved on\n")
    gated.write("mainonly.py", "new on main\n")
    commit(gated, "main")
    gated.git("checkout", "-q", "feature")
    gated.git("merge", "-q", "-s", "ours", "--no-edit", "--no-verify", "main")  # keeps feature's tree
    assert findings(gated, "--base", "main") == (1, [("HG101", "mainonly.py"), ("HG101", "other.py")])


def test_deleting_a_completion_does_not_restore_authority(gated: Repo) -> None:
    folder = "harness/plans/p1"
    complete_by_hand(gated)
    commit(gated, "complete p1")
    gated.git("rm", "-q", f"{folder}/002-completion.md")
    gated.write("src/a.py", "more work\n")
    gated.git("add", "-A")
    code, found = staged(gated)
    assert code == 1
    assert ("HG212", f"{folder}/002-completion.md") in found


def test_symlink_chains_are_resolved(gated: Repo) -> None:
    (gated.path / "src" / "up").symlink_to("..")
    gated.git("add", "-A")
    # The repository root is inside the repository, but writes through a new link to it
    # reach every path: outside the boundary (HG104). Committed anyway, it is an old link.
    assert staged(gated) == (1, [("HG104", "src/up")])
    commit(gated, "an old link to the root")
    (gated.path / "src" / "esc").symlink_to("up/..")
    (gated.path / "src" / "git").symlink_to("up/.git")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG104", "src/esc"), ("HG104", "src/git")])


@pytest.mark.parametrize("var", ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"])
def test_pathspec_environment_does_not_change_the_verdict(gated: Repo, var: str) -> None:
    gated.write("other.py", "x = 8\n")
    gated.git("add", "-A")
    res = gated.run("check", "--staged", env={var: "1"})
    assert res.returncode == 1
    assert b"HG101" in res.stdout


def test_a_file_in_place_of_github_or_the_artifacts_root(gated: Repo) -> None:
    (gated.path / ".github").symlink_to("src")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG102", ".github")])


def test_removing_a_badly_named_file_is_allowed(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    (repo.path / "src").mkdir()
    (repo.path / "src" / "bad\tname.py").write_bytes(b"x\n")
    repo.write("src/Codeowners", "x\n")
    commit(repo, "legacy names")
    repo.cli("init")
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    commit(repo, "adopt")
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.git("rm", "-q", "src/bad\tname.py", "src/Codeowners")
    repo.git("add", "-A")
    assert staged(repo) == (0, [])


def test_range_whose_base_predates_adoption(gated: Repo) -> None:
    first = gated.git("rev-list", "--max-parents=0", "HEAD").decode().strip()
    gated.write("other.py", "sneaky\n")
    commit(gated, "bypass")
    code, found = findings(gated, "--range", f"{first}..HEAD")
    assert (code, found) == (1, [("HG101", "other.py")])
    assert findings(gated, "--base", first)[0] == 1


def test_explain_agrees_with_check_on_artifacts(gated: Repo, tmp_path: Path) -> None:
    res = gated.cli("explain", "harness/plans/p1/plan.md", "harness/plans/p1/approvals.jsonl", "--format", "json")
    rows = {r["path"]: r for r in json.loads(res.output)["data"]["paths"]}
    assert rows["harness/plans/p1/plan.md"]["verdict"] == "blocked"
    assert "HG210" in rows["harness/plans/p1/plan.md"]["reason"]
    assert rows["harness/plans/p1/approvals.jsonl"]["verdict"] == "allowed"
    assert gated.run("explain", "--plan", "../../x", "src/a.py").returncode == 2
    bare = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    res2 = subprocess.run(
        [sys.executable, "-m", "harness_gate", "explain", "x.py"], cwd=bare, capture_output=True, check=False
    )
    assert res2.returncode == 0
    assert b"inactive" in res2.stdout


def test_orphan_branch_pushed_to_an_existing_remote_is_judged_whole(gated: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    gated.git("remote", "add", "origin", str(remote))
    gated.git("push", "-q", "--no-verify", "origin", "main")
    gated.git("checkout", "-q", "--orphan", "evil")
    gated.git("rm", "-rqf", ".")
    gated.write("evil.py", "evil\n")
    gated.git("add", "-A")
    gated.git("commit", "-qm", "root", "--no-verify")
    gated.git("merge", "-q", "--allow-unrelated-histories", "--no-edit", "--no-verify", "main")
    env = {"PRE_COMMIT": "1", "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_LOCAL_BRANCH": "evil"}
    res = gated.run("check", "--stage", "pre-push", "--format", "json", env=env)
    assert res.returncode == 1, res.stdout.decode()
    found = json.loads(res.stdout)["findings"]
    assert [f["code"] for f in found] == ["HG201"]  # the orphan root commit has no plan at all
    assert "evil.py" in found[0]["message"]
