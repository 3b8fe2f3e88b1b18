"""Where commits come from: history walks, merge bases, blame, signatures, branches' base."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate.change import Change
from harness_gate.errors import GitError, HarnessGateError
from harness_gate.git.diff import parse_meta
from harness_gate.git.objects import resolve
from harness_gate.git.process import act, finish_work, run, run_status, start, start_work, terminated
from harness_gate.git.repo import git_path
from harness_gate.plumbing import DIFF_FLAGS


@dataclass(frozen=True)
class Commit:
    oid: str
    parents: tuple[str, ...]
    changes: tuple[Change, ...]


def _rev_list_args(
    includes: Sequence[str], exclude: Sequence[str], not_refs: Sequence[str], limit: int | None = None
) -> list[str]:
    args = ["rev-list", "--reverse", "--topo-order", "--parents"]
    if limit is not None:
        args.append(f"--max-count={limit}")  # the newest ones: applied before --reverse
    args += [*includes, *(f"^{e}" for e in exclude)]
    if not_refs:
        args += ["--not", *not_refs]  # one `--not`: a second would turn the rest back on
    return [*args, "--"]


def commits(  # noqa: PLR0912, PLR0913  (one step per case, in the order they are judged; the facts it works from; a bundle of them would be a type used once)
    root: Path,
    include: str | Sequence[str],
    exclude: Sequence[str],
    *,
    not_remote: str | None = None,
    not_refs: Sequence[str] = (),
    paths: Sequence[str] = (),
    limit: int | None = None,
) -> list[Commit]:
    """Commits reachable from `include` but not from `exclude` (nor from the branches of
    remote `not_remote`, nor from the refs `not_refs` select: `--remotes=...` and the
    like), oldest first, each with its own changes: against its parent, against the empty
    tree for a root commit, and for a merge the combined diff (paths that differ from
    every parent). With `paths` (directory prefixes), only the changes below them are
    listed. With `limit`, only the newest that many (older parents count as outside)."""
    includes = [include] if isinstance(include, str) else list(include)
    if not_remote is not None:
        not_refs = [*not_refs, f"--remotes={not_remote}"]
    key = (root, tuple(includes), tuple(exclude))
    if not not_refs and not paths and limit is None and finish_work(("commits", *key)) and key in _LISTED:
        listing, out = _LISTED.pop(key)
    else:
        _LISTED.pop(key, None)  # a discarded prefetch's answer is never one
        listing, out = _listing(root, _rev_list_args(includes, exclude, not_refs, limit), paths)
    order: list[tuple[str, tuple[str, ...]]] = []
    for line in listing.decode().splitlines():
        oid, *parents = line.split()
        order.append((oid, tuple(parents)))
    if not order:
        return []
    for oid, parent_ids in order:
        if not parent_ids:
            _refuse_cut_history(root, oid)
    tokens = terminated(out, "diff-tree").split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    found: dict[str, list[Change]] = {}
    current: list[Change] | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(b":"):
            if current is None or i + 1 >= len(tokens):
                raise GitError("truncated diff-tree output")
            current.append(parse_meta(tok, tokens[i + 1]))
            i += 2
        else:
            current = found.setdefault(tok.decode("ascii"), [])
            i += 1
    missing = [oid for oid, _ in order if oid not in found]
    if missing:
        raise GitError(f"diff-tree gave no answer for commit {missing[0]}")
    return [Commit(oid, parents, tuple(found[oid])) for oid, parents in order]


# Listings started ahead (prefetch_commits), by (root, includes, excludes): (rev-list's
# output, diff-tree's).
_LISTED: dict[tuple[Path, tuple[str, ...], tuple[str, ...]], tuple[bytes, bytes]] = {}


def prefetch_commits(root: Path, include: str, exclude: Sequence[str]) -> None:
    """Start `commits(root, include, exclude)`'s git work in a thread now (the listing,
    then every commit's changes), while the caller imports the rest: the next such call
    takes its answer (or what it raised), once (git/process.py's contract)."""
    key = (root, (include,), tuple(exclude))

    def work() -> None:
        _LISTED[key] = _listing(root, _rev_list_args([include], exclude, ()), ())

    start_work(("commits", *key), work)


def _listing(root: Path, rev_list: Sequence[str], paths: Sequence[str]) -> tuple[bytes, bytes]:
    """rev-list's answer, and diff-tree's for every commit it lists (nothing for none)."""
    listing = run(rev_list, cwd=root)
    oids = b"".join(line.split(b" ", 1)[0] + b"\n" for line in listing.splitlines())
    if not oids:
        return listing, b""
    out = run(
        ["diff-tree", "--stdin", "--always", "--root", "-c", *DIFF_FLAGS, "--", *(f":(literal){p}" for p in paths)],
        cwd=root,
        stdin=oids,
    )
    return listing, out


def _refuse_cut_history(root: Path, oid: str) -> None:
    """A commit that looks like a root but whose object names parents: a shallow clone
    cut its history. Judged as a root commit it would be compared with the empty tree,
    and whatever it deleted or rewrote (an approved plan, a log) would vanish."""
    raw = run(["cat-file", "commit", oid], cwd=root)
    header = raw.split(b"\n\n", 1)[0]
    if any(line.startswith(b"parent ") for line in header.split(b"\n")):
        raise HarnessGateError("HG905", f"the parents of commit {oid[:12]} are not in this shallow clone")


def merge_base(root: Path, a: str, b: str) -> str | None:
    proc_out = run_status(["merge-base", a, b], cwd=root)
    if proc_out is None:
        return None
    return proc_out.decode().strip() or None


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    return run_status(["merge-base", "--is-ancestor", ancestor, descendant], cwd=root) is not None


def reachable_from(root: Path, commit: str, tips: Sequence[str]) -> bool:
    """Whether `commit` is in the history of one of `tips` (commit ids): nothing of it
    is left once their histories are taken away."""
    lines = [commit, *(f"^{t}" for t in tips)]
    out = run(["rev-list", "--max-count=1", "--stdin", "--"], cwd=root, stdin=("\n".join(lines) + "\n").encode())
    return not out.strip()


def branch_tips(root: Path) -> dict[str, str]:
    """Every branch (`refs/heads/...`) and the commit it points at."""
    out = run(["for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads/"], cwd=root)
    found = (line.split("\0", 1) for line in out.decode("utf-8", "surrogateescape").splitlines() if "\0" in line)
    return dict(found)


def parents(root: Path, rev: str) -> list[str]:
    out = run(["rev-list", "--parents", "-n", "1", "--end-of-options", rev, "--"], cwd=root).decode().split()
    return out[1:]


def is_shallow(root: Path) -> bool:
    return run(["rev-parse", "--is-shallow-repository"], cwd=root).strip() == b"true"


def shallow_commits(root: Path) -> frozenset[str]:
    """The commits a shallow clone cut the history at: they look like roots, but are not."""
    path = git_path(root, "shallow")
    try:
        return frozenset(path.read_bytes().decode("ascii").split())
    except FileNotFoundError:
        return frozenset()
    except (OSError, UnicodeDecodeError) as exc:
        raise GitError(f"cannot read the shallow file {path}: {exc}") from None


def root_commits(root: Path, rev: str) -> frozenset[str]:
    """The root commits of `rev`'s history (more than one after merging unrelated histories)."""
    out = run(["rev-list", "--max-parents=0", "--end-of-options", rev, "--"], cwd=root)
    return frozenset(out.decode().split())


def is_root_commit(root: Path, oid: str) -> bool:
    """Whether `oid` is a commit of this object store that has no parents."""
    out = run(["cat-file", "--batch"], cwd=root, stdin=f"{oid}\n".encode())
    first, _, body = out.partition(b"\n")
    if first.split(b" ")[1:2] != [b"commit"]:
        return False  # "<oid> missing", or not a commit
    header = body.split(b"\n\n", 1)[0]
    return not any(line.startswith(b"parent ") for line in header.split(b"\n"))


def last_change(root: Path, rev: str, path: str) -> tuple[str, str] | None:
    """The newest commit up to `rev` that changed `path`, and its committer date (ISO
    8601); None when no commit did."""
    out = run(["log", "-1", "--format=%H%x00%cI", rev, "--", path], cwd=root).decode().strip()
    oid, _, when = out.partition("\0")
    return (oid, when) if oid else None


def subjects(root: Path, oids: Sequence[str]) -> dict[str, str]:
    """The subject line of each commit, by id."""
    if not oids:
        return {}
    raw = run(
        ["log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%s%x00"],
        cwd=root,
        stdin="".join(f"{o}\n" for o in oids).encode(),
    )
    parts = raw.decode("utf-8", "surrogateescape").split("\0")
    return {parts[i].strip(): parts[i + 1] for i in range(0, len(parts) - 1, 2)}


# -- who added a line, who signed a commit ----------------------------------------------


@dataclass(frozen=True)
class Blame:
    commits: tuple[str, ...]  # the commit that added each line, in line order
    boundary: frozenset[str]  # commits blame stopped at (shallow history): attribution unknown


_BLAME_HEADER = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64}) [0-9]+ ([0-9]+)(?: [0-9]+)?\Z")


