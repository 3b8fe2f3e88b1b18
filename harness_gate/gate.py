"""The gate's rules for one transition: a commit, or the index about to be committed.

`check_transition` gets the changed paths (from git plumbing), the new state and one old
state per parent (a `Transition`), and returns findings. PASS is decided by the caller from the
absence of blocking findings, after every state has been checked.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate import approvals as approvals_mod
from harness_gate import boundary as boundary_mod
from harness_gate import branches, formats, git, governance, lifecycle, links, plans
from harness_gate.artifacts_tree import ArtifactsTree, plans_in
from harness_gate.branches import BASE_ONLY, Origins
from harness_gate.config import CONFIG_FILE, Config
from harness_gate.findings import Finding, Severity, finding

SYMLINK = "120000"
GITLINK = "160000"
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
APPEND_ONLY = ("approvals.jsonl", "evidence.jsonl")


def decode(path: bytes) -> str:
    return path.decode("utf-8", "surrogateescape")


show = links.show


def protected(path: str, config_source: str | None, artifacts_dir: str = "") -> str | None:
    """Why `path` is protected, or None. Compared exactly; see `case_variant`."""
    if path == artifacts_dir:
        return "the artifacts root must be a directory of artifacts"
    if path == f"{artifacts_dir}/{boundary_mod.SIGNERS}":
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
    *PROTECTED_ROOT, *PROTECTED_PATHS, *AGENT_FILES, *AGENT_NAMES, *PROTECTED_NAMES, "pyproject.toml",
    ".github/workflows/ci.yml", ".github/dependabot.yml",
    *(f"{d}/settings.json" for d in AGENT_DIRS),
)  # fmt: skip


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
        out.append(finding(
            "HG102", path,
            f"--boundary {pattern!r} reaches `{path}`, which no wildcard allows ({why}); a commit there is "
            f"refused. Name it exactly if the plan must change it: --boundary {path}",
            severity=Severity.WARNING,
        ))  # fmt: skip
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
    root = artifacts_dir + "/"
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


@dataclass(frozen=True)
class Transition:
    """One state change to judge: from each parent state to a new one (a commit, the index
    or the work tree)."""

    label: str  # "index" or "commit <oid>", prefixed to messages in ranges
    rev: str | None  # the commit, or None for the index
    changes: Sequence[git.Change]
    new: ArtifactsTree
    load_olds: Callable[[], Sequence[ArtifactsTree]]  # read only when the artifacts root changed
    merge: bool = False  # more than one parent: each side's files meet here for the first time
    first_parent: str | None = None  # with merge: the first parent (HEAD for the index)
    parent: str | None = None  # the state the change starts from (its first parent; HEAD for the index)
    # Where its plans came from (which of them may govern it), and the local selection
    # (`plan use`, the index only): asked only when code changed.
    load_origins: Callable[[], Origins] = lambda: BASE_ONLY
    load_selected: Callable[[], str | None] = lambda: None

    @functools.cached_property
    def olds(self) -> Sequence[ArtifactsTree]:
        """One state per parent; the empty state for a first commit."""
        return self.load_olds()

    @functools.cached_property
    def origins(self) -> Origins:
        return self.load_origins()

    @functools.cached_property
    def selected(self) -> str | None:
        return self.load_selected()

    @functools.cached_property
    def symlinks(self) -> tuple[dict[bytes, bytes], dict[bytes, links.Resolution]]:
        """Every symlink of the new state (path -> target) and where each leads. Read once
        per state: the escape rule and each plan tried for the change ask for them."""
        return _links_of(self.new.root, self.rev)

    @functools.cached_property
    def moved_links(self) -> list[bytes]:
        """The links whose end this change moves without touching them: adding `src/y -> .`
        turns an old `src/x -> y/../.github/workflows/ci.yml` from a link inside `src` into
        a door to a workflow. Asked only when the change touches a symlink."""
        ends = self.symlinks[1]
        if self.parent is None:
            return list(ends)
        _, before = _links_of(self.new.root, self.parent)
        return [
            path for path, end in ends.items()
            if not isinstance(end, links.Ends)
            or not isinstance(old := before.get(path), links.Ends)
            or end.at.path() != old.at.path()
        ]  # fmt: skip


def _root_prefix(artifacts_dir: str) -> bytes:
    """What paths inside the artifacts root start with: governed by artifact rules, not
    by a plan's boundary."""
    return artifacts_dir.encode("utf-8", "surrogateescape") + b"/"


