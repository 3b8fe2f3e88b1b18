"""Other harness formats (docs/formats.md): found by path, validated, and gated.

Each format is a module of this package exposing `FORMAT`, a `Format`. A format
file is found by its path (boundary-dialect patterns: git's `:(glob)`, the one glob
dialect), validated on its own bytes (`lint`), and judged as a change (`gate`:
what a move from the old bytes to the new ones needs, such as evidence for a task
marked completed). Modules are imported only when a file of theirs is in play, so
a repository without such files pays nothing on the hook's path.

Configuration (docs/formats.md): `[formats.<name>]` with `enabled` and `paths`.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness_gate import artifacts_root, boundary, fsutil, git
from harness_gate.config import Config
from harness_gate.findings import Finding, finding


@dataclass(frozen=True)
class RegisteredFormat:
    module: str
    # Default patterns (boundary dialect) that find the format's files. They live here,
    # not in the module, so that matching a change never imports a format's code.
    paths: tuple[str, ...]


# name -> entry, in the order docs/formats.md lists them. The names are the config keys (`[formats.<name>]`).
REGISTRY: Mapping[str, RegisteredFormat] = {
    # tasks: harness-tasks.json, harness-progress.txt, and the task file's .bak/.tmp leftovers
    "tasks": RegisteredFormat(
        "harness_gate.formats.tasks",
        ("**/harness-tasks.json", "**/harness-progress.txt", "**/harness-tasks.json.bak", "**/harness-tasks.json.tmp"),
    ),
    # runtime: evidence events (~/.codex/harness/evidence), agent-team plans and requirements
    # artifacts (named after the runtime's validators), the state log's checkpoints (docs/harness-state.md)
    "runtime": RegisteredFormat(
        "harness_gate.formats.runtime",
        (
            "**/.codex/harness/evidence/**/*.jsonl",
            "**/harness-agent-team.json",
            "**/*.harness-agent-team.json",
            "**/harness-requirements.md",
            "**/*.harness-requirements.md",
            "**/docs/harness-state.md",
        ),
    ),
    # loop: the planner/generator/evaluator loop's `.harness/` state - only the files it
    # writes by name (other tools keep a `.harness/` directory too, e.g. Harness CI pipelines)
    "loop": RegisteredFormat(
        "harness_gate.formats.loop",
        (
            "**/.harness/state.json",
            "**/.harness/spec.md",
            "**/.harness/brief.md",
            "**/.harness/run.log",
            "**/.harness/iterations/**",  # any file of an iteration re-judges a `passed` state (HG643)
        ),
    ),
    # harness2: Harness² trees: the adopted tree, the library's lessons, and run state
    # (which must not be committed) under the plugin's data directory `.dsh-harness2/`
    "harness2": RegisteredFormat(
        "harness_gate.formats.harness2",
        ("**/.dsh-harness2/harness/**", "**/.dsh-harness2/library/**/EXPERIENCE.md", "**/.dsh-harness2/runs/**"),
    ),
}
MAX_BYTES = 16 * 1024 * 1024  # a format file larger than this is not read (HG690)


class Files:
    """The files of one state — the work tree, the index or a commit — read on demand."""

    def __init__(self, root: Path, rev: str | None, *, worktree: bool = False) -> None:
        self.root = root
        self.rev = rev  # a commit; None with worktree=False: the index
        self.worktree = worktree
        self._listing: dict[str, str] | None = None  # path -> blob id (index, commit)
        self._data: dict[str, bytes | None] = {}

    @classmethod
    def of(cls, files: Mapping[str, bytes]) -> Files:
        """A state's regular files given as bytes: no git and no work tree behind them (the
        rules' own tests judge transitions built in memory)."""
        made = cls(Path(), None)
        made._listing = dict.fromkeys(files, "")
        made._data = dict(files)
        return made

    def _entries(self) -> dict[str, str]:
        if self._listing is None:
            if self.worktree:
                self._listing = dict.fromkeys(git.listed_files(self.root), "")
            else:
                blobs = git.tree_entries(self.root, self.rev) if self.rev is not None else git.index_entries(self.root)
                self._listing = {b.path: b.oid for b in blobs if b.mode.startswith("100")}
        return self._listing

    def paths(self, prefix: str = "") -> list[str]:
        """Regular files (symlinks and submodules are not format files), sorted."""
        return sorted(p for p in self._entries() if p.startswith(prefix))

    def exists(self, path: str) -> bool:
        if self.worktree:
            return (self.root / path).is_file()
        return path in self._entries()

    def prefetch(self, paths: Sequence[str]) -> None:
        """Read many files of an index or commit at once (two git calls in all)."""
        if self.worktree:
            return
        entries = self._entries()
        oids = {p: entries[p] for p in paths if p in entries and p not in self._data}
        if not oids:
            return
        blobs, _ = git.read_blobs_capped(self.root, dict.fromkeys(sorted(set(oids.values())), MAX_BYTES))
        for path, oid in oids.items():
            self._data[path] = blobs.get(oid)

    def read(self, path: str) -> bytes | None:
        """The file's bytes; None when it does not exist (or is not a regular file)."""
        if path not in self._data:
            self._data[path] = self._read(path)
        return self._data[path]

    def _read(self, path: str) -> bytes | None:
        if self.worktree:
            full = self.root / path
            try:
                st = full.lstat()
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                    return None
                # Judged again on what is opened: a FIFO swapped in after the lstat is no hang.
                return fsutil.read_regular(full, MAX_BYTES)
            except (OSError, ValueError):
                return None
        oid = self._entries().get(path)
        if oid is None:
            return None
        return git.read_blobs_capped(self.root, {oid: MAX_BYTES})[0].get(oid)


