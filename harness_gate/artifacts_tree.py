"""The artifacts root (and config files) as one state holds them.

The gate reads the index or a commit, never the work tree; the authoring
commands (`lint`, `status`, `approve`) read the work tree, which is what the
author is editing, and say when it differs from the index.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_gate import artifacts_root, cache, fsutil, git
from harness_gate import config as config_mod
from harness_gate.errors import ConfigError, GitError
from harness_gate.findings import Finding, Severity, finding

if TYPE_CHECKING:
    from harness_gate.approvals import Approval
    from harness_gate.trust import Who

    # Which of a log's records are authentic here (repository, signatures): the records
    # that count, and a finding for each that does not.
    Vouch = Callable[[str, Sequence[Approval]], tuple[list[Approval], list[Finding]]]

CONFIG_PATHS = (config_mod.CONFIG_FILE, "pyproject.toml")
# Append-only logs may grow far beyond one artifact; they are capped on their own.
LOG_CAP = 256 * 1024 * 1024


def cap_for(path: str, cfg: config_mod.Config) -> int:
    return LOG_CAP if path.endswith(".jsonl") else cfg.max_artifact_bytes


def read_capped(path: Path, cap: int) -> bytes:
    """At most cap + 1 bytes: enough to tell that a file is over its cap, never more.
    Opened without blocking and judged on what was opened: a FIFO or device swapped in
    after the caller's lstat is refused (OSError), never waited on or read forever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(cap + 1)
    finally:
        os.close(fd)


def _too_large(path: str, size: int, cap: int) -> Finding:
    return finding("HG512", path, f"{size} bytes is over the {cap} byte cap; not read")


class Blobs(Mapping[str, bytes]):
    """The regular files of one state's artifacts root (an index or a commit), read from
    git on first use, a plan folder at a time.

    A base branch keeps every plan it ever merged: reading all of them for every commit
    would make each commit cost what the whole history of plans costs. What the first read
    leaves out is every plan folder that holds a Completion (it governs nothing); such a
    folder is read, in one `cat-file`, when something asks for one of its files. A file
    over its cap reads as absent, with its HG512 finding in `late`; iterating before its
    folder was read may still name it, so readers take files with `get`."""

    def __init__(self, root: Path, cfg: config_mod.Config, listed: Sequence[git.TreeEntry]) -> None:
        self._root = root
        self._cfg = cfg
        self._prefix = artifacts_root.plans_prefix(cfg.artifacts_dir)
        self._oids = {b.path: b.oid for b in listed if b.mode.startswith("100")}
        self._data: dict[str, bytes] = {}
        self._over: set[str] = set()
        self._read_units: set[str] = set()
        self.late: list[Finding] = []  # HG512 for files found over their cap

    def _unit(self, path: str) -> str:
        """What is read together: a plan folder, or one file elsewhere."""
        if path.startswith(self._prefix):
            plan_id, sep, _ = path[len(self._prefix) :].partition("/")
            if sep:
                return f"{self._prefix}{plan_id}/"
        return path

    def read(self, paths: Sequence[str]) -> None:
        """Read these paths (not read yet) in one capped `cat-file --batch`."""
        todo = [p for p in paths if p in self._oids and p not in self._data and p not in self._over]
        caps: dict[str, int] = {}
        for path in todo:  # one blob may sit at paths of both caps: read it up to the larger
            oid = self._oids[path]
            caps[oid] = max(caps.get(oid, 0), cap_for(path, self._cfg))
        data, sizes = git.read_blobs_capped(self._root, caps)
        for path in todo:
            oid, cap = self._oids[path], cap_for(path, self._cfg)
            if sizes[oid] > cap:
                self._over.add(path)
                self.late.append(_too_large(path, sizes[oid], cap))
            else:
                self._data[path] = data[oid]
        self._read_units.update(self._unit(p) for p in todo)

    def read_all_but_ended(self) -> None:
        """The first read: everything but the plan folders that hold a Completion."""
        ended = {self._unit(p) for p in self._oids if _ENDS.search(p) and p.startswith(self._prefix)}
        self.read([p for p in self._oids if self._unit(p) not in ended])

    def _ensure(self, path: str) -> None:
        unit = self._unit(path)
        if unit not in self._read_units:
            self._read_units.add(unit)
            self.read([p for p in self._oids if self._unit(p) == unit] if unit.endswith("/") else [path])

    def __getitem__(self, path: str) -> bytes:
        if path not in self._oids:
            raise KeyError(path)
        self._ensure(path)
        if path in self._over:
            raise KeyError(path)
        return self._data[path]

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str) or path not in self._oids:
            return False
        self._ensure(path)
        return path not in self._over

    def __iter__(self) -> Iterator[str]:
        return (p for p in self._oids if p not in self._over)

    def __len__(self) -> int:
        return len(self._oids) - len(self._over)