def signers_path(artifacts_dir: str) -> bytes:
    return _root_prefix(artifacts_dir) + boundary_mod.SIGNERS.encode()


def _artifact(path: bytes, prefix: bytes, signers: bytes) -> bool:
    """Governed by the artifact rules: under the artifacts root, except the trust anchor,
    which a plan must name like any protected path."""
    return path.startswith(prefix) and path != signers


def _split(changes: Sequence[git.Change], artifacts_dir: str) -> tuple[list[git.Change], list[git.Change]]:
    """(the changes the artifact rules judge, the changes a plan's authority judges)."""
    prefix, signers = _root_prefix(artifacts_dir), signers_path(artifacts_dir)
    root_changes: list[git.Change] = []
    code_changes: list[git.Change] = []
    for c in changes:
        (root_changes if _artifact(c.path, prefix, signers) else code_changes).append(c)
    return root_changes, code_changes


def touches_code(changes: Sequence[git.Change], artifacts_dir: str) -> bool:
    """Whether any change lies outside the artifacts root (`_split`'s test, stopping at the
    first such change: the hook asks this of every commit)."""
    prefix, signers = _root_prefix(artifacts_dir), signers_path(artifacts_dir)
    return not all(_artifact(c.path, prefix, signers) for c in changes)


def check_transition(
    state: Transition, plan_id: str | None, *, prefix: str = "", used: set[str] | None = None
) -> list[Finding]:
    """Findings for one state change; `used` collects the plans that authorised code."""
    new = state.new
    cfg = new.config
    out: list[Finding] = []
    # The only paths that can be protected (or a variant of a protected one), found once.
    suspects = _suspects([c.path for c in state.changes], cfg.source, cfg.artifacts_dir)
    out.extend(_always_blocked(state, suspects))
    root_changes, code_changes = _split(state.changes, cfg.artifacts_dir)
    signers = signers_path(cfg.artifacts_dir)
    out.extend(_artifact_rules(state, root_changes))
    if code_changes:
        out.extend(_authority(state, code_changes, plan_id, used, suspects))
        # The trust anchor is judged by a plan like a protected path, and is still an
        # artifact: a regular, non-executable file like every other under the root.
        out.extend(
            finding("HG516", show(c.path), "only a regular, non-executable file can be the allowed signers")
            for c in code_changes
            if c.path == signers and c.new_mode not in ("100644", git.NO_MODE)
        )
    if code_changes or state.merge:
        out.extend(_formats(state, code_changes))
    if prefix:
        out = [Finding(f.code, f.path, f.line, f"{prefix}{f.message}", f.hint, f.severity) for f in out]
    return out


def judge_writes(state: Transition) -> list[Finding]:
    """The rules a write is judged by before it happens (the agent hook, docs/agents.md):
    control characters, case variants, protected paths, and the authority of the plan that
    governs the state (its boundary), exactly as `check_transition` judges them. The artifacts
    root, formats and links are the caller's: nothing is written yet."""
    cfg = state.new.config
    suspects = _suspects([c.path for c in state.changes], cfg.source, cfg.artifacts_dir)
    out = _always_blocked(state, suspects)
    code_changes = _split(state.changes, cfg.artifacts_dir)[1]
    if code_changes:
        out.extend(_authority(state, code_changes, None, None, suspects))
    return out


def judge_artifacts(state: Transition) -> list[Finding]:
    """The artifact rules for the state's changes under the artifacts root, as
    `check_transition` judges them: what the agent hook reports of the work tree at Stop."""
    return _artifact_rules(state, _split(state.changes, state.new.config.artifacts_dir)[0])


