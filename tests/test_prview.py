"""The pull request's plans for a reviewer (harness_gate/prview.py): the Action's step summary
of a real pull request, `status --format markdown` from the HEAD commit, and the data
`check` adds to its report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness_gate import github, prview
from tests.github_runner import run_action
from tests.helpers import PY, Repo, adopted_main, completed_branch, pass_review, planned_branch, verified_work

HOSTILE = (
    "Ship <script>alert(1)</script> for @org/team ![x](http://evil.example/p.png) | cell\nline two #12 www.evil.example"
)


def sha(repo: Repo, rev: str) -> str:
    return repo.git("rev-parse", rev).decode().strip()


def pull_request(repo: Repo) -> dict[str, Any]:
    """The `pull_request` event of `feature` against `main`."""
    return {"pull_request": {"base": {"sha": sha(repo, "main"), "ref": "main"}, "head": {"sha": sha(repo, "feature")}}}


def start(repo: Repo, objective: str = HOSTILE) -> Repo:
    """main adopts harness-gate; `feature` holds an approved plan with two commands."""
    return planned_branch(
        adopted_main(repo), objective=objective, verify=(f"unit={PY} -c pass", f"lint={PY} -c pass"), message="Plan: p1"
    )


def work_and_review(repo: Repo) -> None:
    verified_work(repo, "Work, verified and reviewed", reviewer="Rae")


def approval(repo: Repo) -> dict[str, Any]:
    line = repo.read("harness/plans/p1/approvals.jsonl").decode().splitlines()[0]
    record: dict[str, Any] = json.loads(line)
    return record


def assert_inert(markdown: str) -> None:
    """No text the change wrote is markup: no tag, mention, image, link or table break."""
    assert "<script" not in markdown
    assert "@org" not in markdown
    assert "![" not in markdown and "](" not in markdown
    assert "http://" not in markdown and "www.evil" not in markdown
    assert " #12" not in markdown
    # Only our own tags are raw HTML.
    assert set(re.findall(r"<(/?[a-z]+)", markdown)) <= {"code", "/code", "details", "/details", "summary", "/summary"}


@pytest.mark.slow
@pytest.mark.integration  # the Action's steps, installed
def test_a_blocked_pull_request_summary_shows_the_plan_and_each_commit(repo: Repo, runner_temp: Path) -> None:
    start(repo)
    work_and_review(repo)
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "Sneak @org/team <b>out</b> | of bounds", "--no-verify")
    out = run_action(repo.path, runner_temp, "pull_request", pull_request(repo))
    assert out.code == 1
    summary = out.summary
    # The header: one human line, no Python repr.
    header = summary.splitlines()[2]
    assert header.startswith("**blocked** · stage <code>ci</code> · ")
    assert f"<code>{sha(repo, 'main')[:12]}</code>..<code>{sha(repo, 'feature')[:12]}</code>" in header
    assert "3 commits judged" in header
    assert "True" not in summary.split("### Plan")[0] and "active:" not in summary
    # The plan: objective (escaped), boundary, commands with their evidence, approval, review.
    assert "### Plan <code>p1</code> (reviewing)" in summary
    assert "**Objective**: Ship &#60;script&#62;alert(1)&#60;/script&#62; for &#64;&#8203;org/team" in summary
    assert "**Write boundary**: <code>src/&#42;&#42;</code>" in summary
    record = approval(repo)
    assert record["approver"].split("<")[0].strip() in summary
    assert f"sha256 <code>{record['sha256']}</code>" in summary
    assert prview.text(prview.UNSIGNED) in summary
    assert "<details><summary>Commands (2)</summary>" in summary
    assert f"| <code>unit</code> | <code>{PY} -c pass</code> | 600 s |" in summary
    # The head's tree moved (other.py): the evidence is for another tree, and says so.
    moved = r"\| <code>unit</code> \| PASS \| [0-9.]+ s \| <code>[0-9a-f]{12}</code> \| no: tree-moved \|"
    assert re.search(moved, summary)
    assert re.search(r"\| <code>lint</code> \| PASS \| .* \| no: tree-moved \|", summary)
    assert "**Review**: PASS by Rae (<code>harness/plans/p1/001-review.md</code>)" in summary
    assert "<details><summary>What the review is bound to</summary>" in summary
    assert "**Repairs**: 0 of 3" in summary
    assert "**Completion**: not yet" in summary
    # Each commit judged, the blocked one named with its codes.
    assert "<details open><summary>Commits: 3 judged, 1 blocked</summary>" in summary
    sneak = sha(repo, "feature")[:12]
    row = next(line for line in summary.splitlines() if line.startswith(f"| <code>{sneak}</code>"))
    assert "❌ blocked" in row and "HG101" in row
    assert "Sneak &#64;&#8203;org/team &#60;b&#62;out&#60;/b&#62; &#124; of bounds" in row
    assert f"| <code>{sha(repo, 'feature~2')[:12]}</code> | Plan: p1 | ✅ pass | - |" in summary
    assert_inert(summary)
    # The same facts travel in the JSON report.
    doc = json.loads(Path(out.outputs["report-path"]).read_text())
    (plan,) = doc["data"]["plans"]
    assert plan["objective"] == HOSTILE
    assert plan["approval"]["signed"] is False
    assert [e["reason"] for e in plan["evidence"]] == ["tree-moved", "tree-moved"]
    assert [c["verdict"] for c in doc["data"]["commit_verdicts"]] == ["pass", "pass", "blocked"]
    assert doc["data"]["commits"] == 3


@pytest.mark.slow
def test_status_markdown_reads_the_head_commit(repo: Repo) -> None:
    start(repo)
    work_and_review(repo)
    res = repo.cli("status", "--format", "markdown")
    assert res.exit_code == 0, res.output
    executing = res.output
    assert "### Plan <code>p1</code> (reviewing)" in executing
    assert f"head <code>{sha(repo, 'HEAD')[:12]}</code>" in executing
    assert "Evidence: 2 of 2 fresh for tree" in executing
    assert re.search(r"\| <code>unit</code> \| PASS \| [0-9.]+ s \| <code>[0-9a-f]{12}</code> \| fresh \|", executing)
    assert "**Review**: PASS by Rae" in executing
    assert "**Completion**: not yet" in executing
    assert_inert(executing)
    # The work tree is not what it reads: changing it changes nothing.
    repo.write("src/a.py", "a = 2\n")
    repo.write("harness/plans/p1/plan.md", "# Plan\n\n## Objective\n\nsomething else\n")
    repo.write("src/new.py", "n = 1\n")
    again = repo.cli("status", "--format", "markdown")
    assert again.exit_code == 0
    assert again.output == executing
    repo.git("checkout", "-q", "--", ".")
    repo.git("clean", "-qfd")
    # Completed: the completion's outcome and when it was committed.
    assert repo.cli("complete").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "complete")
    done = repo.cli("status", "--format", "markdown")
    assert done.exit_code == 0
    assert "### Plan <code>p1</code> (completed)" in done.output
    assert re.search(
        r"\*\*Completion\*\*: completed at 20[0-9-]+T[0-9:+]+ \(commit <code>[0-9a-f]{12}</code>\)", done.output
    )
    assert "Evidence: 2 of 2 fresh" in done.output


@pytest.mark.slow
def test_status_markdown_of_a_plan_being_executed_and_with_base(repo: Repo) -> None:
    start(repo, objective="Add the parser")
    res = repo.cli("status", "--format", "markdown")
    assert res.exit_code == 0
    assert "### Plan <code>p1</code> (executing)" in res.output
    assert "**Objective**: Add the parser" in res.output
    assert "Evidence: 0 of 2 fresh" in res.output
    assert "| <code>unit</code> | no record | - | - | no: missing |" in res.output
    assert "**Review**: none yet" in res.output
    # With --base: every plan the branch's commits used, and each commit's verdict, as check judges them.
    work_and_review(repo)
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "outside", "--no-verify")
    based = repo.cli("status", "--format", "markdown", "--base", "main")
    assert based.exit_code == 0, based.output
    assert "check would say **blocked**" in based.output
    assert "Commits: 3 judged, 1 blocked" in based.output
    assert "HG101" in based.output
    assert repo.cli("status", "--base", "main").exit_code == 2  # --base goes with markdown


def test_the_hook_path_builds_no_view(repo: Repo) -> None:
    start(repo, objective="Add the parser")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    doc = json.loads(repo.cli("check", "--staged", "--format", "json").output)
    assert "plans" not in doc["data"] and "commit_verdicts" not in doc["data"]
    ranged = json.loads(repo.cli("check", "--range", "main..HEAD", "--format", "json").output)
    assert [p["id"] for p in ranged["data"]["plans"]] == ["p1"]
    assert ranged["data"]["commit_verdicts"][0]["subject"] == "Plan: p1"


@pytest.mark.parametrize(
    "hostile",
    [
        "<img src=x onerror=alert(1)>",
        "@here",
        "$x^2$",
        "[a](javascript:alert(1))",
        "![i](http://e/x.png)",
        "a|b\nc",
        "`x`",
        "<!-- x -->",
        "https://evil.example",
        "www.evil.example",
        "#1",
        "\x1b[31m",
        "\u202eevil",
        "a\u2028b",
        "**b** _i_ ~~s~~",
    ],
)
def test_text_is_inert(hostile: str) -> None:
    out = re.sub(r"&#[0-9]+;", "", prview.text(hostile))
    for raw in "<>[]|@`*_~#$\n":
        assert raw not in out
    assert "www." not in out and "://" not in out
    assert all(c.isprintable() for c in out)


def test_a_rendered_mention_or_reference_stays_inert() -> None:
    """Markdown decodes `&#64;` back to `@` before GitHub looks for mentions: what the
    rendering yields must not hold `@team` or `#12` as GitHub would link them."""
    import html

    rendered = html.unescape(prview.text("ping @org/team and #12"))
    assert "@org" not in rendered and "#12" not in rendered
    assert "@\u200borg/team" in rendered and "#\u200b12" in rendered


def test_the_step_summary_is_the_view_with_every_finding() -> None:
    """One renderer, one escaping: the step summary's error and findings are the view's,
    as inert, and it lists every finding where the comment counts the rest."""
    from harness_gate.errors import HarnessGateError
    from harness_gate.findings import finding
    from harness_gate.report import Report

    found = tuple(finding("HG101", f"{HOSTILE}{i}.py", HOSTILE, hint=HOSTILE) for i in range(prview.FINDINGS_SHOWN + 1))
    report = Report("check", found, {"stage": "ci"}, HarnessGateError("HG999", HOSTILE, HOSTILE))
    step, comment = github.summary(report), prview.render(report)
    assert_inert(step)
    assert step.startswith("## ⚠️ harness-gate: error\n") and comment.startswith("## ⚠️ harness-gate check: error\n")

    def rows(markdown: str) -> list[str]:
        return [line for line in markdown.splitlines() if line.startswith("| HG101 |")]

    assert len(rows(step)) == len(found) and rows(comment) == rows(step)[:-1]
    assert "1 more: the JSON report lists every finding" in comment and "more: the JSON" not in step
    rest = [line for line in step.splitlines()[1:] if line not in rows(step)]
    assert rest == [line for line in comment.splitlines()[1:] if line not in rows(comment) and "1 more:" not in line]


def test_long_finding_lists_are_counted_past_the_table() -> None:
    from harness_gate.findings import finding

    found = [finding("HG101", f"x{i}.py", "outside") for i in range(prview.FINDINGS_SHOWN + 5)]
    lines = prview.findings_markdown(found)
    assert sum(1 for line in lines if line.startswith("| HG101")) == prview.FINDINGS_SHOWN
    assert any("5 more: the JSON report lists every finding" in line for line in lines)


def test_an_accepted_amendment_is_what_the_view_shows(repo: Repo) -> None:
    """The objective and boundary are the amendment's, and the view names it and its approver."""
    start(repo, objective="The first objective")
    res = repo.cli("plan", "amend", "--objective", "The amended objective", "--add-boundary", "docs/**")
    assert res.exit_code == 0, res.output
    repo.approve("harness/plans/p1/001-amendment.md")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "Amend p1")
    out = repo.cli("status", "--format", "markdown").output
    assert "**Objective**: The amended objective" in out
    assert "<code>docs/&#42;&#42;</code>" in out
    assert "**Amended by** <code>001-amendment.md</code>: approved by " in out
    doc = json.loads(repo.cli("status", "--format", "json").output)
    assert doc["schema"] == "harness-gate.report/v2"


