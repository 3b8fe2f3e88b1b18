"""Plans per branch open no new way in: claiming another branch's plan, bringing a plan in
by a merge, two open plans in one branch, a plan folder deleted or renamed to escape the
completion rule, a plan's whole life squashed into one commit, a cancelled plan's code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.adversarial.test_signatures import adopt, commit, findings
from tests.adversarial.util import BOUNDARY_ONLY, PY, check, rev, setup_gated
from tests.adversarial.util import commit as plain_commit
from tests.helpers import Repo, complete_by_hand, pass_review, plan_sha, review_md

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")

CI = ("--base", "main", "--stage", "ci")


def _signed_plan(repo: Repo, key: Path, plan_id: str, boundary: str) -> None:
    repo.new_plan(plan_id, (boundary,))
    repo.approve(plan=plan_id)
    commit(repo, f"plan {plan_id}", key)


def test_a_branch_that_copies_another_branchs_plan(repo: Repo, keys: dict[str, Path]) -> None:
    """alice's signed plan for src/**, copied (plan.md and approvals) into mallory's branch:
    the records are now added by mallory's unsigned commit and grant nothing."""
    adopt(repo, keys)  # on branch `work`, from main
    _signed_plan(repo, keys["alice"], "app", "src/**")
    repo.git("checkout", "-qb", "mallory", "main")
    repo.git("checkout", "work", "--", "harness/plans/app")
    repo.write("src/evil.py", "x = 1\n")
    commit(repo, "claim alice's plan")
    found = findings(repo, *CI)
    assert ("HG217", "harness/plans/app/approvals.jsonl") in found
    assert ("HG202", "harness/plans/app/plan.md") in found


def test_a_plan_brought_in_by_merging_another_branch(repo: Repo, keys: dict[str, Path]) -> None:
    """alice's plan, properly signed, merged into mallory's branch: it came from another
    branch and governs nothing there, signed or not."""
    adopt(repo, keys, signers=("alice", "mallory"))
    _signed_plan(repo, keys["alice"], "app", "src/**")
    repo.git("checkout", "-qb", "mallory", "main")
    _signed_plan(repo, keys["mallory"], "docs", "docs/**")
    repo.git("merge", "-q", "--no-edit", "--no-verify", "work")
    repo.write("src/evil.py", "x = 1\n")  # inside alice's boundary, outside mallory's
    commit(repo, "code under alice's plan")
    found = findings(repo, *CI)
    assert ("HG101", "src/evil.py") in found  # judged by mallory's own plan only
    # With her own plan gone from the candidates, alice's still does not govern.
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.git("rm", "-rq", "harness/plans/docs")
    repo.write("src/evil.py", "x = 1\n")
    commit(repo, "only alice's plan is left")
    assert ("HG201", "harness/plans") in findings(repo, *CI)


def test_two_open_plans_in_one_branch_are_never_combined(repo: Repo) -> None:
    """p1 allows src/**, p2 docs/**: a commit touching both is allowed by neither."""

    # p1 (src/**) on main; completion still required at ci.
    setup_gated(repo, config='artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\n')
    repo.git("checkout", "-qb", "work")
    repo.new_plan("p2", ("docs/**",))
    repo.approve(plan="p2")
    plain_commit(repo, "a second plan")
    repo.git("config", "--unset", "branch.work.harnessGatePlan")
    repo.write("src/a.py", "a = 2\n")
    repo.write("docs/x.md", "x\n")
    repo.git("add", "-A")
    # p2 is this branch's own open plan: only it is tried, never combined with main's p1.
    assert check(repo, "--staged") == (1, [("HG101", "src/a.py")])
    repo.git("reset", "-q", "--hard")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "both")
    repo.new_plan("p3", ("docs/**",))
    repo.approve(plan="p3")
    repo.new_plan("p4", ("src/**",))
    repo.approve(plan="p4")
    plain_commit(repo, "two plans of this branch")
    repo.git("config", "--unset", "branch.both.harnessGatePlan")
    repo.write("src/a.py", "a = 3\n")
    repo.write("docs/x.md", "x\n")
    plain_commit(repo, "both boundaries at once")
    code, found = check(repo, "--base", "main")
    assert code == 1 and {c for c, _ in found} == {"HG101"}
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.write("src/a.py", "a = 3\n")
    plain_commit(repo, "src only: p4")
    repo.write("docs/x.md", "x\n")
    plain_commit(repo, "docs only: p3")
    assert check(repo, "--base", "main") == (0, [])
    code, found = check(repo, "--base", "main", "--stage", "ci")
    assert code == 1 and {("HG415", "harness/plans/p3/plan.md"), ("HG415", "harness/plans/p4/plan.md")} <= set(found)


