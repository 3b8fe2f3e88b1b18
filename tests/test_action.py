"""The GitHub Action as GitHub runs it: action.yml's steps through bash, in real repositories
(tests/github_runner.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness_gate import github
from harness_gate.findings import Finding
from harness_gate.report import Report
from tests.github_runner import ACTION, run_action
from tests.helpers import Repo, completed_branch

# installs the Action once per session, runs real repositories through it
pytestmark = [pytest.mark.slow, pytest.mark.integration]

ZERO = "0" * 40


def test_no_expression_is_interpolated_into_a_script() -> None:
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]
        assert step.get("shell") == "bash"
    assert ACTION["runs"]["using"] == "composite"
    documented = {"stage", "base", "head", "config", "reverify", "working-directory"}
    assert documented <= set(ACTION["inputs"])
    assert all(spec.get("description") for spec in ACTION["inputs"].values())
    assert set(ACTION["outputs"]) == {"result", "violations", "report-path", "sarif-path"}


def sha(repo: Repo, rev: str) -> str:
    return repo.git("rev-parse", rev).decode().strip()


@pytest.fixture
def project(repo: Repo) -> Repo:
    """main adopts harness-gate; `feature` plans, works, verifies, is reviewed and completes: a passing PR."""
    return completed_branch(repo)


def pr(repo: Repo) -> dict[str, Any]:
    return {"pull_request": {"base": {"sha": sha(repo, "main"), "ref": "main"}, "head": {"sha": sha(repo, "feature")}}}


def test_passing_pull_request(project: Repo, runner_temp: Path) -> None:
    out = run_action(project.path, runner_temp, "pull_request", pr(project))
    assert out.code == 0, out.stdout
    assert out.outputs["result"] == "pass"
    assert out.outputs["violations"] == "0"
    assert Path(out.outputs["report-path"]).is_file()
    assert "harness-gate: pass" in out.summary
    assert "::error" not in out.stdout


def test_a_windows_runner_is_refused_in_one_line(project: Repo, runner_temp: Path) -> None:
    out = run_action(project.path, runner_temp, "pull_request", pr(project), runner_os="Windows")
    assert out.code == 2
    [line] = out.stdout.splitlines()
    assert line.startswith("::error::harness-gate runs on Linux and macOS runners"), line
    assert out.outputs == {}


def reopen(project: Repo) -> Repo:
    """The pull request before its completion commit: its plan still grants writes."""
    project.git("reset", "-q", "--hard", "HEAD~1")
    return project


def test_boundary_violation(project: Repo, runner_temp: Path) -> None:
    reopen(project)
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "outside", "--no-verify")
    out = run_action(project.path, runner_temp, "pull_request", pr(project))
    assert out.code == 1
    assert out.outputs["result"] == "blocked"
    assert "::error file=other.py,title=HG101 path outside the write boundary::" in out.stdout
    assert "| HG101 | <code>other.py</code> |" in out.summary
    doc = json.loads(Path(out.outputs["report-path"]).read_text())
    assert doc["result"] == "blocked"


def test_rule_links_point_at_the_actions_own_repository_and_ref(project: Repo, runner_temp: Path) -> None:
    """`uses: acme/harness-gate@<sha>`: the runner's context, passed through action.yml's
    env (a composite action's steps see GITHUB_ACTION_REPOSITORY empty); `uses: ./`: none
    of it, and the installed package decides, never a placeholder."""
    reopen(project)
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "outside", "--no-verify")
    ref = "0123456789abcdef0123456789abcdef01234567"
    context = {"action_repository": "acme/harness-gate", "action_ref": ref, "server_url": "https://github.com"}
    out = run_action(project.path, runner_temp, "pull_request", pr(project), github=context, sarif="true")
    assert out.code == 1, out.stdout
    doc = json.loads(Path(out.outputs["report-path"]).read_text())
    [finding] = [f for f in doc["findings"] if f["code"] == "HG101"]
    assert finding["rule_url"] == f"https://github.com/acme/harness-gate/blob/{ref}/docs/rules.md#hg101"
    log = json.loads(Path(out.outputs["sarif-path"]).read_text())
    assert log["runs"][0]["tool"]["driver"]["informationUri"] == "https://github.com/acme/harness-gate"
    local = run_action(project.path, runner_temp, "pull_request", pr(project), sarif="true")
    for path in (local.outputs["report-path"], local.outputs["sarif-path"]):
        assert "OWNER" not in Path(path).read_text().replace("CODEOWNERS", "")


def test_stale_evidence(project: Repo, runner_temp: Path) -> None:
    project.write("src/a.py", "a = 2\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "after review", "--no-verify")
    out = run_action(project.path, runner_temp, "pull_request", pr(project))
    assert out.code == 1
    assert "title=HG302" in out.stdout  # evidence for another tree
    assert "title=HG413" in out.stdout  # and the review is for another tree too


def test_shallow_clone_is_blocked_with_the_fix(project: Repo, runner_temp: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{project.path}", str(clone)], check=True
    )
    out = run_action(clone, runner_temp, "pull_request", pr(project))
    assert out.code == 2
    assert out.outputs["result"] == "error"
    assert "fetch-depth: 0" in out.stdout


def test_new_branch_push_compares_with_the_default_branch(project: Repo, runner_temp: Path) -> None:
    payload = {"before": ZERO, "after": sha(project, "feature"), "repository": {"default_branch": "main"}}
    out = run_action(project.path, runner_temp, "push", payload)
    assert out.code == 0, out.stdout
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "outside", "--no-verify")
    payload["after"] = sha(project, "feature")
    assert run_action(project.path, runner_temp, "push", payload).code == 1


def test_push_and_deleted_branch(project: Repo, runner_temp: Path) -> None:
    payload = {"before": sha(project, "main"), "after": sha(project, "feature")}
    assert run_action(project.path, runner_temp, "push", payload).code == 0
    deleted = run_action(
        project.path, runner_temp, "push", {"before": sha(project, "feature"), "after": ZERO, "deleted": True}
    )
    assert deleted.code == 0
    assert "nothing to check" in deleted.summary


def _queue(project: Repo) -> dict[str, Any]:
    """main moves on, then the queue merges the pull request onto it (a real group commit)."""
    project.git("checkout", "-q", "main")
    project.write("NEWS.md", "main moved on\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "main moves on", "--no-verify")
    base = sha(project, "main")
    project.git("checkout", "-qb", "gh-readonly-queue/main/pr-1", "main")
    project.git("merge", "-q", "--no-ff", "--no-edit", "--no-verify", "feature")
    return {"merge_group": {"base_sha": base, "head_sha": sha(project, "HEAD")}}


def test_merge_group(project: Repo, runner_temp: Path) -> None:
    out = run_action(project.path, runner_temp, "merge_group", _queue(project))
    assert out.code == 0, out.stdout  # evidence and review are the pull request head's
    assert out.outputs["result"] == "pass"
    assert "harness-gate: pass" in out.summary


def test_merge_group_with_a_violation(project: Repo, runner_temp: Path) -> None:
    reopen(project)
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "outside", "--no-verify")
    payload = _queue(project)
    out = run_action(project.path, runner_temp, "merge_group", payload)
    assert out.code == 1
    assert "title=HG101" in out.stdout
    refused = run_action(project.path, runner_temp, "merge_group", payload, reverify="true")
    assert refused.code == 2


def test_workflow_dispatch_needs_inputs(project: Repo, runner_temp: Path) -> None:
    assert run_action(project.path, runner_temp, "workflow_dispatch", {}).code == 2
    out = run_action(project.path, runner_temp, "workflow_dispatch", {}, base="main", head="feature")
    assert out.code == 0, out.stdout


def test_reverify_runs_the_commands_and_is_refused_for_pull_request_target(project: Repo, runner_temp: Path) -> None:
    project.git("checkout", "-q", "main")
    out = run_action(project.path, runner_temp, "pull_request", pr(project), reverify="true")
    assert out.code == 1  # the checkout is main, not the head: re-running there proves nothing
    assert "title=HG302" in out.stdout
    project.git("checkout", "-q", "feature")
    assert run_action(project.path, runner_temp, "pull_request", pr(project), reverify="true").code == 0
    refused = run_action(project.path, runner_temp, "pull_request_target", pr(project), reverify="true")
    assert refused.code == 2


def test_annotations_escape_names_and_messages() -> None:
    report = Report("check", (Finding("HG101", "a,b:c%d\ne.py", 3, "bad\r\nname 100%", "fix: it"),))
    import io

    stream = io.StringIO()
    github.write_annotations(report, stream)
    line = stream.getvalue()
    assert line.count("\n") == 1  # one workflow command, whatever the name holds
    assert "file=a%2Cb%3Ac%25d%0Ae.py,line=3," in line
    assert "::bad%0D%0Aname 100%25 — fix: it" in line


def test_the_workspace_cannot_replace_the_gate(project: Repo, runner_temp: Path) -> None:
    fake = "import os\nprint('all good')\nopen(os.environ['GITHUB_OUTPUT'], 'a').write('result=pass\\n')\n"
    project.write("harness_gate/__init__.py", "")
    project.write("harness_gate/action.py", fake)
    project.write("pip/__main__.py", fake)
    project.git("add", "-A")
    project.git("commit", "-qm", "shadow the gate", "--no-verify")
    out = run_action(project.path, runner_temp, "pull_request", pr(project))
    assert out.code == 1
    assert out.outputs["result"] == "blocked"
    assert "all good" not in out.stdout


def test_file_names_cannot_inject_workflow_commands(project: Repo, runner_temp: Path) -> None:
    (project.path / "::warning title=fake::injected").write_text("x")
    (project.path / "##[warning]legacy").write_text("x")
    project.git("add", "-A")
    project.git("commit", "-qm", "hostile names", "--no-verify")
    out = run_action(project.path, runner_temp, "pull_request", pr(project))
    assert out.code == 1
    for line in out.stdout.splitlines():
        stripped = line.lstrip()
        assert not stripped.startswith("::warning"), line
        assert "##[" not in line, line
        if stripped.startswith("::"):
            assert stripped.startswith("::error file="), line


def test_pushes_without_the_old_tip(project: Repo, runner_temp: Path, tmp_path: Path) -> None:
    after = sha(project, "feature")
    # A shallow clone cannot know what a push changed.
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{project.path}", str(clone)], check=True
    )
    payload = {
        "ref": "refs/heads/feature",
        "before": sha(project, "feature~1"),
        "after": after,
        "repository": {"default_branch": "main"},
    }
    out = run_action(clone, runner_temp, "push", payload)
    assert out.code == 2
    assert "fetch-depth: 0" in out.stdout
    # A forced push to the default branch whose old tip was never fetched.
    forced = {
        "ref": "refs/heads/main",
        "before": "1" * 40,
        "after": after,
        "forced": True,
        "repository": {"default_branch": "main"},
    }
    assert run_action(project.path, runner_temp, "push", forced).code == 2
    # A forced push whose old tip is here: the commits it brings are judged.
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "outside", "--no-verify")
    rewritten = {
        "ref": "refs/heads/main",
        "before": sha(project, "main"),
        "after": sha(project, "feature"),
        "forced": True,
        "repository": {"default_branch": "main"},
    }
    assert run_action(project.path, runner_temp, "push", rewritten).code == 1


def test_the_config_input_is_read_from_the_base(project: Repo, runner_temp: Path) -> None:
    project.write(
        ".harness-gate.toml",
        'artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n',
    )
    project.write("src/a.py", "a = 3\n")  # stale evidence: only the PR's own config would excuse it
    project.git("add", "-A")
    project.git("commit", "-qm", "relax the rules", "--no-verify")
    out = run_action(project.path, runner_temp, "pull_request", pr(project), config=".harness-gate.toml")
    assert out.code == 1
    assert "title=HG302" in out.stdout


def test_a_push_to_a_feature_branch_is_judged_against_the_default_branch(project: Repo, runner_temp: Path) -> None:
    """A push that weakens the configuration and writes outside the boundary is blocked; one
    more trivial push on top must not be judged by the weakened configuration, nor only by
    its own increment."""
    reopen(project)
    project.write(".harness-gate.toml", 'artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\n')
    project.write("other.py", "x\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "weaken and escape", "--no-verify")
    first = sha(project, "feature")
    payload = {
        "ref": "refs/heads/feature",
        "before": sha(project, "feature~1"),
        "after": first,
        "repository": {"default_branch": "main"},
    }
    assert run_action(project.path, runner_temp, "push", payload).code == 1
    project.write("src/b.py", "b = 1\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "a trivial push on top", "--no-verify")
    payload = {**payload, "before": first, "after": sha(project, "feature")}
    out = run_action(project.path, runner_temp, "push", payload)
    assert out.code == 1
    assert "title=HG101" in out.stdout or "title=HG102" in out.stdout
