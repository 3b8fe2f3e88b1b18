"""`harness-gate agent-sandbox`: the coding agent's own OS sandbox, written from the approved
write boundary and the protected paths, so that its shell commands meet the boundary too.

Claude Code: `sandbox` (bubblewrap on Linux, Seatbelt on macOS) and `permissions.deny` in
`.claude/settings.local.json`. Codex: a permission profile in `.codex/config.toml`. Both
files are this clone's own (absolute paths, this plan's boundary): never committed, listed
in `.git/info/exclude`. Run again after `approve` or an amendment. docs/agents.md says what
each rule is for and what the sandboxes cannot do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_gate import artifacts_root, artifacts_tree, fsutil, git, governance, hooks, lifecycle, plans
from harness_gate.errors import HarnessGateError, unsafe_agent_settings, usage
from harness_gate.git.repo import git_path
from harness_gate.report import Report
from harness_gate.state_facts import GitFacts

FILES = {"claude": ".claude/settings.local.json", "codex": ".codex/config.toml"}
CODEX_MARK = "# harness-gate agent-sandbox"
PROFILE = "harness-gate"
# Never the agent's to write, whatever the boundary (the protected paths' files and folders).
PROTECTED = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks",
    ".codex",
    ".agents",
    ".mcp.json",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    ".github",
    ".harness-gate.toml",
    ".gemini",
    "GEMINI.md",
    "pyproject.toml",
    ".gitattributes",
    ".gitignore",
    ".pre-commit-config.yaml",
    ".git/hooks",
    ".git/config",
    ".git/info",
)
USER_FILES = ("~/.claude/settings.json", "~/.claude/settings.local.json", "~/.codex")
_GLOB = frozenset("*?[{")
_MAX_ENTRIES = 4096  # denied names listed for Claude Code: a bound on a wide tree


def write_roots(boundary: Sequence[str]) -> list[str]:
    """The literal part of each pattern: its folders before the first wildcard (`src/**`:
    `src`), or the file itself (`docs/a.md`). "" is the whole work tree."""
    roots = []
    for pattern in boundary:
        parts = pattern.strip("/").split("/")
        literal = []
        for part in parts:
            if _GLOB & set(part):
                break
            literal.append(part)
        roots.append("/".join(literal))
    return sorted(set(roots))


def codex_roots(root: Path, roots: Sequence[str], artifacts: str) -> list[str]:
    """Codex's write roots. A boundary whose first segment is a wildcard (`**/*.py`) has the
    whole work tree as its root; granting `.` would let the agent rename a folder holding a
    read-only carve-out (the plan folder, `.claude`) and write a new one in its place. So
    each top-level entry is granted instead, each a mount point that cannot be renamed, and
    never `.git`, the artifacts root or a protected name (a new top-level file cannot be made
    inside the sandbox then: docs/agents.md)."""
    if "" not in roots:
        return list(roots)
    skip = {".git", artifacts.split("/", maxsplit=1)[0], *(p.split("/")[0] for p in PROTECTED)}
    top = []
    with os.scandir(root) as it:
        for n, entry in enumerate(it):
            if n >= _MAX_ENTRIES:
                raise usage(
                    f"the work tree has more than {_MAX_ENTRIES} top-level entries to list for Codex",
                    "Name the boundary's folders (`src/**`) rather than a wildcard at the top.",
                )
            if entry.name not in skip:
                top.append(entry.name)
    return sorted({*(r for r in roots if r), *top})


def _plan(root: Path) -> tuple[str | None, tuple[str, ...]]:
    """The plan this branch works under and its effective boundary; (None, ()) when there
    is none approved: then nothing in the work tree is the agent's to write."""
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return None, ()
    try:
        plan_id = governance.plan_id_for(artifacts, None, GitFacts(artifacts.root))
    except HarnessGateError:
        return None, ()
    life = lifecycle.replay(plans.load(artifacts, plan_id))
    if life.policy is None or not life.grants_writes:
        return plan_id, ()
    return plan_id, life.policy.boundary


def _covered(rel: str, roots: Sequence[str]) -> bool:
    return any(r in ("", rel) or rel.startswith(r + "/") for r in roots)


def _leads_to(rel: str, roots: Sequence[str]) -> bool:
    return any(r.startswith(rel + "/") for r in roots)


