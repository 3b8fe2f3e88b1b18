"""`harness-gate agent-hook`: Claude Code and Codex payloads judged by the gate's own rules,
through the real command, in real repositories (docs/agents.md)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_gate import agent
from harness_gate.agent import judging
from harness_gate.cli import cli
from tests.adversarial.util import commit, setup_gated, staged
from tests.helpers import Repo, adopted_main, completion_md, from_template

PROJECT = Path(__file__).resolve().parents[1]
WIDE = ("src/**", ".github/**", ".claude/**", ".codex/**", ".agents/**", "*.md", "*.toml", "*/*.md")


def hook(repo: Repo, payload: Any, runtime: str = "claude", *, raw: bytes | None = None) -> tuple[int, Any, str]:
    """The real command as a subprocess: (exit code, stdout JSON or None, stderr)."""
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "harness_gate", "agent-hook", "--runtime", runtime],
        cwd=repo.path,
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        check=False,
        timeout=60,
    )
    out = proc.stdout.decode()
    assert "Traceback" not in out + proc.stderr.decode()
    return proc.returncode, json.loads(out) if out.strip() else None, proc.stderr.decode()


def pre(repo: Repo, tool: str, tool_input: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "s1", "transcript_path": "/dev/null", "cwd": str(repo.path), "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input, **extra,
    }  # fmt: skip


def stop_payload(repo: Repo, active: object = False, **extra: Any) -> dict[str, Any]:
    """A Stop payload with only the fields the hook reads (`extra`: the others a runtime sends)."""
    return {"cwd": str(repo.path), "hook_event_name": "Stop", "stop_hook_active": active, **extra}


def decision(repo: Repo, tool: str, tool_input: dict[str, Any], runtime: str = "claude") -> tuple[str, str]:
    code, out, _ = hook(repo, pre(repo, tool, tool_input), runtime)
    if out is None:  # allowed: no answer, the runtime's own permissions apply
        assert code == 0
        return "allow", ""
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert code == (2 if runtime == "codex" and spec["permissionDecision"] == "deny" else 0)
    return spec["permissionDecision"], spec["permissionDecisionReason"]


def in_process(repo: Repo, payload: Any, runtime: str = "claude") -> tuple[int, str, str]:
    return agent.run(runtime, io.BytesIO(json.dumps(payload).encode()))


def kind(repo: Repo, payload: dict[str, Any], runtime: str = "claude") -> str:
    _code, out, _ = in_process(repo, payload, runtime)
    return str(json.loads(out)["hookSpecificOutput"]["permissionDecision"]) if out else "allow"


@pytest.fixture
def wide(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """`gated`, with a boundary that allows the protected paths' folders (WIDE)."""
    return from_template(repo, tmp_path_factory, "setup-gated-wide", lambda r: setup_gated(r, boundary=WIDE))


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


# -- Claude Code: Write, Edit, MultiEdit, NotebookEdit ------------------------------------------


def test_write_inside_the_boundary_is_allowed(gated: Repo) -> None:
    assert decision(gated, "Write", {"file_path": str(gated.path / "src/new.py"), "content": "x"}) == ("allow", "")
    _, out, _ = in_process(gated, pre(gated, "Write", {"file_path": "src/new.py"}))
    assert out == ""  # never "allow": that would skip the runtime's own permission prompts


@pytest.mark.slow
def test_write_outside_the_boundary_is_denied_with_what_to_do(gated: Repo) -> None:
    verdict, reason = decision(gated, "Write", {"file_path": str(gated.path / "other.py"), "content": "x"})
    assert verdict == "deny"
    assert "other.py" in reason and "p1" in reason and "src/**" in reason
    assert "harness-gate plan amend --add-boundary" in reason and "harness-gate approve" in reason


def test_a_write_names_a_new_file_an_addition_and_an_existing_one_a_change(gated: Repo) -> None:
    (gated.path / "kept.py").write_text("x\n")
    _, added = decision(gated, "Write", {"file_path": "new.py", "content": "x"})
    _, changed = decision(gated, "Write", {"file_path": "kept.py", "content": "y"})
    assert "`new.py`: added outside the write boundary" in added
    assert "`kept.py`: changed outside the write boundary" in changed


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"file_path": "src/a.py", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ("NotebookEdit", {"notebook_path": "src/n.ipynb", "new_source": "x"}),
    ],
)
def test_each_tool_relative_paths_allowed_inside(gated: Repo, tool: str, tool_input: dict[str, Any]) -> None:
    assert kind(gated, pre(gated, tool, tool_input)) == "allow"
    outside = {**tool_input, next(iter(tool_input)): "secret/x"}
    assert kind(gated, pre(gated, tool, outside)) == "deny"


def test_relative_to_the_payloads_cwd(gated: Repo) -> None:
    payload = pre(gated, "Write", {"file_path": "b.py", "content": "x"})
    payload["cwd"] = str(gated.path / "src")
    assert kind(gated, payload) == "allow"
    payload["tool_input"] = {"file_path": "../other.py", "content": "x"}
    assert kind(gated, payload) == "deny"


def test_dotdot_leaving_the_repository_is_denied(gated: Repo) -> None:
    verdict, reason = decision(gated, "Write", {"file_path": "src/../../elsewhere.py", "content": "x"})
    assert verdict == "deny"
    assert "outside the repository" in reason


def test_another_repositorys_path_is_denied(gated: Repo, tmp_path: Path) -> None:
    other = tmp_path / "other-repo"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    verdict, reason = decision(gated, "Write", {"file_path": str(other / "src/x.py"), "content": "x"})
    assert verdict == "deny"
    assert "outside the repository" in reason


