"""The index and the work tree: entries, checksum, status, and the trees they would commit."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from harness_gate import plumbing
from harness_gate.errors import GitError
from harness_gate.git.process import finish_work, run, run_status, start, start_work, terminated
from harness_gate.git.repo import git_path
from harness_gate.git.trees import TreeEntry, parse_entries, tree_entries


def index_file(root: Path) -> Path:
    """The index git uses now: GIT_INDEX_FILE (a hook's temporary index) or the default."""
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        path = Path(named)
        return path if path.is_absolute() else root / path
    return git_path(root, "index")


_VERIFIED: set[tuple[str, int, int, int]] = set()


def prefetch_verify_index(root: Path) -> None:
    """Start `verify_index(root)`'s checksum in a thread: reading and hashing a large index
    releases the interpreter lock, so it runs while the main thread imports and parses."""
    path = index_file(root)
    start_work(("verify-index", path), lambda: _verify_index_file(path))


def verify_index(root: Path) -> None:
    """Refuse an index whose trailing checksum does not match its content.

    git does not check it when it reads the index (only `git fsck` does): a damaged
    byte in a name makes git report another path, and a truncated index is read past
    its end as entries with empty names. A missing index is an empty one; a zero
    trailer is `index.skipHash`. Checked once per index file state and process."""
    path = index_file(root)
    finish_work(("verify-index", path))
    _verify_index_file(path)  # answered from _VERIFIED when the thread saw this same file


def _verify_index_file(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            if (str(path), st.st_size, st.st_mtime_ns, st.st_ino) in _VERIFIED:
                return
            intact = plumbing.index_checksum_matches(fh.fileno(), st.st_size, _BLOCK)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise GitError(f"cannot read the index {path}: {exc.strerror or exc}") from None
    if not intact:
        raise GitError(
            f"the index {path} is corrupt: its checksum does not match its content",
            "Rebuild it from HEAD (`git read-tree HEAD`; the files on disk stay as they are), then stage again.",
        )
    _VERIFIED.add((str(path), st.st_size, st.st_mtime_ns, st.st_ino))


_BLOCK = plumbing.INDEX_BLOCK


def _index_entries_args(prefixes: Sequence[str]) -> list[str]:
    return ["ls-files", "--stage", "-z", "--", *(f":(literal){p}" for p in prefixes)]


def index_entries(root: Path, *prefixes: str) -> list[TreeEntry]:
    """Entries of the index (honouring GIT_INDEX_FILE) below the given prefixes."""
    verify_index(root)
    raw = run(_index_entries_args(prefixes), cwd=root)
    return parse_entries(raw, staged=True)


def prefetch_index_entries(root: Path, *prefixes: str) -> None:
    """Start `index_entries(root, *prefixes)`'s listing now, to be read when asked for."""
    start(_index_entries_args(prefixes), cwd=root)


def symlinks(root: Path, rev: str | None) -> dict[bytes, str]:
    """Every symlink of a state (the index when rev is None): path -> blob id."""
    entries = index_entries(root) if rev is None else tree_entries(root, rev)
    return {os.fsencode(e.path): e.oid for e in entries if e.mode == "120000"}


# Listings started ahead (prefetch_status_records), by (root, prefixes, ignore_files).
_LISTED: dict[tuple[Path, tuple[str, ...], bool], list[tuple[str, str]]] = {}


def prefetch_status_records(root: Path, *prefixes: str, ignore_files: bool = False) -> None:
    """Start `status_records(root, *prefixes, ignore_files=...)` in a thread now: the next
    such call takes its answer (or what it raised), once (git/process.py's contract)."""
    key = (root, prefixes, ignore_files)

    def work() -> None:
        _LISTED[key] = _status_records(root, prefixes, ignore_files)

    start_work(("status", *key), work)


def status_records(root: Path, *prefixes: str, ignore_files: bool = False) -> list[tuple[str, str]]:
    """`git status` of the paths under `prefixes`: (XY, path) for every path not as HEAD has
    it (XY as in --porcelain=v1: X the index against HEAD, Y the work tree against the index).
    With `ignore_files`, an untracked `.gitignore` that ignores itself (`*`) is one too, as
    `??`: the work tree's ignore files are the agent's to write, and one that hides the new
    files beside it must not hide itself (ignored directories are not entered)."""
    key = (root, prefixes, ignore_files)
    if finish_work(("status", *key)) and key in _LISTED:
        return _LISTED.pop(key)
    _LISTED.pop(key, None)  # a discarded prefetch's answer is never one
    return _status_records(root, prefixes, ignore_files)


def _status_records(root: Path, prefixes: Sequence[str], ignore_files: bool) -> list[tuple[str, str]]:
    specs = [f":(literal){prefix}" for prefix in prefixes]
    more = ["--ignored=matching"] if ignore_files else []
    raw = run(
        ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", *more, "--", *specs],
        cwd=root,
        env=_filters_off(root),  # status compares racily clean files through their filter
    )
    out = []
    for rec in terminated(raw, "status").split(b"\0"):
        if len(rec) <= 3:
            continue
        xy, path = rec[:2].decode("ascii", "replace"), os.fsdecode(rec[3:])
        if xy == "!!":
            if not path.endswith("/") and path.rsplit("/", 1)[-1] == ".gitignore":
                out.append(("??", path))
            continue
        out.append((xy, path))
    return out


def status_paths(root: Path, prefix: str) -> list[str]:
    """Paths under `prefix` whose work-tree state differs from the index (or untracked)."""
    return [path for xy, path in status_records(root, prefix) if xy == "??" or xy[1] != " "]


def dirty_submodules(root: Path) -> list[str]:
    """Submodules whose work tree holds changes their recorded commit does not."""
    out = run(
        ["status", "--porcelain=v2", "-z", "--ignore-submodules=none", "--untracked-files=all"],
        cwd=root,
        env=_filters_off(root),  # status compares racily clean files through their filter
    )
    dirty = []
    for rec in terminated(out, "status").split(b"\0"):
        fields = rec.split(b" ")
        # `1 XY S<c><m><u> ...`: m = tracked changes inside, u = untracked files inside
        if len(fields) > 8 and fields[0] in (b"1", b"2") and fields[2][:1] == b"S" and fields[2][2:4] != b"..":
            dirty.append(os.fsdecode(b" ".join(fields[8:] if fields[0] == b"1" else fields[9:])))
    return dirty


def unmerged_paths(root: Path) -> list[str]:
    """Paths the index holds unmerged (a conflict not yet resolved and staged), in order."""
    out = run(["ls-files", "--unmerged", "-z"], cwd=root)
    paths: dict[str, None] = {}
    for rec in terminated(out, "ls-files").split(b"\0"):
        _, tab, path = rec.partition(b"\t")  # `MODE OID STAGE<TAB>PATH`
        if tab and path:
            paths[os.fsdecode(path)] = None
    return list(paths)


def hidden_edits(root: Path) -> list[str]:
    """Index entries git is told not to look at (assume-unchanged, skip-worktree)."""
    out = run(["ls-files", "-v", "-z"], cwd=root)
    hidden = []
    for rec in terminated(out, "ls-files").split(b"\0"):
        if len(rec) > 2 and (rec[:1].islower() or rec[:1] == b"S"):
            hidden.append(os.fsdecode(rec[2:]))
    return hidden


def _worktree_spec(exclude: str | None, outputs: Sequence[str]) -> list[str]:
    spec = [":/"]
    if exclude:
        spec.append(f":(top,exclude,literal){exclude}")
    return [*spec, *(f":(top,exclude,glob){pattern}" for pattern in outputs)]


def untracked_files(root: Path, exclude: str | None = None, outputs: Sequence[str] = ()) -> list[str]:
    """Untracked files that are not ignored (nor outputs): the work tree's fingerprint holds
    them, though nobody may mean to commit them."""
    out = run(["ls-files", "--others", "--exclude-standard", "-z", "--", *_worktree_spec(exclude, outputs)], cwd=root)
    return [os.fsdecode(p) for p in terminated(out, "ls-files").split(b"\0") if p]


def unstorable(root: Path, paths: Sequence[str]) -> list[str]:
    """Those of `paths` that no tree can hold: not a regular file, a symbolic link or a
    folder (a device, a FIFO, a socket). `git add` refuses them ("adding files failed"),
    and no commit can ever carry them, so a fingerprint leaves them out. Claude Code's
    sandbox puts such placeholders (character devices) in the tree its commands see."""
    out = []
    for p in paths:
        try:
            mode = os.lstat(root / p).st_mode
        except OSError:
            continue  # gone since the listing: as `add -A` would find it
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
            out.append(p)
    return out


def tracked_files(root: Path, paths: Sequence[str]) -> set[str]:
    """Which of `paths` the index tracks."""
    if not paths:
        return set()
    out = run(["ls-files", "-z", "--", *(f":(top,literal){p}" for p in paths)], cwd=root)
    return {os.fsdecode(p) for p in terminated(out, "ls-files").split(b"\0") if p}


def listed_files(root: Path) -> list[str]:
    """Every file of the work tree git would see: tracked ones and untracked ones that are
    not ignored."""
    out = run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root)
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


# -- trees the index or the work tree would commit --------------------------------------


def _with_index_copy(root: Path, work: Callable[[dict[str, str]], str]) -> str:
    """Run `work` against a private copy of the index: the real one is never written."""
    source = index_file(root)
    import shutil  # noqa: PLC0415  (tempfile and shutil: ~3 ms to import, off the hook's path)
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="harness-gate-index-") as tmp:
        copy = Path(tmp) / "index"
        if source.exists():
            # copy2 keeps the index's mtime: git's racy-entry check compares file mtimes with
            # it, and a fresh mtime would make git trust a stale entry for a same-second edit.
            shutil.copy2(source, copy)
        return work({"GIT_INDEX_FILE": str(copy)})