def _formats(state: Transition, changes: Sequence[git.Change]) -> list[Finding]:
    """Files of the other harness formats (docs/formats.md) this change touches: valid in
    the new state, and each move allowed (docs/formats.md)."""
    new = state.new
    root = new.root
    match = formats.matcher(new.config)
    files = formats.Files(root, state.rev)
    merged: list[Finding] = []
    if state.merge and state.first_parent is not None:
        # A merge's own changes leave out files that come unchanged from one side, but
        # both sides meet here: a file the other side changed moves, for the first-parent
        # line, from its bytes there (a frozen spec edited on one side, the loop started on
        # the other), and a rule spanning files (a passed state from one side, a failing
        # newer verdict from the other) is judged on the whole result.
        if state.rev is None:
            changes = git.staged_changes(root, state.first_parent)
        else:
            changes = git.tree_changes(root, state.first_parent, state.rev)
    maybe = match.candidates([c.path for c in changes])
    mine = [c for c in changes if c.path in maybe and match.which(c.path) is not None]
    if state.merge and state.first_parent is not None:
        # The changed files are linted with their moves below; the rest here, once.
        skip = {c.path.decode("utf-8", "surrogateescape") for c in mine}
        merged = _formats_whole(state, files, match, state.first_parent, skip)
    if not mine:
        return merged
    # The first parent's bytes: what the change moved the file from.
    olds = {c.old_oids[0] for c in mine if not c.added and c.old_modes[0].startswith("100")}
    before = git.read_blobs(root, sorted(olds))

    def old(change: git.Change) -> bytes | None:
        return before.get(change.old_oids[0]) if change.old_modes[0].startswith("100") else None

    @functools.cache
    def fingerprint() -> str:
        from harness_gate import fingerprints  # noqa: PLC0415  (only when a format asks)

        return fingerprints.of(root, new.config, state.rev)

    lookup = formats.evidence_lookup(new.files, fingerprint)
    found = formats.check_changes(new.config, mine, files, old, lookup)
    return list(dict.fromkeys([*merged, *found]))


def _formats_whole(
    state: Transition, files: formats.Files, match: formats.Matcher, first_parent: str, skip: set[str]
) -> list[Finding]:
    """Every format file of a merge's result, less what the first parent already held:
    a problem older than the merge is not the merge's (and was judged where it arose)."""
    cfg = state.new.config
    after = formats.lint_files(files, cfg, [(n, p) for n, p in formats.matched(files, match) if p not in skip])
    if not after:
        return []
    parent = formats.Files(state.new.root, first_parent)
    before = {(f.code, f.path) for f in formats.lint_files(parent, cfg, formats.matched(parent, match))}
    return [f for f in after if (f.code, f.path) not in before]


def _always_blocked(state: Transition, suspects: set[bytes]) -> list[Finding]:
    """Rules no boundary can lift. They judge what the change leaves behind: removing a
    badly named file is how one fixes it."""
    cfg = state.new.config
    out = []
    alive = [c.path for c in state.changes if c.new_mode != git.NO_MODE]
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
    modes = {*map(_NEW_MODE, state.changes), *itertools.chain.from_iterable(map(_OLD_MODES, state.changes))}
    if SYMLINK in modes:
        out.extend(_escaping_links(state))
    return out


_NEW_MODE = operator.attrgetter("new_mode")
_OLD_MODES = operator.attrgetter("old_modes")
# Bytes that can never start a control character (NUL joins paths and is in no path).
_NOT_CONTROL = bytes(b for b in range(256) if not (0 < b < 0x20 or b in {0x7F, 0xC2}))


def _with_controls(paths: Sequence[bytes]) -> set[bytes] | frozenset[bytes]:
    """The paths that may hold a control character: none, almost always, found by one
    pass over all of them at once instead of a regex search per path."""
    if not b"\0".join(paths).translate(None, _NOT_CONTROL):
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
        *PROTECTED_NAMES, *PROTECTED_ROOT, *PROTECTED_PATHS, *PROTECTED_DIRS, *AGENT_FILES, *AGENT_NAMES,
        *(f"{d}/" for d in AGENT_DIRS),
        "pyproject.toml", *([config_source] if config_source else []),
    )  # fmt: skip


def _suspects(paths: Sequence[bytes], config_source: str | None, artifacts_dir: str) -> set[bytes]:
    """The paths that can be protected, or a case variant of a protected path: those
    holding a protected name once lower-cased, and any that is not ASCII (case folding
    maps some non-ASCII letters to ASCII ones)."""
    found = boundary_mod.holding(paths, _suspect_words(config_source, artifacts_dir), lower=True)
    if not all(map(bytes.isascii, paths)):
        found.update(p for p in paths if not p.isascii())
    return found