def claude_denied(root: Path, roots: Sequence[str], artifacts: str, plan_folder: str | None = None) -> list[str]:
    """Every existing entry of the work tree outside the write roots, the smallest set of
    names that covers them (a folder no root leads into is one name), the protected paths,
    `.git` whole and the artifacts root but the plan's evidence log (`plan_folder`; None:
    the artifacts root whole). bubblewrap cannot make a folder read-only and one below it
    writable, so a new file beside a denied one (at the top, say) can still be made: Stop
    reports it. More names than the bound is a usage error, never a shorter list: a rule
    left out would be a write let through unsaid."""
    if plan_folder is None:
        out = [*_denied_below(root, "", roots, {".git", artifacts}), artifacts]
    else:
        # `verify` appends to the log (by rename, in its folder): the log and the folders on
        # the way to it stay writable; every other entry of the artifacts root (the plan,
        # its approvals, the amendments, the reviews, other plans) is named read-only, and
        # the boundary never reaches into the artifacts root.
        log = artifacts_root.evidence_log(plan_folder)
        out = _denied_below(root, "", [*roots, log], {".git", artifacts})
        if (root / artifacts).is_dir() and not (root / artifacts).is_symlink():
            out += _denied_below(root, artifacts, [log], set())
        else:
            out.append(artifacts)
    # `.git` whole: its hooks, config, commondir, object store and the hook's own session
    # records. So no commit is made inside the sandbox (as under Codex's profile). `verify`
    # writes its objects to a scratch store (docs/agents.md).
    out += [p for p in PROTECTED if not _covered(p, roots) or "/" not in p]
    out.append(".git")
    return sorted({p for p in out if not p.startswith(".git/")})


def _denied_below(root: Path, top: str, roots: Sequence[str], skip: set[str]) -> list[str]:
    """claude_denied's walk of the folder `top` ("" the work tree): the existing entries
    outside `roots`, each folder no root leads into as one name; `skip` left to the caller."""
    out: list[str] = []
    stack = [top]
    while stack:
        here = stack.pop()
        try:
            names = sorted(p.name for p in (root / here).iterdir())
        except OSError:
            continue
        for name in names:
            rel = f"{here}/{name}" if here else name
            if rel in skip or _covered(rel, roots):
                continue
            # `.claude` is named file by file: Claude Code's sandbox makes its own placeholders
            # in it (`.claude/commands`), which a read-only folder would refuse.
            leads = _leads_to(rel, roots) or rel == ".claude"
            if leads and (root / rel).is_dir() and not (root / rel).is_symlink():
                stack.append(rel)
            else:
                out.append(rel)
        if len(out) > _MAX_ENTRIES:
            raise usage(
                f"more than {_MAX_ENTRIES} files and folders outside the write boundary to deny in Claude Code's "
                "sandbox: the rules would be incomplete, so none are written",
                "Keep what lies outside the boundary in fewer folders, or install the managed settings "
                "(`harness-gate agent-sandbox --managed`, docs/agents.md).",
            )
    return out


def claude_mount_points(root: Path, denied: Sequence[str]) -> list[str]:
    """Every existing folder of the work tree on the way to a denied name (`.claude` for
    `.claude/settings.local.json`). Listed as `allowWrite` (inside the work tree, which the
    sandbox lets the agent write anyway: nothing more is granted), each is bound as a mount
    point of its own, and bubblewrap's mount points cannot be renamed or removed (EBUSY,
    EXDEV). Without them `mv .claude .claude-old && mkdir .claude` carries the read-only
    file away with its folder and leaves a writable one in its place."""
    out: set[str] = set()
    for rel in denied:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            here = "/".join(parts[:depth])
            path = root / here
            if path.is_dir() and not path.is_symlink():
                out.add(here)
    return sorted(out)


def claude_settings(root: Path, denied: Sequence[str], current: dict[str, Any]) -> dict[str, Any]:
    top = str(root)
    paths = [f"{top}/{p}" for p in denied] + list(USER_FILES)
    doc = dict(current)
    doc["sandbox"] = {
        "enabled": True,
        "failIfUnavailable": True,  # no sandbox, no command: never a silent fall-back
        "allowUnsandboxedCommands": False,  # the model cannot ask to leave it
        # No `excludedCommands`: Claude Code runs a whole compound command that names one
        # outside the sandbox (`harness-gate verify; echo x > other.py`).
        "filesystem": {"denyWrite": paths, "allowWrite": [f"{top}/{p}" for p in claude_mount_points(root, denied)]},
    }
    rules = [
        f"Edit(/{top}/{p})"
        for p in (
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".git/hooks/**",
            ".git/config",
            ".harness-gate.toml",
        )
    ]
    rules += ["Edit(~/.claude/settings.json)", "Edit(~/.claude/settings.local.json)"]
    permissions = dict(doc.get("permissions") or {})
    deny = [r for r in permissions.get("deny", []) if isinstance(r, str)]
    permissions["deny"] = deny + [r for r in rules if r not in deny]
    doc["permissions"] = permissions
    return doc