@dataclass(frozen=True)
class Context:
    """What a format's rules may ask about the state they judge."""

    config: Config
    files: Files
    # Fresh-evidence lookup for the state's tree, given lazily (it needs the fingerprint):
    # command -> None when the newest record of that exact command on this tree passed,
    # else why not ("missing", "failed", ...). Only the gate provides it.
    evidence: Callable[[str], str | None] | None = None


@dataclass(frozen=True)
class Format:
    name: str  # the config key
    title: str
    # One file's own validity, given every file of its state (cross-file checks).
    lint: Callable[[str, bytes, Context], list[Finding]]
    # A change of one file: old bytes (None: added) to new bytes (None: deleted).
    gate: Callable[[str, bytes | None, bytes | None, Context], list[Finding]] | None = None
    # Lines for `harness-gate formats status` (counts the format defines), or None.
    status: Callable[[str, bytes, Context], list[str]] | None = None


_WILD = re.compile(r"\*+|\?|\[[^\]]*\]")


def _needle(pattern: str) -> str:
    """A literal piece every path the pattern matches contains: the longest run between
    wildcards, without the slashes at its ends (`**/` may match nothing)."""
    return max(_WILD.split(pattern), key=len).strip("/")


@dataclass(frozen=True)
class Matcher:
    """Which enabled format (if any) a path belongs to, under one configuration."""

    compiled: tuple[tuple[str, boundary.Boundary], ...]
    # Paths holding none of the patterns' literal pieces are no format's: one regex search
    # instead of a matcher per format, on every changed path of every commit.
    needles: re.Pattern[bytes] | None = None
    pieces: tuple[bytes, ...] | None = None  # the same literal pieces, for `candidates`
    _cache: dict[bytes, str | None] = field(default_factory=dict)

    def candidates(self, paths: Sequence[bytes]) -> set[bytes]:
        """The paths that may be some format's: all of them at once, for large changes."""
        return set(paths) if self.pieces is None else boundary.holding(paths, self.pieces)

    def which(self, path: bytes) -> str | None:
        if self.needles is not None and not self.needles.search(path):
            return None
        if path not in self._cache:
            self._cache[path] = next((name for name, b in self.compiled if b.matches(path)), None)
        return self._cache[path]


