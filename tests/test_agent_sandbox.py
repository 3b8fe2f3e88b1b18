"""`harness-gate agent-sandbox`: the runtimes' OS sandbox rules written from the approved
boundary and the protected paths (docs/agents.md). The real clients enforce them in
tests/agents/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
        ".git",  # whole: hooks, config, commondir, objects, the hook's session records
        ".harness-gate.toml",
        "harness/plans/p1/plan.md",  # plans and approvals are a human's to write
        "harness/plans/p1/approvals.jsonl",
    ):
        assert f"{root}/{rel}" in denied, rel  # fmt: skip
    assert not any(d.startswith(f"{root}/src") for d in denied)
    assert not any(d.startswith(f"{root}/.git/") for d in denied)  # covered whole
    assert f"{root}/harness/plans/p1/evidence.jsonl" not in denied  # `verify` appends to it
    assert f"{root}/.claude" not in denied  # the sandbox makes its own placeholders there
    # The folder of a denied file is a mount point of its own: it cannot be renamed away.
    assert sandbox["filesystem"]["allowWrite"] == [
        f"{root}/{p}" for p in (".claude", "harness", "harness/plans", "harness/plans/p1")
    ]
    assert "~/.claude/settings.json" in denied
    assert f"Edit(/{root}/.claude/settings.local.json)" in claude["permissions"]["deny"]
    codex = tomllib.loads(gated.read(".codex/config.toml").decode())
    assert codex["default_permissions"] == "harness-gate"
    fs = codex["permissions"]["harness-gate"]["filesystem"]
    roots = fs[":workspace_roots"]
    assert fs[":root"] == "read" and fs[":tmpdir"] == "write"
    assert roots["."] == "read" and roots["src"] == "write" and roots["harness/plans/p1"] == "write"
    assert roots["harness/plans/p1/approvals.jsonl"] == "read" and roots[".git/hooks"] == "read"
    assert not any(k.startswith(".git") and v == "write" for k, v in roots.items())  # no object replaced
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


@pytest.mark.slow
def test_every_folder_on_the_way_to_a_denied_name_is_a_mount_point(gated: Repo) -> None:
    """bubblewrap's mount points cannot be renamed: `mv src src-old && mkdir src` would
    otherwise carry `src/lib/other.py`'s read-only binding away and leave a writable one."""
    gated.write("src/lib/other.py", "x\n")
    gated.write("src/app/a.py", "a\n")
    root = gated.path
    denied = agent_sandbox.claude_denied(root, agent_sandbox.write_roots(["src/app/**"]), "harness")
    assert "src/lib" in denied and "src/app" not in denied
    assert agent_sandbox.claude_mount_points(root, denied) == ["src"]


@pytest.mark.parametrize("boundary", ["src/**", "**"])
def test_only_the_plans_evidence_log_is_writable_in_the_artifacts_root(gated: Repo, boundary: str) -> None:
    """`verify` appends to the governing plan's evidence log inside Claude Code's sandbox;
    the plan, its approvals, the other plans and the rest of the artifacts root stay
    read-only, even under a boundary of the whole tree."""
    gated.write("harness/plans/p0/plan.md", "another plan\n")
    gated.write("harness/plans/p1/evidence.jsonl", "")
    root = gated.path
    roots = agent_sandbox.write_roots([boundary])
    denied = agent_sandbox.claude_denied(root, roots, "harness", "harness/plans/p1")
    assert {"harness/plans/p1/plan.md", "harness/plans/p1/approvals.jsonl", "harness/plans/p0"} <= set(denied)
    assert not {"harness", "harness/plans", "harness/plans/p1", "harness/plans/p1/evidence.jsonl"} & set(denied)
    assert {"harness", "harness/plans", "harness/plans/p1"} <= set(agent_sandbox.claude_mount_points(root, denied))
    # Without a plan that grants writes, the artifacts root is denied whole.
    assert "harness" in agent_sandbox.claude_denied(root, roots, "harness")