@pytest.mark.parametrize("how", ["delete", "rename"])
def test_a_plan_folder_deleted_or_renamed_to_escape_the_completion_rule(repo: Repo, how: str) -> None:

    setup_gated(repo, config='artifacts_dir = "harness"\nreview_stages = []\nevidence_stages = []\n')
    base = rev(repo, "HEAD~1")
    repo.write("src/a.py", "a = 2\n")
    plain_commit(repo, "code under p1")
    if how == "delete":
        repo.git("rm", "-rq", "harness/plans/p1")
    else:
        repo.git("mv", "harness/plans/p1", "harness/plans/p1-done")
    plain_commit(repo, f"{how} the plan folder")
    code, found = check(repo, "--base", base, "--stage", "ci")
    assert code == 1
    assert ("HG223", "harness/plans/p1/plan.md") in found
    if how == "rename":
        assert ("HG213", "harness/plans/p1-done/approvals.jsonl") in found  # its approval names p1


def test_a_squashed_plan_life_is_judged_by_its_final_policy(repo: Repo) -> None:
    """One commit that starts a plan, completes it and changes code (a squash merge):
    allowed inside the plan's boundary, blocked outside it, never by the completed state."""

    setup_gated(repo, config=BOUNDARY_ONLY)
    base = rev(repo, "HEAD")
    repo.git("checkout", "-qb", "squashed")
    repo.new_plan("whole", ("lib/**",))
    repo.approve(plan="whole")
    complete_by_hand(repo, "whole")
    repo.write("lib/x.py", "x = 1\n")
    plain_commit(repo, "the whole life at once")
    assert check(repo, "--base", base) == (0, [])
    repo.write("lib/y.py", "y = 1\n")
    plain_commit(repo, "inside its boundary, later")
    # Completed, `whole` grants nothing more; main's open p1 (src/**) governs again.
    assert check(repo, "--base", base) == (1, [("HG101", "lib/y.py")])


def test_a_cancelled_plans_code_still_needs_a_review(repo: Repo) -> None:
    """Code under p1, then p1 cancelled (no approval or review needed to cancel): CI wants
    the branch's change reviewed all the same, and p1's evidence."""

    setup_gated(repo, config='artifacts_dir = "harness"\n', verify=f"{PY} -c pass")
    repo.git("checkout", "-qb", "work")
    repo.write("src/a.py", "a = 2\n")
    plain_commit(repo, "code under p1")
    res = repo.cli("complete", "--cancel", "--plan", "p1")
    assert res.exit_code == 0, res.output
    plain_commit(repo, "cancel p1")
    code, found = check(repo, "--base", "main", "--stage", "ci")
    assert code == 1
    assert ("HG413", "harness/plans/p1/plan.md") in found
    assert ("HG301", "harness/plans/p1/evidence.jsonl") in found


def test_a_stale_local_pick_never_widens(repo: Repo) -> None:
    """Two open plans of this branch, and the pick names a third plan that governs nothing
    here (another branch's, merged in, allowing the change): it is ignored, never obeyed."""
    setup_gated(repo, config=BOUNDARY_ONLY)  # p1 (src/**), main's
    repo.git("checkout", "-qb", "other")
    repo.new_plan("wide", ("secret/**",))
    repo.approve(plan="wide")
    plain_commit(repo, "another branch's plan for secret/")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "mine")
    for plan_id, pattern in (("a", "docs/**"), ("b", "lib/**")):
        repo.new_plan(plan_id, (pattern,))
        repo.approve(plan=plan_id)
    plain_commit(repo, "two plans of this branch")
    repo.git("merge", "-q", "--no-edit", "--no-verify", "other")
    repo.git("config", "branch.mine.harnessGatePlan", "wide")
    repo.write("secret/x", "y\n")
    repo.git("add", "-A")
    code, found = check(repo, "--staged")
    assert code == 1 and {c for c, _ in found} == {"HG101"}  # judged by a or b, never by the pick
    assert check(repo, "--staged", "--plan", "wide")[0] == 0  # `wide` would have allowed it