def shown(value: object) -> str:
    """A value for a message: repr (so control characters stay escaped), kept short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def more_finding(code: str, path: str, more: int, line: int | None) -> Finding:
    """The one finding that stands for `more` findings of `code` past a cap."""
    return finding(code, path, f"{more} more {code} finding(s) in this file (not listed)", line=line)


def capped(path: str, found: Iterable[Finding], limit: int) -> list[Finding]:
    """The first `limit` findings of each rule, then one saying how many more there are:
    a file of a million bad lines needs one screen, not a million findings."""
    out: list[Finding] = []
    seen: dict[str, int] = {}
    first_over: dict[str, int | None] = {}
    for f in found:
        n = seen[f.code] = seen.get(f.code, 0) + 1
        if n <= limit:
            out.append(f)
        elif n == limit + 1:
            first_over[f.code] = f.line
    for code, line in first_over.items():
        out.append(more_finding(code, path, seen[code] - limit, line))
    return out


def enabled(config: Config) -> list[str]:
    return [name for name in REGISTRY if name not in config.formats_disabled]


def paths_for(config: Config, name: str) -> tuple[str, ...]:
    own = dict(config.format_paths).get(name)
    return own if own is not None else REGISTRY[name].paths


@functools.lru_cache(maxsize=16)
def matcher(config: Config) -> Matcher:
    """The matcher for a configuration; one per configuration (a range's commits share it)."""
    names = enabled(config)
    pieces = [_needle(p) for n in names for p in paths_for(config, n)]
    needles = literal = None
    # A pattern without any literal piece could match anything; a bracket expression such
    # as `[]x]` is not split reliably: no prefilter then.
    if pieces and all(pieces) and not any("[" in p for n in names for p in paths_for(config, n)):
        literal = tuple(sorted({p.encode("utf-8", "surrogateescape") for p in pieces}))
        needles = re.compile(b"|".join(re.escape(p) for p in literal))
    return Matcher(tuple((n, boundary.Boundary.compile(paths_for(config, n))) for n in names), needles, literal)


def load(name: str) -> Format:
    module = importlib.import_module(REGISTRY[name].module)
    fmt: Format = module.FORMAT
    return fmt


def lint_file(name: str, path: str, data: bytes | None, ctx: Context) -> list[Finding]:
    if data is None:
        why = "not a regular file, or over 16 MiB"
        return [finding("HG690", path, f"not readable as a {load(name).title} file ({why})")]
    return load(name).lint(path, data, ctx)


def check_changes(
    config: Config,
    changes: Sequence[git.Change],
    new: Files,
    old: Callable[[git.Change], bytes | None],
    evidence: Callable[[str], str | None] | None,
) -> list[Finding]:
    """The format rules for a state change: every changed format file must be valid in
    the new state, and its move from old to new must be allowed."""
    match = matcher(config)
    found: list[Finding] = []
    ctx = Context(config, new, evidence)
    for change in changes:
        name = match.which(change.path)
        if name is None:
            continue
        path = os.fsdecode(change.path)
        fmt = load(name)
        after = None if change.deleted else new.read(path)
        if not change.deleted:
            found.extend(lint_file(name, path, after, ctx))
        if fmt.gate is not None:
            found.extend(fmt.gate(path, None if change.added else old(change), after, ctx))
    # A cross-file rule may be reached from several changed files of one state (loop:
    # state.json and the verdict it depends on): report each finding once.
    return list(dict.fromkeys(found))


def evidence_lookup(files: Mapping[str, bytes], fingerprint: Callable[[], str]) -> Callable[[str], str | None]:
    """Fresh evidence for a command on the judged state's tree, from the evidence logs of
    every plan folder that state holds (`harness-gate record` writes them): None when the
    newest record of exactly that command on exactly this tree passed, else why not. A
    record counts only in the log of the plan it names (docs/evidence.md): one copied into
    another folder's log, or a v1 record that names no plan, is no evidence."""
    from harness_gate import evidence  # noqa: PLC0415  (only when a format asks)

    # The newest record of each (command, tree), built on the first query: a state whose
    # change completes many tasks asks once per task, and each query re-parsing every
    # log line was tasks x records.
    index: dict[tuple[str, str], evidence.Record] = {}
    built = False

    def build() -> None:
        for path in sorted(files):
            log = files.get(path) if path.endswith("/" + artifacts_root.EVIDENCE) else None
            if log is None:
                continue  # not a log, or over its cap (reported where it is read)
            folder = path.rsplit("/", 2)[-2]  # the plan id: plans/<id>/evidence.jsonl
            for n, raw in enumerate(log.split(b"\n")[:-1], start=1):
                rec, _ = evidence.parse_line(raw, n)
                if rec is None or rec.plan != folder:
                    continue
                key = (rec.command, rec.tree)
                newest = index.get(key)
                if newest is None or rec.timestamp >= newest.timestamp:  # a tie: the later line
                    index[key] = rec

    def lookup(command: str) -> str | None:
        nonlocal built
        tree = fingerprint()
        if not built:
            build()
            built = True
        newest = index.get((command, tree))
        if newest is None:
            return f"missing: no evidence for `{command}` on tree {tree[:12]} (harness-gate record -- ...)"
        return None if newest.status == "PASS" else f"{newest.status.lower()}: the newest record on this tree"

    return lookup


def matched(files: Files, match: Matcher) -> list[tuple[str, str]]:
    """(format name, path) of every format file of a state."""
    out = []
    for path in files.paths():
        name = match.which(os.fsencode(path))  # the inverse of the os.fsdecode that named it
        if name is not None:
            out.append((name, path))
    return out


def lint_files(files: Files, config: Config, chosen: Sequence[tuple[str, str]]) -> list[Finding]:
    """Lint the chosen (format, path) files of one state, read in one batch."""
    files.prefetch([p for _, p in chosen])  # two git calls for all of them, not two per file
    ctx = Context(config, files)
    found: list[Finding] = []
    for name, path in chosen:
        found.extend(lint_file(name, path, files.read(path), ctx))
    return found


def worktree_files(root: Path, config: Config) -> list[tuple[str, str]]:
    """(format name, path) of every format file in the work tree (tracked or not ignored)."""
    return matched(Files(root, None, worktree=True), matcher(config))


def lint_worktree(root: Path, config: Config, chosen: Sequence[tuple[str, str]]) -> list[Finding]:
    """`lint_files` on the work tree's copies of the chosen files."""
    return lint_files(Files(root, None, worktree=True), config, chosen)


def format_of(config: Config, rel: str) -> str | None:
    """The enabled format a path belongs to, if any."""
    return matcher(config).which(os.fsencode(rel))