@pytest.mark.parametrize("key", ["disableAllHooks", "hooks", "statusLine", "env", "apiKeyHelper", "enabledPlugins"])
def test_settings_that_switch_hooks_off_are_refused_not_kept(gated: Repo, key: str) -> None:
    """A key that switches hooks off or runs a command of its own, already in
    settings.local.json, would outlive the rules written beside it: HG910, nothing written."""
    text = json.dumps({key: True, "model": "mine"})
    gated.write(".claude/settings.local.json", text)
    res = gated.cli("agent-sandbox", "--runtime", "claude")
    assert res.exit_code == 2 and "HG910" in res.output and f"`{key}`" in res.output
    assert gated.read(".claude/settings.local.json").decode() == text


def test_a_tree_too_wide_to_list_is_an_error_not_a_shorter_list(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_sandbox, "_MAX_ENTRIES", 2)
    for i in range(4):
        gated.write(f"wide{i}.txt", "x\n")
    before = (
        gated.read(".claude/settings.local.json") if (gated.path / ".claude/settings.local.json").exists() else None
    )
    res = gated.cli("agent-sandbox", "--runtime", "claude")
    assert res.exit_code == 2 and "HG904" in res.output and "none are written" in res.output
    after = gated.read(".claude/settings.local.json") if (gated.path / ".claude/settings.local.json").exists() else None
    assert after == before


@pytest.mark.slow
def test_status_names_sandbox_rules_the_boundary_has_left_behind(gated: Repo) -> None:
    """The rules are this clone's, written from the boundary of the day: after an amendment
    (or a new file outside the boundary) `status` says they are stale and how to fix it."""
    assert gated.cli("agent-sandbox").exit_code == 0
    assert "sandbox:" not in gated.cli("status").output
    res = gated.cli("plan", "amend", "--add-boundary", "docs/**")
    assert res.exit_code == 0, res.output
    said = gated.approve().output  # the approval that moves the boundary says so at once
    assert "then: run `harness-gate agent-sandbox`" in said and ".codex/config.toml" in said, said
    gated.git("add", "-A")
    gated.git("commit", "-qm", "amend", "--no-verify")
    out = gated.cli("status").output
    assert ".codex/config.toml" in out and "run `harness-gate agent-sandbox`" in out, out
    assert gated.cli("agent-sandbox").exit_code == 0
    assert "sandbox:" not in gated.cli("status").output
    gated.write("new-top.py", "x\n")  # writable under Claude Code's rules until they are written again
    assert ".claude/settings.local.json" in gated.cli("status").output
    assert gated.cli("agent-sandbox").exit_code == 0
    doc = json.loads(gated.read(".claude/settings.local.json").decode())
    gated.write(".claude/settings.local.json", json.dumps({**doc, "disableAllHooks": True}))  # hooks off, later
    assert ".claude/settings.local.json" in gated.cli("status").output


def test_a_boundary_wildcard_at_the_top_never_makes_the_work_tree_writable_for_codex(tmp_path: Path) -> None:
    """`**/*.py` has the whole work tree as its root: Codex gets each top-level entry
    (a mount point each) rather than `.`, so no folder holding a read-only carve-out can be
    renamed away; never `.git`, the artifacts root or a protected name."""
    for name in ("src", "docs", "harness", ".git", ".claude", ".github"):
        (tmp_path / name).mkdir()
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    roots = agent_sandbox.codex_roots(tmp_path, agent_sandbox.write_roots(["**/*.py", "lib/**"]), "harness")
    assert roots == ["docs", "lib", "setup.py", "src"]
    text = agent_sandbox.codex_config(roots, "harness", "harness/plans/p1")
    assert '"." = "read"' in text and '"." = "write"' not in text
    assert agent_sandbox.codex_roots(tmp_path, ["src"], "harness") == ["src"]


@pytest.mark.parametrize("text", ['{"permissions": 5}', '{"permissions": {"deny": 7}}', '{"sandbox": []}'])
def test_settings_of_the_wrong_shape_are_a_usage_error_not_an_internal_one(gated: Repo, text: str) -> None:
    gated.write(".claude/settings.local.json", text)
    res = gated.cli("agent-sandbox", "--runtime", "claude")
    assert res.exit_code == 2 and "HG904" in res.output and "HG999" not in res.output, res.output
    assert gated.read(".claude/settings.local.json").decode() == text
