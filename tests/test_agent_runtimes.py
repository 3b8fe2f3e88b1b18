"""The agent hook against each runtime as it is today: the payloads recorded from the real
Claude Code 2.1.197, Codex CLI 0.171.0 and Gemini CLI 0.61.0 (tests/agents/payloads/, as
each client sent them on stdin; `$W/repo` was the repository, its plan's boundary `src/**`),
judged through the real command in a real repository (docs/agents.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_gate import agent
from tests.adversarial.util import setup_gated
from tests.helpers import Repo

PROJECT = Path(__file__).resolve().parents[1]
PAYLOADS = Path(__file__).resolve().parent / "agents/payloads"


def recorded(name: str, repo: Path, **changes: Any) -> dict[str, Any]:
    """A recorded payload, its paths in `repo`; `changes` replace top-level keys, and
    `tool_input` keys (`input__KEY`)."""
    text = (PAYLOADS / f"{name}.json").read_text().replace("$W/repo", str(repo)).replace("$W", str(repo.parent))
    payload: dict[str, Any] = json.loads(text)
    for key, value in changes.items():
        if key.startswith("input__"):
            payload["tool_input"][key[len("input__") :]] = value
        else:
            payload[key] = value
    return payload


def hook(
    runtime: str, payload: dict[str, Any], cwd: Path, project: Path | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    """The real command as a subprocess, started where the runtime starts it."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    proc = subprocess.run(
        [sys.executable, "-m", "harness_gate", "agent-hook", "--runtime", runtime],
        cwd=cwd, input=json.dumps(payload).encode(), capture_output=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    out = proc.stdout.decode()
    assert "Traceback" not in out + proc.stderr.decode()
    return proc.returncode, json.loads(out) if out.strip() else None, proc.stderr.decode()


def verdict(runtime: str, payload: dict[str, Any], repo: Path) -> tuple[str, str]:
    """("allow" | "deny" | "ask" | "block", reason) in the runtime's own answer shape."""
    del repo  # the hook finds it as a runtime starts it: the working directory, CLAUDE_PROJECT_DIR
    code, out, err = agent.run(runtime, _stdin(payload))
    if not out:
        assert code == 0
        return "allow", ""
    doc = json.loads(out)
    if runtime == "gemini":
        assert set(doc) == {"decision", "reason"} and doc["decision"] == "deny" and code == 0
        return "deny", str(doc["reason"])
    if "decision" in doc:
        return str(doc["decision"]), str(doc["reason"])
    spec = doc["hookSpecificOutput"]
    if runtime == "codex" and spec["permissionDecision"] == "deny":
        assert code == 2 and err.strip() == spec["permissionDecisionReason"]
    return str(spec["permissionDecision"]), str(spec["permissionDecisionReason"])


def _stdin(payload: dict[str, Any]) -> Any:
    import io

    return io.BytesIO(json.dumps(payload).encode())


# -- the recorded tool calls, inside and outside the boundary ----------------------------------


@pytest.mark.parametrize(
    ("runtime", "name"),
    [
        ("claude", "claude-PreToolUse-Edit"),
        ("claude", "claude-PreToolUse-Write"),
        ("claude", "claude-PreToolUse-NotebookEdit"),
        ("codex", "codex-PreToolUse-apply_patch"),
        ("gemini", "gemini-BeforeTool-write_file"),
        ("gemini", "gemini-BeforeTool-replace"),
    ],
)
def test_recorded_writes_inside_the_boundary_are_allowed(gated: Repo, runtime: str, name: str) -> None:
    assert verdict(runtime, recorded(name, gated.path), gated.path) == ("allow", "")


OUTSIDE_PATCH = "*** Begin Patch\n*** Add File: other2.py\n+x\n*** End Patch\n"


@pytest.mark.parametrize(
    ("runtime", "name", "changes"),
    [
        ("claude", "claude-PreToolUse-Write", {"input__file_path": "other.py"}),
        ("codex", "codex-PreToolUse-apply_patch", {"input__command": OUTSIDE_PATCH}),
        ("gemini", "gemini-BeforeTool-write_file", {"input__file_path": "other.py"}),
        ("gemini", "gemini-BeforeTool-replace", {"input__file_path": "secret/x"}),
    ],
)  # fmt: skip
def test_recorded_writes_outside_are_denied_in_the_runtimes_own_shape(
    gated: Repo, runtime: str, name: str, changes: dict[str, Any]
) -> None:
    kind, reason = verdict(runtime, recorded(name, gated.path, **changes), gated.path)
    assert kind == "deny" and "outside the write boundary of `p1`" in reason and "[HG101]" in reason