def test_a_path_through_a_symlink_leading_out_is_denied(gated: Repo, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (gated.path / "src/door").symlink_to(tmp_path / "out")
    verdict, reason = decision(gated, "Write", {"file_path": str(gated.path / "src/door/x.py"), "content": "x"})
    assert verdict == "deny"
    assert "symbolic link" in reason


def test_a_path_through_a_symlink_inside_is_judged_where_it_lands(gated: Repo) -> None:
    (gated.path / "src/door").symlink_to("../secret")
    verdict, reason = decision(gated, "Write", {"file_path": "src/door/x", "content": "x"})
    assert verdict == "deny"
    assert "secret/x" in reason


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", [".github/workflows/ci.yml", ".harness-gate.toml", ".claude/settings.json", "AGENTS.md", "src/CLAUDE.md",
             ".agents/skills/deploy/SKILL.md",
             ".codex/hooks.json", ".Claude/Settings.json"],
)  # fmt: skip
def test_protected_paths_are_denied_even_inside_a_wide_boundary(wide: Repo, path: str) -> None:
    repo = wide
    verdict, reason = decision(repo, "Write", {"file_path": path, "content": "{}"})
    assert verdict == "deny", reason
    assert path in reason
    assert "[HG102]" in reason or "[HG106]" in reason, reason  # protected, not merely outside


def test_the_agent_cannot_edit_its_own_hook_settings(gated: Repo) -> None:
    assert gated.cli("init", "--agent", "claude").exit_code == 0
    commit(gated, "agent hook")
    edit = {"file_path": str(gated.path / ".claude/settings.json"), "old_string": "agent-hook", "new_string": "true"}
    verdict, reason = decision(gated, "Edit", edit)
    assert verdict == "deny"
    assert "protected" in reason


@pytest.mark.slow
def test_the_artifacts_root_is_denied(gated: Repo) -> None:
    for rel in ("harness/plans/p1/approvals.jsonl", "harness/plans/p1/plan.md", "harness/allowed_signers"):
        verdict, reason = decision(gated, "Write", {"file_path": rel, "content": "x"})
        assert verdict == "deny", rel
        assert "harness-gate approve" in reason


def test_dot_git_is_denied(wide: Repo) -> None:
    repo = wide
    verdict, reason = decision(repo, "Write", {"file_path": ".git/hooks/pre-commit", "content": "exit 0"})
    assert verdict == "deny"
    assert ".git" in reason


# -- Codex: apply_patch ---------------------------------------------------------------------------


@pytest.mark.slow
def test_codex_patch_add_update_delete_inside_is_allowed(gated: Repo) -> None:
    text = patch("*** Add File: src/b.py", "+b = 2", "*** Update File: src/a.py", "@@", "-a = 1", "+a = 2",
                 "*** Delete File: src/a.py")  # fmt: skip
    assert decision(gated, "apply_patch", {"input": text}, "codex")[0] == "allow"
    assert decision(gated, "apply_patch", {"command": ["apply_patch", text]}, "codex")[0] == "allow"


@pytest.mark.parametrize(
    "body",
    [("*** Add File: other2.py", "+x"), ("*** Update File: other.py", "@@", "-x = 1", "+x = 2"),
     ("*** Delete File: secret/x",)],
    ids=["add", "update", "delete"],
)  # fmt: skip
def test_codex_patch_outside_is_denied_with_exit_2(gated: Repo, body: tuple[str, ...]) -> None:
    code, out, err = hook(gated, pre(gated, "apply_patch", {"input": patch(*body)}), "codex")
    assert code == 2
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "outside the write boundary" in err


@pytest.mark.slow
def test_codex_move_judges_both_sides(gated: Repo) -> None:
    out_of = patch("*** Update File: src/a.py", "*** Move to: other3.py", "@@", "-a = 1", "+a = 2")
    verdict, reason = decision(gated, "apply_patch", {"input": out_of}, "codex")
    assert verdict == "deny"
    assert "other3.py" in reason
    into = patch("*** Update File: other.py", "*** Move to: src/other.py", "@@", "-x = 1", "+x = 2")
    verdict, reason = decision(gated, "apply_patch", {"input": into}, "codex")
    assert verdict == "deny"
    assert "deleted outside" in reason
    inside = patch("*** Update File: src/a.py", "*** Move to: src/c.py", "@@", "-a = 1", "+a = 2")
    assert decision(gated, "apply_patch", {"input": inside}, "codex")[0] == "allow"


@pytest.mark.parametrize(
    "tool_input",
    [{}, {"input": "not a patch"}, {"input": patch()}, {"input": patch("*** Frobnicate File: x")},
     {"command": []}, {"input": patch("*** Move to: src/x")}],
)  # fmt: skip
def test_codex_malformed_patches_are_denied(gated: Repo, tool_input: dict[str, Any]) -> None:
    assert kind(gated, pre(gated, "apply_patch", tool_input), "codex") == "deny"


# -- fail closed ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b"\xff\xfe", b'{"hook_event_name": "PreToolUse"}',
     b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}}',
     b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": 3}}',
     b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "a"}, "cwd": 1}'],
)  # fmt: skip
@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_malformed_payloads_are_denied(gated: Repo, raw: bytes, runtime: str) -> None:
    code, out, _err = hook(gated, None, runtime, raw=raw)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert code == (2 if runtime == "codex" else 0)
    assert "harness-gate" in out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.slow
def test_an_oversized_payload_is_denied(gated: Repo) -> None:
    payload = pre(gated, "Write", {"file_path": "src/x.py", "content": "x" * (agent.MAX_PAYLOAD + 10)})
    _code, out, _ = hook(gated, payload)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "larger than" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_unknown_writing_tool_is_denied_and_read_only_tools_pass(gated: Repo) -> None:
    assert kind(gated, pre(gated, "FileWriter", {"path": "src/x"})) == "deny"
    assert kind(gated, pre(gated, "Read", {"file_path": "other.py"})) == "allow"
    assert kind(gated, pre(gated, "Grep", {"pattern": "x"})) == "allow"


