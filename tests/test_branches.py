"""Which plans are a branch's own (origins), which govern (governance), what a change is
(changes), and reading a state's plan folders only when asked (artifacts_tree.Blobs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import artifacts_tree, git, governance, patch_id
from harness_gate import origins as origins_mod
from harness_gate.origins import Origins
from tests.helpers import Repo, complete_by_hand


def _plans(table: dict[str, set[str]]) -> origins_mod.PlansOf:
    return lambda oid: frozenset(table[oid])


def _commit(oid: str, *parents: str) -> git.Commit:
    return git.Commit(oid, parents, ())


def test_a_plan_added_on_the_line_is_its_own_and_a_merged_one_is_foreign() -> None:
    # base B (plan old) -> a1 adds mine -> (other line: u1 adds theirs) -> m merges u1 -> a2
    plans = {
        "B": {"old"},
        "a1": {"old", "mine"},
        "u1": {"old", "theirs"},
        "m": {"old", "mine", "theirs"},
        "a2": {"old", "mine", "theirs"},
    }
    listing = [_commit("a1", "B"), _commit("u1", "B"), _commit("m", "a1", "u1"), _commit("a2", "m")]
    found = origins_mod.walk(listing, _plans(plans))
    assert found["a1"] == Origins(own=frozenset({"mine"}), added=frozenset({"mine"}))
    assert found["u1"].own == {"theirs"}  # on its own line, the other branch's plan is its own
    assert found["m"].foreign == {"theirs"} and found["m"].own == {"mine"}
    assert found["a2"].foreign == {"theirs"} and found["a2"].own == {"mine"} and found["a2"].added == set()


def test_merging_the_base_again_brings_base_plans_not_foreign_ones() -> None:
    # "Update branch": the base's tip M (outside the listing) merged into the branch.
    plans = {"B": set(), "a1": {"mine"}, "M": {"landed"}, "u": {"mine", "landed"}}
    listing = [_commit("a1", "B"), _commit("u", "a1", "M")]
    found = origins_mod.walk(listing, _plans(plans))
    assert found["u"] == Origins(own=frozenset({"mine"}))  # `landed` is the base's


def test_a_plan_the_other_line_inherited_from_this_one_stays_own() -> None:
    # u1 was branched off a1 (it has `mine`), then merged back: `mine` is not foreign.
    plans = {"B": set(), "a1": {"mine"}, "u1": {"mine", "theirs"}, "m": {"mine", "theirs"}}
    listing = [_commit("a1", "B"), _commit("u1", "a1"), _commit("m", "a1", "u1")]
    found = origins_mod.walk(listing, _plans(plans))
    assert found["m"].own == {"mine"} and found["m"].foreign == {"theirs"}


def test_a_merge_that_adds_a_plan_itself_owns_it() -> None:
    plans = {"B": set(), "a1": set(), "u1": set(), "m": {"evil"}}
    listing = [_commit("a1", "B"), _commit("u1", "B"), _commit("m", "a1", "u1")]
    assert origins_mod.walk(listing, _plans(plans))["m"].added == {"evil"}


def test_patch_id_ignores_what_moves_when_the_base_changes_elsewhere() -> None:
    one = b"diff --git a/x b/x\nindex 111..222 100644\n--- a/x\n+++ b/x\n@@ -10,3 +10,3 @@ def f():\n a\n-b\n+c\n d\n"
    moved = one.replace(b"index 111..222", b"index 333..444").replace(
        b"@@ -10,3 +10,3 @@ def f():", b"@@ -90,3 +91,3 @@"
    )
    other = one.replace(b"+c", b"+C")

    def pid(patch: bytes) -> str:
        return patch_id.patch_id(patch.splitlines(keepends=True))

    assert pid(one) == pid(moved)
    assert pid(one) != pid(other)
    assert pid(one) != pid(one.replace(b" a\n", b" A\n"))  # context counts


def test_change_id_survives_a_base_change_elsewhere_and_sees_mode_changes(repo: Repo) -> None:
    def tree(files: dict[str, str], modes: dict[str, str] | None = None) -> str:
        lines = []
        for path, text in files.items():
            oid = repo.git("hash-object", "-w", "--stdin", input=text.encode()).decode().strip()
            lines.append(f"{(modes or {}).get(path, '100644')} blob {oid}\t{path}")
        return (
            repo.git("mktree", input=("\n".join(sorted(lines, key=lambda x: x.split("\t")[1])) + "\n").encode())
            .decode()
            .strip()
        )

    body = "".join(f"line {i}\n" for i in range(40))
    base = tree({"a.py": body, "b.py": "b\n"})
    mine = tree({"a.py": body.replace("line 20\n", "changed\n"), "b.py": "b\n"})
    base2 = tree({"a.py": "new first line\n" + body, "b.py": "b2\n"})  # the base moved, elsewhere
    mine2 = tree({"a.py": "new first line\n" + body.replace("line 20\n", "changed\n"), "b.py": "b2\n"})
    assert patch_id.change_id(repo.path, base, mine) == patch_id.change_id(repo.path, base2, mine2)
    near = tree({"a.py": body.replace("line 19\n", "near\n"), "b.py": "b\n"})  # within the context
    near_mine = tree({"a.py": body.replace("line 19\n", "near\n").replace("line 20\n", "changed\n"), "b.py": "b\n"})
    assert patch_id.change_id(repo.path, base, mine) != patch_id.change_id(repo.path, near, near_mine)
    executable = tree({"a.py": body, "b.py": "b\n"}, {"b.py": "100755"})
    assert patch_id.change_id(repo.path, base, executable) != patch_id.change_id(repo.path, base, base)


def test_base_refs_name_exactly_one_ref_each(repo: Repo) -> None:
    repo.write("a", "1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "one")
    repo.git("checkout", "-qb", "feature")
    repo.write("a", "2\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "two")
    repo.git("branch", "master/nested")  # `--glob=refs/heads/master` alone means refs/heads/master/*
    mine = git.commits(repo.path, "HEAD", [], not_refs=git.base_refs(None))
    assert len(mine) == 1
    assert git.commits(repo.path, "HEAD", [], not_refs=git.base_refs("feature")) == []


# -- governance on real states -----------------------------------------------------------------


@pytest.fixture
def adopted(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    repo.cli("init")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    return repo


def _ended(repo: Repo, plan_id: str) -> None:
    repo.new_plan(plan_id)
    repo.approve(plan=plan_id)
    complete_by_hand(repo, plan_id)


def test_own_open_plans_govern_before_the_bases(adopted: Repo) -> None:
    adopted.new_plan("base-plan")
    adopted.approve(plan="base-plan")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "a plan open on main")
    adopted.git("checkout", "-qb", "feature")
    artifacts = artifacts_tree.from_commit(adopted.path, "HEAD")
    assert governance.candidates(artifacts, Origins()).ids == ("base-plan",)  # the solo flow
    adopted.new_plan("mine")
    adopted.git("add", "-A")
    index = artifacts_tree.from_index(adopted.path)
    origins = origins_mod.locally(
        adopted.path,
        index.config,
        [adopted.git("rev-parse", "HEAD").decode().strip()],
        frozenset(governance.present(index)),
    )
    assert origins.own == {"mine"}
    found = governance.candidates(index, origins)
    assert found.ids == ("mine",) and found.why == "started on this branch"


def test_a_folder_holding_a_completion_governs_nothing_and_is_read_on_demand(adopted: Repo) -> None:
    for i in range(3):
        _ended(adopted, f"done{i}")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "three ended plans")
    artifacts = artifacts_tree.from_commit(adopted.path, "HEAD")
    assert isinstance(artifacts.files, artifacts_tree.Blobs)
    assert governance.candidates(artifacts, Origins()).ids == ()
    assert not artifacts.files._data.keys() & {p for p in artifacts.files if "/done" in p}
    assert artifacts.files["harness/plans/done1/plan.md"].startswith(b"# Plan")  # read when asked
    code, path, why = governance.no_candidate(artifacts, Origins())
    assert (code, path) == ("HG201", "harness/plans") and "3 plans here" in why


def test_an_oversized_file_in_an_ended_folder_is_found_when_read(adopted: Repo) -> None:
    adopted.write(".harness-gate.toml", 'artifacts_dir = "harness"\nmax_artifact_bytes = 1024\n')
    _ended(adopted, "done")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "ended")
    adopted.write("harness/plans/done/003-review.md", "x" * 2000)
    adopted.git("add", "-A")
    artifacts = artifacts_tree.from_index(adopted.path)
    assert artifacts.problems == ()  # the folder is not read yet
    assert artifacts.files.get("harness/plans/done/003-review.md") is None
    assert [f.code for f in artifacts.problems] == ["HG512"]
    res = adopted.cli("check", "--staged", "--format", "json")
    assert ("HG512", "harness/plans/done/003-review.md") in {
        (f["code"], f["path"]) for f in json.loads(res.output)["findings"]
    }


def test_plan_use_narrows_two_open_plans_locally(adopted: Repo) -> None:
    adopted.git("checkout", "-qb", "feature")
    adopted.new_plan("a", ("src/**",))
    adopted.approve(plan="a")
    adopted.new_plan("b", ("docs/**",))
    adopted.approve(plan="b")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "two plans", "--no-verify")
    adopted.write("src/x.py", "1\n")
    adopted.git("add", "-A")
    # `plan new b` picked b for this branch: only b is tried, and it does not allow src/.
    res = adopted.cli("check", "--staged", "--format", "json")
    assert {f["code"] for f in json.loads(res.output)["findings"]} == {"HG101"}
    assert adopted.cli("plan", "use", "a").exit_code == 0
    assert adopted.cli("check", "--staged").exit_code == 0
    assert adopted.git("config", "branch.feature.harnessGatePlan") == b"a\n"
    # CI has no pick: one plan allowing the whole change authorises it.
    adopted.git("commit", "-qm", "src", "--no-verify")
    adopted.git("config", "--unset", "branch.feature.harnessGatePlan")
    assert adopted.cli("check", "--stage", "pre-commit", "--base", "main").exit_code == 0


def test_status_says_which_plan_and_asks_when_two_could_be_meant(adopted: Repo) -> None:
    adopted.git("checkout", "-qb", "feature")
    adopted.new_plan("a")
    adopted.new_plan("b")
    adopted.git("config", "--unset", "branch.feature.harnessGatePlan")
    res = adopted.cli("status")
    assert res.exit_code == 0
    assert "more than one plan could be meant: a, b" in res.output
    assert "harness-gate plan use ID" in res.output
    assert adopted.cli("plan", "use", "b").exit_code == 0
    assert "plan:       b " in adopted.cli("status").output


def test_plan_use_refuses_what_it_cannot_keep(adopted: Repo) -> None:
    assert adopted.cli("plan", "use", "ghost").exit_code == 2
    adopted.new_plan("a")
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=adopted.path, check=True)
    res = adopted.cli("plan", "use", "a")
    assert res.exit_code == 2 and "detached" in res.output


def test_locally_without_commits_of_its_own_reads_no_history(adopted: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the base branch itself, the diff says what the index adds: no RangeStates is built."""
    from harness_gate import history

    built: list[object] = []
    monkeypatch.setattr(history.RangeStates, "__init__", lambda *a, **k: built.append(a))
    head = adopted.git("rev-parse", "HEAD").decode().strip()
    cfg = artifacts_tree.read_config(adopted.path, head)
    assert origins_mod.locally(adopted.path, cfg, [head], frozenset({"p"}), added=frozenset({"p"})) == Origins(
        own=frozenset({"p"}), added=frozenset({"p"})
    )
    assert built == []