_ENDS = re.compile(r"/[0-9]{3}-completion\.md\Z")


@dataclass(frozen=True)
class ArtifactsTree:
    """The artifacts root's files, the configuration and their findings, as one state (the
    work tree, the index or a commit) holds them."""

    label: str  # "work tree", "index" or "commit <oid>"
    root: Path
    config: config_mod.Config
    files: Mapping[str, bytes]  # repository-relative path -> bytes, below the artifacts root
    findings: tuple[Finding, ...] = field(default=())
    # Work tree only: evidence logs are read from their end on demand, never whole.
    logs: Mapping[str, Path] = field(default_factory=dict)
    vouch: Vouch | None = None  # None: every well-formed record of the right plan counts
    who: Who | None = None  # signatures for the approvers rules; None: none are known here

    @property
    def artifacts_dir(self) -> str:
        return self.config.artifacts_dir

    @property
    def active(self) -> bool:
        """A repository with no artifacts root and no config is inactive (README, "Files in a guarded repository")."""
        return self.config.source is not None or self.has_root

    @property
    def has_root(self) -> bool:
        """Whether this state itself holds the artifacts root (config aside)."""
        return bool(self.files) or self._root_exists

    @property
    def problems(self) -> tuple[Finding, ...]:
        """What reading the state found: files that are not regular, files over their cap
        (also those found while reading a folder on demand)."""
        late = self.files.late if isinstance(self.files, Blobs) else []
        return (*self.findings, *late)

    _root_exists: bool = False
    # Work derived from this state alone (a plan folder as loaded here), done once per
    # state: a range's commits that change no artifact share their parent's state.
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)


def plans_in(paths: Iterable[str], artifacts_dir: str) -> set[str]:
    """The ids of the plan folders that hold a `plan.md`, among repository paths."""
    prefix = artifacts_root.plans_prefix(artifacts_dir)
    found = set()
    for path in paths:
        if path.startswith(prefix) and path.endswith("/" + artifacts_root.PLAN):
            rest = path[len(prefix) : -len("/" + artifacts_root.PLAN)]
            if rest and "/" not in rest:
                found.add(rest)
    return found


def config_of(read: Mapping[str, bytes]) -> config_mod.Config:
    """The configuration the config files' bytes (by path; absent when missing) give."""
    own, pyproject = read.get(CONFIG_PATHS[0]), read.get(CONFIG_PATHS[1])
    if own is None and pyproject is None:
        return config_mod.Config()
    # Both files, unambiguously (absent is not the same as empty).
    key = repr((own, pyproject)).encode()
    cfg, _ = cache.cached(
        "config",
        key,
        lambda: (config_mod.parse(own, pyproject), []),
        dataclasses.asdict,
        lambda doc: config_mod.Config(
            **{
                **doc,
                "evidence_stages": tuple(doc["evidence_stages"]),
                "review_stages": tuple(doc["review_stages"]),
                "completion_stages": tuple(doc["completion_stages"]),
                "verify_outputs": tuple(doc["verify_outputs"]),
                "formats_disabled": tuple(doc["formats_disabled"]),
                "format_paths": tuple((n, tuple(p)) for n, p in doc["format_paths"]),
                "pre_receive": config_mod.PreReceive(
                    **{**doc["pre_receive"], "branches": tuple(doc["pre_receive"]["branches"])}
                ),
                "approvers": tuple(
                    config_mod.Approvers(
                        **{
                            **a,
                            "paths": tuple(a["paths"]),
                            "principals": tuple(a["principals"]),
                            "aliases": tuple((k, tuple(v)) for k, v in a["aliases"]),
                            "shadowed_by": tuple(a["shadowed_by"]),
                        }
                    )
                    for a in doc["approvers"]
                ),
            }
        ),
    )
    return cfg if cfg is not None else config_mod.parse(own, pyproject)