def test_an_open_plan_merged_in_from_another_branch_cannot_land(repo: Repo) -> None:
    """Another branch's plan, approved and still open, merged into this pull request: it
    would land open on the base and govern it. CI requires it ended too."""
    setup_gated(repo, config='artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\n')
    repo.git("checkout", "-qb", "alice")
    repo.new_plan("app", ("src/**",))
    repo.approve(plan="app")
    plain_commit(repo, "alice's plan, no code yet")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "mallory")
    repo.new_plan("docs", ("docs/**",))
    repo.approve(plan="docs")
    plain_commit(repo, "mallory's plan")
    repo.git("merge", "-q", "--no-edit", "--no-verify", "alice")
    complete_by_hand(repo, "docs")
    plain_commit(repo, "mallory completes her own plan")
    code, found = check(repo, "--base", "main", "--stage", "ci")
    assert (code, found) == (1, [("HG415", "harness/plans/app/plan.md")])


def test_a_merge_with_the_other_branch_first_adopts_its_line(repo: Repo) -> None:
    """Which line is a branch's own follows the first parents, and whoever merges picks the
    order: with alice's branch as the first parent, her plan is the line's own. What that
    plan then authorised still owes it all at CI: its completion, its evidence and a review
    of the whole change (signed, with require_signed_reviews)."""
    setup_gated(repo, config='artifacts_dir = "harness"\n', verify=f"{PY} -c pass")
    repo.git("checkout", "-qb", "alice")
    repo.new_plan("app", ("src/**",))
    repo.approve(plan="app")
    plain_commit(repo, "alice's plan")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "mallory")
    repo.new_plan("docs", ("docs/**",))
    repo.approve(plan="docs")
    plain_commit(repo, "mallory's plan")
    repo.git("checkout", "-q", "--detach", "alice")
    repo.git("merge", "-q", "--no-edit", "--no-verify", "mallory")
    repo.git("branch", "-f", "mallory", "HEAD")
    repo.git("checkout", "-q", "mallory")
    repo.write("src/evil.py", "x = 1\n")
    plain_commit(repo, "code under alice's plan")
    assert check(repo, "--base", "main")[0] == 0  # the boundary alone: app is the line's own now
    code, found = check(repo, "--base", "main", "--stage", "ci")
    assert code == 1
    assert {
        ("HG415", "harness/plans/app/plan.md"),
        ("HG301", "harness/plans/app/evidence.jsonl"),
        ("HG413", "harness/plans/app/plan.md"),
    } <= set(found)


def _landed_repo(repo: Repo, config: str) -> tuple[str, str]:
    """A plan on main, verified and reviewed on tree X; main's tip before it is returned."""
    setup_gated(repo, config=config, verify=f"{PY} -c pass")
    before = rev(repo, "HEAD~1")  # before plan p1
    repo.write("src/a.py", "a = 2\n")
    plain_commit(repo, "X")
    assert repo.cli("verify").exit_code == 0
    pass_review(repo)
    plain_commit(repo, "evidence and review of X")
    return before, rev(repo, "HEAD")


def test_landed_evidence_for_a_tree_the_plan_never_committed_blocks(repo: Repo) -> None:
    """On a landed range, evidence for another tree than the head's is a warning only for a
    tree the plan's own commits (or its counted review) name; a PASS recorded on a tree
    that was never committed, for code pushed without evidence, blocks as anywhere."""
    before, _ = _landed_repo(repo, 'artifacts_dir = "harness"\nreview_stages = []\ncompletion_stages = []\n')
    assert check(repo, "--base", before, "--stage", "ci", "--landed") == (0, [])
    repo.write("src/a.py", "a = 3\n")
    assert repo.cli("verify").exit_code == 0  # evidence for a = 3, never committed as such
    repo.write("src/a.py", "a = 4\n")
    plain_commit(repo, "code committed with evidence for another tree")
    code, found = check(repo, "--base", before, "--stage", "ci", "--landed")
    assert (code, found) == (1, [("HG302", "harness/plans/p1/evidence.jsonl")])


