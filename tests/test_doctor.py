"""`harness-gate doctor`: whether each runtime's agent hook is live in this clone, read from
the runtimes' own settings in a real repository set up with `init --agent` (docs/agents.md,
"Is the hook live?")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness_gate import doctor, hooks
from harness_gate.commands.doctor import doctor_report
from tests.helpers import Repo

# What Codex 0.171.0 itself says of the handlers `init --agent codex` writes: `codex
# app-server`, method `hooks/list`, field `currentHash` (recorded 2026-12-02; PreToolUse again on
# 2026-12-03, when `write_stdin` joined the matcher: the real Codex trusts it in tests/agents).
CODEX_HASHES = {
    "PreToolUse": "sha256:75f5d5159b43eadbe3531433b23cace8d13bce832a62f9096e800838e786a71e",
    "Stop": "sha256:4017a7f6bad1d08d7471afad970e969e9f4ec27f0dc560b69b23b634081cdf53",
    "SubagentStop": "sha256:7d2fa94a30511ef8e9aabe7f2c2667c43a89a90f0f5f3fbca1e4e305995cd1c2",
}
LABELS = {"PreToolUse": "pre_tool_use", "Stop": "stop", "SubagentStop": "subagent_stop"}


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> doctor.Homes:
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "harness-gate"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return doctor.Homes(
        codex=tmp_path / "codex-home",
        claude=tmp_path / "claude-home",
        gemini=tmp_path / "gemini-home",
        claude_managed=(tmp_path / "managed/managed-settings.json",),
        codex_managed=(tmp_path / "codex-managed/managed_config.toml",),
        codex_system=(tmp_path / "codex-system/config.toml",),
        gemini_system=(tmp_path / "gemini-system/settings.json",),
        path=str(bin_dir),
    )


def _init(repo: Repo, *agents: str) -> None:
    args = [a for agent in agents for a in ("--agent", agent)]
    assert repo.cli("init", *args).exit_code == 0


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _trust_codex(repo: Repo, homes: doctor.Homes, hashes: dict[str, str] = CODEX_HASHES) -> None:
    lines = [f"[projects.{json.dumps(str(repo.path))}]", 'trust_level = "trusted"']
    for event, value in hashes.items():
        key = f"{repo.path}/.codex/hooks.json:{LABELS[event]}:0:0"
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(value)}"]
    _write(homes.codex / "config.toml", "\n".join(lines) + "\n")


def codes(report: Any) -> list[str]:
    return sorted(f.code for f in report.findings)


def test_the_codex_hash_is_the_one_codex_computes() -> None:
    command = hooks.agent_command("codex")
    for event, want in CODEX_HASHES.items():
        matcher = hooks.AGENT_MATCHER["codex"] if event == "PreToolUse" else None
        assert doctor.codex_hash(event, matcher, {"type": "command", "command": command}) == want


def test_the_codex_hash_covers_timeout_status_message_and_matcher() -> None:
    """Also recorded from Codex 0.171.0's `hooks/list`, for handlers edited by hand."""
    command = hooks.agent_command("codex")
    handler = {"type": "command", "command": command, "timeout": 30, "statusMessage": "checking"}
    assert doctor.codex_hash("Stop", None, handler) == (
        "sha256:62cba4b234aa1e9111e06a9987bfd0469b7118ac31757dcab53ca3f416f77b68"
    )
    assert doctor.codex_hash("SubagentStop", "default", {"type": "command", "command": command}) == (
        "sha256:fdb23ff89f3cadb7576c0c004d8765343b0cf14161bea624439616e8d0379fca"
    )


def test_codex_untrusted_project_and_hooks_are_not_live(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "codex")
    report = doctor_report(repo.path, homes=homes)
    assert report.exit_code == 1
    messages = "\n".join(f.message for f in report.findings)
    assert "does not trust this project" in messages
    assert messages.count("is not trusted") == 3  # PreToolUse, Stop, SubagentStop
    assert report.data["runtimes"]["codex"]["live"] is False
    # The exact lines that trust each hook, for a human who read the file.
    text = "\n".join(report.lines)
    for event, value in CODEX_HASHES.items():
        assert f'[hooks.state."{repo.path}/.codex/hooks.json:{LABELS[event]}:0:0"]' in text
        assert f'trusted_hash = "{value}"' in text