def _worktree_config_files(root: Path) -> dict[str, bytes]:
    return {p: (root / p).read_bytes() for p in CONFIG_PATHS if (root / p).is_file()}


def worktree_config(root: Path) -> config_mod.Config:
    """The configuration as the work tree's files hold it."""
    return config_of(_worktree_config_files(root))


def from_worktree(root: Path) -> ArtifactsTree:
    cfg = worktree_config(root)
    base = root / cfg.artifacts_dir
    files: dict[str, bytes] = {}
    logs: dict[str, Path] = {}
    problems: list[Finding] = []
    if base.is_dir() and not base.is_symlink():
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames) + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
                full = Path(dirpath) / name
                rel = full.relative_to(root).as_posix()
                entry = worktree_file(root, rel, cfg, read=name != artifacts_root.EVIDENCE)
                if isinstance(entry, Finding):
                    problems.append(entry)
                elif entry is not None and name == artifacts_root.EVIDENCE:
                    logs[rel] = full
                elif entry is not None:
                    files[rel] = entry
    elif base.is_symlink():
        problems.append(finding("HG516", cfg.artifacts_dir, "the artifacts root must not be a symbolic link"))
    return ArtifactsTree("work tree", root, cfg, files, tuple(problems), logs, _root_exists=base.exists())


def worktree_file(root: Path, rel: str, cfg: config_mod.Config, *, read: bool = True) -> bytes | Finding | None:  # noqa: PLR0911  (one return per case, in the order they are judged)
    """One file under the artifacts root as the work tree holds it: its bytes (b"" unless
    `read`), the finding that refuses it (a symbolic link, an executable, over its cap), or
    None when there is no regular file there."""
    full = root / rel
    try:
        st = full.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return finding("HG516", rel, "symbolic links are not allowed under the artifacts root")
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_mode & stat.S_IXUSR:
        # As git would record it (mode 100755): refused in every commit check too.
        return _mode_problems([git.TreeEntry(rel, "100755", "")])[0]
    if not read:
        return b""
    cap = cap_for(rel, cfg)
    if st.st_size > cap:
        return _too_large(rel, st.st_size, cap)
    return read_capped(full, cap)