# Keys of Claude Code's settings that switch hooks off, add hooks of their own or run a
# command of their own choosing outside the sandbox (a status line, a credential helper, a
# plugin's hooks, the shell's prefix): the sandbox rules beside them would guard nothing.
UNSAFE_KEYS = (
    "disableAllHooks",
    "hooks",
    "statusLine",
    "fileSuggestion",
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "gcpAuthRefresh",
    "otelHeadersHelper",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "env",
)


def _refuse_unsafe(rel: str, current: dict[str, Any]) -> None:
    """A refusal when `rel` already holds a key that switches hooks off or runs commands: never
    stripped (a user's setting is theirs to move), never left beside the sandbox rules."""
    found = [k for k in UNSAFE_KEYS if k in current]
    if found:
        raise unsafe_agent_settings(
            f"{rel} holds {', '.join(f'`{k}`' for k in found)}: settings that switch hooks off, add hooks or run "
            "commands outside the sandbox (`env` can put another `harness-gate` first on PATH); no sandbox rules "
            "are written beside them",
        )


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string for these names


def codex_config(roots: Sequence[str], artifacts: str, plan_folder: str | None) -> str:
    """A permission profile: the machine readable, the temporary folder writable, the work
    tree read-only but the write roots and the plan folder's evidence log. `.git` whole is
    read-only (no commit; no object replaced): `verify` hashes the tree into a scratch
    store in the temporary folder (git.process.scratch_objects)."""
    lines = [
        f"{CODEX_MARK}: written from the approved write boundary; run it again after approve or an amendment.",
        "# This clone's own (listed in .git/info/exclude): never committed.",
        f'default_permissions = "{PROFILE}"',
        "",
        f"[permissions.{PROFILE}.filesystem]",
        '":root" = "read"',
        '":tmpdir" = "write"',
        "",
        f'[permissions.{PROFILE}.filesystem.":workspace_roots"]',
    ]
    entries = {".": "read"}
    entries.update({r or ".": "write" for r in roots})
    if plan_folder is not None:
        entries[plan_folder] = "write"
        entries.update(
            {f"{plan_folder}/{n}": "read" for n in (artifacts_root.PLAN, artifacts_root.APPROVALS, "amendments")}
        )
    entries.update(dict.fromkeys(PROTECTED, "read"))  # the protected paths win over the boundary
    lines += [f'{_toml(path)} = "{access}"' for path, access in entries.items()]
    return "\n".join(lines) + "\n"


def _exclude(root: Path, rels: Sequence[str]) -> None:
    """List the files in .git/info/exclude (this clone's own ignore list) unless tracked."""
    tracked = git.tracked_files(root, list(rels))
    path = git_path(root, "info/exclude")
    old = path.read_text("utf-8") if path.exists() else ""
    missing = [f"/{r}" for r in rels if r not in tracked and f"/{r}" not in old.splitlines()]
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not old or old.endswith("\n") else "\n"
        fsutil.write_atomic(path, (old + sep + "\n".join(missing) + "\n").encode())


def _claude_current(root: Path, rel: str) -> dict[str, Any]:
    path = root / rel
    current: Any = {}
    if path.exists():
        try:
            current = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError):
            current = None
    if not isinstance(current, dict):
        raise usage(f"{rel} is not a JSON object", "Fix it, or remove it, and run again.")
    # The keys this command merges into must have the shape Claude Code reads; anything else
    # is the user's to fix (never an internal error).
    for key in ("permissions", "sandbox"):
        if key in current and not isinstance(current[key], dict):
            raise usage(f"{rel}: `{key}` is not a JSON object", "Fix it, or remove it, and run again.")
    permissions = current.get("permissions") or {}
    if "deny" in permissions and not isinstance(permissions["deny"], list):
        raise usage(f"{rel}: `permissions.deny` is not a list", "Fix it, or remove it, and run again.")
    return current


def _boundary(root: Path) -> tuple[Any, str | None, tuple[str, ...]]:
    cfg = artifacts_tree.worktree_config(root)
    plan_id, boundary = _plan(root)
    return cfg, plan_id, boundary