def blame(root: Path, rev: str, path: str) -> Blame:
    """Which commit added each line of `path` at `rev`. Repository settings that make
    blame attribute a line to another commit than the one that wrote it (ignored
    revisions) are overridden."""
    # `--ignore-revs-file ""` clears the files blame.ignoreRevsFile names (an empty
    # value in `-c` would not: that setting only ever adds files).
    out = run(["blame", "--porcelain", "--root", "--ignore-revs-file", "", rev, "--", path], cwd=root)
    by_line: dict[int, str] = {}
    boundary: set[str] = set()
    current = ""
    for line in out.split(b"\n"):
        m = _BLAME_HEADER.match(line)
        if m:
            current = m.group(1).decode()
            by_line[int(m.group(2))] = current
        elif line == b"boundary":
            boundary.add(current)
    if sorted(by_line) != list(range(1, len(by_line) + 1)):
        # A gap would shift every later line onto another commit.
        raise GitError(f"`git blame` of {path} did not attribute every line")
    return Blame(tuple(by_line[n] for n in sorted(by_line)), frozenset(boundary))


@dataclass(frozen=True)
class Signature:
    status: str  # git's %G?: G good, B bad, U unknown validity, X/Y expired, R revoked, E cannot check, N none
    key: str  # the key's fingerprint (%GF), "" when unsigned
    signer: str  # the principal the allowed-signers file names (%GS)


