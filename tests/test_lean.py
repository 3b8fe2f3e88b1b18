"""The staged check's lean path (lean.py) against the full check: it passes only what the
full check passes, and hands over whenever anything is uncommon or the key moved.

The whole suite is a differential test too: every staged check it runs through
`Repo.cli`, `Repo.run` or `run_json` first asks the lean path, and a lean pass must be a
full pass there (tests/helpers.py `lean_passes`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_gate import boundary, lean
from harness_gate.origins import SELECTION_KEY
from tests.adversarial.util import BOUNDARY_ONLY, commit, setup_gated
from tests.helpers import Repo

HOOK = ("check", "--stage", "pre-commit", "--staged")


def full(repo: Repo) -> int:
    """The full check's exit code (`--format text` is never the lean path's)."""
    return repo.run(*HOOK, "--format", "text").returncode


def lean_passes(repo: Repo) -> bool:
    here = Path.cwd()
    os.chdir(repo.path)
    try:
        return lean._passes()
    finally:
        os.chdir(here)


def recorded(repo: Repo) -> Repo:
    """`repo` after a full check that passed an ordinary change (`src/a.py` edited), which
    leaves the record."""
    repo.write("src/a.py", "a = 2\n")
    repo.git("add", "-A")
    assert full(repo) == 0
    assert (repo.path / ".git" / "harness-gate" / "cache" / lean.RECORD).is_file()
    return repo


@pytest.mark.slow
def test_an_ordinary_commit_is_answered_from_the_record(gated: Repo) -> None:
    repo = recorded(gated)
    repo.write("src/new/b.py", "b = 1\n")
    (repo.path / "src" / "a.py").unlink()
    repo.git("add", "-A")
    assert lean_passes(repo)
    proc = repo.run(*HOOK)
    assert (proc.returncode, proc.stdout) == (0, lean.PASSED.encode())
    assert full(repo) == 0


@pytest.mark.slow
def test_no_record_without_a_passed_ordinary_change(gated: Repo) -> None:
    gated.write("other.py", "x = 2\n")  # outside the boundary: blocked, nothing recorded
    gated.git("add", "-A")
    assert full(gated) == 1
    assert not (gated.path / ".git" / "harness-gate" / "cache" / lean.RECORD).exists()
    gated.git("reset", "-q")
    gated.write("src/a.py", "a = 3\n")
    gated.git("add", "-A")
    assert not lean_passes(gated)


def _symlink(repo: Repo) -> None:
    (repo.path / "src" / "link").symlink_to("a.py")


def _gitlink(repo: Repo) -> None:
    oid = repo.git("rev-parse", "HEAD").decode().strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{oid},src/sub")


def _merge_head(repo: Repo) -> None:
    (repo.path / ".git" / "MERGE_HEAD").write_text(repo.git("rev-parse", "HEAD").decode())


def _corrupt_index(repo: Repo) -> None:
    index = repo.path / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))


# Each makes the staged change uncommon (or the repository's state): the lean path hands over.
UNCOMMON = {
    "outside the boundary": lambda r: r.write("other.py", "x = 2\n"),
    "deleted outside the boundary": lambda r: (r.path / "other.py").unlink(),
    "a symlink": _symlink,
    "the artifacts root": lambda r: r.write("harness/plans/p1/notes.md", "n\n"),
    "a protected name": lambda r: r.write("src/.gitignore", "build/\n"),
    "a protected name in another case": lambda r: r.write("src/CLAUDE.md", "x\n"),
    "a control character": lambda r: r.write("src/a\tb.py", "x\n"),
    "a non-ASCII name": lambda r: r.write("src/\u00e4.py", "x\n"),
}
AFTER_ADD = {
    "a submodule": _gitlink,
    "a merge in progress": _merge_head,
    "a corrupt index": _corrupt_index,
    "an executable made a symlink's mode": lambda r: r.git(
        "update-index", "--cacheinfo", f"120000,{r.git('hash-object', '-w', 'src/a.py').decode().strip()},src/a.py"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*UNCOMMON, *AFTER_ADD])
def test_anything_uncommon_is_handed_over(gated: Repo, name: str) -> None:
    repo = recorded(gated)
    UNCOMMON.get(name, lambda r: None)(repo)
    repo.write("src/c.py", "c = 1\n")
    repo.git("add", "-A")
    AFTER_ADD.get(name, lambda r: None)(repo)
    assert not lean_passes(repo), name


@pytest.mark.slow
def test_nothing_staged_is_handed_over(gated: Repo) -> None:
    repo = recorded(gated)
    repo.git("commit", "-qm", "a", "--no-verify")
    assert not lean_passes(repo)


@pytest.mark.slow
def test_a_path_only_a_wildcard_allows_is_the_full_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "r")
    repo.path.mkdir()
    repo.git("init", "-q")
    monkeypatch.chdir(repo.path)
    setup_gated(repo, boundary=("src/*.py", "docs/**"))
    repo.write("docs/a.md", "a\n")
    repo.git("add", "-A")
    assert full(repo) == 0
    repo.write("src/b.py", "b\n")
    repo.git("add", "-A")
    assert not lean_passes(repo)  # `src/*.py` allows it, but no prefix does
    assert full(repo) == 0
    repo.git("reset", "-q", "--", "src/b.py")
    repo.write("docs/deep/er.md", "b\n")
    repo.git("add", "docs")
    assert lean_passes(repo)


@pytest.mark.slow
def test_the_key_moves_with_the_state_it_stands_on(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new commit (the plan's folder gone: no plan is open), the branch's `plan use`
    choice, another branch at the same commit, the repository's configuration, the
    environment, harness-gate's own source: each is another key. Going back to the same
    state is the same key again."""
    repo = recorded(gated)
    assert lean_passes(repo)
    head = repo.git("rev-parse", "HEAD").decode().strip()
    repo.git("stash", "-q")
    repo.git("rm", "-q", "-r", "harness/plans/p1")
    commit(repo, "the plan's folder removed")
    repo.write("src/a.py", "a = 4\n")
    repo.git("add", "-A")
    assert not lean_passes(repo)
    assert full(repo) == 1  # no plan: a stale record would have passed it
    repo.git("reset", "-q", "--hard", head)
    repo.git("stash", "pop", "-q")
    repo.git("add", "-A")
    assert lean_passes(repo)
    branch = repo.git("symbolic-ref", "--short", "HEAD").decode().strip()
    chosen = repo.git("config", f"branch.{branch}.{SELECTION_KEY}").decode().strip()  # `plan new` chose it
    repo.git("config", f"branch.{branch}.{SELECTION_KEY}", "p2")
    assert not lean_passes(repo)
    repo.git("config", f"branch.{branch}.{SELECTION_KEY}", chosen)
    assert lean_passes(repo)  # the configuration file's bytes are as they were
    repo.git("checkout", "-q", "-b", "other")
    assert not lean_passes(repo)
    repo.git("checkout", "-q", branch)
    assert not lean_passes(repo)  # the ref `other` is another key too (a base branch of any name)
    repo.git("branch", "-q", "-D", "other")
    assert lean_passes(repo)
    for name, value in (("CI", "true"), ("GIT_REFLOG_ACTION", "merge x"), ("HOME", "/nonexistent")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            assert not lean_passes(repo), name
    monkeypatch.setattr(lean, "_FINGERPRINT", ["another harness-gate"])
    assert not lean_passes(repo)


@pytest.mark.slow
def test_the_base_branch_moving_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base branch decides which plans are the branch's own: once it holds plan p1's
    commit, p1 is no longer the branch's and the full check judges by p2, which does not
    allow `src/`. The record written before cannot answer after."""
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    monkeypatch.chdir(path)
    repo = Repo(path)
    repo.write("README.md", "x\n")
    repo.write("src/a.py", "a = 1\n")
    commit(repo, "init")
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    commit(repo, "adopt")
    repo.git("checkout", "-qb", "feature")
    repo.new_plan("p1", ("src/**",))
    repo.approve(plan="p1")
    first = commit(repo, "plan p1")
    res = repo.cli(
        "plan",
        "new",
        "p2",
        "--objective",
        "Do it",
        "--verify",
        f"tests={sys.executable} -c pass",
        "--boundary",
        "docs/**",
    )
    assert res.exit_code == 0, res.output
    repo.approve(plan="p2")
    commit(repo, "plan p2")
    assert repo.cli("plan", "use", "p1").exit_code == 0
    recorded(repo)
    repo.write("src/b.py", "b = 1\n")
    repo.git("add", "-A")
    assert lean_passes(repo)
    repo.git("branch", "-f", "main", first)
    assert not lean_passes(repo)
    assert full(repo) == 1  # HG101: outside p2's boundary; a stale record would have passed it


@pytest.mark.slow
def test_every_ref_and_history_file_is_in_the_key(gated: Repo) -> None:
    """Any ref made, moved, packed or deleted (a base branch of any name), and the shallow
    and graft files: each is another key. Going back is the same key again."""
    repo = recorded(gated)
    head = repo.git("rev-parse", "HEAD").decode().strip()
    parent = repo.git("rev-parse", "HEAD~1").decode().strip()
    assert lean_passes(repo)
    for ref in ("refs/heads/develop", "refs/remotes/origin/main", "refs/remotes/upstream/x", "refs/tags/v1"):
        repo.git("update-ref", ref, parent)
        assert not lean_passes(repo), ref
        repo.git("update-ref", ref, head)
        assert not lean_passes(repo), ref
        repo.git("update-ref", "-d", ref)
        assert lean_passes(repo), ref
    repo.git("update-ref", "refs/remotes/origin/main", parent)
    repo.git("pack-refs", "--all")
    assert not lean_passes(repo)
    repo.git("update-ref", "-d", "refs/remotes/origin/main")  # deleted from packed-refs
    assert lean_passes(repo)
    common = repo.path / ".git"
    for name in ("shallow", "info/grafts"):
        (common / name).parent.mkdir(exist_ok=True)
        (common / name).write_text(f"{parent}\n")
        assert not lean_passes(repo), name
        (common / name).unlink()
        assert lean_passes(repo), name


@pytest.mark.slow
def test_a_record_of_another_form_is_not_read(gated: Repo) -> None:
    repo = recorded(gated)
    path = repo.path / ".git" / "harness-gate" / "cache" / lean.RECORD
    good = path.read_bytes()
    body = good.rpartition(b"\n")[0]
    cut = body[: body.rindex(b"\0")]  # the last word lost
    for bad in (good.replace(lean.MAGIC, b"harness-gate lean record 0"), good + b"\nmore", b"", cut + good[-65:]):
        path.write_bytes(bad)
        assert not lean_passes(repo)
    path.write_bytes(good)
    assert lean_passes(repo)


@pytest.mark.slow
def test_the_lean_path_imports_almost_nothing(gated: Repo) -> None:
    repo = recorded(gated)
    probe = (
        "import sys; from harness_gate.entry import main; code = main(sys.argv[1:]); "
        "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.startswith('harness_gate')))); sys.exit(code)"
    )
    proc = subprocess.run([sys.executable, "-c", probe, *HOOK], cwd=repo.path, capture_output=True, check=False)
    assert proc.returncode == 0, proc
    loaded = ["harness_gate", "harness_gate.entry", "harness_gate.lean", "harness_gate.plumbing", "harness_gate.runs"]
    assert proc.stderr.decode().split() == loaded


# -- the prefix index and the scan, fuzzed against the boundary matcher ---------------------

_segment = st.sampled_from(["src", "a", "b.py", "x*", "[ab]", "d?", ".hidden", "c d", "**", "é", "A"])
_pattern = st.lists(_segment, min_size=1, max_size=4).map("/".join) | st.lists(_segment, min_size=1, max_size=3).map(
    lambda s: "/".join(s) + "/**"
)
_name = st.sampled_from(["src", "a", "b.py", "x1", "a", "d?", ".hidden", "c d", "B.PY", "\u00e9", "\x01", "[ab]"])
_path = st.lists(_name, min_size=1, max_size=5).map(lambda s: "/".join(s).encode("utf-8"))


def _raw(paths: list[bytes], modes: tuple[str, str] = ("100644", "100644")) -> bytes:
    meta = f":{modes[0]} {modes[1]} {'a' * 40} {'b' * 40} M".encode()
    return b"".join(meta + b"\0" + p + b"\0" for p in paths)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    patterns=st.lists(_pattern, min_size=1, max_size=6),
    paths=st.lists(_path, min_size=1, max_size=6),
    block=st.integers(min_value=1, max_value=120),
)
def test_the_prefix_index_allows_only_what_the_boundary_allows(
    patterns: list[str], paths: list[bytes], block: int
) -> None:
    """Both ways: what the scan passes, every path of it the boundary allows and none is
    uncommon; what the index names and is ordinary, the scan passes. Read in blocks cut
    anywhere, the scan says the same."""
    compiled = boundary.Boundary.compile(patterns)
    literal, dirs = boundary.prefix_index(compiled)
    words = frozenset({b".hidden"})
    raw = _raw(paths)
    inside = lean.ordinary_inside(raw, literal, dirs, words)
    assert lean.scan([raw[i : i + block] for i in range(0, len(raw), block)], literal, dirs, words) == inside
    if inside:
        assert all(compiled.matches(p) for p in paths)
        assert all(all(0x20 <= b < 0x7F for b in p) and b".hidden" not in p.lower() for p in paths)
    named = all(p in literal or lean._below(p, dirs) for p in paths)
    ordinary = all(p.translate(None, lean.UNCOMMON_BYTES) == p and b".hidden" not in p.lower() for p in paths)
    assert inside == (named and ordinary)


@pytest.mark.parametrize(
    "modes", [("120000", "100644"), ("100644", "160000"), ("000000", "120000"), ("100644", "100644")]
)
def test_the_scan_passes_regular_files_only(modes: tuple[str, str]) -> None:
    literal, dirs = boundary.prefix_index(boundary.Boundary.compile(["src/**"]))
    assert lean.ordinary_inside(_raw([b"src/a.py"], modes), literal, dirs, frozenset()) == (modes[0] == modes[1])


@pytest.mark.parametrize(
    "raw",
    [b"", _raw([b"src/a.py"])[:-1], _raw([b"src/a.py"]) + b"x\0", b":100644 100644 a b M\0src/a.py\0"],
)
def test_the_scan_refuses_what_it_cannot_read(raw: bytes) -> None:
    literal, dirs = boundary.prefix_index(boundary.Boundary.compile(["src/**"]))
    assert not lean.ordinary_inside(raw, literal, dirs, frozenset())


# -- the whole check, fuzzed: boundaries and staged paths in real repositories ----------------

_dir = st.sampled_from(["src", "lib", "docs", "src/deep", "pkg/x"])
_boundary = st.lists(
    st.one_of(_dir.map(lambda d: f"{d}/**"), _dir.map(lambda d: f"{d}/*.py"), _dir.map(lambda d: f"{d}/f.py")),
    min_size=1,
    max_size=4,
    unique=True,
)
_staged = st.lists(
    st.tuples(_dir, st.sampled_from(["f.py", "g.md", "h/i.py", "README", ".gitignore", "CLAUDE.md"])).map("/".join),
    min_size=1,
    max_size=4,
    unique=True,
)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patterns=_boundary, first=_staged, second=_staged)
def test_a_lean_pass_is_a_full_pass(patterns: list[str], first: list[str], second: list[str]) -> None:
    """A plan of fuzzed patterns; one staged change judged by the full check (which may
    leave a record), then another: where the lean path passes it, the full check does."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo(Path(tmp))
        repo.git("init", "-q")
        here = Path.cwd()
        os.chdir(repo.path)
        try:
            setup_gated(repo, boundary=tuple(patterns))
            for path in first:
                repo.write(path, "1\n")
            repo.git("add", "-A")
            full(repo)
            repo.git("reset", "-q")
            for path in second:
                repo.write(path, "2\n")
            repo.git("add", "-A")
            if lean_passes(repo):
                assert full(repo) == 0
        finally:
            os.chdir(here)