def test_codex_trusted_project_and_hooks_are_live(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "codex")
    _trust_codex(repo, homes)
    report = doctor_report(repo.path, homes=homes)
    assert report.exit_code == 0, report.findings
    assert report.data["runtimes"]["codex"]["live"] is True
    assert {h["status"] for h in report.data["runtimes"]["codex"]["hooks"]} == {"trusted"}
    assert report.lines == ("codex: the hook in .codex/hooks.json is live in this clone",)


def test_a_changed_codex_hook_needs_trusting_again(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "codex")
    _trust_codex(repo, homes)
    doc = json.loads(repo.read(".codex/hooks.json"))
    doc["hooks"]["PreToolUse"][0]["matcher"] = "apply_patch|Bash|mcp__.*|exec"  # a hand edit, or a newer init
    repo.write(".codex/hooks.json", json.dumps(doc))
    report = doctor_report(repo.path, homes=homes)
    assert codes(report) == ["HG911"]
    assert "PreToolUse hook changed since it was trusted" in report.findings[0].message
    key = f"{repo.path}/.codex/hooks.json:pre_tool_use:0:0"
    # The table is there: the advice is to change its hash, never a second table (TOML refuses one).
    assert f"# in [hooks.state.{json.dumps(key)}]: trusted_hash = " in "\n".join(report.lines)


@pytest.mark.parametrize("runtime", ["claude", "codex", "gemini"])
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"async": True}, "runs asynchronously"),
        ({"type": "prompt"}, "of type `prompt`"),
        ({"matcher": "Read"}, "does not route"),
        ({"matcher": "Write|Edit|apply_patch|write_file"}, "does not route"),
    ],
)
def test_an_entry_that_names_the_hook_but_does_not_guard_is_not_live(
    repo: Repo, homes: doctor.Homes, runtime: str, change: dict[str, object], said: str
) -> None:
    """The whole entry counts, not only its command: the tool event's entry changed by hand."""
    _init(repo, runtime)
    if runtime == "codex":
        _trust_codex(repo, homes)
    rel = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}[runtime]
    doc = json.loads(repo.read(rel))
    event = "BeforeTool" if runtime == "gemini" else "PreToolUse"
    group = doc["hooks"][event][0]
    if "matcher" in change:
        group["matcher"] = change["matcher"]
    else:
        group["hooks"][0].update(change)
    repo.write(rel, json.dumps(doc))
    report = doctor_report(repo.path, homes=homes, runtimes=(runtime,))
    mine = [f for f in report.findings if f.code == "HG911" and said in f.message]
    assert mine and f"the {event} hook in {rel}" in mine[0].message, [f.message for f in report.findings]


def test_codex_hooks_switched_off_or_disabled(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "codex")
    _trust_codex(repo, homes)
    config = homes.codex / "config.toml"
    key = f"{repo.path}/.codex/hooks.json:stop:0:0"
    text = config.read_text()
    config.write_text(
        text.replace(f"[hooks.state.{json.dumps(key)}]\n", f"[hooks.state.{json.dumps(key)}]\nenabled = false\n")
    )
    assert "is switched off" in doctor_report(repo.path, homes=homes).findings[0].message
    config.write_text("[features]\nhooks = false\n" + text)
    assert "`[features] hooks = false`" in doctor_report(repo.path, homes=homes).findings[0].message