def _escaping_links(state: Transition) -> list[Finding]:
    """Resolve every symlink of the new state through the others: a link is judged by
    where it really leads (`up -> ..` then `esc -> up/..` leaves the repository)."""
    targets, ends = state.symlinks
    out = []
    for path in sorted(targets):
        end = ends[path]
        if isinstance(end, links.Stop):
            out.append(finding("HG104", show(path), links.stop_message(path, targets[path], end)))
    return out


def _links_of(root: Path, rev: str | None) -> tuple[dict[bytes, bytes], dict[bytes, links.Resolution]]:
    found = git.symlinks(root, rev)
    blobs = git.read_blobs(root, list(found.values()))
    targets = {path: blobs[oid] for path, oid in found.items()}
    return targets, links.resolve(targets)


def _links_leaving(
    state: Transition, changes: Sequence[git.Change], plan_id: str, allowed: boundary_mod.Boundary, refused: set[str]
) -> list[Finding]:
    """The links this change adds or changes that lead out of the plan's boundary.

    A checkout turns a link into a door: what is written through `src/wf` lands where it
    leads, `.github/workflows/ci.yml`. A link the plan's boundary allows may lead only
    where the boundary allows writes. Old links that still lead where they led are not
    judged again (they were judged under the plan of their own change), nor links already
    refused by their own path, nor links that do not resolve (the escape rule reports
    those). An old link this change redirects (through a link it adds, changes or
    removes) is judged as if it were added here."""
    touched = {c.path for c in changes if SYMLINK in (c.new_mode, *c.old_modes)}
    if not touched:
        return []
    _, ends = state.symlinks
    mine = {c.path for c in changes if c.new_mode == SYMLINK} | set(state.moved_links)
    mine = {p for p in mine if p in ends and show(p) not in refused}
    out = []
    for path in sorted(mine):
        end = ends.get(path)
        if not isinstance(end, links.Ends):
            continue
        where = end.at.path()
        why = _lands_outside(state, where, allowed, plan_id)
        if why is not None:
            lands = f"`{show(where)}`" if where else "the repository root"
            out.append(finding("HG104", show(path), f"`{show(path)}` leads to {lands}: {why}"))
    return out


def _lands_outside(state: Transition, where: bytes, allowed: boundary_mod.Boundary, plan_id: str) -> str | None:
    """Why writes through a link to `where` would land outside the boundary, or None.
    A file must be allowed itself; a directory, every path below it."""
    cfg = state.new.config
    outside = f"outside the write boundary of `{plan_id}`"
    if not where:
        return f"every path of the repository, {outside}"
    text = decode(where)
    why = protected(text, cfg.source, cfg.artifacts_dir)
    if why is not None:
        # As for HG102: only the exact path allows it, and only as a file (what lies
        # below a protected directory needs its own exact names).
        if text in allowed.exact and not _is_directory(state, text):
            return None
        return f"protected ({why}); only an exact, wildcard-free pattern allows it"
    variant = case_variant(text, cfg.source, cfg.artifacts_dir)
    if variant is not None:
        return f"a case variant of the protected `{variant}`"
    if where.startswith(_root_prefix(cfg.artifacts_dir)):
        return f"inside the artifacts root `{cfg.artifacts_dir}/`, which no write boundary opens"
    itself = allowed.matches(where)
    below = _covers_below(where, allowed.patterns)
    if itself == below:
        return None if itself else outside
    if _is_directory(state, text):
        return None if below else f"a directory the write boundary of `{plan_id}` allows only in part"
    return None if itself else outside


def _covers_below(path: bytes, patterns: Sequence[str]) -> bool:
    """Whether the boundary allows every path below `path`: a wildcard-free pattern
    naming it or a directory above it (git covers what is below a literal match), as
    `DIR`, `DIR/` or `DIR/**`."""
    for pattern in patterns:
        raw = pattern.encode("utf-8", "surrogateescape")
        base = raw[:-3] if raw.endswith(b"/**") else raw.rstrip(b"/")
        if base and not boundary_mod.has_wildcard(decode(base)) and (path == base or path.startswith(base + b"/")):
            return True
    return False


def _is_directory(state: Transition, path: str) -> bool:
    """Whether the new state holds files below `path` (asked only when it decides)."""
    root = state.new.root
    if state.rev is None:
        return bool(git.index_entries(root, f"{path}/"))
    return bool(git.tree_entries(root, state.rev, f"{path}/", recursive=False))