@pytest.mark.slow
@pytest.mark.integration  # the Action's steps, installed
def test_the_summary_marks_a_stale_review_and_shows_its_notes(repo: Repo, runner_temp: Path) -> None:
    """A review with a note, then code changed after it: the step summary says the review
    is stale (what CI blocks on), and lists the reviewer's findings."""
    start(repo, objective="Tidy")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    assert repo.cli("verify").exit_code == 0
    review = pass_review(repo)
    note = '{"id": "N1", "severity": "note", "path": "src/a.py", "summary": "Name the constant"}'
    text = review.read_text().replace('"findings": []', f'"findings": [{note}]')
    review.write_text(text.replace('"verdict": "PASS"', '"verdict": "PASS_WITH_NOTES"'))
    assert repo.cli("lint", str(review.relative_to(repo.path))).exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "Work, reviewed with a note")
    repo.write("src/a.py", "a = 2\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "Changed after the review", "--no-verify")
    out = run_action(repo.path, runner_temp, "pull_request", pull_request(repo))
    assert out.code == 1
    line = next(x for x in out.summary.splitlines() if x.startswith("**Review**"))
    assert "PASS&#95;WITH&#95;NOTES by Rae" in line and "— **stale**: " in line, line
    assert "<details><summary>The reviewer's findings (1)</summary>" in out.summary
    assert "| <code>N1</code> | note | <code>src/a.py</code> | Name the constant |" in out.summary
    (plan,) = json.loads(Path(out.outputs["report-path"]).read_text())["data"]["plans"]
    assert plan["review"]["judged"]["state"] == "stale"
    assert plan["review"]["notes"][0]["id"] == "N1"


@pytest.mark.slow
@pytest.mark.integration
def test_with_reverify_the_summary_says_the_rerun_decides(repo: Repo, runner_temp: Path) -> None:
    """`reverify`: the commands' run in the job decides, and the summary says so above the
    recorded evidence (which, in a fresh clone, is "not in this clone")."""
    completed_branch(repo)
    out = run_action(repo.path, runner_temp, "pull_request", pull_request(repo), reverify="true")
    assert out.code == 0, out.stdout
    assert "the commands ran again in this job (`reverify`) and passed" in out.summary
    assert "<details><summary>Recorded evidence: " in out.summary
    (plan,) = json.loads(Path(out.outputs["report-path"]).read_text())["data"]["plans"]
    assert plan["reverified"] == {"result": "pass", "codes": []}