class Overlay(Mapping[str, bytes]):
    """A state's files with some replaced or removed (None): the work tree's changes of a
    few artifacts over the commit they start from."""

    def __init__(self, base: Mapping[str, bytes], changed: Mapping[str, bytes | None]) -> None:
        self._base = base
        self._changed = changed

    def __getitem__(self, path: str) -> bytes:
        if path in self._changed:
            data = self._changed[path]
            if data is None:
                raise KeyError(path)
            return data
        return self._base[path]

    def __iter__(self) -> Iterator[str]:
        yield from (p for p in self._base if p not in self._changed)
        yield from (p for p, data in self._changed.items() if data is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def worktree_over(base: ArtifactsTree, paths: Iterable[str]) -> ArtifactsTree:
    """`base` with `paths` (under its artifacts root) as the work tree holds them: a file
    the work tree refuses (a link, an executable, over its cap) is absent, with its finding."""
    changed: dict[str, bytes | None] = {}
    problems = list(base.problems)
    for rel in paths:
        entry = worktree_file(base.root, rel, base.config)
        if isinstance(entry, Finding):
            problems.append(entry)
            entry = None
        changed[rel] = entry
    return dataclasses.replace(base, label="work tree", files=Overlay(base.files, changed), findings=tuple(problems))


def from_index(root: Path, config: config_mod.Config | None = None) -> ArtifactsTree:
    """The index git is about to commit (GIT_INDEX_FILE honoured)."""
    return _from_entries(root, "index", lambda *p: git.index_entries(root, *p), config)


def prefetch_index(root: Path, config: config_mod.Config) -> None:
    """Start the index listing `from_index(root, config)` reads first."""
    git.prefetch_index_entries(root, _listed(config))


def _listed(config: config_mod.Config) -> str:
    return artifacts_root.prefix(config.artifacts_dir)


def from_commit(root: Path, rev: str, config: config_mod.Config | None = None) -> ArtifactsTree:
    return _from_entries(root, f"commit {rev}", lambda *p: git.tree_entries(root, rev, *p), config)


def empty(root: Path, config: config_mod.Config) -> ArtifactsTree:
    """The state before the first commit."""
    return ArtifactsTree("empty tree", root, config, {})


def read_config(root: Path, rev: str | None) -> config_mod.Config:
    """The configuration as commit `rev` holds it (the index when rev is None)."""
    if rev:
        # Both files sit at the top level: no recursive walk of a large tree. Their bytes
        # are asked by name at once, and taken only where the listing has the same
        # regular file (a symlink or a directory by that name is no configuration).
        listed = git.tree_entries(root, rev, *CONFIG_PATHS, recursive=False)
        top = [b for b in listed if b.path in CONFIG_PATHS and b.mode.startswith("100")]
        named = git.read_paths(root, rev, CONFIG_PATHS) if top else {}
        if any(named.get(b.path, ("",))[0] != b.oid for b in top):
            raise GitError(f"the configuration files of {rev[:12]} read differently twice")
        return config_of({b.path: named[b.path][1] for b in top})
    return _config_from(root, lambda *p: git.index_entries(root, *p))


def prefetch(location: git.Location) -> None:
    """Start the git reads a staged check begins with, before the rest of harness-gate is
    imported: the diff (with the index's checksum), the configuration at HEAD, and the
    listing of the default artifacts root (a configured other root is listed later)."""
    root, head = location.toplevel, location.head
    if head is None:
        return
    git.prefetch_staged(root, head)
    git.prefetch_tree_entries(root, head, *CONFIG_PATHS, recursive=False)
    git.prefetch_paths(root, head, CONFIG_PATHS)
    git.prefetch_index_entries(root, _listed(config_mod.Config()))
    git.prefetch_branch_commits(root, head)  # which commits are this branch's own (origins.locally)


def _config_from(root: Path, lister: Callable[..., list[git.TreeEntry]]) -> config_mod.Config:
    top = [b for b in lister(*CONFIG_PATHS) if b.path in CONFIG_PATHS and b.mode.startswith("100")]
    blobs = git.read_blobs(root, [b.oid for b in top])
    return config_of({b.path: blobs[b.oid] for b in top})


def _mode_problems(listed: Sequence[git.TreeEntry]) -> list[Finding]:
    """Artifacts are text records: an executable, a symlink or a submodule under the
    artifacts root is something else hiding among them."""
    return [
        finding("HG516", b.path, "only regular, non-executable files are allowed under the artifacts root")
        for b in listed
        if b.mode != "100644"
    ]


def _from_entries(
    root: Path, label: str, lister: Callable[..., list[git.TreeEntry]], config: config_mod.Config | None
) -> ArtifactsTree:
    # The configuration may come from a trusted state (the base) instead of this one.
    cfg = config if config is not None else _config_from(root, lister)
    listed = lister(_listed(cfg))
    files = Blobs(root, cfg, listed)
    files.read_all_but_ended()
    problems = _mode_problems(listed)
    return ArtifactsTree(label, root, cfg, files, tuple(problems), _root_exists=bool(listed))


def assemble(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    label: str,
    cfg: config_mod.Config,
    listed: Sequence[git.TreeEntry],
    *,
    sizes: Mapping[str, int],
    data: Mapping[str, bytes],
) -> ArtifactsTree:
    """The state of the artifacts root from its listing (in git's order), with the sizes of
    its regular files and the bytes of those within their cap."""
    problems = _mode_problems(listed)
    files: dict[str, bytes] = {}
    for b in listed:
        if not b.mode.startswith("100"):
            continue
        cap = cap_for(b.path, cfg)
        if sizes[b.oid] > cap:
            problems.append(_too_large(b.path, sizes[b.oid], cap))
        else:
            files[b.path] = data[b.oid]
    return ArtifactsTree(label, root, cfg, files, tuple(problems), _root_exists=bool(listed))


def trusted_config(
    root: Path, config_file: str | None, trusted_rev: str | None, *, from_rev: bool = False
) -> config_mod.Config:
    """The configuration. `--config FILE` names a file on disk for the index check; for
    commit ranges it names a path in the trusted commit, never the change under test."""
    if not config_file:
        return read_config(root, trusted_rev)
    path = Path(config_file)
    pyproject = path.name == "pyproject.toml"
    if from_rev:
        if not trusted_rev:
            raise ConfigError(f"{config_file}: there is no trusted commit to read it from")
        rel = named_path(root, config_file)
        data = _named_blob(root, trusted_rev, rel)
        cfg = config_mod.parse_named(rel, data, pyproject=pyproject)
    else:
        try:
            # resolve(): the file read is the one protected, through any link to it.
            rel = (Path.cwd() / path).resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, RuntimeError):  # outside the repository; a loop of links
            rel = str(path)
        try:
            data = fsutil.read_regular(path, config_mod.CONFIG_CAP, what="configuration file")
        except OSError as exc:
            raise ConfigError(f"cannot read {config_file}: {exc.strerror}") from None
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        cfg = config_mod.parse_named(config_file, data, pyproject=pyproject)
    # The file is protected where it lives in the repository (gate.protected), so a
    # change cannot weaken the configuration the next change is judged by.
    return dataclasses.replace(cfg, source=rel)