def _artifact_rules(state: Transition, changes: Sequence[git.Change]) -> list[Finding]:
    """Inside the artifacts root no plan is needed, but approved artifacts never change
    and the logs only grow; every artifact touched must be valid in the new state."""
    out: list[Finding] = []
    if not changes:
        return out
    from harness_gate import evidence  # noqa: PLC0415  (only when the artifacts root changed)

    new = state.new
    folders: set[str] = set()
    others = False
    base = new.artifacts_dir + "/plans/"
    merge = len(state.olds) > 1  # the parents' states: read only when the artifacts root changed
    for c in changes:
        path = decode(c.path)
        rel = path[len(base) :] if path.startswith(base) else None
        parts = rel.split("/") if rel is not None else []
        if len(parts) == 2:
            folders.add(parts[0])
            name = parts[1]
            after = new.files.get(path)
            known = False
            for old in state.olds:
                before = old.files.get(path)
                if before is None:
                    continue
                known = True
                if name in APPEND_ONLY:
                    if after is None or not grows(before, after, merge=merge):
                        out.append(finding("HG211", path, f"{name} lost or changed lines (it may only grow)"))
                    elif name == "evidence.jsonl" and not merge:
                        # Only the appended records are new: validating them alone keeps a
                        # long log cheap, and every record was validated when it arrived.
                        out.extend(evidence.validate(path, after[len(before) :], first_line=before.count(b"\n") + 1))
                    continue
                if after == before:
                    continue
                what = "deleted" if after is None else "modified"
                if was_approved(old, parts[0], name, before):
                    out.append(finding("HG210", path, f"this artifact was approved and is {what} here"))
                elif plans.NUMBERED.match(name) and not amendable(name):
                    # Reviews, repairs, pauses and completions are records of what happened:
                    # deleting a completion or a pause would hand authority back.
                    out.append(finding("HG212", path, f"a committed lifecycle record is {what} here"))
            if not known and after is not None and name == "evidence.jsonl":
                out.extend(evidence.validate(path, after))
            elif merge and after is not None and name == "evidence.jsonl":
                out.extend(_validate_merged(path, after, [o.files.get(path, b"") for o in state.olds]))
        else:
            others = True
    for plan_id in sorted(folders):
        if plans.PLAN_ID.match(plan_id) and any(p.startswith(f"{base}{plan_id}/") for p in new.files):
            folder = plans.load(new, plan_id)
            out.extend(folder.findings)
            out.extend(lifecycle.replay(folder).findings)
    if others or folders:
        # Unknown files, symlinks, bad plan ids: only those this change touches.
        out.extend(f for f in plans.root_findings(new) if _touched(f.path, changes))
    return out


def _touched(path: str, changes: Sequence[git.Change]) -> bool:
    return any(decode(c.path) == path for c in changes)


def _validate_merged(path: str, after: bytes, befores: Sequence[bytes]) -> list[Finding]:
    """A merge's log: the lines no parent had are new, and validated like any append."""
    from collections import Counter  # noqa: PLC0415

    from harness_gate import evidence  # noqa: PLC0415

    known: Counter[bytes] = Counter()
    for before in befores:
        counts = Counter(before.splitlines(keepends=True))
        known |= counts  # a line both parents have counts once per copy either had
    fresh = Counter(after.splitlines(keepends=True)) - known
    return evidence.validate(path, b"".join(line for line in fresh.elements()))


def grows(before: bytes, after: bytes, *, merge: bool) -> bool:
    if not merge:
        return after.startswith(before) and (before == b"" or before.endswith(b"\n"))
    # A union merge interleaves both sides' appends: every old line must survive, in order.
    it = iter(after.splitlines(keepends=True))
    return all(any(line == x for x in it) for line in before.splitlines(keepends=True))


def amendable(name: str) -> bool:
    """A numbered artifact that takes an approval (amendment, resume) may still be edited
    until it is approved."""
    kind = plans.kind_of_file(name)
    return kind is not None and kind.slug != "plan" and bool(kind.approval_gate)


