"""The JSON report is what docs/report.md and harness_gate/schemas/report.schema.json say:
every command that offers `--format json`, run through the CLI in a real repository, in
each outcome (pass, blocked, error, an inactive repository)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from harness_gate import schema
from harness_gate.cli import cli
from harness_gate.findings import RULES, rule_anchor
from harness_gate.report import REPORT_SCHEMA
from tests.helpers import PY, SCOPE_READ, Repo, adopted_main, blocked_branch

DOCS = Path(__file__).resolve().parent.parent / "docs"


RULES_PAGE = "https://github.com/acme/harness-gate/blob/v0.1.0/docs/rules.md"


def json_commands() -> set[str]:
    """Every command whose `--format` offers json, found in the CLI itself."""
    found: set[str] = set()

    def walk(group: click.Group, prefix: str) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")
                continue
            for param in command.params:
                if "--format" in getattr(param, "opts", ()) and "json" in getattr(param.type, "choices", ()):
                    found.add(prefix + name)

    walk(cli, "")
    return found


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    problems = schema.errors("report", doc)
    assert not problems, (problems, json.dumps(doc, indent=1)[:3000])
    assert doc["schema"] == REPORT_SCHEMA
    return doc


def run_json(repo: Repo, *args: str, input: str | None = None, exit_code: int | None = None) -> dict[str, Any]:
    cut = args.index("--") if "--" in args else len(args)  # options go before `--`
    res = repo.cli(*args[:cut], "--format", "json", *args[cut:], input=input)
    doc: dict[str, Any] = json.loads(res.stdout)
    assert doc["exit_code"] == res.exit_code
    if exit_code is not None:
        assert res.exit_code == exit_code, res.output
    return valid(doc)


@pytest.fixture
def adopted(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    return repo


@pytest.mark.slow
def test_every_json_command_in_every_outcome_matches_the_documented_schema(
    adopted: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_GATE_RULES_URL", RULES_PAGE)
    repo = adopted
    seen: set[str] = set()

    def check(*args: str, input: str | None = None, exit_code: int | None = None) -> dict[str, Any]:
        doc = run_json(repo, *args, input=input, exit_code=exit_code)
        seen.add(doc["command"])
        return doc

    # An inactive repository: every command that reads the gate's state says so, exit 0.
    for args in (("check", "--staged"), ("lint",), ("status",), ("explain", "README.md")):
        doc = check(*args, exit_code=0)
        assert doc["data"].get("active") is False, args
    check("init", exit_code=0)
    check("doctor", exit_code=0)  # no agent hook set up
    check("doctor", "--runtime", "codex", exit_code=1)  # not set up, asked for: not live
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.git("checkout", "-qb", "feature")
    check(
        "plan", "new", "p1", "--objective", "x", "--boundary", "src/**", "--verify", f"tests={PY} -c pass", exit_code=0
    )
    check("plan", "use", "p1", exit_code=0)
    check("approve", input="y\n", exit_code=0)
    check("approve", "harness/plans/p1/plan.md", input="y\n", exit_code=0)  # already approved
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    check("check", "--staged", exit_code=0)
    check("agent-sandbox", "--runtime", "claude", exit_code=0)
    # Refused (one finding, exit 1): the plan is not paused, so there is no Pause Report to
    # write and nothing to resume.
    check("pause", exit_code=1)
    check("resume", exit_code=1)
    check("explain", "src/a.py", "other.py", exit_code=1)
    check("verify", exit_code=0)
    check("record", "--", PY, "-c", "pass", exit_code=0)
    check("fingerprint", exit_code=0)
    check("fingerprint", "index", exit_code=0)
    check("status", exit_code=0)
    check("formats", "list", exit_code=0)
    check("formats", "status", exit_code=0)
    check("review", "new", "--reviewer", "Rae", exit_code=0)
    review = repo.path / "harness/plans/p1/001-review.md"
    review.write_text(
        review.read_text()
        .replace(*SCOPE_READ)
        .replace("FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", "PASS")
    )
    repo.git("add", "-A")
    repo.git("commit", "-qm", "work")
    check("lint", exit_code=0)
    check("plan", "amend", "--add-boundary", "docs/**", exit_code=0)
    doc = check("approve", input="n\n", exit_code=1)  # refused: one finding, nothing written
    assert [f["code"] for f in doc["findings"]] == ["HG208"]
    (repo.path / "harness/plans/p1/002-amendment.md").unlink()
    check("complete", exit_code=0)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "complete")
    check("check", "--base", "main", "--stage", "ci", exit_code=0)

    # Blocked: lint findings with their lines.
    repo.write("harness/plans/p1/001-review.md", "# Clean-context Review\n\n## Nope\n")
    doc = check("lint", exit_code=1)
    assert any(f["line"] for f in doc["findings"])
    repo.git("checkout", "--", "harness")

    # Errors (exit 2): a usage error, a configuration error with its line.
    doc = check("check", "--range", "nope..HEAD", exit_code=2)
    assert doc["error"]["code"] == "HG904" and doc["error"]["path"] is None
    repo.write(".harness-gate.toml", 'artifacts_dir = "harness"\nbogus = 1\n')
    doc = check("status", exit_code=2)
    assert doc["error"]["code"] == "HG902"
    assert doc["error"]["path"] == ".harness-gate.toml" and doc["error"]["line"] == 2
    assert doc["error"]["rule_url"].endswith("/docs/rules.md#hg902")

    assert seen == json_commands(), sorted(json_commands() ^ seen)


@pytest.mark.slow
def test_range_findings_carry_their_commit_and_logs_their_line(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_GATE_RULES_URL", RULES_PAGE)
    outside = blocked_branch(adopted_main(repo))
    # The real process: `check` takes the lean path, without click.
    proc = repo.run("check", "--base", "main", "--stage", "ci", "--format", "json")
    assert proc.returncode == 1, proc.stdout
    doc = valid(json.loads(proc.stdout))
    [boundary] = [f for f in doc["findings"] if f["code"] == "HG101"]
    assert boundary["commit"] == outside
    assert boundary["message"].startswith(f"commit {outside[:12]}: ")  # still readable as before
    assert boundary["line"] is None  # a path has no line
    [stale] = [f for f in doc["findings"] if f["code"] == "HG302"]
    assert stale["commit"] is None  # the head state's requirement, not one commit's change
    log = repo.read("harness/plans/p1/evidence.jsonl").decode().splitlines()
    assert stale["line"] == len(log)  # the newest record for `tests`: the one that is stale
    assert json.loads(log[stale["line"] - 1])["command_id"] == "tests"
    for f in doc["findings"]:
        assert f["rule_url"].endswith(f"/docs/rules.md#{rule_anchor(f['code'])}")
        assert f["title"] == RULES[f["code"]].title
    # The index has no commit.
    repo.write("src/b.py", "b = 1\n")
    repo.git("add", "-A")
    staged = run_json(repo, "check", "--staged")
    assert all(f["commit"] is None for f in staged["findings"])


def test_the_schema_and_its_page_say_the_same() -> None:
    """docs/report.md names the schema file, the current schema id and every finding field."""
    page = (DOCS / "report.md").read_text()
    assert REPORT_SCHEMA in page
    assert "harness_gate/schemas/report.schema.json" in page
    loaded = schema.load("report")
    assert loaded["properties"]["schema"]["const"] == REPORT_SCHEMA
    for name in loaded["$defs"]["finding"]["properties"]:
        assert re.search(rf"`{name}`", page), name
    for name in loaded["$defs"]["error"]["properties"]:
        assert re.search(rf"`{name}`", page), name
