"""Approvers per path (`[[approvers]]`, docs/approvers.md): a plan whose boundary reaches
`payments/**` needs two approvals by the payments principals, each on a commit signed by
a different allowed key, the plan's author not counted. Real keys, real `git commit -S`,
real verification by ssh-keygen, and the pre-commit count of the records' names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result

from harness_gate import approvals
from tests.adversarial.test_signatures import SIGNERS, ci, commit, findings, signer_line
from tests.helpers import Repo, amendment_md, plan_sha

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")

RULE = """
[[approvers]]
name = "payments"
paths = ["payments/**"]
principals = ["alice@example.com", "bob@example.com"]
count = 2
exclude_author = {exclude}
"""


def adopt(
    repo: Repo,
    keys: dict[str, Path],
    *,
    exclude: bool = True,
    rules: str | None = None,
    files: dict[str, str] | None = None,
) -> Repo:
    """main adopts the gate with `rules` (the payments rule by default) and the keys of
    alice, bob and mallory; then the branch `work`."""
    repo.write("README.md", "x\n")
    repo.write("payments/pay.py", "p = 1\n")
    assert repo.cli("init").exit_code == 0
    rules = RULE.format(exclude="true" if exclude else "false") if rules is None else rules
    repo.write(".harness-gate.toml", "evidence_stages = []\nreview_stages = []\ncompletion_stages = []\n" + rules)
    for rel, text in (files or {}).items():
        repo.write(rel, text)
    repo.write(SIGNERS, "".join(signer_line(keys, n) for n in ("alice", "bob", "mallory")))
    commit(repo, "adopt")
    repo.git("checkout", "-qb", "work")
    return repo


def ci_said(repo: Repo) -> Result:
    """`check --stage ci` of the branch against main, as text."""
    return repo.cli("check", "--base", "main", "--head", "HEAD", "--stage", "ci")


def as_(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("GIT_COMMITTER_NAME", name.title())
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", f"{name}@example.com")


def approve_as(repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str, key: Path | None) -> None:
    as_(monkeypatch, name)
    repo.approve()
    commit(repo, f"approval by {name}", key)


def plan(repo: Repo, keys: dict[str, Path], boundary: tuple[str, ...] = ("payments/**",), by: str = "mallory") -> None:
    repo.new_plan("p1", boundary)
    commit(repo, "plan", keys[by])


def code(repo: Repo) -> None:
    repo.write("payments/pay.py", "p = 2\n")
    commit(repo, "code")


def codes(found: list[tuple[str, str]]) -> list[str]:
    return sorted(c for c, _ in found)


def test_two_approvals_by_two_keys_of_the_rule_pass(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baseline, so that each case below can fail."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    code(repo)
    assert ci(repo) == []


def test_the_threshold_is_counted_at_the_head(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code committed while one approval was in: once the second lands, the branch passes,
    with no history rewritten; each commit still needs the plan approved (HG202)."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    assert codes(ci(repo)) == ["HG224"]
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    assert ci(repo) == []
    # An artifacts-only change needs no approvers: the approvals' own commits pass alone.
    assert findings(repo, "--base", "HEAD~1", "--head", "HEAD", "--stage", "ci") == []


def test_one_approval_is_short_of_the_threshold(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    found = ci(repo)
    assert codes(found) == ["HG224"] and found[0][1] == "harness/plans/p1/plan.md"
    res = ci_said(repo)
    assert "counted: alice@example.com; 1 more needed" in res.output


def test_one_key_counted_twice_is_one_approval(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second record names bob, but the commit that added it is signed with alice's
    key: the signature says who approved, not the record."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", keys["alice"])
    code(repo)
    res = ci_said(repo)
    assert res.exit_code == 1 and "HG224" in res.output and "already counted" in res.output


def test_the_plans_author_does_not_count(repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    adopt(repo, keys)
    plan(repo, keys, by="alice")
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    code(repo)
    res = ci_said(repo)
    assert res.exit_code == 1 and "HG224" in res.output and "the author" in res.output
    # Where the rule lets the author count, the same history passes.
    repo.git("checkout", "-q", "main")
    repo.write(".harness-gate.toml", repo.read(".harness-gate.toml").decode().replace("= true", "= false"))
    commit(repo, "let authors count")
    repo.git("checkout", "-q", "work")
    repo.git("merge", "-q", "--no-edit", "main")  # a rebase would drop the approvals' signatures
    assert ci(repo) == []


def test_an_unsigned_plan_has_no_known_author(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    repo.new_plan("p1", ("payments/**",))
    commit(repo, "plan")  # unsigned: anyone could have written it
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    code(repo)
    assert codes(ci(repo)) == ["HG225"]


def test_an_unsigned_or_foreign_approval_counts_for_nothing(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", None)  # bob's name, no signature
    code(repo)
    res = ci_said(repo)
    assert "HG224" in res.output and "no good signature" in res.output
    # mallory's key is allowed, but mallory is not a payments principal. `approve` will not
    # add a record that counts for no rule, so mallory writes one by hand.
    log = repo.path / "harness/plans/p1/approvals.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    forged = approvals.record(
        "plan",
        "plan.md",
        last["sha256"],
        "Mallory <mallory@example.com>",
        plan="p1",
        seq=last["seq"] + 1,
        repository=last["repository"],
    )
    with log.open("a") as fh:
        fh.write(forged)
    commit(repo, "mallory's approval", keys["mallory"])
    repo.write("payments/pay.py", "p = 3\n")
    commit(repo, "more code")
    code_again = ci_said(repo)
    assert "HG224" in code_again.output and "not one of the `payments` principals" in code_again.output


def test_a_boundary_that_does_not_reach_the_paths_needs_no_approvers(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    plan(repo, keys, boundary=("src/**", "*.py"))
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.write("src/a.py", "a = 1\n")
    commit(repo, "code")
    assert ci(repo) == []


def test_a_boundary_that_may_reach_the_paths_needs_them(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`**/*.py` can write payments/pay.py: the rule is reached, even by a change elsewhere."""
    adopt(repo, keys)
    plan(repo, keys, boundary=("**/*.py",))
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.write("src/a.py", "a = 1\n")
    commit(repo, "code")
    assert codes(ci(repo)) == ["HG224"]