def was_approved(old: ArtifactsTree, plan_id: str, name: str, before: bytes) -> bool:
    kind = plans.kind_of_file(name)
    approval_gate = kind.approval_gate if kind is not None else ""
    if not approval_gate:
        return False
    log = old.files.get(f"{old.artifacts_dir}/plans/{plan_id}/approvals.jsonl")
    if log is None:
        return False
    records, _ = approvals_mod.parse("approvals.jsonl", log)
    from harness_gate.artifacts.artifact import sha256_hex  # noqa: PLC0415

    return approvals_mod.status(records, approval_gate, name, sha256_hex(before)) is approvals_mod.Status.APPROVED


def _authority(
    state: Transition, changes: Sequence[git.Change], plan_id: str | None, used: set[str] | None, suspects: set[bytes]
) -> list[Finding]:
    """The change needs one plan that allows all of it: `--plan`, or the first of the
    state's candidates (governance.candidates) that does. Plans are never combined."""
    new = state.new
    sample = ", ".join(show(c.path) for c in changes[:3]) + (" ..." if len(changes) > 3 else "")
    if plan_id is not None:
        tried: tuple[str, ...] = (plan_id,)
        whole: frozenset[str] = frozenset()
    else:
        ending = frozenset(p for p in _ending(state.changes, new.artifacts_dir) if _granted_before(state, p))
        found = governance.candidates(new, state.origins, ending=ending)
        if len(found.ids) > 1:
            found = governance.narrow(found, state.selected)
        tried, whole = found.ids, found.whole_life
        if not tried and state.merge:
            tried = _completed_on_first_side(state)
    if not tried:
        code, path, why = governance.no_candidate(new, state.origins)
        return [finding(code, path, f"{len(changes)} changed path(s) need an approved, open plan ({sample}): {why}")]
    first: list[Finding] | None = None
    for candidate in tried:
        found_here = _under_plan(state, changes, candidate, suspects, whole_life=candidate in whole)
        if not any(f.blocks for f in found_here):
            if used is not None:
                used.add(candidate)
            return found_here
        if first is None:
            first = found_here
    # Only a squash holds several plans' whole lives: ending plans in an ordinary commit never
    # combines their boundaries.
    lives = sorted(whole & state.origins.added)
    if len(lives) > 1 and _each_path_in_one_life(state, changes, lives, suspects):
        if used is not None:
            used.update(lives)
        return []
    if used is not None:
        used.add(tried[0])
    assert first is not None  # noqa: S101  (tried is not empty)
    if len(tried) > 1:
        others = ", ".join(f"`{p}`" for p in tried[1:])
        first = [dataclasses.replace(f, message=f"{f.message} (nor does {others} allow the whole change)")
                 if f.blocks else f for f in first]  # fmt: skip
    return first


def _completed_on_first_side(state: Transition) -> tuple[str, ...]:
    """For a merge that no open plan governs: the completed plans that the first parent
    (the branch merging) holds and no other parent does, by the commit graph alone. Its
    own change (a conflict's resolution) is that branch's work (`_under_plan`); a plan
    both sides hold (the base's history) is never one of them."""
    olds = state.olds
    others: set[str] = set()
    for other in olds[1:]:
        others |= set(plans.plan_ids(other))
    here = governance.present(state.new)
    first = set(plans.plan_ids(olds[0])) - others - state.origins.foreign
    return tuple(i for i in sorted(first & here) if governance.holds_completion(state.new, i))


def _granted_before(state: Transition, plan_id: str) -> bool:
    """Whether the plan granted writes in the state this change starts from (the first
    parent): ending a plan in the commit that holds its last work is allowed, regaining
    the authority of a paused plan by cancelling it with new code is not."""
    before = state.olds[0]
    return plan_id in plans.plan_ids(before) and lifecycle.replay(plans.load(before, plan_id)).grants_writes


def _ending(changes: Sequence[git.Change], artifacts_dir: str) -> frozenset[str]:
    """The plans whose Completion this very change adds: it holds their end."""
    prefix = _root_prefix(artifacts_dir) + b"plans/"
    ending = set()
    for c in changes:
        if c.path.startswith(prefix) and c.path.endswith(b"-completion.md") and c.added:
            plan_id, _, name = decode(c.path[len(prefix) :]).partition("/")
            if plans.NUMBERED.match(name):
                ending.add(plan_id)
    return frozenset(ending)