def index_tree(root: Path) -> str:
    """The tree the index would commit (GIT_INDEX_FILE honoured)."""
    # Writing an index re-reads racily clean files through their filter: none runs here.
    no_filters = _filters_off(root)
    return _with_index_copy(root, lambda env: run(["write-tree"], cwd=root, env={**env, **no_filters}).decode().strip())


# Git LFS's own driver, exactly as `git lfs install` configures it: its clean step turns
# a large file into the pointer git commits, and a repository that uses LFS has no other
# way to commit it. Any other command under the name `lfs` is just another filter.
LFS_STANDARD = {"clean": "git-lfs clean -- %f", "process": "git-lfs filter-process"}


def _filters_off(root: Path) -> dict[str, str]:
    """Configuration (as GIT_CONFIG_COUNT/KEY/VALUE) that switches off every configured
    filter driver but Git LFS's standard one.

    A `filter.<name>.clean` (or `.process`) program rewrites what `git add` stages: with it
    the fingerprint would describe bytes the verified commands never saw, and computing
    the fingerprint would run whatever program the configuration names. An empty command
    means "no filter" to git, and `required=false` keeps a missing one from being an error.
    """
    out = run_status(["config", "-z", "--get-regexp", r"^filter\."], cwd=root)
    drivers: dict[str, dict[str, str]] = {}
    for rec in (out or b"").split(b"\0"):
        if not rec:
            continue
        key, _, value = rec.partition(b"\n")
        # `filter.<name>.<var>`: the name may hold dots; git lower-cases only the var.
        name, _, var = os.fsdecode(key)[len("filter.") :].rpartition(".")
        drivers.setdefault(name, {})[var] = os.fsdecode(value)
    env: dict[str, str] = {}
    count = 0
    for name, settings in sorted(drivers.items()):
        commands = {k: v for k, v in settings.items() if k in ("clean", "process")}
        if name == "lfs" and all(LFS_STANDARD[k] == v for k, v in commands.items()):
            continue
        for var, off in (("clean", ""), ("process", ""), ("required", "false")):
            env[f"GIT_CONFIG_KEY_{count}"] = f"filter.{name}.{var}"
            env[f"GIT_CONFIG_VALUE_{count}"] = off
            count += 1
    if count:
        env["GIT_CONFIG_COUNT"] = str(count)
    return env


