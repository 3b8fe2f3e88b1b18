"""Plans per branch open no new way in: claiming another branch's plan, bringing a plan in
by a merge, two open plans in one branch, a plan folder deleted or renamed to escape the
completion rule, a plan's whole life squashed into one commit, a cancelled plan's code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.test_signatures import adopt, commit, findings
from tests.adversarial.util import BOUNDARY_ONLY, PY, check, rev, setup_gated
from tests.adversarial.util import commit as plain_commit
from tests.helpers import Repo, completion_md, plan_sha, review_md

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
    folder = repo.new_plan("whole", ("lib/**",))
    repo.approve(plan="whole")
    psha = plan_sha(repo, folder)
    repo.write(f"{folder}/001-review.md", review_md(psha, "PASS"))
    repo.write(f"{folder}/002-completion.md", completion_md(repo, folder, psha))
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
    """The branch's pick names a plan that is not a candidate (another branch's, or ended):
    it is ignored, never obeyed."""

    setup_gated(repo, config=BOUNDARY_ONLY)
    repo.git("config", "branch.main.harnessGatePlan", "ghost")
    repo.write("secret/x", "y\n")
    repo.git("add", "-A")
    assert check(repo, "--staged") == (1, [("HG101", "secret/x")])
    subprocess.run(["git", "config", "--unset", "branch.main.harnessGatePlan"], cwd=repo.path, check=True)
