"""Protected paths: the names no wildcard reaches, their case variants, and the rules no
boundary can lift (control characters, case variants of protected paths)."""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence

from harness_gate import artifacts_root, links
from harness_gate import boundary as boundary_mod
from harness_gate.change import NO_MODE, Change
from harness_gate.config import CONFIG_FILE
from harness_gate.findings import Finding, Severity, finding
from harness_gate.rules.transition import SYMLINK, Transition, decode, show

CONTROL = links.CONTROL  # control characters in a path (HG103)
# Protected everywhere in the tree (by file name), at the root, or as a directory prefix.
PROTECTED_NAMES = (".gitattributes", ".gitignore")
PROTECTED_ROOT = (
    ".github",  # a file or symlink in place of the directory
    ".gitmodules",
    ".pre-commit-config.yaml",
    CONFIG_FILE,
    "CODEOWNERS",
    "action.yml",
    "action.yaml",
    ".pre-commit-hooks.yaml",
)
PROTECTED_PATHS = (".github/CODEOWNERS", "docs/CODEOWNERS")
# A coding agent's hook settings and the instruction files its runtime reads (docs/agents.md):
# an agent must not be able to switch off its own hook. The files at the root; the names
# anywhere (the runtimes read nested instruction files too); and everything in the
# runtimes' own directories at any depth (settings, hook scripts, subagents, commands: a
# runtime reads a nested `.claude/` or `.codex/` of the directory it starts in; `.agents/`
# holds the skills Codex reads as instructions).
AGENT_FILES = (".mcp.json",)
AGENT_NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md")
AGENT_DIRS = (".agents", ".claude", ".codex", ".gemini")
# Below them, the one subtree that holds records rather than settings: the harness runtime's
# evidence logs (docs/formats/runtime.md), which its format's rules judge.
AGENT_DATA = ".codex/harness/evidence/"
PROTECTED_DIRS = (".github/",)
APPEND_ONLY = artifacts_root.LOGS


def protected(path: str, config_source: str | None, artifacts_dir: str = "") -> str | None:  # noqa: PLR0911  (one return per case, in the order they are judged)
    """Why `path` is protected, or None. Compared exactly; see `case_variant`."""
    if path == artifacts_dir:
        return "the artifacts root must be a directory of artifacts"
    if path == artifacts_root.signers_file(artifacts_dir):
        return "allowed_signers anchors the trust in signed approvals and reviews"
    name = path.rsplit("/", 1)[-1]
    if name in PROTECTED_NAMES:
        return f"`{name}` files change how git treats paths"
    if path in AGENT_FILES or name in AGENT_NAMES or _agent_dir(path) is not None:
        return f"`{path}` configures a coding agent's runtime or its hooks"
    if path in PROTECTED_ROOT or path in PROTECTED_PATHS:
        return f"`{path}` configures the repository, its hooks or the gate"
    if path == "pyproject.toml":
        # Always: a pull request could add the gate's table to it, and be judged by it next.
        return "pyproject.toml can hold the gate's configuration (`[tool.harness-gate]`)"
    if path == config_source:
        return f"`{path}` holds the gate's configuration"
    if any(path.startswith(d) for d in PROTECTED_DIRS):
        return "`.github/` holds workflows and repository settings"
    return None


# Paths a wildcard may seem to reach and never allows (`protected`): probed at `plan new`
# so the author hears it when writing the boundary, not one commit later.
_PROBES = (
    *PROTECTED_ROOT,
    *PROTECTED_PATHS,
    *AGENT_FILES,
    *AGENT_NAMES,
    *PROTECTED_NAMES,
    "pyproject.toml",
    ".github/workflows/ci.yml",
    ".github/dependabot.yml",
    *(f"{d}/settings.json" for d in AGENT_DIRS),
)


def wildcard_reach(patterns: Sequence[str], config_source: str | None, artifacts_dir: str) -> list[Finding]:
    """Warnings for wildcard patterns that reach a protected path: a wildcard never allows
    one (only the exact path does), so the plan would be refused at the first such commit."""
    out: list[Finding] = []
    for pattern in patterns:
        if not boundary_mod.has_wildcard(pattern):
            continue
        one = boundary_mod.Boundary.compile([pattern])
        reached = [p for p in (*_PROBES, *((config_source,) if config_source else ())) if one.matches(p.encode())]
        if not reached:
            continue
        path = reached[0]
        why = protected(path, config_source, artifacts_dir) or "it is a protected path"
        out.append(
            finding(
                "HG102",
                path,
                f"--boundary {pattern!r} reaches `{path}`, which no wildcard allows ({why}); a commit there is "
                f"refused. Name it exactly if the plan must change it: --boundary {path}",
                severity=Severity.WARNING,
            )
        )
    return out


def _agent_dir(path: str) -> str | None:
    """The runtime's directory `path` lies in (or is: a file or link in place of it), unless
    it lies in the runtime's evidence logs (AGENT_DATA); a substring test first, it is cheap."""
    if not any(d in path for d in AGENT_DIRS):
        return None
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part in AGENT_DIRS and not "/".join(parts[i:]).startswith(AGENT_DATA):
            return part
    return None