def _each_path_in_one_life(
    state: Transition, changes: Sequence[git.Change], plan_ids: Sequence[str], suspects: set[bytes]
) -> bool:
    """A squash of a branch that worked under several plans holds each plan's whole life,
    and no longer says which commit each path came from: each path must be allowed by one
    of those plans (each approved, ended and valid), as each commit of the branch was."""
    changed = {show(c.path) for c in changes}
    refused: list[set[str]] = []
    for plan_id in plan_ids:
        found = [f for f in _under_plan(state, changes, plan_id, suspects, whole_life=True) if f.blocks]
        if any(f.path not in changed for f in found):
            return False  # a plan that grants nothing at all (unapproved, invalid) spoils the squash
        refused.append({f.path for f in found})
    return not set.intersection(*refused)


# A merge's own change outside the boundary (docs/workflows.md, "A conflicted merge of the
# base"): keep the base's side of the path, commit the merge; for a change the resolution
# truly needs there, a plan that allows it.
MERGE_OUTSIDE = (
    "A merge may change only what its plan allows beyond git's own merge: keep the base's side, "
    "`git checkout MERGE_HEAD -- PATH` (in CI: redo the merge so), then `git commit --no-edit`; "
    "or, if the resolution needs the change, `harness-gate plan new` for it (docs/workflows.md)."
)


def _under_plan(
    state: Transition, changes: Sequence[git.Change], plan_id: str, suspects: set[bytes], *, whole_life: bool
) -> list[Finding]:
    """Findings for the change judged under one plan."""
    new = state.new
    cfg = new.config
    folder = plans.load(new, plan_id)
    life = lifecycle.replay(folder)
    out = [*folder.findings, *life.findings]
    plan_path = f"{folder.path}/plan.md"
    if folder.plan is None or life.policy is None:
        if not out:
            out.append(finding("HG201", plan_path, f"plan `{plan_id}` does not exist"))
        return out
    # A plan's whole life in one commit (a squash merge) is judged by its final policy. A
    # merge's own change (a conflict's resolution: what differs from every parent) on a
    # branch whose plan completed is that branch's work: its final boundary holds it, and
    # CI asks for fresh evidence and a re-review of the changed change (docs/workflows.md).
    settled = life.plan_approval is approvals_mod.Status.APPROVED and not any(f.blocks for f in life.findings)
    grants = life.grants_writes or (
        settled
        and (
            (whole_life and life.state in lifecycle.ENDED)
            or (state.merge and life.state is lifecycle.PlanState.COMPLETED)
        )
    )
    if not grants:
        if life.plan_approval is approvals_mod.Status.UNAPPROVED:
            out.append(finding("HG202", plan_path, f"plan `{plan_id}` is not approved; {len(changes)} path(s) changed"))
        elif life.state in lifecycle.NO_AUTHORITY and life.state is not lifecycle.PlanState.PLANNING:
            out.append(
                finding("HG209", plan_path, f"plan `{plan_id}` is {life.state.value}; {len(changes)} path(s) changed")
            )
        if not out:
            out.append(finding("HG209", plan_path, f"plan `{plan_id}` grants no write authority now"))
        return out
    patterns = life.policy.boundary
    allowed = boundary_mod.Boundary.cached(patterns)  # compiled once per pattern list (ranges)
    exact = allowed.exact
    shown = ", ".join(f"`{p}`" for p in patterns[:5]) + (" ..." if len(patterns) > 5 else "") or "None"
    # Only suspects can be protected: every other path is judged by the boundary alone.
    for c in changes:
        why = protected(decode(c.path), cfg.source, cfg.artifacts_dir) if c.path in suspects else None
        if why is not None:
            if decode(c.path) not in exact:
                out.append(finding("HG102", show(c.path), f"protected: {why}"))
            continue
        if c.new_mode == GITLINK and not all(m == GITLINK for m in c.old_modes):
            if decode(c.path) not in exact:
                out.append(finding("HG105", show(c.path), "a new submodule must be named exactly in the boundary"))
            continue
        if not allowed.matches(c.path):
            what = {"A": "added", "D": "deleted"}.get(c.status[:1], "changed")
            path = show(c.path)
            # A non-ASCII path can look the same as a pattern and differ (NFD against NFC):
            # both shown as code points, so the difference can be seen.
            differs = (
                f"; as code points, the path `{code_points(path)}`, the boundary "
                + ", ".join(f"`{code_points(p)}`" for p in patterns[:5])
                if not path.isascii()
                else ""
            )
            out.append(finding(
                "HG101", path, f"{what} outside the write boundary of `{plan_id}` (allowed: {shown}{differs})",
                hint=MERGE_OUTSIDE if state.merge else None,
            ))  # fmt: skip
    out.extend(_links_leaving(state, changes, plan_id, allowed, {f.path for f in out}))
    return out


