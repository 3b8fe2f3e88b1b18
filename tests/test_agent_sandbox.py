"""`harness-gate agent-sandbox`: the runtimes' OS sandbox rules written from the approved
boundary and the protected paths (docs/agents.md). The real clients enforce them in
tests/agents/."""

from __future__ import annotations

import json
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from harness_gate.commands import agent_sandbox
from tests.helpers import Repo


def test_write_roots_are_the_literal_folders_of_the_boundary() -> None:
    assert agent_sandbox.write_roots(["src/**", "docs/a.md", "lib/*/x.py", "*.py"]) == ["", "docs/a.md", "lib", "src"]


@pytest.mark.slow
def test_sandbox_rules_follow_the_approved_boundary(gated: Repo) -> None:
    res = gated.cli("agent-sandbox")
    assert res.exit_code == 0, res.output
    root = str(gated.path)
    claude = json.loads(gated.read(".claude/settings.local.json").decode())
    sandbox = claude["sandbox"]
    assert sandbox["enabled"] and sandbox["failIfUnavailable"] and sandbox["allowUnsandboxedCommands"] is False
    denied = sandbox["filesystem"]["denyWrite"]
    for rel in (
        "other.py",
        "secret",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".git/hooks",
        ".git/config",
        ".harness-gate.toml",
        "harness/plans/p1/approvals.jsonl",
        "harness/plans/p1/plan.md",
    ):
        assert f"{root}/{rel}" in denied, rel  # fmt: skip
    assert not any(d.startswith(f"{root}/src") for d in denied)
    assert f"{root}/harness/plans/p1/evidence.jsonl" not in denied  # verify appends to it
    assert f"{root}/.claude" not in denied  # the sandbox makes its own placeholders there
    assert "~/.claude/settings.json" in denied
    assert f"Edit(/{root}/.claude/settings.local.json)" in claude["permissions"]["deny"]
    codex = tomllib.loads(gated.read(".codex/config.toml").decode())
    assert codex["default_permissions"] == "harness-gate"
    fs = codex["permissions"]["harness-gate"]["filesystem"]
    roots = fs[":workspace_roots"]
    assert fs[":root"] == "read" and fs[":tmpdir"] == "write"
    assert roots["."] == "read" and roots["src"] == "write" and roots["harness/plans/p1"] == "write"
    assert roots["harness/plans/p1/approvals.jsonl"] == "read" and roots[".git/hooks"] == "read"
    # This clone's own: excluded, so neither Stop nor a commit sees them.
    assert gated.git("status", "--porcelain", "--", ".claude", ".codex") == b""
    # Run again after an amendment, the rules follow; a settings key of the user's is kept.
    claude["model"] = "mine"
    gated.write(".claude/settings.local.json", json.dumps(claude))
    assert gated.cli("agent-sandbox", "--runtime", "claude").exit_code == 0
    again = json.loads(gated.read(".claude/settings.local.json").decode())
    assert again["model"] == "mine" and again["permissions"]["deny"].count(claude["permissions"]["deny"][0]) == 1


def test_without_an_approved_plan_nothing_is_writable(repo: Repo) -> None:
    repo.write("src/a.py", "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    assert repo.cli("init").exit_code == 0
    res = repo.cli("agent-sandbox", "--runtime", "codex")
    assert res.exit_code == 0 and "nothing is writable" in res.output
    roots = tomllib.loads(repo.read(".codex/config.toml").decode())["permissions"]["harness-gate"]["filesystem"]
    assert "src" not in roots[":workspace_roots"] and roots[":workspace_roots"]["."] == "read"


def test_a_codex_config_of_someone_else_is_not_overwritten(gated: Repo) -> None:
    gated.write(".codex/config.toml", 'model = "x"\n')
    res = gated.cli("agent-sandbox", "--runtime", "codex")
    assert res.exit_code == 2 and "HG904" in res.output
    assert gated.read(".codex/config.toml").decode() == 'model = "x"\n'


def test_managed_settings_hold_the_hook_and_only_managed_hooks(repo: Repo) -> None:
    res = repo.cli("agent-sandbox", "--managed")
    doc = json.loads(res.output)
    assert doc["allowManagedHooksOnly"] is True and doc["sandbox"]["enabled"] is True
    assert doc["hooks"]["Stop"][0]["hooks"][0]["command"] == "harness-gate agent-hook --runtime claude"