def test_gemini_through_the_real_command(gated: Repo) -> None:
    """Gemini CLI reads only a top-level `{"decision": "deny", "reason": ...}` (exit 0)."""
    payload = recorded("gemini-BeforeTool-write_file", gated.path, input__file_path=str(gated.path / "other.py"))
    code, out, _ = hook("gemini", payload, gated.path, project=gated.path)
    assert code == 0 and out is not None and out["decision"] == "deny" and "other.py" in out["reason"]
    assert hook("gemini", recorded("gemini-BeforeTool-write_file", gated.path), gated.path)[:2] == (0, None)


def test_gemini_shell_commands_judged_as_the_other_runtimes_do(gated: Repo) -> None:
    shell = recorded("gemini-BeforeTool-run_shell_command", gated.path)
    assert verdict("gemini", shell, gated.path) == ("allow", "")  # not judged by its text
    bypass = recorded("gemini-BeforeTool-run_shell_command", gated.path, input__command="git commit --no-verify -m x")
    assert verdict("gemini", bypass, gated.path)[0] == "deny"  # no human to ask: denied
    names = recorded("gemini-BeforeTool-run_shell_command", gated.path, input__command="rm -rf .gemini")
    assert verdict("gemini", names, gated.path) == ("allow", "")  # an ask Gemini cannot put: let through


def test_gemini_after_agent_keeps_the_agent_working(gated: Repo) -> None:
    stop = recorded("gemini-AfterAgent-none", gated.path)
    assert verdict("gemini", stop, gated.path) == ("allow", "")  # nothing to report
    gated.write("other.py", "x = 2\n")
    kind, reason = verdict("gemini", recorded("gemini-AfterAgent-none", gated.path, session_id="g2"), gated.path)
    assert kind == "deny" and "`other.py`: changed outside the write boundary" in reason


@pytest.mark.parametrize("name", ["codex-Stop-none", "codex-SubagentStop-none", "claude-SubagentStop-none"])
def test_recorded_stops_block_on_changes_outside(gated: Repo, name: str) -> None:
    runtime = name.split("-", 1)[0]
    assert verdict(runtime, recorded(name, gated.path), gated.path) == ("allow", "")
    gated.write("other.py", "x = 2\n")
    kind, reason = verdict(runtime, recorded(name, gated.path, session_id=f"{name}-2"), gated.path)
    assert kind == "block" and "`other.py`" in reason


def test_init_agent_codex_writes_subagentstop_and_keeps_a_users_entry(gated: Repo) -> None:
    res = gated.cli("init", "--agent", "codex")
    assert res.exit_code == 0
    assert "`harness-gate doctor` says how" in res.output  # a changed hook runs only once trusted
    doc = json.loads(gated.read(".codex/hooks.json"))
    [entry] = doc["hooks"]["SubagentStop"]
    assert entry["hooks"][0]["command"] == "harness-gate agent-hook --runtime codex"
    theirs = {"hooks": [{"type": "command", "command": "notify-me"}]}
    doc["hooks"]["SubagentStop"].append(theirs)
    gated.write(".codex/hooks.json", json.dumps(doc))
    assert gated.cli("init", "--agent", "codex").exit_code == 0
    assert json.loads(gated.read(".codex/hooks.json"))["hooks"]["SubagentStop"] == [entry, theirs]


def test_init_agent_gemini_writes_its_settings_a_protected_path(gated: Repo) -> None:
    res = gated.cli("init", "--agent", "gemini")
    assert res.exit_code == 0, res.output
    doc = json.loads(gated.read(".gemini/settings.json"))
    command = "harness-gate agent-hook --runtime gemini"
    assert doc["hooks"]["BeforeTool"] == [
        {"matcher": "write_file|replace|run_shell_command|mcp_.*", "hooks": [{"type": "command", "command": command}]}
    ]
    assert doc["hooks"]["AfterAgent"] == [{"hooks": [{"type": "command", "command": command}]}]
    assert not (gated.path / ".claude").exists()  # no other runtime's sandbox written
    write = recorded("gemini-BeforeTool-write_file", gated.path, input__file_path=".gemini/settings.json")
    kind, reason = verdict("gemini", write, gated.path)
    assert kind == "deny" and "[HG102]" in reason
    for path in ("src/GEMINI.md", "src/.gemini/settings.json"):  # Gemini CLI reads nested ones too
        named = recorded("gemini-BeforeTool-write_file", gated.path, input__file_path=path)
        assert "[HG102]" in verdict("gemini", named, gated.path)[1]
    gated.git("add", ".gemini/settings.json")
    res = gated.cli("check", "--stage", "pre-commit", "--staged")
    assert res.exit_code == 1 and "HG102" in res.output