def code_points(text: str) -> str:
    """`text` with every non-ASCII character written `\\uXXXX` (`\\UXXXXXXXX` past the BMP)."""
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in text)


def active(cfg: Config, *states: ArtifactsTree) -> bool:
    """The trusted side decides whether the gate is on (config from the base, docs/threat-model.md):
    the commit that adopts harness-gate is not judged by rules it introduces, and a
    change that deletes the gate's files is judged by the rules it deletes."""
    return cfg.source is not None or any(s.active for s in states)


def active_at(root: Path, head: str, cfg: Config) -> bool:
    """Whether the gate is on for a change of the index: HEAD, the trusted side, has a
    configuration or an artifacts root (the agent hook asks the same)."""
    return cfg.source is not None or git.has_path(root, head, cfg.artifacts_dir)


def added_plans(changes: Sequence[git.Change]) -> list[bytes]:
    """The added `plan.md` files among the changes (the name first: it is the cheap test)."""
    return [c.path for c in changes if c.path.endswith(b"/plan.md") and c.added]


def index_origins(
    root: Path, cfg: Config, parents: Sequence[str], new: ArtifactsTree, staged: Callable[[], Sequence[git.Change]]
) -> Origins:
    """Where the index's plans came from (`check --staged` and the agent hook alike). Without
    a merge, the diff against HEAD (`staged`, read only then) says which plans this commit
    starts; a merge's plans come by the commit graph alone."""
    added = None
    if len(parents) == 1:
        paths = map(decode, added_plans(staged()))
        added = frozenset(plans_in(paths, cfg.artifacts_dir))
    return branches.locally(root, cfg, parents, frozenset(governance.present(new)), added=added)


def _explain_artifact(rel: str, cfg: Config, trusted: ArtifactsTree) -> tuple[str, str]:
    """The artifact rules, as the gate applies them to a change of `rel`."""
    parts = rel[len(cfg.artifacts_dir) + 1 :].split("/")
    committed = rel in trusted.files
    if len(parts) == 3 and parts[0] == "plans" and committed:
        name = parts[2]
        if name in APPEND_ONLY:
            return "allowed", "an append-only log: lines may be added, never changed or removed (HG211)"
        if was_approved(trusted, parts[1], name, trusted.files[rel]):
            return "blocked", "HG210: an approved artifact never changes; write a Plan Amendment"
        if plans.NUMBERED.match(name) and not amendable(name):
            return "blocked", "HG212: a committed lifecycle record never changes"
    return "allowed", "inside the artifacts root: no plan needed, but it must be a valid artifact"


def explain(
    rel: str,
    cfg: Config,
    allowed: boundary_mod.Boundary | None,
    exact: frozenset[str],
    life: lifecycle.Lifecycle | None,
    *,
    trusted: ArtifactsTree,
) -> tuple[str, str]:
    """Whether a change of `rel` is allowed or blocked, and by which rule or pattern (`explain`)."""
    raw = rel.encode("utf-8", "surrogateescape")
    if CONTROL.search(raw):
        return "blocked", "HG103: control characters are never allowed"
    variant = case_variant(rel, cfg.source, cfg.artifacts_dir)
    if variant:
        return "blocked", f"HG106: a case variant of the protected `{variant}`"
    if rel.startswith(cfg.artifacts_dir + "/") and raw != signers_path(cfg.artifacts_dir):
        return _explain_artifact(rel, cfg, trusted)
    if life is None or allowed is None or not life.grants_writes:
        state = life.state.value if life else "no open plan"
        return "blocked", f"no write authority ({state})"
    why = protected(rel, cfg.source, cfg.artifacts_dir)
    if why is not None:
        if rel in exact:
            return "allowed", f"protected ({why}), listed exactly in the boundary"
        return "blocked", f"HG102: protected ({why}); only an exact, wildcard-free pattern allows it"
    pattern = allowed.which(raw)
    if pattern is None:
        return "blocked", "HG101: outside the write boundary"
    return "allowed", f"by pattern `{pattern}`"