def test_codex_hooks_switched_off_in_any_layer_codex_reads(repo: Repo, homes: doctor.Homes) -> None:
    """The strongest layer that says anything decides: managed, then the project's own
    `.codex/config.toml` (a trusted project's), then the user's, then the system's."""
    _init(repo, "codex")
    _trust_codex(repo, homes)
    off, on = "[features]\nhooks = false\n", "[features]\nhooks = true\n"
    project = repo.path / ".codex/config.toml"
    for path in (project, homes.codex_managed[0], homes.codex_system[0]):
        _write(path, off)
        report = doctor_report(repo.path, homes=homes)
        assert [f.code for f in report.findings] == ["HG911"]
        assert "`[features] hooks = false`" in report.findings[0].message
        assert report.findings[0].path in (str(path), ".codex/config.toml")
        assert report.exit_code != 0
        path.unlink()
    _write(homes.codex_system[0], off)
    _write(project, on)  # the project's layer is the stronger
    assert not doctor_report(repo.path, homes=homes).findings
    _write(homes.codex_managed[0], off)  # and managed stronger still
    assert doctor_report(repo.path, homes=homes).findings[0].path == str(homes.codex_managed[0])


def test_a_settings_file_that_is_a_fifo_is_unreadable_not_a_hang(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "claude")
    homes.claude.mkdir(parents=True)
    os.mkfifo(homes.claude / "settings.json")  # no writer: an ordinary read would wait forever
    report = doctor_report(repo.path, homes=homes)
    assert [f.code for f in report.findings] == ["HG913"] and "not a regular file" in report.findings[0].message