def test_an_internal_error_denies_without_a_traceback(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(judging, "judge_paths", broken)
    code, out, _err = in_process(gated, pre(gated, "Write", {"file_path": "src/x.py"}))
    spec = json.loads(out)["hookSpecificOutput"]
    assert (code, spec["permissionDecision"]) == (0, "deny")
    assert "RuntimeError: boom" in spec["permissionDecisionReason"]


def test_outside_a_repository_is_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "x"},
               "cwd": str(tmp_path)}  # fmt: skip
    _code, out, _ = agent.run("claude", io.BytesIO(json.dumps(payload).encode()))
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- shell ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_shell_is_allowed_and_asks_when_it_names_a_protected_path(gated: Repo) -> None:
    assert decision(gated, "Bash", {"command": "pytest -q"})[0] == "allow"
    verdict, reason = decision(gated, "Bash", {"command": "echo {} > .claude/settings.json"})
    assert verdict == "ask"
    assert ".claude/" in reason
    assert decision(gated, "shell", {"command": ["bash", "-lc", "cat harness/plans/p1/plan.md"]})[0] == "ask"
    assert decision(gated, "Bash", {"command": "harness-gate status"})[0] == "allow"
    # The artifacts root and .git as words, and the ways round the commit gate.
    for command in ("rm -rf harness", "echo > .git/hooks/pre-commit", "git commit --no-verify -m x",
                    "git config core.hooksPath /dev/null", "git commit -n -m x", "git commit --no-veri",
                    "SKIP=harness-gate git commit", "rm -rf .claude", "mv .agents x"):  # fmt: skip
        assert decision(gated, "Bash", {"command": command})[0] == "ask", command
    for command in ("cat .harness/state.json", "git log --oneline", "python -m harness_gate status"):
        assert decision(gated, "Bash", {"command": command})[0] == "allow", command
    # Codex cannot ask from a hook (it would count the hook as failed and run the call): a
    # shell command is let through there, the commit gate judging what it changes.
    assert decision(gated, "Bash", {"command": "echo {} > .claude/settings.json"}, "codex") == ("allow", "")


@pytest.mark.parametrize("runtime", ["claude", "codex"])
@pytest.mark.parametrize(
    "command",
    ["printf 'y\\n' | harness-gate approve", "harness-gate plan amend --add-boundary 'x/**' && harness-gate approve",
     "echo y | python -m harness_gate approve --plan p1", "yes | /usr/bin/harness-gate approve"],
)  # fmt: skip
def test_a_shell_approve_is_denied(gated: Repo, runtime: str, command: str) -> None:
    verdict, reason = decision(gated, "Bash", {"command": command}, runtime)
    assert verdict == "deny"
    assert "human" in reason


BYPASSES = (
    "git commit --no-verify -m x", "git commit -n -m x", "git -c core.hooksPath=/dev/null commit -m x",
    "SKIP=harness-gate git commit -m x", "git commit-tree $(git write-tree) -p HEAD -m x",
    "git update-ref HEAD abc", "c=$(git hash-object -w f); git update-index --add --cacheinfo 100644,$c,f",
    "git symbolic-ref HEAD refs/heads/x",
)  # fmt: skip


@pytest.mark.slow
def test_ways_round_the_commit_gate_are_asked_in_claude_and_denied_in_codex(gated: Repo) -> None:
    for command in BYPASSES:
        assert decision(gated, "Bash", {"command": command})[0] == "ask", command
        verdict, reason = decision(gated, "Bash", {"command": command}, "codex")
        assert verdict == "deny" and "commit gate" in reason, command
    for command in ("git commit -m x", "git log --format=%T", "git status", "git diff --name-only"):
        assert decision(gated, "Bash", {"command": command}, "codex")[0] == "allow", command


# -- which plan governs -------------------------------------------------------------------------------


def test_no_plan_is_denied(repo: Repo) -> None:
    adopted_main(repo)
    verdict, reason = decision(repo, "Write", {"file_path": "src/a.py", "content": "x"})
    assert verdict == "deny"
    assert "no plan yet" in reason


@pytest.mark.slow
def test_an_unapproved_plan_is_denied(repo: Repo) -> None:
    adopted_main(repo)
    repo.new_plan("p1")
    commit(repo, "plan")
    verdict, reason = decision(repo, "Write", {"file_path": "src/a.py", "content": "x"})
    assert verdict == "deny"
    assert "not approved" in reason and "harness-gate approve" in reason


def test_a_completed_plan_is_denied(gated: Repo) -> None:
    from tests.helpers import plan_sha

    folder = "harness/plans/p1"
    gated.write(f"{folder}/001-completion.md", completion_md(gated, folder, plan_sha(gated, folder), None,
                                                             outcome="cancelled"))  # fmt: skip
    commit(gated, "cancel")
    verdict, reason = decision(gated, "Write", {"file_path": "src/a.py", "content": "x"})
    assert verdict == "deny"
    assert "p1" in reason


