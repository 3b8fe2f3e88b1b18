"""`harness-gate doctor`: whether each runtime's agent hook is live in this clone.

A hook file in the repository is only a request: each runtime decides on its own, from
settings outside the repository, whether it runs it. Codex runs `.codex/hooks.json` only in
a project the user trusts (`[projects."<root>"] trust_level = "trusted"` in
`$CODEX_HOME/config.toml`), and each hook handler only once its definition is trusted
(`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash = "sha256:..."`, the hash of
the handler's normalized definition: a changed hook needs trusting again). Claude Code runs no
hook when a settings layer sets `disableAllHooks`, and only managed hooks under
`allowManagedHooksOnly`. Gemini CLI reads project settings in a trusted folder only, and
`hooksConfig` switches hooks off. Every fact is read from those files as they are on this
machine; nothing is written. docs/agents.md, "Is the hook live?".
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_gate import hooks
from harness_gate.findings import RULES, Finding, Severity

MAX_SETTINGS = 16 << 20  # bytes read of one settings file: a bound, far above any real one
# Codex's event names as its hook state keys and hashes spell them (snake case).
CODEX_LABELS = {"PreToolUse": "pre_tool_use", "Stop": "stop", "SubagentStop": "subagent_stop"}
# Codex's defaults in a handler's normalized definition (what its hash covers).
_CODEX_TIMEOUT = 600
_CODEX_CONTEXT_LIMIT = 2500
_CODEX_CONTEXT_EVENTS = frozenset({"pre_tool_use", "post_tool_use", "session_start", "user_prompt_submit"})
CLAUDE_MANAGED = (
    Path("/etc/claude-code/managed-settings.json"),
    Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
)
# Codex's machine layers, the stronger first: the managed (policy) file, then the system
# config; the user's `$CODEX_HOME/config.toml` and the project's `.codex/config.toml`
# (read in a trusted project) lie between them: managed > project > user > system.
CODEX_MANAGED = (Path("/etc/codex/managed_config.toml"),)
CODEX_SYSTEM = (Path("/etc/codex/config.toml"),)
GEMINI_SYSTEM = (Path("/etc/gemini-cli/settings.json"), Path("/Library/Application Support/GeminiCli/settings.json"))


@dataclass(frozen=True)
class Homes:
    """Where each runtime keeps its user and machine settings."""

    codex: Path  # CODEX_HOME, or ~/.codex
    claude: Path  # CLAUDE_CONFIG_DIR, or ~/.claude
    gemini: Path  # ~/.gemini
    claude_managed: tuple[Path, ...] = CLAUDE_MANAGED
    codex_managed: tuple[Path, ...] = CODEX_MANAGED
    codex_system: tuple[Path, ...] = CODEX_SYSTEM
    gemini_system: tuple[Path, ...] = GEMINI_SYSTEM
    gemini_defaults: Path | None = None  # GEMINI_CLI_SYSTEM_DEFAULTS_PATH; None: beside the system file
    path: str = ""  # PATH, as a runtime started from here inherits it

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Homes:
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or Path.home())
        return cls(
            codex=Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex",
            claude=Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude",
            gemini=home / ".gemini",
            # Gemini CLI's own overrides of where its machine-wide settings are.
            gemini_system=(Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]),)
            if env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
            else GEMINI_SYSTEM,
            gemini_defaults=Path(env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"])
            if env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
            else None,
            path=env.get("PATH", ""),
        )

    def gemini_defaults_file(self) -> list[Path]:
        """Gemini CLI's system defaults: the lowest layer, beside each system settings file."""
        if self.gemini_defaults is not None:
            return [self.gemini_defaults]
        return [p.parent / "system-defaults.json" for p in self.gemini_system]