_NO_PROGRAM = "/nonexistent/harness-gate-refuses-this-signature-format"


def signatures(root: Path, oids: Sequence[str], allowed_signers: Path) -> dict[str, Signature]:
    """Verify the commits' signatures against `allowed_signers` (SSH format) only.

    The verifying program is ssh-keygen from PATH, never one named by repository
    configuration; GPG and X.509 programs point nowhere, so a signature in those
    formats can never count as good.
    """
    if not oids:
        return {}
    import shutil  # noqa: PLC0415

    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        raise HarnessGateError("HG906", "ssh-keygen is not on PATH; signed approvals cannot be verified")
    settings = {
        "gpg.ssh.allowedSignersFile": str(allowed_signers),
        "gpg.ssh.program": ssh_keygen,
        "gpg.ssh.revocationFile": "",
        "gpg.program": _NO_PROGRAM,
        "gpg.openpgp.program": _NO_PROGRAM,
        "gpg.x509.program": _NO_PROGRAM,
        "log.showSignature": "false",
    }
    args: list[str] = []
    for key, value in settings.items():
        args += ["-c", f"{key}={value}"]
    out = run(
        [*args, "log", "--no-walk=unsorted", "--stdin", "-z", "--format=%H%x01%G?%x01%GF%x01%GS"],
        cwd=root,
        stdin="".join(f"{oid}\n" for oid in oids).encode(),
    )
    found: dict[str, Signature] = {}
    for rec in out.split(b"\0"):
        fields = rec.strip(b"\n").split(b"\x01")
        if len(fields) == 4:
            oid, status, key, signer = (f.decode("utf-8", "replace") for f in fields)
            found[oid] = Signature(status, key, signer)
    missing = [o for o in oids if o not in found]
    if missing:
        raise GitError(f"`git log` gave no signature status for {missing[0]}")
    return found


