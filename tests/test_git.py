"""The git module's bulk paths against their one-at-a-time definitions, in real repositories."""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_gate
from harness_gate import boundary, git
from harness_gate.errors import GitError
from harness_gate.git import diff, index, objects, process
from tests.adversarial.util import executable
from tests.helpers import Repo


def _blob(repo: Repo, data: bytes) -> str:
    return repo.git("hash-object", "-w", "--stdin", input=data).decode().strip()


def test_bulk_raw_diff_parse_equals_the_record_by_record_parse(repo: Repo) -> None:
    """Additions, deletions, edits, a mode change, a symlink and a submodule, in one diff."""
    repo.write("keep.txt", "k\n")
    repo.write("edit.txt", "a\n")
    repo.write("gone.txt", "g\n")
    repo.write("run.sh", "echo\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "base")
    repo.write("edit.txt", "b\n")
    (repo.path / "gone.txt").unlink()
    repo.write("new dir/new file.txt", "n\n")
    (repo.path / "link").symlink_to("keep.txt")
    repo.git("add", "-A")
    repo.git("update-index", "--chmod=+x", "run.sh")
    sub = _blob(repo, b"any object id will do\n")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/sub")
    raw = git.run(["diff-index", "--cached", *git.DIFF_FLAGS, "HEAD", "--"], cwd=repo.path)
    tokens = raw.split(b"\0")[:-1]
    one_by_one = [diff.parse_meta(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]
    assert diff._one_parent_fields(tokens[0::2]) is not None, "the bulk path is the one under test"
    assert git.parse_raw(raw) == one_by_one
    assert {c.status for c in one_by_one} == {"A", "D", "M"}
    assert {c.new_mode for c in one_by_one} >= {"100755", "120000", "160000", "000000"}
    # One record, and none.
    assert git.parse_raw(b"".join(t + b"\0" for t in tokens[:2])) == one_by_one[:1]
    assert git.parse_raw(b"") == []


@pytest.mark.parametrize(
    "raw",
    [
        b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0path",  # no final NUL
        b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0",  # a record without its path
        b":100644 100644 " + b"a" * 40 + b" M\0path\0",  # a field missing
        # Fields that add up over two records, but not within each.
        b":100644 100644 "
        + b"a" * 40
        + b" "
        + b"a" * 40
        + b" M :100644\0p1\0"
        + b"100644 "
        + b"a" * 40
        + b" "
        + b"a" * 40
        + b" M\0p2\0",
    ],
)
def test_malformed_raw_diff_is_an_error(raw: bytes) -> None:
    with pytest.raises(GitError):
        git.parse_raw(raw)


def _staged_mix(repo: Repo) -> bytes:
    """A staged diff of many records (edits, additions, deletions, a symlink): the raw
    answer `staged_changes` reads."""
    for i in range(40):
        repo.write(f"d{i % 3}/f{i}.txt", f"{i}\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "base")
    for i in range(0, 40, 3):
        repo.write(f"d{i % 3}/f{i}.txt", "edited\n")
    for i in range(1, 40, 3):
        (repo.path / f"d{i % 3}/f{i}.txt").unlink()
    repo.write("new/ä b.txt", "n\n")
    (repo.path / "link").symlink_to("d0/f0.txt")
    repo.git("add", "-A")
    return git.run(["diff-index", "--cached", *git.DIFF_FLAGS, "HEAD", "--"], cwd=repo.path)


@pytest.mark.parametrize("block", [1, 2, 7, 97, 100, 1 << 18])
def test_the_raw_diff_read_in_blocks_is_the_raw_diff_read_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Blocks that end anywhere: inside a record's metadata, inside a path, on a NUL."""
    raw = _staged_mix(repo)
    monkeypatch.setattr(diff, "_RAW_BLOCK", block)
    assert diff.parse_raw_stream(io.BytesIO(raw)) == git.parse_raw(raw)
    assert len(git.parse_raw(raw)) > 20
    assert git.staged_changes(repo.path, "HEAD") == git.parse_raw(raw)
    git.prefetch_staged(repo.path, "HEAD")  # the answer of a command started ahead, too
    assert git.staged_changes(repo.path, "HEAD") == git.parse_raw(raw)
    assert diff.parse_raw_stream(io.BytesIO(b"")) == []


@pytest.mark.parametrize("block", [1, 5, 1 << 18])
@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0path", "no final NUL"),
        (b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0", "truncated raw diff output"),
        (b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M", "no final NUL"),
        (b":100644 100644 " + b"a" * 40 + b" M\0path\0", "unexpected raw diff line"),
    ],
)
def test_a_malformed_raw_diff_read_in_blocks_is_the_same_error(
    monkeypatch: pytest.MonkeyPatch, block: int, raw: bytes, reason: str
) -> None:
    monkeypatch.setattr(diff, "_RAW_BLOCK", block)
    with pytest.raises(GitError) as whole:
        git.parse_raw(raw)
    with pytest.raises(GitError) as streamed:
        diff.parse_raw_stream(io.BytesIO(raw))
    assert reason in str(streamed.value)
    assert str(streamed.value) == str(whole.value)


def _index_verified(repo: Repo) -> None:
    index._VERIFIED.clear()  # checked once per file state: every state here is checked anew
    git.verify_index(repo.path)


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_index_checksum_is_read_in_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, object_format: str
) -> None:
    """An index of many blocks is judged as one read whole: intact, a byte changed in any
    block, cut short, or with the zero trailer of `index.skipHash`."""
    path = tmp_path / "r"
    path.mkdir()
    repo = Repo(path)
    repo.git("init", "-q", f"--object-format={object_format}")
    for i in range(30):
        repo.write(f"f{i}.txt", f"{i}\n")
    repo.git("add", "-A")
    monkeypatch.setattr(index, "_BLOCK", 7)
    _index_verified(repo)
    file = path / ".git" / "index"
    data = file.read_bytes()
    width = 20 if object_format == "sha1" else 32
    for at in (4, 12, len(data) // 2, len(data) - width - 1, len(data) - 1):
        file.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
        with pytest.raises(GitError, match="corrupt"):
            _index_verified(repo)
    for cut in (3, 11, len(data) // 2, len(data) - 1):
        file.write_bytes(data[:cut])
        with pytest.raises(GitError, match="corrupt"):
            _index_verified(repo)
    file.write_bytes(data[:-width] + bytes(width))  # index.skipHash: no checksum written
    _index_verified(repo)
    file.write_bytes(data)
    _index_verified(repo)
    file.unlink()  # no index: an empty one
    _index_verified(repo)


def test_capped_reads_skip_what_is_over_the_cap(repo: Repo) -> None:
    small, large = _blob(repo, b"small\n"), _blob(repo, b"L" * (3 << 20))
    contents, sizes = git.read_blobs_capped(repo.path, {small: 100, large: 1 << 20})
    assert contents == {small: b"small\n"}
    assert sizes == {small: 6, large: 3 << 20}


@pytest.mark.slow
def test_capped_reads_of_more_than_a_pipe_holds(repo: Repo) -> None:
    """Requests and answers far larger than a pipe's buffer: written while read."""
    data = {f"blob {i}\n".encode() * 50 for i in range(3000)}
    paths = []
    for i, d in enumerate(sorted(data)):
        p = repo.path / "blobs" / f"{i}"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(d)
        paths.append(str(p))
    ids = repo.git("hash-object", "-w", "--stdin-paths", input="\n".join(paths).encode()).decode().split()
    contents, sizes = git.read_blobs_capped(repo.path, dict.fromkeys(ids, 1 << 20))
    assert sorted(contents.values()) == sorted(data)
    assert len(sizes) == 3000


def test_capped_reads_of_a_missing_object_are_an_error(repo: Repo) -> None:
    with pytest.raises(GitError):
        git.read_blobs_capped(repo.path, {"0123456789" * 4: 10})


_names = st.lists(st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b), max_size=30)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(paths=_names, words=st.lists(st.binary(min_size=1, max_size=4).filter(lambda b: b"\0" not in b), max_size=4))
def test_holding_equals_a_search_per_path(paths: list[bytes], words: list[bytes]) -> None:
    assert boundary.holding(paths, words) == {p for p in paths if any(w in p for w in words)}
    lowered = [w.lower() for w in words]
    expected = {p for p in paths if any(w in p.lower() for w in lowered)}
    assert boundary.holding(paths, lowered, lower=True) == expected


def test_holding_across_its_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths searched a batch at a time are found in every batch, the last one short."""
    monkeypatch.setattr(boundary, "_HOLDING_BATCH", 3)
    paths = [f"d{i}/{'CLAUDE.md' if i % 4 == 0 else 'x.py'}".encode() for i in range(10)]
    assert boundary.holding(paths, [b"claude.md"], lower=True) == {p for p in paths if b"CLAUDE" in p}
    assert boundary.holding(paths, [b"d9/"]) == {b"d9/x.py"}
    assert boundary.holding(paths, [b"d"]) == set(paths)
    assert boundary.holding([], [b"d"]) == set()


def _commit(repo: Repo, name: str) -> str:
    repo.write(name, f"{name}\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", name)
    return repo.git("rev-parse", "HEAD").decode().strip()


def test_a_started_command_answers_only_the_same_question(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same directory, arguments, input and GIT_INDEX_FILE: the started answer, even when
    the repository moved since (what the hook asks within one check). Anything else: git
    is asked again."""
    first = _commit(repo, "a")
    args = ["rev-parse", "HEAD"]
    git.start(args, cwd=repo.path)
    second = _commit(repo, "b")
    assert git.run(args, cwd=repo.path).decode().strip() == first  # the started answer
    assert git.run(args, cwd=repo.path).decode().strip() == second  # used once
    git.start(args, cwd=repo.path)
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo.path / ".git" / "index"))
    _commit(repo, "c")
    assert git.run(args, cwd=repo.path).decode().strip() != second  # another index: asked again
    monkeypatch.delenv("GIT_INDEX_FILE")
    git.discard_started()
    blob = _blob(repo, b"x\n")
    git.start(["cat-file", "--batch"], cwd=repo.path, stdin=b"HEAD\n")
    assert git.run(["cat-file", "--batch"], cwd=repo.path, stdin=f"{blob}\n".encode()).endswith(b"x\n\n")
    git.discard_started()


def test_a_started_command_that_fails_is_an_error(repo: Repo) -> None:
    _commit(repo, "a")
    args = ["rev-parse", "--verify", "no-such-ref"]
    git.start(args, cwd=repo.path)
    with pytest.raises(GitError):
        git.run(args, cwd=repo.path)


def test_discarding_stops_and_forgets(repo: Repo) -> None:
    _commit(repo, "a")
    git.start(["cat-file", "--batch"], cwd=repo.path, stdin=b"HEAD\n")
    git.prefetch_staged(repo.path, "HEAD")
    started = list(process._STARTED.values())
    assert started and process._WORK
    git.discard_started()
    assert not process._STARTED and not process._WORK
    assert all(s.proc.returncode is not None and s.out.closed for s in started)


def test_discarding_goes_on_past_a_failure(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    _commit(repo, "a")
    git.start(["rev-parse", "HEAD"], cwd=repo.path)
    git.start(["rev-parse", "HEAD~0"], cwd=repo.path)
    started = list(process._STARTED.values())

    def broken() -> None:
        raise OSError("injected")

    monkeypatch.setattr(started[-1], "discard", broken)  # the first one discarded (last in)
    git.discard_started()  # does not raise
    assert not process._STARTED
    assert started[0].out.closed  # the one after the failure was discarded too
    type(started[-1]).discard(started[-1])  # the test's own leftover


def test_capped_reads_report_why_git_failed(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        git.read_blobs_capped(tmp_path, {"0123456789" * 4: 10})


def test_reading_paths_by_name(repo: Repo) -> None:
    """Blobs only, each with its id; an absent path and a directory are left out."""
    repo.write("with space.toml", "a = 1\n")
    repo.write("dir/x", "x\n")
    head = _commit(repo, "f")
    found = git.read_paths(repo.path, head, ["with space.toml", "absent.toml", "dir", "f"])
    assert found == {
        "with space.toml": (_blob(repo, b"a = 1\n"), b"a = 1\n"),
        "f": (_blob(repo, b"f\n"), b"f\n"),
    }


def test_reading_a_missing_blob_is_an_error(repo: Repo) -> None:
    with pytest.raises(GitError, match="not a readable blob"):
        git.read_blobs(repo.path, ["0123456789" * 4])


@pytest.mark.parametrize(
    "out",
    [b"", b"0123 blob 5\nabc", b"0123 blob 3\nabc", b"0123 blob x\nabc\n", b"0123 blob 3\nabcd\n"],
    ids=["nothing", "short", "no-final-newline", "bad-size", "longer-than-said"],
)
def test_batch_answers_are_framed_exactly(out: bytes) -> None:
    with pytest.raises(GitError):
        list(objects._batch_answers(out, ["HEAD:a"]))


# -- the process layer: the one way git starts, the one report of its failure ------------

# Modules that may start a program, and why: git/process.py is the one way git starts;
# runner.py runs the plan's verify commands, which are the user's programs, not git;
# lean.py, the hook's lean path, starts its few git commands itself (with plumbing.py's
# hardening), since importing git/ would load the package it exists not to load.
STARTS_PROGRAMS = {"git/process.py", "runner.py", "lean.py"}
# Of those, the modules that start git: a command line that begins with "git".
STARTS_GIT = {"git/process.py", "lean.py"}
_OS_STARTERS = re.compile(r"system|popen|spawn\w*|exec\w*|posix_spawn\w*|fork\w*")


def _starts_programs(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "subprocess" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "subprocess":
            return True
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and _OS_STARTERS.fullmatch(node.attr)
        ):
            return True
    return False


@pytest.mark.slow
def test_only_the_process_layer_starts_git() -> None:
    """No module but git/process.py (and runner.py, for the user's verify commands, and
    lean.py, the hook's lean path, with plumbing.py's hardening) imports subprocess or
    starts a program through os: every git call goes through the
    hardened environment and the one failure report."""
    package = Path(harness_gate.__file__).parent
    starting = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if _starts_programs(path.read_text(encoding="utf-8"))
    }
    assert starting == STARTS_PROGRAMS


_SUBPROCESS_STARTERS = frozenset({"Popen", "run", "call", "check_call", "check_output"})


def _starter(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _SUBPROCESS_STARTERS or bool(_OS_STARTERS.fullmatch(name))


def _starts_git(source: str) -> bool:
    """Whether the module spells a command line that runs git: a list or tuple whose first
    item is "git", or a program "git" handed to a call that starts one."""
    for node in ast.walk(ast.parse(source)):
        first = node.elts[0] if isinstance(node, (ast.List, ast.Tuple)) and node.elts else None
        if isinstance(node, ast.Call) and node.args and _starter(node.func):
            first = node.args[0]
        if isinstance(first, ast.Constant) and first.value == "git":
            return True
    return False


def test_only_the_process_layer_and_the_lean_path_start_git() -> None:
    """git starts in git/process.py and lean.py only; runner.py starts the user's programs,
    never git of its own."""
    package = Path(harness_gate.__file__).parent
    starting = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if _starts_git(path.read_text(encoding="utf-8"))
    }
    assert starting == STARTS_GIT
    assert STARTS_GIT <= STARTS_PROGRAMS


def _two_commits(repo: Repo) -> tuple[str, str, str]:
    """(first commit, second commit, blob of a.txt): loose objects, never packed."""
    first = _commit(repo, "a.txt")
    second = _commit(repo, "b.txt")
    return first, second, _blob(repo, b"a.txt\n")


def _corrupt(repo: Repo, oid: str) -> None:
    """The loose object `oid` replaced by bytes that do not inflate."""
    path = repo.path / ".git" / "objects" / oid[:2] / oid[2:]
    path.unlink()
    path.write_bytes(b"not a zlib stream")


def _started_read(root: Path, first: str) -> object:
    git.prefetch_tree_entries(root, first)
    return git.tree_entries(root, first)


# Each way git is started, by a read that takes it, and what it reads of the first commit:
# name -> (subcommand, read).
READS: dict[str, tuple[str, Callable[[Path, str, str, str], object]]] = {
    "run": ("ls-tree", lambda root, first, second, blob: git.tree_entries(root, first)),
    "started": ("ls-tree", lambda root, first, second, blob: _started_read(root, first)),
    "run_status": ("merge-base", lambda root, first, second, blob: git.merge_base(root, second, first)),
    "run_code": ("merge-tree", lambda root, first, second, blob: git.merge_result(root, second, first)),
    "streamed": (
        "diff-tree",
        lambda root, first, second, blob: list(git.tree_patch_chunks(root, git.empty_tree(root), first)),
    ),
    "streamed with input": ("cat-file", lambda root, first, second, blob: git.read_blobs(root, [blob])),
    "history": ("rev-list", lambda root, first, second, blob: git.commits(root, second, [])),
}


@pytest.mark.parametrize("way", list(READS))
def test_a_corrupt_object_fails_closed_in_every_way_git_starts(repo: Repo, way: str) -> None:
    """Loose objects that do not inflate (the first commit, and a blob): each way git is
    started reports git's own failure as one GitError shape, never an answer. (A corrupt
    blob is "missing" to `cat-file --batch`, which exits 0: its reader refuses the answer.)"""
    first, second, blob = _two_commits(repo)
    _corrupt(repo, first)
    _corrupt(repo, blob)
    shape = r"object \w+ is not a readable blob" if way == "streamed with input" else r"`git [^`]+` failed: .+"
    with pytest.raises(GitError) as failed:
        READS[way][1](repo.path, first, second, blob)
    assert re.fullmatch(shape, failed.value.message), failed.value.message
    assert failed.value.code == "HG903"
    git.discard_started()


@pytest.mark.parametrize("way", list(READS))
def test_a_silent_git_failure_has_one_shape(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    """git exits 3 without a word: every way of starting it says the same thing, the
    command and its exit code."""
    first, second, blob = _two_commits(repo)
    subcommand, read = READS[way]
    real = shutil.which("git")
    bin_dir = tmp_path / "silent-bin"
    executable(
        bin_dir / "git",
        f"""#!/bin/sh
for a in "$@"; do
  if [ "$a" = "{subcommand}" ]; then exit 3; fi
done
exec "{real}" "$@"
""",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(GitError, match=rf"\A`git {subcommand}[^`]*` failed: exit code 3\Z"):
        read(repo.path, first, second, blob)
    git.discard_started()