@dataclass(frozen=True)
class RuntimeReport:
    runtime: str
    settings: str  # the project file init wrote
    live: bool
    findings: tuple[Finding, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)
    advice: tuple[str, ...] = ()  # lines for a human (text only): what to add where

    def as_data(self) -> dict[str, Any]:
        return {"settings": self.settings, "live": self.live, **self.facts}


class Unreadable(Exception):
    """A settings file that exists and cannot be read as its runtime would: no answer."""


def _finding(code: str, path: str, message: str, hint: str = "") -> Finding:
    severity = Severity.WARNING if code == "HG912" else Severity.ERROR
    return Finding(code, path, None, message, hint or RULES[code].hint, severity)


def _read(path: Path) -> bytes | None:
    """A settings file's bytes; None when there is none. A FIFO (which would wait forever for
    a writer), a device or a file over the cap cannot be read: HG913, never a hang."""
    from harness_gate import fsutil  # noqa: PLC0415

    try:
        return fsutil.read_regular(path, MAX_SETTINGS, what="settings file")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror})") from None
    except ValueError:
        raise Unreadable(f"is not a regular file of at most {MAX_SETTINGS >> 20} MiB") from None


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, None when there is no such file."""
    data = _read(path)
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise Unreadable(f"is not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise Unreadable("is not a JSON object")
    return doc


def read_toml(path: Path) -> dict[str, Any] | None:
    data = _read(path)
    if data is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib  # noqa: PLC0415
    try:
        doc: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return doc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise Unreadable(f"is not valid TOML ({exc})") from None


def _table(doc: Mapping[str, Any] | None, *keys: str) -> Mapping[str, Any]:
    here: Any = doc or {}
    for key in keys:
        here = here.get(key) if isinstance(here, Mapping) else None
    return here if isinstance(here, Mapping) else {}


def handlers(doc: Mapping[str, Any] | None, event: str) -> list[tuple[int, int, str | None, dict[str, Any]]]:
    """(group index, handler index, the group's matcher, handler) of every command handler of
    `event` in a Claude-shaped hooks file (`{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}`)."""
    groups = _table(doc, "hooks").get(event)
    out = []
    for gi, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
        for hi, handler in enumerate(group["hooks"]):
            if isinstance(handler, dict):
                out.append((gi, hi, matcher, handler))
    return out


def ours(handler: Mapping[str, Any], command: str) -> bool:
    return handler.get("command") == command


# A tool of each kind the runtime's matcher must route to the hook (hooks.AGENT_MATCHER).
_ROUTED = {
    "claude": ("Write", "Edit", "NotebookEdit", "Bash", "mcp__server__tool"),
    "codex": ("apply_patch", "Bash", "mcp__server__tool"),
    "gemini": ("write_file", "replace", "run_shell_command", "mcp_server_tool"),
}


def _routes(matcher: str | None, tool: str) -> bool:
    """Whether a group's matcher sends `tool` to its hooks: none, empty or `*` sends every
    tool; otherwise the runtimes match it as a regular expression on the whole name."""
    if matcher is None or matcher in ("", "*"):
        return True
    try:
        return re.fullmatch(matcher, tool) is not None
    except re.error:
        return False  # a matcher the runtime cannot use either routes nothing known


def entry_problem(runtime: str, event: str, matcher: str | None, handler: Mapping[str, Any]) -> str | None:
    """Why an entry that names the hook's command still does not guard the agent's writes;
    None when it does. The whole entry counts: a hook run asynchronously is not waited for,
    a prompt or agent hook runs no command, and a matcher that leaves a writing tool out
    lets that tool through unasked."""
    kind = handler.get("type", "command")
    if kind != "command":
        return f"is of type `{kind}`, which runs no command"
    if handler.get("async") is True:
        return "runs asynchronously (`async: true`): its answer is not waited for"
    if event in hooks.TOOL_EVENTS:
        missed = [t for t in _ROUTED.get(runtime, ()) if not _routes(matcher, t)]
        if missed:
            return f"has the matcher `{matcher}`, which does not route {', '.join(missed)} to it"
    return None


def _judged_entries(
    runtime: str, doc: Mapping[str, Any] | None, events: Sequence[str], command: str, rel: str
) -> list[Finding]:
    """HG911 for each event whose entries of the hook all fail `entry_problem`, and the
    missing entries (`_no_entry`)."""
    found = []
    for event in events:
        mine = [(m, h) for _, _, m, h in handlers(doc, event) if ours(h, command)]
        if not mine:
            found.append(_no_entry(rel, event, command, runtime))
            continue
        problems = [entry_problem(runtime, event, m, h) for m, h in mine]
        if all(problems):
            found.append(
                _finding(
                    "HG911",
                    rel,
                    f"the {event} hook in {rel} {problems[0]}: it does not guard the agent",
                    f"Run `harness-gate init --agent {runtime}` again, or fix the entry by hand.",
                )
            )
    return found


def runs(doc: Mapping[str, Any] | None, command: str) -> bool:
    """Whether a hooks file runs `command` under any event (what `init --agent` wrote)."""
    return any(ours(h, command) for event in _table(doc, "hooks") for _, _, _, h in handlers(doc, str(event)))


# -- Codex --------------------------------------------------------------------------------------


def codex_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """The hash Codex keeps as a handler's `trusted_hash`: sha256 of its normalized definition
    (event label, the group's matcher, the handler with Codex's defaults filled in) as compact
    JSON with sorted keys. Checked against `codex app-server`'s `hooks/list` (Codex 0.171.0)."""
    label = CODEX_LABELS.get(event, event.lower())
    timeout = handler.get("timeout")
    normal: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(1, timeout) if isinstance(timeout, int) and not isinstance(timeout, bool) else _CODEX_TIMEOUT,
        "async": bool(handler.get("async", False)),
    }
    if isinstance(handler.get("statusMessage"), str) and handler["statusMessage"]:
        normal["statusMessage"] = handler["statusMessage"]
    limit = handler.get("additionalContextLimit")
    if label in _CODEX_CONTEXT_EVENTS and isinstance(limit, int) and limit != _CODEX_CONTEXT_LIMIT:
        normal["additionalContextLimit"] = limit
    identity: dict[str, Any] = {"event_name": label, "hooks": [normal]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def codex(root: Path, homes: Homes, events: Sequence[str], command: str, rel: str) -> RuntimeReport:
    config_path = homes.codex / "config.toml"
    shown = str(config_path)
    found: list[Finding] = []
    try:
        project = read_json(root / rel)
    except Unreadable as exc:
        return RuntimeReport("codex", rel, False, (_finding("HG913", rel, f"{rel} {exc}"),))
    try:
        config = read_toml(config_path)
    except Unreadable as exc:
        return RuntimeReport("codex", rel, False, (_finding("HG913", shown, f"{shown} {exc}"),))
    projects = _table(config, "projects")
    trust = _table(projects, str(root)).get("trust_level") or _table(projects, os.path.realpath(root)).get(
        "trust_level"
    )
    facts: dict[str, Any] = {"config": shown, "project_trust": trust if isinstance(trust, str) else None}
    if trust != "trusted":
        said = "marks this project untrusted" if trust == "untrusted" else "does not trust this project"
        found.append(
            _finding(
                "HG911",
                shown,
                f"Codex {said} ({root}): it does not load {rel}, and runs no hook of it",
                f"Trust the project: start `codex` here and answer its trust prompt, or `codex exec --trust`, or add "
                f'`[projects.{json.dumps(str(root))}] trust_level = "trusted"` to {shown}.',
            )
        )
    switched = _codex_hooks_setting(root, homes, config_path, config, trusted=trust == "trusted")
    if isinstance(switched, Finding):
        return RuntimeReport("codex", rel, False, (switched,))
    if switched is not None:
        found.append(_finding("HG911", switched, f"hooks are switched off in {switched} (`[features] hooks = false`)"))
    state = _table(config, "hooks", "state")
    hooks_file = str(root / rel)
    trusted: list[dict[str, Any]] = []
    advice: list[str] = []
    found += _judged_entries("codex", project, events, command, rel)
    for event in events:
        mine = [(gi, hi, m, h) for gi, hi, m, h in handlers(project, event) if ours(h, command)]
        for gi, hi, matcher, handler in mine:
            key = f"{hooks_file}:{CODEX_LABELS.get(event, event.lower())}:{gi}:{hi}"
            want = codex_hash(event, matcher, handler)
            entry = _table(state, key)
            have = entry.get("trusted_hash")
            status = "trusted" if have == want else ("modified" if isinstance(have, str) else "untrusted")
            if entry.get("enabled") is False:
                status = "disabled"
            trusted.append({"event": event, "key": key, "hash": want, "status": status})
            if status == "trusted":
                continue
            what = {
                "untrusted": "is not trusted",
                "modified": "changed since it was trusted",
                "disabled": "is switched off (`enabled = false`)",
            }[status]
            found.append(
                _finding(
                    "HG911",
                    rel,
                    f"the {event} hook {what} in {shown} (`{key}`, its hash now `{want}`): Codex does not "
                    "run it, and says nothing",
                    f"Read {rel}, then trust it: `/hooks` in Codex, or the `[hooks.state]` lines `harness-gate doctor` "
                    f"prints, added to {shown}. (`codex exec --dangerously-bypass-hook-trust` runs untrusted hooks for "
                    "one run.)",
                )
            )
            if status == "untrusted":
                advice += [f"[hooks.state.{json.dumps(key)}]", f'trusted_hash = "{want}"']
            elif status == "modified":  # the table is there already: a second one would not parse
                advice.append(f'# in [hooks.state.{json.dumps(key)}]: trusted_hash = "{want}"')
    if advice:
        advice.insert(0, f"to trust the hook after reading {rel}, add to {shown} (or use `/hooks` in Codex):")
    facts["hooks"] = trusted
    found += _timeouts(project, events, command, rel) + _on_path("codex", command, homes)
    return RuntimeReport("codex", rel, not any(f.blocks for f in found), tuple(found), facts, tuple(advice))


def _codex_hooks_setting(
    root: Path, homes: Homes, user_path: Path, user: Mapping[str, Any] | None, *, trusted: bool
) -> str | Finding | None:
    """The layer that switches Codex's hooks off (`[features] hooks = false`, or the older
    `codex_hooks`), where the strongest layer that says anything says off; None when none
    does. Layers, the stronger first: managed, the project's (read only in a trusted
    project), the user's, the system's. A layer that cannot be read is HG913."""
    project = [root / ".codex/config.toml"] if trusted else []
    layers: list[tuple[Path, Mapping[str, Any] | None]] = []
    for path in (*homes.codex_managed, *project, user_path, *homes.codex_system):
        try:
            layers.append((path, user if path == user_path else read_toml(path)))
        except Unreadable as exc:
            shown = _shown(root, path)
            return _finding("HG913", shown, f"{shown} {exc}")
    for path, doc in layers:
        features = _table(doc, "features")
        said = [features.get(k) for k in ("hooks", "codex_hooks") if isinstance(features.get(k), bool)]
        if said:
            return None if all(said) else _shown(root, path)
    return None


# -- Claude Code --------------------------------------------------------------------------------


def claude(root: Path, homes: Homes, events: Sequence[str], command: str, rel: str) -> RuntimeReport:
    layers: list[tuple[str, Path]] = [(f"managed ({p})", p) for p in homes.claude_managed]
    layers += [
        ("user", homes.claude / "settings.json"),
        ("project", root / rel),
        ("local", root / ".claude/settings.local.json"),
    ]
    docs: dict[str, dict[str, Any] | None] = {}
    for name, path in layers:
        try:
            docs[name] = read_json(path)
        except Unreadable as exc:
            shown = _shown(root, path)
            return RuntimeReport("claude", rel, False, (_finding("HG913", shown, f"{shown} {exc}"),))
    managed = [(name, doc) for name, doc in docs.items() if name.startswith("managed") and doc is not None]
    in_managed = any(
        ours(h, command) and entry_problem("claude", "PreToolUse", m, h) is None
        for _, doc in managed
        for _, _, m, h in handlers(doc, "PreToolUse")
    )
    found: list[Finding] = []
    for (name, path), doc in zip(layers, docs.values(), strict=True):
        if doc is not None and doc.get("disableAllHooks") is True:
            if in_managed and not name.startswith("managed"):
                continue  # managed hooks run under another layer's disableAllHooks
            shown = _shown(root, path)
            found.append(
                _finding(
                    "HG911",
                    shown,
                    f"`disableAllHooks` is true in the {name.split(' ')[0]} settings {shown}: Claude Code runs no hook",
                    f"Remove `disableAllHooks` from {shown}.",
                )
            )
    only_managed = any(doc.get("allowManagedHooksOnly") is True for _, doc in managed if doc)
    if only_managed and not in_managed:
        found.append(
            _finding(
                "HG911",
                rel,
                "the managed settings set `allowManagedHooksOnly`: Claude Code runs no hook of the project's",
                "Install the hook in the managed settings: `harness-gate agent-sandbox --managed` prints them.",
            )
        )
    if not in_managed:
        found += _judged_entries("claude", docs["project"], events, command, rel)
    found += _timeouts(docs["project"], events, command, rel) + _on_path("claude", command, homes)
    facts = {"layers": [_shown(root, p) for (_, p), d in zip(layers, docs.values(), strict=True) if d is not None]}
    return RuntimeReport("claude", rel, not any(f.blocks for f in found), tuple(found), facts)


def _no_entry(rel: str, event: str, command: str, runtime: str) -> Finding:
    """The runtime's project settings hold no entry for `event` running the hook."""
    return _finding(
        "HG911",
        rel,
        f"{rel} has no {event} entry running `{command}`",
        f"Run `harness-gate init --agent {runtime}` again (it keeps every other entry).",
    )


# -- Gemini CLI ---------------------------------------------------------------------------------


def gemini(root: Path, homes: Homes, events: Sequence[str], command: str, rel: str) -> RuntimeReport:
    # Lowest first: system defaults < user < project < system (Gemini CLI 0.61's merge order).
    layers = [(f"defaults ({p})", p) for p in homes.gemini_defaults_file()]
    layers += [("user", homes.gemini / "settings.json"), ("project", root / rel)]
    layers += [(f"system ({p})", p) for p in homes.gemini_system]
    trust_file = homes.gemini / "trustedFolders.json"
    docs: dict[str, dict[str, Any] | None] = {}
    try:
        for name, path in layers:
            docs[name] = read_json(path)
        folders = read_json(trust_file)
    except Unreadable as exc:
        return RuntimeReport("gemini", rel, False, (_finding("HG913", rel, f"a Gemini CLI settings file {exc}"),))
    found: list[Finding] = []
    settings = list(zip(layers, docs.values(), strict=True))
    for n, ((name, path), doc) in enumerate(settings):
        config = _table(doc, "hooksConfig")
        shown = _shown(root, path)
        later = [_table(d, "hooksConfig").get("enabled") for _, d in settings[n + 1 :]]
        if config.get("enabled") is False and not (name.startswith("defaults") and True in later):
            found.append(
                _finding(
                    "HG911",
                    shown,
                    f"`hooksConfig.enabled` is false in the {name.split(' ')[0]} settings {shown}: "
                    "Gemini CLI runs no hook",
                    f"Remove `hooksConfig.enabled: false` from {shown}.",
                )
            )
        disabled = config.get("disabled")
        if isinstance(disabled, list) and command in disabled:
            found.append(_finding("HG911", shown, f"`hooksConfig.disabled` in {shown} names `{command}`"))
    found += _judged_entries("gemini", docs["project"], events, command, rel)
    trust = _gemini_trust(root, folders)
    if trust == "DO_NOT_TRUST":
        found.append(
            _finding("HG911", str(trust_file), f"{trust_file} does not trust this folder: Gemini CLI ignores {rel}")
        )
    elif trust is None:
        found.append(
            _finding(
                "HG912",
                str(trust_file),
                f"this folder is not in {trust_file}: where folder trust is on, Gemini CLI "
                f"ignores {rel} (headless, `GEMINI_CLI_TRUST_WORKSPACE=true` trusts it for one run)",
                "Trust the folder when Gemini CLI asks (or `/permissions`).",
            )
        )
    found += _timeouts(docs["project"], events, command, rel, ms=True) + _on_path("gemini", command, homes)
    return RuntimeReport("gemini", rel, not any(f.blocks for f in found), tuple(found), {"folder_trust": trust})


def _gemini_trust(root: Path, folders: Mapping[str, Any] | None) -> str | None:
    """The trust level trustedFolders.json gives `root` (TRUST_FOLDER, TRUST_PARENT of a
    folder inside it, DO_NOT_TRUST), the nearest entry deciding; None without one."""
    best: tuple[int, str] | None = None
    here = os.path.normpath(root)
    for name, level in (folders or {}).items():
        if not isinstance(level, str):
            continue
        folder = os.path.normpath(name)
        exact = here == folder
        inside = here.startswith(folder.rstrip(os.sep) + os.sep)
        # TRUST_PARENT on a folder trusts the folder that holds it, and everything below.
        parent = str(Path(folder).parent)
        if level == "TRUST_PARENT" and (here == parent or here.startswith(parent.rstrip(os.sep) + os.sep)):
            depth = len(parent)
        elif exact or inside:
            depth = len(folder)
        else:
            continue
        if best is None or depth >= best[0]:
            best = (depth, "TRUST_FOLDER" if level == "TRUST_PARENT" else level)
    return best[1] if best is not None else None


# -- shared -------------------------------------------------------------------------------------


MIN_TIMEOUT = 10  # seconds: a hook given less may be cut off on a large repository, and fail open


def _timeouts(
    doc: Mapping[str, Any] | None, events: Sequence[str], command: str, rel: str, *, ms: bool = False
) -> list[Finding]:
    """A `timeout` on the agent hook's handler short enough that the runtime may give up on it
    (and run the tool): a warning. Gemini CLI counts it in milliseconds."""
    out: list[Finding] = []
    for event in events:
        for _, _, _, handler in handlers(doc, event):
            timeout = handler.get("timeout")
            if not ours(handler, command) or not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
                continue
            seconds = timeout / 1000 if ms else timeout
            if seconds < MIN_TIMEOUT:
                out.append(
                    _finding(
                        "HG912",
                        rel,
                        f"the {event} hook's timeout in {rel} is {seconds:g} s: a hook cut off by its "
                        "timeout lets the tool run (fail open)",
                        f"Give it at least {MIN_TIMEOUT} s, or remove the `timeout`.",
                    )
                )
    return out


def _on_path(runtime: str, command: str, homes: Homes) -> list[Finding]:
    """A hook whose program is not on PATH exits 127, and every runtime then runs the tool."""
    program = command.split(" ", 1)[0]
    if shutil.which(program, path=homes.path) is not None:
        return []
    return [
        _finding(
            "HG912",
            program,
            f"`{program}` is not on PATH here: the {runtime} hook would exit 127, and the runtime "
            "runs the tool anyway (fail open)",
            "Install harness-gate where the agent's PATH finds it (`pipx install ...`), or put its folder on PATH.",
        )
    ]


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