def agent_sandbox(cwd: Path, runtimes: Sequence[str]) -> Report:
    root = git.toplevel(cwd)
    cfg, plan_id, boundary = _boundary(root)
    roots = write_roots(boundary)
    plan_folder = artifacts_root.plan_folder(cfg.artifacts_dir, plan_id) if plan_id is not None and boundary else None
    lines = [
        f"write boundary: {', '.join(boundary) if boundary else 'none (no approved plan: nothing is writable)'}"
        + (f" (plan {plan_id})" if plan_id and boundary else "")
    ]
    writes: list[tuple[str, bytes]] = []
    for runtime in runtimes or tuple(FILES):
        rel = FILES[runtime]
        path = root / rel
        if runtime == "claude":
            current = _claude_current(root, rel)
            _refuse_unsafe(rel, current)
            path.parent.mkdir(parents=True, exist_ok=True)  # a mount point, with the file written in it
            doc = claude_settings(root, claude_denied(root, roots, cfg.artifacts_dir, plan_folder), current)
            writes.append((rel, json.dumps(doc, indent=2).encode() + b"\n"))
        else:
            if path.exists() and not path.read_bytes().startswith(CODEX_MARK.encode()):
                raise usage(
                    f"{rel} exists and was not written by `harness-gate agent-sandbox`",
                    "Move its settings to ~/.codex/config.toml, remove it, and run again (docs/agents.md).",
                )
            wide = codex_roots(root, roots, cfg.artifacts_dir)
            writes.append((rel, codex_config(wide, cfg.artifacts_dir, plan_folder).encode()))
    for rel, data in writes:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        fsutil.write_atomic(root / rel, data)
        lines.append(f"wrote the sandbox rules to {rel}")
        if rel == FILES["codex"]:
            lines.append("  (Codex applies it only in a project you trusted: its trust prompt, or `trust_level`)")
    _exclude(root, [rel for rel, _ in writes])
    lines.append("run it again after `approve` or an amendment; restart the agent to apply")
    if "claude" in (runtimes or FILES):
        lines.append(
            "a team relying on it: install the managed settings, which no project or user setting switches off "
            "(`harness-gate agent-sandbox --managed`, docs/agents.md)"
        )
    return Report("agent-sandbox", lines=tuple(lines))


def stale(root: Path) -> list[str]:
    """The sandbox rules files this command wrote that no longer say what it would write
    now (after `approve` or an amendment the boundary moved; a folder appeared): `status`
    names them, with `harness-gate agent-sandbox` as the fix. A file that cannot be read,
    or a tree too wide to list, counts as stale: its rules are not known to hold."""
    found = []
    claude, codex = root / FILES["claude"], root / FILES["codex"]
    mine_claude = claude.exists() and b'"sandbox"' in claude.read_bytes()[: 1 << 20]
    mine_codex = codex.exists() and codex.read_bytes().startswith(CODEX_MARK.encode())
    if not (mine_claude or mine_codex):
        return []
    try:
        cfg, plan_id, boundary = _boundary(root)
    except HarnessGateError:
        return [rel for rel, mine in ((FILES["claude"], mine_claude), (FILES["codex"], mine_codex)) if mine]
    roots = write_roots(boundary)
    plan_folder = artifacts_root.plan_folder(cfg.artifacts_dir, plan_id) if plan_id is not None and boundary else None
    if mine_claude:
        try:
            current = _claude_current(root, FILES["claude"])
            _refuse_unsafe(FILES["claude"], current)  # written in later (hooks off): stale too
            if claude_settings(root, claude_denied(root, roots, cfg.artifacts_dir, plan_folder), current) != current:
                found.append(FILES["claude"])
        except HarnessGateError:
            found.append(FILES["claude"])
    if mine_codex:
        try:
            wanted = codex_config(codex_roots(root, roots, cfg.artifacts_dir), cfg.artifacts_dir, plan_folder)
            if codex.read_bytes() != wanted.encode():
                found.append(FILES["codex"])
        except HarnessGateError:
            found.append(FILES["codex"])
    return found


def managed() -> str:
    """Claude Code's managed settings (the policy layer no project or user setting
    overrides): the agent hook, only managed hooks, the sandbox on."""
    command = hooks.agent_command("claude")
    entry = {"hooks": [{"type": "command", "command": command}]}
    doc = {
        "hooks": {
            "PreToolUse": [{"matcher": hooks.AGENT_MATCHER["claude"], **entry}],
            "Stop": [entry],
            "SubagentStop": [entry],
        },
        "allowManagedHooksOnly": True,
        "sandbox": {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False},
    }
    return json.dumps(doc, indent=2) + "\n"