def test_landed_code_after_the_review_is_not_covered(repo: Repo) -> None:
    """A plan left open (completion not required), reviewed, then more code under it: the
    plan's stretch of the line reaches that code, so the review no longer covers it."""
    before, _ = _landed_repo(repo, 'artifacts_dir = "harness"\ncompletion_stages = []\n')
    assert check(repo, "--base", before, "--stage", "ci", "--landed") == (0, [])
    repo.write("src/evil.py", "x = 1\n")
    plain_commit(repo, "unreviewed")
    code, found = check(repo, "--base", before, "--stage", "ci", "--landed")
    assert code == 1 and ("HG413", "harness/plans/p1/001-review.md") in found


def _squash(repo: Repo, branch: str) -> str:
    """`git merge --squash` onto main and commit: main's tip before it is returned."""
    repo.git("checkout", "-q", "main")
    before = rev(repo, "HEAD")
    repo.git("merge", "-q", "--squash", branch)
    repo.git("commit", "-qm", f"{branch} (#1)", "--no-verify")
    return before


def test_a_squash_of_a_branch_that_used_two_plans(repo: Repo) -> None:
    """Each commit of the branch was judged by one of its two plans; the squash no longer
    says which path came from which commit: each path one of the two allows, and no path
    neither allows."""
    setup_gated(repo, config='artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\n')
    repo.git("checkout", "-qb", "both")
    for plan_id, pattern in (("docs", "docs/**"), ("lib", "lib/**")):
        repo.new_plan(plan_id, (pattern,))
        repo.approve(plan=plan_id)
    plain_commit(repo, "two plans")
    repo.git("config", "--unset", "branch.both.harnessGatePlan")
    repo.write("docs/x.md", "x\n")
    plain_commit(repo, "docs")
    repo.write("lib/y.py", "y = 1\n")
    plain_commit(repo, "lib")
    complete_by_hand(repo, "docs")
    complete_by_hand(repo, "lib")
    plain_commit(repo, "both completed")
    assert check(repo, "--base", "main", "--stage", "ci") == (0, [])
    before = _squash(repo, "both")
    assert check(repo, "--base", before, "--stage", "ci", "--landed") == (0, [])
    repo.git("reset", "-q", "--hard", before)  # and the same squash with a path neither allows
    repo.git("merge", "-q", "--squash", "both")
    repo.write("secret/x", "z\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "squash plus more", "--no-verify")
    code, found = check(repo, "--base", before, "--stage", "ci", "--landed")
    assert code == 1 and ("HG101", "secret/x") in found


def test_a_squash_of_work_under_the_bases_open_plan(repo: Repo) -> None:
    """The solo flow: a plan open on main, a branch works under it and completes it; the
    squash holds the work and the plan's end together, judged by its final policy."""
    setup_gated(repo, config='artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\n')
    repo.git("checkout", "-qb", "work")
    repo.write("src/a.py", "a = 2\n")
    plain_commit(repo, "work under main's p1")
    complete_by_hand(repo, "p1")
    plain_commit(repo, "complete p1")
    assert check(repo, "--base", "main", "--stage", "ci") == (0, [])
    before = _squash(repo, "work")
    assert check(repo, "--base", before, "--stage", "ci", "--landed") == (0, [])


def test_a_pushed_range_measures_the_change_from_the_base_branch(repo: Repo) -> None:
    """A push (old..new) of a branch whose earlier push held unreviewed code X: a review of
    only the newer increment, taken from a clean branch, does not cover the branch, because
    its change is measured from the base branch, not from the previous push."""
    setup_gated(repo, config='artifacts_dir = "harness"\nevidence_stages = []\ncompletion_stages = []\n')
    repo.git("checkout", "-qb", "clean")
    repo.write("src/a.py", "a = 2\n")
    assert repo.cli("verify").exit_code == 0
    assert repo.cli("review", "new", "--reviewer", "Rae").exit_code == 0
    review = (
        repo.read("harness/plans/p1/001-review.md")
        .replace(b"FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", b"PASS")
        .replace(b"FILL_IN: what the reviewer read (the diff, the plan, the evidence).", b"Read.")
    )
    repo.git("checkout", "-q", "--", ".")
    repo.git("clean", "-qfd")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "work")
    repo.write("src/evil.py", "x = 1\n")
    pushed = plain_commit(repo, "X: never reviewed, pushed earlier")
    repo.write("src/a.py", "a = 2\n")
    repo.write("harness/plans/p1/001-review.md", review)
    plain_commit(repo, "the increment, with the clean branch's review")
    code, found = check(repo, "--range", f"{pushed}..HEAD", "--stage", "ci")
    assert code == 1 and ("HG413", "harness/plans/p1/001-review.md") in found