# -- Claude Code's EnterWorktree -----------------------------------------------------------------


@pytest.fixture
def worktree(gated: Repo) -> Path:
    """The linked worktree Claude Code's EnterWorktree makes (`git worktree add`)."""
    gated.git("worktree", "add", "-q", "-b", "w1", ".claude/worktrees/w1")
    return gated.path / ".claude/worktrees/w1"


@pytest.mark.slow
def test_a_write_in_a_linked_worktree_is_judged_in_that_worktree(gated: Repo, worktree: Path) -> None:
    """CLAUDE_PROJECT_DIR stays on the main tree, the session's cwd moves into the worktree."""
    inside = recorded(
        "claude-PreToolUse-Write", gated.path, cwd=str(worktree), input__file_path=str(worktree / "src/w.py")
    )
    assert hook("claude", inside, gated.path, project=gated.path)[:2] == (0, None)
    relative = recorded("claude-PreToolUse-Edit", gated.path, cwd=str(worktree), input__file_path="src/a.py")
    assert hook("claude", relative, gated.path, project=gated.path)[:2] == (0, None)
    outside = recorded("claude-PreToolUse-Write", gated.path, cwd=str(worktree), input__file_path="other.py")
    _, out, _ = hook("claude", outside, gated.path, project=gated.path)
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "[HG101]" in reason and "HG104" not in reason and "`other.py`" in reason


@pytest.mark.slow
def test_stop_does_not_count_the_worktree_folder_and_judges_the_worktree(gated: Repo, worktree: Path) -> None:
    stop = recorded("claude-Stop-none", gated.path)
    assert hook("claude", stop, gated.path, project=gated.path)[:2] == (0, None)
    (worktree / "other.py").write_text("x = 3\n")
    in_worktree = recorded("claude-Stop-none", gated.path, cwd=str(worktree), session_id="wt-2")
    _, out, _ = hook("claude", in_worktree, gated.path, project=gated.path)
    assert out is not None and out["decision"] == "block" and "`other.py`" in out["reason"]
    assert ".claude/worktrees" not in out["reason"]


@pytest.mark.slow
def test_stop_in_a_worktree_judges_the_main_tree_too(gated: Repo, worktree: Path) -> None:
    """An agent that made a worktree itself and moved into it leaves the main tree's
    changes no less judged."""
    gated.write("other.py", "x = 4\n")  # outside the boundary, in the main tree
    in_worktree = recorded("claude-Stop-none", gated.path, cwd=str(worktree), session_id="wt-main")
    _, out, _ = hook("claude", in_worktree, gated.path, project=gated.path)
    assert out is not None and out["decision"] == "block" and "`other.py`" in out["reason"], out


def test_a_repository_nested_by_hand_is_still_denied(gated: Repo) -> None:
    nested = gated.path / "src/vendor"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / ".git").rename(nested / "real-git")
    (nested / ".git").write_text(f"gitdir: {nested / 'real-git'}\n")  # a `.git` file, another repository
    write = recorded("claude-PreToolUse-Write", gated.path, input__file_path=str(nested / "x.py"))
    kind, reason = verdict("claude", write, gated.path)
    assert kind == "deny" and "nested in this one" in reason


def test_a_gemini_mcp_tool_is_judged_as_an_mcp_tool(gated: Repo) -> None:
    """Gemini CLI names them `mcp_<server>_<tool>`: not an unknown tool, an MCP one, which
    a human would decide; Gemini cannot ask from a hook, so it is denied as MCP."""
    call = recorded("gemini-BeforeTool-write_file", gated.path, tool_name="mcp_files_write", tool_input={"x": 1})
    kind, reason = verdict("gemini", call, gated.path)
    assert kind == "deny" and "MCP tool `mcp_files_write`" in reason and "does not know the tool" not in reason
    # Said of Gemini CLI, with its own settings file: not Codex's words.
    assert "Gemini CLI cannot ask" in reason and ".gemini/settings.json" in reason and "Codex" not in reason