@pytest.mark.slow
def test_another_branchs_plan_governs_nothing_here(repo: Repo) -> None:
    adopted_main(repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.new_plan("p1")
    repo.approve()
    commit(repo, "plan p1")
    assert decision(repo, "Write", {"file_path": "src/a.py", "content": "x"})[0] == "allow"
    repo.git("checkout", "-q", "-b", "other", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    verdict, reason = decision(repo, "Write", {"file_path": "src/a.py", "content": "x"})
    assert verdict == "deny"  # as `check --staged` decides: p1 is another branch's
    assert "came in by merging another branch" in reason


def test_inactive_repository_allows_everything(repo: Repo) -> None:
    repo.write("a.py", "x\n")
    commit(repo, "init")
    assert decision(repo, "Write", {"file_path": ".github/workflows/x.yml", "content": "x"}) == ("allow", "")
    assert agent.pre_tool_use(pre(repo, "Write", {"file_path": "x"})).reason.endswith("(no configuration at HEAD)")


def test_the_click_command_answers_the_same(gated: Repo) -> None:
    from click.testing import CliRunner

    payload = json.dumps(pre(gated, "Write", {"file_path": "other.py", "content": "x"}))
    res = CliRunner().invoke(cli, ["agent-hook", "--runtime", "claude"], input=payload)
    assert res.exit_code == 0
    assert json.loads(res.output)["hookSpecificOutput"]["permissionDecision"] == "deny"
    res = CliRunner().invoke(cli, ["agent-hook", "--runtime", "other"], input=payload)
    assert res.exit_code == 2


# -- Stop -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_stop_blocks_once_on_changes_the_gate_would_refuse(gated: Repo) -> None:
    stop = stop_payload(gated, session_id="s")
    assert hook(gated, stop)[:2] == (0, None)  # a clean work tree: stop
    gated.write("other.py", "x = 2\n")
    gated.write("src/a.py", "a = 2\n")
    code, out, _ = hook(gated, stop)
    assert code == 0
    assert out["decision"] == "block"
    assert "other.py" in out["reason"] and "src/a.py" not in out["reason"]
    assert hook(gated, {**stop, "stop_hook_active": True})[:2] == (0, None)  # never twice
    sub = {**stop, "hook_event_name": "SubagentStop", "session_id": "other"}
    assert hook(gated, sub, "codex")[1]["decision"] == "block"


def plumbing_commit(repo: Repo, rel: str, text: str) -> None:
    """A commit made as an agent's shell can make one without `git commit` and its hooks:
    `git commit-tree` on the index's tree, then `git update-ref HEAD`. The tree is left clean."""
    repo.write(rel, text)
    repo.git("add", rel)
    tree = repo.git("write-tree").decode().strip()
    head = repo.git("rev-parse", "HEAD").decode().strip()
    new = repo.git("commit-tree", tree, "-p", head, "-m", "sneaked in").decode().strip()
    repo.git("update-ref", "HEAD", new)
    assert repo.git("status", "--porcelain") == b""


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_stop_judges_the_commits_made_in_the_session(gated: Repo, runtime: str) -> None:
    """The session's first hook call records HEAD; Stop judges start..HEAD as `check
    --range` does, so a commit made past the commit gate is reported though the tree is clean."""
    assert decision(gated, "Bash", {"command": "git status"}, runtime)[0] == "allow"  # session s1 begins
    plumbing_commit(gated, "other.py", "x = 9\n")
    stop = stop_payload(gated, session_id="s1")
    _code, out, _ = hook(gated, stop, runtime)
    assert out is not None and out["decision"] == "block"
    assert "`other.py`" in out["reason"] and "HG101" in out["reason"] and "commits made since" in out["reason"]
    # A session that began after that commit does not judge it again.
    assert hook(gated, stop_payload(gated, session_id="s2"), runtime)[1] is None


@pytest.mark.slow
def test_stop_blocks_again_when_the_findings_change_and_never_twice_for_the_same(gated: Repo) -> None:
    stop = stop_payload(gated, session_id="s")
    assert hook(gated, stop)[1] is None
    gated.write("other.py", "x = 2\n")
    first = hook(gated, stop)[1]
    assert first["decision"] == "block" and "other.py" in first["reason"]
    again = {**stop, "stop_hook_active": True}
    assert hook(gated, again)[1] is None  # the same set: never twice
    assert hook(gated, stop)[1] is None  # not in a later turn either
    gated.write("secret/x", "changed\n")  # a second violation after the first block
    second = hook(gated, again)[1]
    assert second is not None and second["decision"] == "block" and "secret/x" in second["reason"]
    assert hook(gated, again)[1] is None
    gated.git("checkout", "--", "other.py", "secret/x")
    assert hook(gated, again)[1] is None  # fixed: nothing to say, and the set is forgotten
    gated.write("other.py", "x = 2\n")
    assert hook(gated, again)[1]["decision"] == "block"


@pytest.mark.slow
def test_stop_blocks_a_bounded_number_of_times_a_session(gated: Repo) -> None:
    """Against a loop of ever-new violations (a runtime that re-runs the agent on every
    block): at most MAX_BLOCKS blocks a session."""
    from harness_gate import agent_session

    blocks, notes = 0, []
    for i in range(agent_session.MAX_BLOCKS + 2):
        gated.write(f"out{i}.py", "x\n")
        # The first stop is the agent's own; every later one continues because of a block.
        out = hook(gated, stop_payload(gated, i > 0, session_id="s"))[1]
        blocks += out is not None and out.get("decision") == "block"
        notes += [out["systemMessage"]] if out is not None and "systemMessage" in out else []
    assert blocks == agent_session.MAX_BLOCKS
    # Past the bound the stop goes ahead, and what would be refused is said to the human.
    assert len(notes) == 2 and "not blocking the stop again" in notes[-1] and f"out{i}.py" in notes[-1]
    # The agent's own next stop (a new run, not one a block caused) blocks again.
    assert hook(gated, stop_payload(gated, False, session_id="s"))[1]["decision"] == "block"


def test_stop_names_a_staged_new_file_an_addition(gated: Repo) -> None:
    gated.write("brand-new.py", "x\n")
    gated.git("add", "brand-new.py")
    stop = stop_payload(gated)
    reason = hook(gated, stop)[1]["reason"]
    assert "`brand-new.py`: added outside the write boundary" in reason
    assert "the commit gate (`check`) blocks" in reason and "Revert them" in reason


def test_stop_names_an_intent_to_add_an_addition(gated: Repo) -> None:
    gated.write("intended.py", "x\n")
    gated.git("add", "-N", "intended.py")
    stop = stop_payload(gated)
    assert "`intended.py`: added outside the write boundary" in hook(gated, stop)[1]["reason"]


def test_init_agent_keeps_text_utf8_cannot_hold_and_codexs_subagentstop(gated: Repo) -> None:
    gated.write(".claude/settings.json", '{"note": "\\ud800x", "hooks": {}}')
    command = {"type": "command", "command": "harness-gate agent-hook --runtime codex"}
    mine = {"hooks": [command]}
    theirs = {"hooks": [{"type": "command", "command": "mine"}]}
    gated.write(".codex/hooks.json", json.dumps({"hooks": {"SubagentStop": [mine, theirs]}}))
    res = gated.cli("init", "--agent", "claude", "--agent", "codex")
    assert res.exit_code == 0, res.output
    assert json.loads(gated.read(".claude/settings.json"))["note"] == "\ud800x"
    # Codex 0.171 sends SubagentStop: an entry a user added is kept, ours is not added twice.
    assert json.loads(gated.read(".codex/hooks.json"))["hooks"]["SubagentStop"] == [mine, theirs]


def test_stop_allows_changes_inside_the_boundary(gated: Repo) -> None:
    gated.write("src/a.py", "a = 2\n")
    gated.write("src/new.py", "b = 2\n")
    stop = stop_payload(gated)
    assert hook(gated, stop)[:2] == (0, None)


# -- init --agent ------------------------------------------------------------------------------------


def test_init_agent_merges_and_is_idempotent(gated: Repo) -> None:
    gated.write(".claude/settings.json", json.dumps({"model": "x", "note": "café", "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}]}}))  # fmt: skip
    res = gated.cli("init", "--agent", "claude", "--agent", "codex")
    assert res.exit_code == 0, res.output
    first = json.loads(gated.read(".claude/settings.json"))
    assert first["model"] == "x"
    commands = [h["command"] for e in first["hooks"]["PreToolUse"] for h in e["hooks"]]
    assert commands == ["mine", "harness-gate agent-hook --runtime claude"]
    assert first["hooks"]["Stop"][0]["hooks"][0]["command"] == "harness-gate agent-hook --runtime claude"
    assert "SubagentStop" in first["hooks"]
    assert "café".encode() in gated.read(".claude/settings.json")  # the user's text kept as written
    codex = json.loads(gated.read(".codex/hooks.json"))
    assert codex["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "harness-gate agent-hook --runtime codex"
    assert sorted(codex["hooks"]) == ["PreToolUse", "Stop", "SubagentStop"]
    assert gated.cli("init", "--agent", "claude", "--agent", "codex").exit_code == 0
    assert json.loads(gated.read(".claude/settings.json")) == first


def test_init_agent_after_adoption_names_the_plan_the_protected_settings_need(repo: Repo) -> None:
    adopted_main(repo)
    res = repo.cli("init", "--agent", "claude", "--agent", "codex")
    assert res.exit_code == 0, res.output
    assert "Adopt harness-gate" not in res.output  # no adopting commit lets them in now
    step = next(line for line in res.output.splitlines() if "plan new gate-setup" in line)
    assert "--boundary .claude/settings.json --boundary .codex/hooks.json" in step
    # The steps it names, followed: the commit passes the gate.
    plan = ["plan", "new", "gate-setup", "--objective", "Set up harness-gate"]
    res = repo.cli(
        *plan, "--boundary", ".claude/settings.json", "--boundary", ".codex/hooks.json", "--verify", "lint=true"
    )
    assert res.exit_code == 0, res.output
    repo.approve()
    repo.git("add", "harness", ".claude/settings.json", ".codex/hooks.json")
    res = repo.cli("check", "--stage", "pre-commit", "--staged")
    assert res.exit_code == 0, res.output


def test_init_agent_refuses_a_file_that_is_not_json(gated: Repo) -> None:
    gated.write(".claude/settings.json", "{not json")
    res = gated.cli("init", "--agent", "claude")
    assert res.exit_code != 0
    assert "not valid JSON" in res.output
    assert gated.read(".claude/settings.json") == b"{not json"


def test_the_hook_starts_on_the_lean_path_without_click(gated: Repo) -> None:
    payload = json.dumps(pre(gated, "Write", {"file_path": "other.py", "content": "x"})).encode()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness_gate", "agent-hook", "--runtime", "codex"],
        cwd=gated.path, input=payload, capture_output=True, env={**os.environ, "PYTHONPATH": str(PROJECT)},
        check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
    assert "harness_gate.agent" in imported
    assert "click" not in imported and "harness_gate.cli" not in imported


@pytest.mark.slow
def test_stop_reports_evidence_that_is_not_fresh_once(repo: Repo) -> None:
    setup_gated(repo, config='artifacts_dir = "harness"\nreview_stages = []\ncompletion_stages = []\n')
    repo.write("src/a.py", "a = 2\n")
    stop = stop_payload(repo)
    _, out, _ = hook(repo, stop)
    assert out["decision"] == "block"
    assert "evidence for `tests` is missing" in out["reason"] and "harness-gate verify" in out["reason"]
    assert hook(repo, {**stop, "stop_hook_active": True})[1] is None


def test_stop_fingerprints_the_work_tree_only_to_compare_it_with_evidence(repo: Repo) -> None:
    """With evidence recorded, Stop compares it with the work tree: fresh after `verify`,
    stale after a later edit. (Without evidence it skips the fingerprint: all is missing.)"""
    setup_gated(repo, config='artifacts_dir = "harness"\nreview_stages = []\ncompletion_stages = []\n')
    repo.write("src/a.py", "a = 2\n")
    res = repo.cli("verify")
    assert res.exit_code == 0, res.output
    assert hook(repo, stop_payload(repo, session_id="fresh"))[:2] == (0, None)
    repo.write("src/a.py", "a = 3\n")
    _, out, _ = hook(repo, stop_payload(repo, session_id="moved"))
    assert out["decision"] == "block" and "evidence for `tests` is" in out["reason"]
    assert "missing" not in out["reason"]


def test_stop_looks_at_each_folder_once(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: Stop looked for a nested repository in every folder above every changed
    file, rebuilding each folder's path from the top: files x depth squared (77 s for 250
    files 20 folders deep). Each folder is looked at once a Stop, whatever the files in it."""
    folder = "src/" + "/".join(f"d{level}" for level in range(12))
    for i in range(40):
        gated.write(f"{folder}/f{i}.py", "x = 1\n")
    gated.write("src/sub/.git/HEAD", "ref: refs/heads/main\n")  # a nested repository is still refused
    gated.write("src/sub/deep/x.py", "x = 1\n")
    gated.git("add", "-f", "--", "src/sub/deep/x.py")
    looked: list[str] = []  # for a nested repository
    stepped: list[str] = []  # for a symbolic link on the way
    real_lexists, real_lstat = os.path.lexists, os.lstat

    def lexists(path: Any) -> bool:
        if os.fspath(path).endswith("/.git"):
            looked.append(os.fspath(path))
        return real_lexists(path)

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if "/src/d0" in os.fspath(path) and not os.fspath(path).endswith("/.git"):
            stepped.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "lexists", lexists)
    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(gated.path))
    monkeypatch.chdir(gated.path)
    _code, out, _ = in_process(gated, stop_payload(gated, session_id="deep"))
    reason = json.loads(out)["reason"]
    assert "src/sub/deep/x.py" in reason and "nested in this one" in reason
    assert folder not in reason  # the deep files are inside the boundary
    assert len(looked) == len(set(looked)) <= 12 + 3, len(looked)  # src, d0..d11; src/sub, its deep/
    assert len(stepped) == len(set(stepped)) <= 12 + 40, len(stepped)  # d0..d11, each file


@pytest.mark.slow
def test_apply_patch_through_the_shell_is_judged_as_a_patch(gated: Repo) -> None:
    outside = patch("*** Add File: other4.py", "+x")
    heredoc = f"apply_patch <<'EOF'\n{outside}EOF\n"
    verdict, reason = decision(gated, "shell", {"command": ["bash", "-lc", heredoc]}, "codex")
    assert verdict == "deny"
    assert "other4.py" in reason
    inside = patch("*** Add File: src/ok.py", "+x")
    assert decision(gated, "shell", {"command": ["apply_patch", inside]}, "codex")[0] == "allow"
    assert kind(gated, pre(gated, "Bash", {"command": "echo '*** Begin Patch'"})) == "deny"


# -- a review's bypasses ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_cwd_in_another_repository_does_not_switch_the_gate_off(wide: Repo, tmp_path: Path) -> None:
    """The payload's `cwd` follows the agent's `cd`: into a repository it made inside this
    one, or another one. The guarded repository is the project's, where the hook starts."""
    repo = wide
    subprocess.run(["git", "init", "-q", str(repo.path / "src/sub")], check=True)
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    for cwd, target in (
        (repo.path / "src/sub", "../../.harness-gate.toml"),
        (repo.path / "src/sub", "../../harness/plans/p1/approvals.jsonl"),
        (other, str(repo.path / ".github/workflows/evil.yml")),
        (repo.path / "src/sub", "x.py"),  # inside the nested repository: not this gate's to allow
    ):
        payload = {**pre(repo, "Write", {"file_path": target}), "cwd": str(cwd)}
        _code, out, _ = hook(repo, payload)
        assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny", (cwd, target)


@pytest.mark.parametrize(
    "command",
    [
        [
            "bash",
            "-lc",
            "apply_patch <<EOF\n" + patch("*** Add File: src/x.py", "+x") + "EOF\n"
            "apply_patch <<EOF\n" + patch("*** Add File: .harness-gate.toml", "+x") + "EOF",
        ],
        [
            "bash",
            "-lc",
            "apply_patch <<EOF\n" + patch("*** Add File: src/x.py", "+x") + "EOF\necho pwned > .harness-gate.toml",
        ],
        ["bash", "-lc", "cd .github && apply_patch <<'EOF'\n" + patch("*** Add File: src/x.yml", "+x") + "EOF"],
    ],
    ids=["two-patches", "patch-then-more", "cd-first"],
)
def test_a_shell_patch_that_is_not_alone_is_denied(gated: Repo, command: list[str]) -> None:
    assert decision(gated, "shell", {"command": command}, "codex")[0] == "deny"


INSIDE = patch("*** Add File: src/x.py", "+x")
EARLY_END = patch("*** Add File: src/x.py", "+x", "*** End Patch", "*** Add File: .harness-gate.toml", "+evil")


@pytest.mark.parametrize(
    "command",
    [
        ["bash", "-lc", f"apply_patch <<'EOF'\n{INSIDE}EOF\ntouch .harness-gate.toml"],
        ["bash", "-lc", f"apply_patch <<'EOF'\n{INSIDE}EOF\n\n  rm -rf src\n"],
        ["bash", "-lc", f"apply_patch <<'EOF'\n{INSIDE}EOF\ntouch x\nEOF\n"],
        ["apply_patch", EARLY_END],
        ["bash", "-lc", f"apply_patch <<'EOF'\n{EARLY_END}EOF\n"],
        ["bash", "-lc", f"apply_patch <<EOF\n{patch('*** Add File: src/x.py', '+$(touch .harness-gate.toml)')}EOF\n"],
        ["bash", "-lc", f"apply_patch <<'EOF'\n{INSIDE}"],
        ["apply_patch", INSIDE, "extra"],
        ["python3", "-c", f"import os; os.system('apply_patch <<EOF\\n{INSIDE}EOF')"],
    ],
    ids=["command-after-newline", "command-after-blank-line", "second-delimiter", "early-end", "early-end-heredoc",
         "unquoted-expansion", "no-end-line", "extra-word", "another-program"],
)  # fmt: skip
def test_a_shell_patch_is_judged_whole_or_denied(gated: Repo, command: list[str]) -> None:
    """Every part the runtime would act on is judged: a command on a line after the patch,
    what follows an early `*** End Patch`, what the shell would expand in the here-document."""
    assert decision(gated, "shell", {"command": command}, "codex")[0] == "deny"
    assert (
        decision(gated, "Bash", {"command": command[-1] if command[0] == "bash" else " ".join(command)}, "codex")[0]
        == "deny"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["apply_patch", INSIDE],
        ["bash", "-lc", f"apply_patch <<'EOF'\n{INSIDE}EOF\n"],
        ["bash", "-lc", f"apply_patch <<\"PATCH\"\n{INSIDE}PATCH"],
        ["bash", "-lc", "apply_patch <<-'EOF'\n" + "".join(f"\t{line}\n" for line in INSIDE.splitlines()) + "\tEOF\n"],
        ["bash", "-lc", f"apply_patch '{INSIDE}'"],
    ],
    ids=["argument", "heredoc", "double-quoted-delimiter", "tab-stripped", "single-quoted"],
)  # fmt: skip
def test_a_shell_patch_alone_is_judged_as_the_patch(gated: Repo, command: list[str]) -> None:
    assert decision(gated, "shell", {"command": command}, "codex")[0] == "allow"


def test_a_shell_patch_in_another_workdir_is_denied(gated: Repo) -> None:
    command = ["apply_patch", patch("*** Add File: src/x.py", "+x")]
    assert decision(gated, "shell", {"command": command}, "codex")[0] == "allow"
    assert decision(gated, "shell", {"command": command, "workdir": ".github"}, "codex")[0] == "deny"


def test_a_padded_patch_header_is_judged(gated: Repo) -> None:
    text = patch("*** Add File: src/ok.py", "+x", "  *** Add File: .harness-gate.toml", "+evil")
    assert decision(gated, "apply_patch", {"input": text}, "codex")[0] == "deny"


def test_a_tool_call_under_an_unknown_event_is_denied(gated: Repo) -> None:
    payload = {**pre(gated, "Write", {"file_path": ".harness-gate.toml"}), "hook_event_name": "preToolUse"}
    _code, out, _ = hook(gated, payload)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- the runtimes' own files: every one an agent could switch its hook off with -------------------

RUNTIME_FILES = [
    "AGENTS.override.md", "src/AGENTS.override.md", "CLAUDE.local.md", "src/deep/CLAUDE.local.md",
    ".claude/hooks/pre.sh", ".claude/agents/writer.md", ".claude/commands/ship.md", ".claude/settings.json",
    "sub/.claude/settings.json", "src/.codex/config.toml", ".codex/prompts/x.md", ".mcp.json",
]  # fmt: skip
RUNTIME_VARIANTS = [".Claude/hooks/pre.sh", "src/.CODEX/config.toml", ".MCP.json", "sub/agents.OVERRIDE.md"]


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNTIME_FILES + RUNTIME_VARIANTS)
def test_the_runtimes_files_are_protected_for_the_hook_and_the_commit(repo: Repo, path: str) -> None:
    setup_gated(repo, boundary=(*WIDE, "sub/**", "*.json", "*/*/*.md"))
    verdict, reason = decision(repo, "Write", {"file_path": path, "content": "{}"})
    assert verdict == "deny", reason
    assert path in reason
    repo.write(path, "{}\n")
    repo.git("add", "-A")
    code, found = staged(repo)
    assert code == 1
    assert ("HG106" if path in RUNTIME_VARIANTS else "HG102", path) in found


@pytest.mark.slow
def test_the_runtimes_evidence_logs_are_not_settings(repo: Repo) -> None:
    """`.codex/harness/evidence/` holds the harness runtime's records (docs/formats/runtime.md),
    judged by the boundary and that format's rules; nothing else below `.codex/` is."""
    setup_gated(repo, boundary=(*WIDE, "src/.codex/**"))
    for path in (".codex/harness/evidence/2026-05-11.jsonl", "src/.codex/harness/evidence/a/b.jsonl"):
        assert decision(repo, "Write", {"file_path": path, "content": ""}) == ("allow", ""), path
    for path in (".codex/harness/config.toml", ".codex/harness/evidence/.claude/settings.json"):
        assert decision(repo, "Write", {"file_path": path, "content": ""})[0] == "deny", path


@pytest.mark.slow
def test_a_runtime_file_named_exactly_in_the_boundary_is_allowed(repo: Repo) -> None:
    setup_gated(repo, boundary=("src/**", ".claude/**", ".claude/hooks/pre.sh"))
    assert decision(repo, "Write", {"file_path": ".claude/hooks/pre.sh", "content": "x"})[0] == "allow"
    assert decision(repo, "Write", {"file_path": ".claude/hooks/post.sh", "content": "x"})[0] == "deny"


def test_the_bulk_search_finds_the_runtimes_files_among_many() -> None:
    import time

    from harness_gate import rules

    paths = [f"src/m{i}/f{i}.py".encode() for i in range(100_000)]
    wanted = [p.encode() for p in RUNTIME_FILES + RUNTIME_VARIANTS]
    start = time.perf_counter()
    found = rules.suspects([*paths, *wanted], None, "harness")
    assert time.perf_counter() - start < 1.0
    assert set(wanted) <= found and not found & set(paths)


# -- MCP tools -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_mcp_tools_are_routed_to_the_hook_and_asked_about(gated: Repo) -> None:
    import re

    assert gated.cli("init", "--agent", "claude", "--agent", "codex").exit_code == 0
    for settings in (".claude/settings.json", ".codex/hooks.json"):
        matcher = json.loads(gated.read(settings))["hooks"]["PreToolUse"][0]["matcher"]
        assert re.fullmatch(matcher, "mcp__filesystem__write_file"), settings
    codex_matcher = json.loads(gated.read(".codex/hooks.json"))["hooks"]["PreToolUse"][0]["matcher"]
    # write_stdin types into a running shell (`git commit --no-verify` there): routed, judged as shell text.
    assert all(re.fullmatch(codex_matcher, tool) for tool in ("Bash", "apply_patch", "write_stdin"))
    for runtime, answer in (("claude", "ask"), ("codex", "deny")):  # Codex cannot ask: denied
        verdict, reason = decision(gated, "mcp__filesystem__write_file", {"path": "other.py"}, runtime)
        assert verdict == answer
        assert "cannot tell what the MCP tool `mcp__filesystem__write_file` writes" in reason
    assert "removes `mcp__.*` from the PreToolUse matcher" in reason
    assert "a human decides" not in reason  # the Codex reason says what happens there: a deny
    assert decision(gated, "FileWriter", {"path": "src/x"})[0] == "deny"  # not MCP, not known: denied


def test_mcp_tools_in_a_repository_without_the_gate_pass(repo: Repo) -> None:
    repo.write("a.py", "x\n")
    commit(repo, "init")
    assert decision(repo, "mcp__fs__write_file", {"path": "a.py"}) == ("allow", "")


@pytest.mark.slow
def test_codex_apply_patch_with_the_patch_in_command(gated: Repo) -> None:
    """Codex's hook payload carries the patch as the string `tool_input.command`."""
    inside = patch("*** Add File: src/c.py", "+c = 1")
    assert decision(gated, "apply_patch", {"command": inside}, "codex") == ("allow", "")
    verdict, reason = decision(gated, "apply_patch", {"command": patch("*** Add File: other5.py", "+x")}, "codex")
    assert verdict == "deny"
    assert "other5.py" in reason


# -- payload size --------------------------------------------------------------------------------------


def test_a_large_write_inside_the_boundary_is_allowed(gated: Repo) -> None:
    content = "x = 1\n" * (2 * 1024 * 1024 // 6 + 1)  # over 2 MiB
    assert decision(gated, "Write", {"file_path": "src/big.py", "content": content}) == ("allow", "")


def test_a_payload_over_the_cap_is_denied_without_reading_it_all(gated: Repo) -> None:
    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            buffer[:] = b" " * len(buffer)
            self.read_bytes += len(buffer)
            return len(buffer)

    stream = Endless()
    code, out, _ = agent.run("claude", io.BufferedReader(stream))
    assert code == 0
    assert "larger than" in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert stream.read_bytes <= agent.MAX_PAYLOAD + (2 << 20)


# -- Stop: stop_hook_active, the artifacts root ----------------------------------------------------------


@pytest.mark.parametrize("active", [True, "true", "TRUE", " True "])
def test_stop_hook_active_true_or_the_string_true_never_blocks(gated: Repo, active: Any) -> None:
    gated.write("other.py", "x = 3\n")
    stop = stop_payload(gated, active)
    assert hook(gated, stop)[:2] == (0, None)
    assert hook(gated, {**stop, "stop_hook_active": "false"})[1]["decision"] == "block"


@pytest.mark.parametrize(
    ("rel", "text", "code"),
    [
        ("harness/plans/p1/approvals.jsonl", "", "HG211"),
        ("harness/plans/p1/plan.md", "# not the plan that was approved\n", "HG210"),
        ("harness/notes.txt", "mine\n", "HG516"),
    ],
    ids=["approvals-rewritten", "approved-plan-edited", "unknown-artifact"],
)
def test_stop_reports_artifacts_the_gate_would_refuse(gated: Repo, rel: str, text: str, code: str) -> None:
    stop = stop_payload(gated)
    gated.write(rel, text)
    _, out, _ = hook(gated, stop)
    assert out is not None and out["decision"] == "block"
    assert f"`{rel}`" in out["reason"] and f"[{code}]" in out["reason"]
    gated.git("add", "-A")
    assert code in {c for c, _ in staged(gated)[1]}  # what `check` says of the same change
    assert hook(gated, {**stop, "stop_hook_active": True})[1] is None  # and only once


def test_stop_lets_the_gates_own_artifact_commands_through(gated: Repo) -> None:
    stop = stop_payload(gated)
    gated.new_plan("p2")
    gated.write("src/a.py", "a = 3\n")
    assert hook(gated, stop)[:2] == (0, None)


def test_stop_reports_an_invalid_new_plan(gated: Repo) -> None:
    gated.write("harness/plans/p3/plan.md", "no front matter here\n")
    stop = stop_payload(gated)
    _, out, _ = hook(gated, stop)
    assert out is not None and out["decision"] == "block"
    assert "harness/plans/p3/plan.md" in out["reason"]


# -- hard links --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_write_to_a_hard_link_is_denied(gated: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    os.link(outside, gated.path / "src/linked.py")
    verdict, reason = decision(gated, "Write", {"file_path": "src/linked.py", "content": "x"})
    assert verdict == "deny"
    assert "hard link" in reason and "src/linked.py" in reason
    os.link(gated.path / "secret/x", gated.path / "src/twin")  # the other name inside the repository
    assert decision(gated, "Edit", {"file_path": "src/twin", "old_string": "s", "new_string": "t"})[0] == "deny"
    patch_text = patch("*** Update File: src/twin", "@@", "-secret", "+open")
    assert decision(gated, "apply_patch", {"input": patch_text}, "codex")[0] == "deny"
    assert decision(gated, "Write", {"file_path": "src/a.py", "content": "a = 2\n"}) == ("allow", "")


def test_init_agent_gives_an_earlier_entry_todays_matcher(gated: Repo) -> None:
    command = "harness-gate agent-hook --runtime claude"
    gated.write(".claude/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash", "hooks": [{"type": "command", "command": command}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}, {"type": "command", "command": command}]},
    ]}}))  # fmt: skip
    assert gated.cli("init", "--agent", "claude").exit_code == 0
    entries = json.loads(gated.read(".claude/settings.json"))["hooks"]["PreToolUse"]
    assert [e["matcher"] for e in entries] == ["Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*", "Bash"]


def test_a_stop_that_cannot_be_judged_while_active_is_told_to_the_human(gated: Repo, tmp_path: Path) -> None:
    """The agent can make Stop fail (a `commondir` pointing elsewhere; an empty repository
    nested in the boundary, which makes the work tree's fingerprint fail): after
    a first block the runtime says `stop_hook_active`, and that stop is never let through
    in silence: the human is told it was not judged."""
    stop = stop_payload(gated, session_id="s1")
    gated.write("other.py", "x = 3\n")
    (tmp_path / "elsewhere").mkdir()
    (gated.path / ".git" / "commondir").write_text(str(tmp_path / "elsewhere") + "\n")
    _, first, _ = hook(gated, stop)
    assert first is not None and first["decision"] == "block" and "failed closed" in first["reason"], first
    _, again, _ = hook(gated, {**stop, "stop_hook_active": True})
    assert again is not None and "NOT judged" in again["systemMessage"], again