def test_changes_of_a_branch_are_measured_from_where_it_left_the_base(adopted: Repo) -> None:
    from harness_gate import fingerprints, freshness
    from harness_gate.state_facts import GitFacts

    adopted.git("checkout", "-qb", "feature")
    adopted.write("src/a.py", "a = 1\n")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "work")
    cfg = artifacts_tree.read_config(adopted.path, "HEAD")
    change = freshness.branch_change(GitFacts(adopted.path), cfg, fingerprints.fingerprint_worktree(adopted.path, cfg))
    assert change is not None
    assert change["base"] == adopted.git("rev-parse", "main").decode().strip()


@pytest.mark.slow
def test_the_hook_in_a_shallow_clone_walks_no_further_than_its_cut(adopted: Repo, tmp_path: Path) -> None:
    """A CI job that runs the pre-commit hooks in a depth-1 clone: the cut stands for the
    base, never an error about missing parents."""
    adopted.git("checkout", "-qb", "feature")
    adopted.new_plan("p1", ("src/**",))
    adopted.approve(plan="p1")
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "plan")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{adopted.path}", str(clone)], check=True
    )
    for ref in ("refs/remotes/origin/HEAD", "refs/remotes/origin/feature"):  # no base branch known at all
        subprocess.run(["git", "update-ref", "-d", "--no-deref", ref], cwd=clone, check=True)
    (clone / "src").mkdir()
    (clone / "src" / "a.py").write_text("a = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    res = subprocess.run(
        [sys.executable, "-m", "harness_gate", "check", "--staged", "--format", "json"],
        cwd=clone,
        capture_output=True,
        check=False,
    )
    # Judged, not stopped (exit 2, HG905): only the approval, whose root commit a shallow
    # clone cannot show, is in question, as before the branch's commits were walked.
    assert res.returncode == 1, res.stdout
    assert {f["code"] for f in json.loads(res.stdout)["findings"]} == {"HG220", "HG202"}