def test_a_worktree_faked_outside_git_s_own_folder_is_a_nested_repository(gated: Repo, tmp_path: Path) -> None:
    """The three pointer files a linked worktree has (`.git`, `commondir`, the back-link
    `gitdir`), made by hand in a folder of the agent's choosing: not where git keeps a
    worktree's git directory (`<common>/worktrees/<name>`), so not a worktree."""
    fake = gated.path / "src/fake"
    fake.mkdir(parents=True)
    gitdir = tmp_path / "fake-gitdir"
    gitdir.mkdir()
    (gitdir / "commondir").write_text(f"{gated.path / '.git'}\n")
    (gitdir / "gitdir").write_text(f"{fake / '.git'}\n")
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    (fake / ".git").write_text(f"gitdir: {gitdir}\n")
    write = recorded("claude-PreToolUse-Write", gated.path, input__file_path=str(fake / "x.py"))
    kind, reason = verdict("claude", write, gated.path)
    assert kind == "deny" and "nested in this one" in reason


# -- tool lists ------------------------------------------------------------------------------------


CLAUDE_2_1_197 = (
    "Agent", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Read", "ReportFindings",
    "ScheduleWakeup", "SendMessage", "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop",
    "TaskUpdate", "WebFetch", "WebSearch", "Workflow",
)  # fmt: skip


@pytest.mark.parametrize("tool", CLAUDE_2_1_197)
def test_claude_codes_tools_that_write_no_file_pass_a_wide_matcher(gated: Repo, tool: str) -> None:
    call = recorded("claude-PreToolUse-Write", gated.path, tool_name=tool, tool_input={"x": "y"})
    assert verdict("claude", call, gated.path) == ("allow", "")


CODEX_0_171 = (
    "request_user_input", "tool_search", "view_image", "web_search", "get_goal", "create_goal", "update_goal",
    "spawn_agent", "followup_task", "interrupt_agent", "list_agents", "send_message",
)  # fmt: skip


@pytest.mark.parametrize("tool", CODEX_0_171)
def test_codex_tools_that_write_no_file_pass(gated: Repo, tool: str) -> None:
    call = recorded("codex-PreToolUse-Bash", gated.path, tool_name=tool, tool_input={"x": "y"})
    assert verdict("codex", call, gated.path) == ("allow", "")


def test_codex_write_stdin_is_a_shell_command(gated: Repo) -> None:
    typed = recorded("codex-PreToolUse-Bash", gated.path, tool_name="write_stdin", tool_input={"chars": "ls\n"})
    assert verdict("codex", typed, gated.path) == ("allow", "")
    bypass = {"session_id": 1, "chars": "git commit --no-verify -m x\n"}
    assert verdict("codex", recorded("codex-PreToolUse-Bash", gated.path, tool_name="write_stdin", tool_input=bypass),
                   gated.path)[0] == "deny"  # fmt: skip


def test_an_unknown_tool_is_still_denied(gated: Repo) -> None:
    call = recorded("claude-PreToolUse-Write", gated.path, tool_name="Teleport", tool_input={"file_path": "x"})
    assert verdict("claude", call, gated.path)[0] == "deny"


# -- what the model sees ---------------------------------------------------------------------------


def test_codexs_reason_does_not_end_with_a_period_codex_adds_one(gated: Repo) -> None:
    patch = "*** Begin Patch\n*** Add File: other2.py\n+x\n*** End Patch\n"
    kind, reason = verdict(
        "codex", recorded("codex-PreToolUse-apply_patch", gated.path, input__command=patch), gated.path
    )
    assert kind == "deny" and reason.endswith("(the gate reads the index)")


@pytest.mark.parametrize(
    ("command", "asked"),
    [
        ("cat .claude/settings.json", False),
        ("grep -n hook .claude/settings.json | head -5", False),
        ("git log --oneline -- .github", False),
        ("echo x > .claude/settings.json", True),
        ("rm -rf .claude", True),
        ("sed -i s/a/b/ AGENTS.md", True),
        ("python3 -c \"open('.claude/settings.json','w')\"", True),
    ],
)
def test_claude_is_asked_about_writes_to_protected_paths_not_reads(gated: Repo, command: str, asked: bool) -> None:
    call = recorded("claude-PreToolUse-Bash", gated.path, input__command=command)
    assert verdict("claude", call, gated.path)[0] == ("ask" if asked else "allow")


def test_the_recorded_shell_write_is_left_to_the_sandbox(gated: Repo) -> None:
    for runtime in ("claude", "codex"):
        name = f"{runtime}-PreToolUse-Bash"
        assert verdict(runtime, recorded(name, gated.path), gated.path) == ("allow", "")


def test_setup_gated_is_the_recorded_runs_repository(repo: Repo) -> None:
    """The recordings' repository had plan `src/**`; so does the one these tests judge in."""
    setup_gated(repo)
    assert "src/**" in repo.read("harness/plans/p1/plan.md").decode()