def test_codex_home_from_the_environment(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert doctor.Homes.from_environment().codex == tmp_path / "elsewhere"
    monkeypatch.delenv("CODEX_HOME")
    assert doctor.Homes.from_environment().codex == Path(os.environ["HOME"]) / ".codex"


@pytest.mark.parametrize("layer", ["user", "project", "local", "managed"])
def test_claude_disable_all_hooks_in_any_layer(repo: Repo, homes: doctor.Homes, layer: str) -> None:
    _init(repo, "claude")
    assert doctor_report(repo.path, homes=homes).exit_code == 0
    path = {
        "user": homes.claude / "settings.json",
        "project": repo.path / ".claude/settings.json",
        "local": repo.path / ".claude/settings.local.json",
        "managed": homes.claude_managed[0],
    }[layer]
    doc = json.loads(path.read_text()) if path.exists() else {}
    _write(path, json.dumps({**doc, "disableAllHooks": True}))
    report = doctor_report(repo.path, homes=homes)
    assert codes(report) == ["HG911"]
    assert "`disableAllHooks` is true" in report.findings[0].message


def test_claude_managed_hooks(repo: Repo, homes: doctor.Homes) -> None:
    from harness_gate.commands import agent_sandbox

    _init(repo, "claude")
    managed = homes.claude_managed[0]
    _write(managed, json.dumps({"allowManagedHooksOnly": True}))
    report = doctor_report(repo.path, homes=homes)
    assert codes(report) == ["HG911"] and "allowManagedHooksOnly" in report.findings[0].message
    # The managed settings `agent-sandbox --managed` prints: live, whatever the other layers say.
    _write(managed, agent_sandbox.managed())
    _write(homes.claude / "settings.json", json.dumps({"disableAllHooks": True}))
    assert doctor_report(repo.path, homes=homes).exit_code == 0


def test_gemini_hooks_config_and_folder_trust(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "gemini")
    report = doctor_report(repo.path, homes=homes)
    assert codes(report) == ["HG912"] and report.exit_code == 0  # no trust entry: a warning
    _write(homes.gemini / "trustedFolders.json", json.dumps({str(repo.path.parent): "TRUST_FOLDER"}))
    assert doctor_report(repo.path, homes=homes).findings == ()
    _write(homes.gemini / "trustedFolders.json", json.dumps({str(repo.path): "DO_NOT_TRUST"}))
    assert codes(doctor_report(repo.path, homes=homes)) == ["HG911"]
    _write(homes.gemini / "trustedFolders.json", json.dumps({str(repo.path): "TRUST_FOLDER"}))
    _write(homes.gemini / "settings.json", json.dumps({"hooksConfig": {"enabled": False}}))
    assert "`hooksConfig.enabled` is false" in doctor_report(repo.path, homes=homes).findings[0].message


def test_gemini_system_layers_where_its_environment_puts_them(repo: Repo, homes: doctor.Homes, tmp_path: Path) -> None:
    _init(repo, "gemini")
    _write(homes.gemini / "trustedFolders.json", json.dumps({str(repo.path): "TRUST_FOLDER"}))
    off = json.dumps({"hooksConfig": {"enabled": False}})
    moved = doctor.Homes.from_environment(
        {
            "HOME": str(tmp_path / "home"),
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(tmp_path / "elsewhere/system.json"),
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(tmp_path / "elsewhere/defaults.json"),
            "PATH": homes.path,
        }
    )
    moved = doctor.Homes(**{**moved.__dict__, "gemini": homes.gemini})
    assert doctor_report(repo.path, homes=moved).findings == ()
    _write(tmp_path / "elsewhere/system.json", off)
    assert "`hooksConfig.enabled` is false in the system" in doctor_report(repo.path, homes=moved).findings[0].message
    (tmp_path / "elsewhere/system.json").unlink()
    # The defaults are the lowest layer: off there, unless a later layer turns the hooks on.
    _write(tmp_path / "elsewhere/defaults.json", off)
    assert codes(doctor_report(repo.path, homes=moved)) == ["HG911"]
    _write(homes.gemini / "settings.json", json.dumps({"hooksConfig": {"enabled": True}}))
    assert doctor_report(repo.path, homes=moved).findings == ()
    # Without the variables, the defaults sit beside the system settings file.
    _write(homes.gemini_system[0].parent / "system-defaults.json", off)
    (homes.gemini / "settings.json").unlink()
    assert codes(doctor_report(repo.path, homes=homes)) == ["HG911"]


def test_a_hook_not_on_path_fails_open_a_warning(repo: Repo, homes: doctor.Homes, tmp_path: Path) -> None:
    _init(repo, "claude")
    report = doctor_report(repo.path, homes=doctor.Homes(**{**homes.__dict__, "path": str(tmp_path / "nothing")}))
    assert codes(report) == ["HG912"] and report.exit_code == 0
    assert "exit 127" in report.findings[0].message


def test_an_unreadable_settings_file_is_a_finding(repo: Repo, homes: doctor.Homes) -> None:
    _init(repo, "codex")
    _write(homes.codex / "config.toml", "[projects\n")
    report = doctor_report(repo.path, homes=homes)
    assert codes(report) == ["HG913"] and report.exit_code == 1


def test_the_command_through_the_cli(repo: Repo, tmp_path: Path) -> None:
    res = repo.cli("doctor")
    assert res.exit_code == 0 and "no agent hook is set up" in res.output
    _init(repo, "codex")
    res = repo.cli("doctor", "--format", "json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 1 and doc["command"] == "doctor"
    assert {f["code"] for f in doc["findings"]} >= {"HG911"}
    assert repo.cli("doctor", "--runtime", "claude").exit_code == 1  # asked for, never set up
    os.chdir(tmp_path)
    assert repo.cli("doctor").exit_code == 2  # not a repository: an error


@pytest.mark.parametrize(("runtime", "timeout"), [("claude", 3), ("codex", 5), ("gemini", 2000)])
def test_a_short_hook_timeout_fails_open_a_warning(repo: Repo, homes: doctor.Homes, runtime: str, timeout: int) -> None:
    _init(repo, runtime)
    rel = hooks.AGENT_SETTINGS[runtime]
    doc = json.loads(repo.read(rel))
    event = hooks.AGENT_EVENTS[runtime][0]
    doc["hooks"][event][0]["hooks"][0]["timeout"] = timeout
    repo.write(rel, json.dumps(doc))
    report = doctor_report(repo.path, [runtime], homes=homes)
    [warning] = [f for f in report.findings if "hook's timeout" in f.message]
    assert warning.code == "HG912" and not warning.blocks