_FOLDED_FILES = {p.casefold(): p for p in (*PROTECTED_ROOT, *PROTECTED_PATHS, *AGENT_FILES)}
_FOLDED_NAMES = {n.casefold(): n for n in (*PROTECTED_NAMES, *AGENT_NAMES)}


def case_variant(path: str, config_source: str | None, artifacts_dir: str) -> str | None:
    """The protected path (or artifacts root) that `path` spells differently, if any."""
    folded = path.casefold()
    root = artifacts_root.prefix(artifacts_dir)
    if folded.startswith(root.casefold()) and not path.startswith(root):
        return root
    # Cheap lookups first: most paths resemble no protected path at all.
    hit = _FOLDED_FILES.get(folded) or _FOLDED_NAMES.get(folded.rpartition("/")[2])
    if hit is None and folded == "pyproject.toml":
        hit = "pyproject.toml"
    if hit is None and config_source and folded == config_source.casefold():
        hit = config_source
    if hit is None:
        hit = next((d for d in PROTECTED_DIRS if folded.startswith(d)), None)
    if hit is None and (part := _agent_dir(folded)) is not None:  # AGENT_DIRS are lower case
        hit = part + "/"
    if hit is None and folded == artifacts_dir.casefold() and path != artifacts_dir:
        hit = artifacts_dir
    if hit is None or protected(path, config_source, artifacts_dir) is not None:
        return None  # unrelated, or the exact spelling (judged as protected elsewhere)
    return hit


def always_blocked(transition: Transition, suspects: set[bytes]) -> list[Finding]:
    """Rules no boundary can lift. They judge what the change leaves behind: removing a
    badly named file is how one fixes it."""
    cfg = transition.new.config
    out = []
    alive = [c.path for c in transition.changes if c.new_mode != NO_MODE]
    controls = _with_controls(alive)
    for path in alive:
        if path in controls and CONTROL.search(path):
            out.append(finding("HG103", show(path), "the path holds control characters"))
            continue
        if path not in suspects:
            continue
        variant = case_variant(decode(path), cfg.source, cfg.artifacts_dir)
        if variant is not None:
            out.append(finding("HG106", show(path), f"a case variant of the protected `{variant}`"))
    return out


def touches_links(changes: Sequence[Change]) -> bool:
    """Whether any change has a symlink on either side (then the escape rule runs)."""
    modes = {*map(_NEW_MODE, changes), *itertools.chain.from_iterable(map(_OLD_MODES, changes))}
    return SYMLINK in modes


_NEW_MODE = operator.attrgetter("new_mode")
_OLD_MODES = operator.attrgetter("old_modes")
# Bytes that can never start a control character (NUL joins paths and is in no path).
_NOT_CONTROL = bytes(b for b in range(256) if not (0 < b < 0x20 or b in {0x7F, 0xC2}))


_CONTROL_BATCH = 4096


def _with_controls(paths: Sequence[bytes]) -> set[bytes] | frozenset[bytes]:
    """The paths that may hold a control character: none, almost always, found by one
    pass over thousands of them at once instead of a regex search per path (joining holds a
    buffer descriptor of ~80 bytes per item: 100k paths at once would be 8 MB of them)."""
    batches = range(0, len(paths), _CONTROL_BATCH)
    if not any(b"\0".join(paths[i : i + _CONTROL_BATCH]).translate(None, _NOT_CONTROL) for i in batches):
        return frozenset()
    return {p for p in paths if p.translate(None, _NOT_CONTROL)}


@functools.cache
def _suspect_words(config_source: str | None, artifacts_dir: str) -> tuple[bytes, ...]:
    names = (*protected_names(config_source), artifacts_dir)
    return tuple(dict.fromkeys(n.casefold().rstrip("/").encode("utf-8", "surrogateescape") for n in names))


def protected_names(config_source: str | None) -> tuple[str, ...]:
    """Every name `protected` knows, the artifacts root aside (`.github/` a directory):
    what the bulk search looks for, and what makes the agent hook ask about a command."""
    return (
        *PROTECTED_NAMES,
        *PROTECTED_ROOT,
        *PROTECTED_PATHS,
        *PROTECTED_DIRS,
        *AGENT_FILES,
        *AGENT_NAMES,
        *(f"{d}/" for d in AGENT_DIRS),
        "pyproject.toml",
        *([config_source] if config_source else []),
    )


def suspects(paths: Sequence[bytes], config_source: str | None, artifacts_dir: str) -> set[bytes]:
    """The paths that can be protected, or a case variant of a protected path: those
    holding a protected name once lower-cased, and any that is not ASCII (case folding
    maps some non-ASCII letters to ASCII ones)."""
    found = boundary_mod.holding(paths, _suspect_words(config_source, artifacts_dir), lower=True)
    if not all(map(bytes.isascii, paths)):
        found.update(p for p in paths if not p.isascii())
    return found


def not_allowed(path: bytes, why: str) -> Finding:
    """A protected path a plan's boundary does not name exactly (HG102)."""
    return finding("HG102", show(path), f"protected: {why}")