# -- branches and their base -------------------------------------------------------------

# Where a branch usually comes from, in the order they are tried when the configuration
# names no base branch: the remote's default branch, then the common names.
_BASE_REFS = (
    "refs/remotes/origin/HEAD",
    "refs/remotes/origin/main",
    "refs/remotes/origin/master",
    "refs/heads/main",
    "refs/heads/master",
)


def base_refs(configured: str | None) -> list[str]:
    """What `rev-list --not` takes to leave out the base branch's history: the configured
    `base_branch` (which must name a commit here), else every usual name of it (a missing
    one selects nothing)."""
    if configured:
        return [f"{configured}^{{commit}}"]
    return [f"--glob={_exactly(ref)}" for ref in _BASE_REFS]


def configured_base(root: Path, configured: str) -> str:
    """The commit `base_branch` names; a configuration error when it names none here."""
    found = resolve(root, configured)
    if found is None:
        raise HarnessGateError(
            "HG902",
            f"base_branch `{configured}` names no commit in this clone",
            "Name a ref that exists here, as git spells it: `origin/develop` (a remote branch) or `develop` (a local "
            "one); or fetch it (docs/config.md).",
        )
    return found


def _exactly(ref: str) -> str:
    """A `--glob` pattern for exactly one ref: a pattern without `?`, `*` or `[` means
    everything below it (`refs/heads/main/*`), so one letter goes in brackets."""
    cut = ref.rindex("/") + 1
    return f"{ref[:cut]}[{ref[cut]}]{ref[cut + 1 :]}"


# At most this many of a branch's own commits are walked locally (a repository with no base
# branch under any usual name would otherwise walk its whole history on every commit).
BRANCH_COMMITS_LIMIT = 2000


def prefetch_branch_commits(root: Path, head: str, configured: str | None = None) -> None:
    """Start `origins.locally`'s listing of the branch's own commits now."""
    start(_rev_list_args([head], [], base_refs(configured), BRANCH_COMMITS_LIMIT), cwd=root)


def default_base(root: Path, configured: str | None = None) -> str | None:
    """The commit of the branch work is merged into (`base_branch` in the configuration,
    else the remote's default branch, else `main`/`master`), or None when there is none."""
    if configured:
        return configured_base(root, configured)
    out = run(["for-each-ref", "--format=%(refname)%00%(objectname)", *_BASE_REFS], cwd=root)
    found = dict(line.split("\0", 1) for line in out.decode("utf-8", "replace").splitlines() if "\0" in line)
    for ref in _BASE_REFS:
        if ref in found:
            return resolve(root, found[ref])  # a tag or a symbolic ref: peeled to its commit
    return None


def fork_point(root: Path, configured: str | None, head: str) -> str | None:
    """Where `head` left the base branch (`default_base`): their merge base; `head` itself
    when there is no base branch; None when they share no history."""
    base = default_base(root, configured)
    return merge_base(root, base, head) if base else head


def remote_has_branches(root: Path, remote: str) -> bool:
    out = run(["for-each-ref", "--count=1", "--format=%(refname)", f"refs/remotes/{remote}/"], cwd=root)
    return bool(out.strip())


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (`main`), or None when HEAD is detached."""
    out = run_status(["symbolic-ref", "-q", "HEAD"], cwd=root)
    ref = out.decode("utf-8", "surrogateescape").strip() if out else ""
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


def branch_setting(root: Path, branch: str, name: str) -> str | None:
    """`branch.<branch>.<name>` from the repository's own configuration file."""
    out = run_status(["config", "--local", "--get", f"branch.{branch}.{name}"], cwd=root)
    return out.decode("utf-8", "surrogateescape").strip() if out is not None else None


def set_branch_setting(root: Path, branch: str, name: str, value: str) -> None:
    act(["config", "--local", f"branch.{branch}.{name}", value], cwd=root)