def named_path(root: Path, name: str) -> str:
    """The repository path `name` (relative to the current directory, or absolute) spells,
    read as a path: `..` is resolved by name and no symlink inside the repository is
    followed, for the change under test holds those (a link there would choose which of
    the trusted commit's files configures the gate). Only the folders down to the
    repository's own top may be links (an alias of the checkout, /tmp on macOS)."""
    full = Path(os.path.normpath(Path.cwd() / name))
    top = root.resolve()
    parts = full.parts
    for cut in range(1, len(parts) + 1):
        try:
            here = Path(*parts[:cut]).resolve()
        except (OSError, RuntimeError):  # a loop of links above the repository: not its top
            continue
        if here == top:
            rest = parts[cut:]
            if rest:
                return "/".join(rest)
            break
    raise ConfigError(f"{name} is not a file in the repository")


def _named_blob(root: Path, rev: str, rel: str) -> bytes:
    """The bytes of the regular file at `rel` in commit `rev`: a symlink there is not
    followed, and a missing path, a folder or a submodule is no configuration."""
    entries = [b for b in git.tree_entries(root, rev, rel, recursive=False) if b.path == rel]
    if not entries:
        raise ConfigError(f"{rel} does not exist in the trusted commit {rev[:12]}")
    entry = entries[0]
    if entry.mode == "120000":
        raise ConfigError(f"{rel} is a symbolic link in the trusted commit {rev[:12]}; it is not followed")
    if not entry.mode.startswith("100"):
        raise ConfigError(f"{rel} is not a file in the trusted commit {rev[:12]}")
    data, sizes = git.read_blobs_capped(root, {entry.oid: config_mod.CONFIG_CAP})
    if entry.oid not in data:
        raise ConfigError(
            f"{rel} is larger than the {config_mod.CONFIG_CAP} byte cap for a configuration file "
            f"({sizes[entry.oid]} bytes)"
        )
    return data[entry.oid]


def ignored_config(root: Path) -> list[Finding]:
    """A warning (HG902) when the work tree's pyproject.toml has a [tool.harness-gate] table
    that is not read, because .harness-gate.toml is the configuration."""
    read = _worktree_config_files(root)
    if not config_mod.ignored_table(read.get(config_mod.CONFIG_FILE), read.get("pyproject.toml")):
        return []
    return [
        finding(
            "HG902",
            "pyproject.toml",
            f"its [tool.harness-gate] table is not read: {config_mod.CONFIG_FILE} is the "
            "configuration (docs/config.md)",
            severity=Severity.WARNING,
        )
    ]


def file_reader(root: Path, rev: str | None) -> Callable[[str], bytes | None]:
    """A regular file's bytes as commit `rev` holds it (None: absent, not a regular file,
    or no commit): what status, the PR view and approve read a rule's CODEOWNERS file by."""

    def read(rel: str) -> bytes | None:
        return git.regular_file(root, rev, rel) if rev is not None else None

    return read