def test_a_base_branch_that_names_nothing_is_said_plainly(adopted: Repo) -> None:
    adopted.write(".harness-gate.toml", 'artifacts_dir = "harness"\nbase_branch = "develop"\n')
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "configure a base that is not here", "--no-verify")
    adopted.new_plan("p1")
    adopted.approve(plan="p1")
    adopted.write("src/a.py", "a = 1\n")
    adopted.git("add", "-A")
    res = adopted.cli("check", "--staged", "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == 2
    assert doc["error"]["code"] == "HG902" and "base_branch `develop` names no commit" in doc["error"]["message"]
    adopted.git("branch", "develop")
    assert adopted.cli("check", "--staged").exit_code == 0


# A developer's settings that reshape `git diff` output (issue 23): each is set where a
# developer sets it (the repository's config, the global one under HOME, attributes).
DIFF_SETTINGS = {
    "diff.suppressBlankEmpty": "true",
    "diff.noprefix": "true",
    "diff.mnemonicPrefix": "true",
    "core.quotePath": "true",
    "diff.relative": "true",
    "color.ui": "always",
    "color.diff": "always",
    "diff.context": "9",
    "diff.interHunkContext": "9",
    "diff.algorithm": "patience",
    "diff.indentHeuristic": "false",
    "diff.submodule": "log",
    "core.bigFileThreshold": "1",
    "diff.orderFile": "order.txt",
}


def test_change_id_ignores_the_developers_git_settings(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same change has the same id whatever the developer's git settings say: in the
    repository's config, in the global config (HOME's .gitconfig), in attributes (the
    user's core.attributesFile, info/attributes) making a file binary or giving it a driver."""
    body = "".join(f"line {i}\n\n" for i in range(12))
    repo.write("a.py", body)
    repo.write("b.dat", b"x\0y\n")
    repo.write("dir é/c.py", "c\n\n\nd\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "base")
    base = repo.git("rev-parse", "HEAD^{tree}").decode().strip()
    repo.write("a.py", body.replace("line 5\n", "five\n").replace("line 9\n", "nine\n"))
    repo.write("b.dat", b"x\0z\n")
    repo.write("dir é/c.py", "c\n\n\nD\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "mine")
    mine = repo.git("rev-parse", "HEAD^{tree}").decode().strip()
    plain = patch_id.change_id(repo.path, base, mine)

    for key, value in DIFF_SETTINGS.items():
        repo.git("config", key, value)
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "attributes").write_text("*.dat diff\n")
    assert patch_id.change_id(repo.path, base, mine) == plain

    home = tmp_path / "home-with-settings"
    home.mkdir()
    (home / "attributes").write_text("*.py -diff\n")
    (home / ".gitconfig").write_text(
        f"[core]\n\tattributesFile = {home / 'attributes'}\n[diff]\n\tsuppressBlankEmpty = true\n\tcontext = 0\n"
    )
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    monkeypatch.setenv("HOME", str(home))
    assert repo.git("config", "core.attributesFile").decode().strip() == str(home / "attributes")
    assert patch_id.change_id(repo.path, base, mine) == plain


def test_patch_id_reads_its_patch_in_pieces_cut_anywhere() -> None:
    """A patch is hashed as it streams in: however it is cut, the id is the one of its lines."""
    patch = b"diff --git a/x b/x\nindex 111..222 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@ f\n-a\n+b\n\\ No newline\n@@"
    whole = patch_id.patch_id([patch])
    for size in (1, 2, 3, 5, 7, 64):
        assert patch_id.patch_id([patch[i : i + size] for i in range(0, len(patch), size)]) == whole
    assert whole == patch_id.patch_id(patch.splitlines(keepends=True))
    assert patch_id.patch_id([b"ind", b"ex 1..2\n+a\n"]) == patch_id.patch_id([b"+a\n"])