def worktree_tree(
    root: Path,
    exclude: str | None = None,
    outputs: Sequence[str] = (),
    kept: Sequence[str] = (),
    *,
    untracked: Sequence[str] | None = None,
) -> str:
    """The tree of the work tree: tracked files as they are on disk, plus untracked files
    that are not ignored, as `git add -A` would stage them with every filter driver off
    (Git LFS's standard one aside, see `_filters_off`). `exclude` (a directory) is left as
    the index has it: its files are not even read. Untracked files matching `outputs`
    (boundary-dialect patterns) are left out like ignored ones, but for those `kept` names
    (outputs that are inputs: no command wrote them); tracked ones never are.

    `untracked`: every untracked file that is not ignored, as a `git status` of the same
    moment listed them (files only). With it, and no `outputs`, the untracked folders are
    not walked a second time: tracked files come in through `add -u` and the listed ones
    by name, which stages what `add -A` stages (tests/test_fingerprints.py holds the two
    to the same tree)."""
    no_filters = _filters_off(root)
    kept = [p for p in kept if os.path.lexists(root / p)]
    named = None
    if untracked is not None and not outputs:
        skipped = f"{exclude}/" if exclude else None
        named = [p for p in untracked if not (skipped and (p + "/").startswith(skipped))]
        special = set(unstorable(root, named))
        named = [p for p in named if p not in special]

    def work(env: dict[str, str]) -> str:
        env = {**env, **no_filters}
        spec = _worktree_spec(exclude, outputs)
        if named is None:
            try:
                run(["add", "-A", "--", *spec], cwd=root, env=env)
            except GitError:
                # Only for a file no tree can hold is there a second try, without it; any
                # other failure stands (and an unborn nested repository is named by the caller).
                special = unstorable(root, untracked_files(root, exclude, outputs))
                if not special:
                    raise
                specs = [*spec, *(f":(top,exclude,literal){p}" for p in special)]
                data = b"".join(os.fsencode(n) + b"\0" for n in specs)
                run(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], cwd=root, env=env, stdin=data)
        else:
            run(["add", "-u", "--", *spec], cwd=root, env=env)
            if named:
                # `--remove`: a file gone since the listing is not in the tree, as with `add -A`.
                names = b"".join(os.fsencode(p) + b"\0" for p in named)
                run(["update-index", "--add", "--remove", "-z", "--stdin"], cwd=root, env=env, stdin=names)
        if outputs:
            # What the excluding pathspecs held back from tracked files comes in: only
            # untracked outputs are left out.
            run(["add", "-u", "--", *_worktree_spec(exclude, ())], cwd=root, env=env)
        if kept:
            names = "".join(f":(top,literal){p}\0" for p in kept).encode("utf-8", "surrogateescape")
            run(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], cwd=root, env=env, stdin=names)
        if no_filters:
            # A file staged through its filter keeps the filtered blob while its stat data
            # matches the index entry: re-read every tracked file, with the filters off.
            run(["add", "--renormalize", "--", *spec], cwd=root, env=env)
        return run(["write-tree"], cwd=root, env=env).decode().strip()

    return _with_index_copy(root, work)


def tree_without_paths(root: Path, tree: str, paths: Sequence[str]) -> str:
    """`tree` with the files at `paths` left out, built in a private index."""
    if not paths:
        return tree
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="harness-gate-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run(["read-tree", tree], cwd=root, env=env)
        names = "".join(f":(top,literal){p}\0" for p in paths).encode("utf-8", "surrogateescape")
        run(
            ["rm", "--cached", "-f", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
            cwd=root,
            env=env,
            stdin=names,
        )
        return run(["write-tree"], cwd=root, env=env).decode().strip()