def test_a_paused_plan_cannot_be_cancelled_into_authority(repo: Repo) -> None:
    """A BLOCKED review paused the plan; new code in the same commit as its cancellation
    would regain its boundary for that commit. The ending rule asks that the plan granted
    writes just before: a paused one did not."""
    setup_gated(repo, config=BOUNDARY_ONLY)
    psha = plan_sha(repo, "harness/plans/p1")
    repo.write("harness/plans/p1/001-review.md", review_md(psha, "BLOCKED", ("F1",)))
    plain_commit(repo, "a blocking review")
    repo.write("src/a.py", "a = 9\n")
    repo.git("add", "-A")
    assert check(repo, "--staged") == (1, [("HG209", "harness/plans/p1/plan.md")])
    assert repo.cli("complete", "--cancel").exit_code == 0
    repo.git("add", "-A")
    code, found = check(repo, "--staged")
    assert code == 1 and ("HG209", "harness/plans/p1/plan.md") in found


def test_ending_two_plans_in_one_commit_combines_nothing(repo: Repo) -> None:
    """Two open plans (src/, docs/) cancelled in the commit that touches both: a squash's
    path-by-path rule is for lives the commit holds whole, not for plans it merely ends."""
    setup_gated(repo, config=BOUNDARY_ONLY)
    repo.git("checkout", "-qb", "two")
    for plan_id, pattern in (("a", "lib/**"), ("b", "docs/**")):
        repo.new_plan(plan_id, (pattern,))
        repo.approve(plan=plan_id)
    plain_commit(repo, "two plans")
    repo.git("config", "--unset", "branch.two.harnessGatePlan")
    repo.write("lib/x.py", "x\n")
    repo.write("docs/y.md", "y\n")
    for plan_id in ("a", "b"):
        assert repo.cli("complete", "--cancel", "--plan", plan_id).exit_code == 0
    repo.git("add", "-A")
    code, found = check(repo, "--staged")
    assert code == 1 and {c for c, _ in found} == {"HG101"}


def test_a_merged_in_plan_cancelled_with_code_governs_nothing(repo: Repo) -> None:
    """Alice's open plan, merged into this branch, then cancelled in the commit that writes
    inside her boundary: a plan that came from another branch never governs, ended or not."""
    setup_gated(repo, config=BOUNDARY_ONLY)
    repo.git("checkout", "-qb", "alice")
    repo.new_plan("app", ("lib/**",))
    repo.approve(plan="app")
    plain_commit(repo, "alice's plan")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-qb", "mallory")
    repo.new_plan("mine", ("docs/**",))
    repo.approve(plan="mine")
    plain_commit(repo, "mallory's plan")
    repo.git("merge", "-q", "--no-edit", "--no-verify", "alice")
    repo.write("lib/x.py", "x\n")
    assert repo.cli("complete", "--cancel", "--plan", "app").exit_code == 0
    plain_commit(repo, "code in alice's boundary, and her plan cancelled")
    code, found = check(repo, "--base", "main")
    assert code == 1 and ("HG101", "lib/x.py") in found