def test_approvals_of_older_bytes_do_not_count(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """bob approved the plan before it changed; alice approved the new bytes alone."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    path = "harness/plans/p1/plan.md"
    repo.write(path, repo.read(path).decode().replace("Do it", "Do it well"))
    commit(repo, "plan changed", keys["mallory"])
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    res = ci_said(repo)
    assert res.exit_code == 1 and "counted: alice@example.com; 1 more needed" in res.output


def test_pre_commit_counts_the_names_it_has(repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing on the index is signed yet: too few names is said at once, enough names
    pass here and are judged by their signatures at push."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.write("payments/pay.py", "p = 2\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert codes(found) == ["HG224"]
    as_(monkeypatch, "bob")
    repo.approve()
    repo.git("add", "-A")
    assert findings(repo, "--staged") == []
    commit(repo, "code with bob's unsigned approval")
    assert codes(ci(repo)) == ["HG224"]


def test_approve_records_a_second_approver_and_status_names_them(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    again = repo.cli("approve", input="y\n")  # alice again: hers is counted already
    assert "already approved" in again.output
    as_(monkeypatch, "bob")
    res = repo.approve()
    assert "wants 1 more approval(s)" in res.output
    log = repo.read("harness/plans/p1/approvals.jsonl").decode().splitlines()
    assert len(log) == 2 and "bob@example.com" in log[1]


def test_status_and_the_pull_request_view_say_who_approved_and_who_is_needed(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    res = repo.cli("status")
    assert "approvers:  payments: 1 of 2 (alice@example.com); still needed: 1 of bob@example.com" in res.output
    assert "next:       1 more approval(s) for `payments`, by bob@example.com" in res.output
    [view] = json.loads(repo.cli("status", "--format", "json").stdout)["data"]["approvers"]
    # Counted as CI counts: the signatures of HEAD's records, against main's allowed_signers.
    assert view["approved"] == ["alice@example.com"] and view["needed"] == 1 and view["verified"] is True
    markdown = repo.cli("status", "--format", "markdown").output
    at = "&#64;&#8203;"  # no @mention in a pull request comment
    assert f"**Approvers** <code>payments</code>: 1 of 2 (alice{at}example.com); still needed: 1 of bob{at}" in markdown
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    assert "approvers:  payments: 2 of 2 (alice@example.com, bob@example.com)" in repo.cli("status").output


OWNERS_RULE = """
[[approvers]]
name = "owners"
codeowners = ".github/CODEOWNERS"
[approvers.aliases]
"@payments-team" = ["alice@example.com", "bob@example.com"]
"@all-hands" = ["mallory@example.com"]
"""
CODEOWNERS = "# who owns what\n*  @all-hands\n/payments/  @payments-team\n/docs/\n"


def adopt_owners(repo: Repo, keys: dict[str, Path], codeowners: str | None = CODEOWNERS) -> Repo:
    files = {".github/CODEOWNERS": codeowners} if codeowners is not None else {}
    return adopt(repo, keys, rules=OWNERS_RULE, files=files)


def test_codeowners_the_last_matching_line_owns_the_boundary(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`payments/**` is owned by the payments team alone: the `*` line above it is shadowed."""
    adopt_owners(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "mallory", keys["mallory"])  # all-hands: not an owner here
    code(repo)
    res = ci_said(repo)
    assert res.exit_code == 1 and "`owners:3` needs 1 approval(s) by alice@example.com, bob@example.com" in res.output
    assert "owners:2" not in res.output
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    assert ci(repo) == []  # counted at the head: an approval after the code counts


def test_codeowners_a_boundary_elsewhere_is_owned_by_the_catch_all(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    adopt_owners(repo, keys)
    plan(repo, keys, boundary=("src/**",))
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.write("src/a.py", "a = 1\n")
    commit(repo, "code")
    res = ci_said(repo)
    assert "`owners:2` needs 1 approval(s) by mallory@example.com" in res.output


def test_codeowners_is_read_from_the_trusted_side(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch drops the payments line: the base's CODEOWNERS still asks for it."""
    adopt_owners(repo, keys)
    plan(repo, keys)
    repo.write(".github/CODEOWNERS", "*  @all-hands\n")
    commit(repo, "own it all", keys["mallory"])
    approve_as(repo, monkeypatch, "mallory", keys["mallory"])
    code(repo)
    assert "HG224" in codes(ci(repo))


@pytest.mark.parametrize(
    ("codeowners", "said"),
    [(None, "is not a file on the trusted side"), ("/pay[mn]ents/ @payments-team\n", "has no sure meaning")],
)
def test_a_codeowners_file_that_cannot_be_read_blocks(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch, codeowners: str | None, said: str
) -> None:
    adopt_owners(repo, keys, codeowners)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    res = ci_said(repo)
    assert res.exit_code == 1 and "HG226" in res.output and said in res.output


def test_a_branch_that_drops_the_rule_is_judged_by_the_rule(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The configuration is read from the base: a plan that names the config exactly and
    removes the rule still needs the approvals the base asks for."""
    adopt(repo, keys)
    plan(repo, keys, boundary=("payments/**", ".harness-gate.toml"))
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.write(".harness-gate.toml", "evidence_stages = []\nreview_stages = []\ncompletion_stages = []\n")
    code(repo)
    assert "HG224" in codes(ci(repo))


@pytest.mark.slow
def test_the_server_side_gate_holds_the_threshold(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A real `git push` to a bare repository whose pre-receive hook is the gate: the
    signatures are verified in git's quarantine, against the default branch's anchors."""
    from tests.test_pre_receive import push, server

    adopt(repo, keys)
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    assert push(repo, "main").returncode == 0
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    repo.git("branch", "approved-once")
    code(repo)
    short = push(repo, "work")
    assert short.returncode != 0 and "HG224" in short.stderr and "1 more needed" in short.stderr
    repo.git("checkout", "-q", "-b", "twice", "approved-once")
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    code(repo)
    out = push(repo, "twice")
    assert out.returncode == 0, out.stderr


def test_status_and_approve_count_as_ci_does_the_author_excluded(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice wrote and approved the plan, bob approved: by name that is two, but CI counts
    one (the author does not count). status says one; approve takes the one still needed,
    and status says it is not counted until committed."""
    rule = RULE.format(exclude="true").replace('"bob@example.com"]', '"bob@example.com", "mallory@example.com"]')
    adopt(repo, keys, rules=rule)
    plan(repo, keys, by="alice")
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    approve_as(repo, monkeypatch, "bob", keys["bob"])
    res = repo.cli("status")
    assert "payments: 1 of 2 (bob@example.com); still needed: 1 of mallory@example.com" in res.output
    as_(monkeypatch, "mallory")
    got = repo.approve()
    assert "wants 1 more approval(s)" in got.output
    assert "not committed yet, so not counted: mallory@example.com" in repo.cli("status").output
    assert "already approved" in repo.cli("approve", input="y\n").output  # recorded once, not twice
    commit(repo, "approval by mallory", keys["mallory"])
    repo.write("payments/pay.py", "p = 2\n")
    commit(repo, "code")
    assert ci(repo) == []


def test_an_amendment_that_narrows_the_boundary_leaves_the_code_answering_to_the_rule(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code written under `payments/**` with one approval, then an amendment to `docs/**`:
    the payments change still needs the rule's two approvals of the plan."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    folder = "harness/plans/p1"
    repo.write(f"{folder}/001-amendment.md", amendment_md(plan_sha(repo, folder), material=True, boundary=("docs/**",)))
    commit(repo, "amend", keys["mallory"])
    as_(monkeypatch, "alice")
    repo.approve("001-amendment.md")
    commit(repo, "approve amendment", keys["alice"])
    res = ci_said(repo)
    assert res.exit_code == 1 and "HG224" in res.output and "plan.md" in res.output


def test_a_codeowners_wildcard_line_shadows_only_what_it_owns(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub: `/payments/*` owns no nested file, so `payments/sub/x.py` stays the payments
    team's, though the rule asks `/payments/*`'s owners for what is below it too."""
    repo.write("payments/sub/x.py", "x = 1\n")
    adopt_owners(repo, keys, codeowners="/payments/  @payments-team\n/payments/*\n")
    plan(repo, keys, boundary=("payments/*/**",))
    approve_as(repo, monkeypatch, "mallory", keys["mallory"])
    repo.write("payments/sub/x.py", "x = 2\n")
    commit(repo, "code")
    assert "HG224" in codes(ci(repo))


def test_a_plan_whose_approval_is_rolled_back_at_the_head_still_answers_to_the_rule(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head's plan approval is rolled back (HG216): the threshold is still reported
    beside it, with nobody counted, so the user does not learn of it only later."""
    adopt(repo, keys)
    plan(repo, keys)
    approve_as(repo, monkeypatch, "alice", keys["alice"])
    code(repo)
    path = "harness/plans/p1/plan.md"
    original = repo.read(path)
    repo.write(path, original.decode().replace("Do it", "Do it well"))
    as_(monkeypatch, "bob")
    repo.approve()
    repo.write(path, original)
    commit(repo, "roll back", keys["bob"])
    assert {"HG216", "HG224"} <= set(codes(ci(repo)))
