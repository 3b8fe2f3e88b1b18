"""The boundary dialect: validation, and a differential test against git's `:(glob)` magic."""

from __future__ import annotations

import itertools
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_gate import boundary

VALID = [
    "src/app",
    "src/app/",
    "src/**",
    "**/*.py",
    "docs/**/index.md",
    "a/b/c.txt",
    "src/*.py",
    "src/[ab]*.c",
    "src/[!x]?.c",
    "README.md",
    "*",
    "src/**/tests/**",
    "name with spaces/x",
    "ünïcode/ok",
    "a]b",
]
INVALID = {
    "": "empty",
    "/etc/passwd": "absolute",
    "C:/x": "absolute",
    "./src": "leading `./`",
    "src/../x": "`..`",
    "src/./x": "`.`",
    "src\\x": "backslash",
    "!src/x": "negation",
    "src/x ": "trailing spaces",
    " src": "leading or trailing",
    ".git/hooks": "`.git/`",
    ".GIT/config": "`.git/`",
    "sub/.git/x": "`.git/`",
    "harness/plans": "artifacts root",
    "harness": "artifacts root",
    "src//x": "empty path segment",
    "src/[ab": "unclosed",
    "src/[[:alpha:]]": "character classes",
    "src/*/": "trailing `/` after a wildcard",
    ":(icase)src": "pathspec magic",
    "src/\nx": "control",
}


@pytest.mark.parametrize("pattern", VALID)
def test_valid_patterns(pattern: str) -> None:
    boundary.validate(pattern, "harness")


@pytest.mark.parametrize(("pattern", "reason"), INVALID.items())
def test_invalid_patterns_name_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(boundary.PatternError, match=None) as exc:
        boundary.validate(pattern, "harness")
    assert reason in str(exc.value)


@pytest.mark.parametrize("patterns", [["**"], ["**/*"], ["*", "*/**"], ["**/**"], ["*", "**/*"], ["***"]])
def test_boundaries_that_match_everything(patterns: list[str]) -> None:
    assert any("every path" in why for _, why in boundary.validate_all(patterns, "harness"))


def test_spec_examples() -> None:
    b = boundary.Boundary.compile(["src/app", "lib/", "src/*"])
    assert b.matches(b"src/app/x/y.py")
    assert b.matches(b"src/app")
    assert b.matches(b"lib/a")
    assert not b.matches(b"lib")
    assert b.matches(b"src/a.py")
    assert not b.matches(b"src/sub/b.py")
    assert not boundary.Boundary.compile(["s*"]).matches(b"src/a.py")
    assert not boundary.Boundary.compile(["src/A.py"]).matches(b"src/a.py")
    assert b.which(b"src/app/x") == "src/app"
    assert b.which(b"src/a.py") == "src/*"
    assert b.which(b"lib/q") == "lib/"
    assert b.which(b"other") is None


# -- differential test against git --------------------------------------------------------

NAMES = ["a", "b", "ab", "ba", "abc", "c", ".x", "a.py", "b.c", "x y", "é", "a*", "[a]", "a?", "**", "b]"]
SEGMENTS = [
    *("a", "b", "ab", "*", "?", "**", "***", "[ab]", "[!a]", "[^b]", "[]a]", "[a-b]", "a*", "*b", "*.py"),
    *(".x", "a?", "é", "[a]", "b]", "x y", "*a*", "?**", "[a]**", "a**", "*b**", "**a", "a**b", "**.py"),
]
# Character-level tokens, for patterns that segment lists never produce.
TOKENS = ["a", "b", "c", "/", "*", "**", "?", "[ab]", "[!a]", ".", "é", "x y"]


def _tree(root: Path, rng: random.Random) -> list[bytes]:
    paths: set[str] = set()
    while len(paths) < 160:
        depth = rng.randint(1, 4)
        paths.add("/".join(rng.choice(NAMES) for _ in range(depth)))
    files: list[str] = []
    for p in sorted(paths, key=len, reverse=True):
        # A path cannot be both a file and a directory.
        if any(f.startswith(p + "/") for f in files) or any(p.startswith(f + "/") for f in files):
            continue
        files.append(p)
    for f in files:
        full = root / f
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text("x")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return out.split(b"\0")[:-1]


def _git_matches(root: Path, pattern: str) -> set[bytes]:
    out = subprocess.run(
        ["git", "-c", "core.quotePath=false", "ls-files", "-z", "--", f":(glob){pattern}"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return set(out.split(b"\0")[:-1])


@pytest.fixture(scope="module")
def glob_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    root = tmp_path_factory.mktemp("globtree")
    return root, _tree(root, random.Random(1234))


def _check(root: Path, paths: list[bytes], pattern: str) -> None:
    try:
        boundary.validate(pattern, "harness")
    except boundary.PatternError:
        return
    want = _git_matches(root, pattern)
    b = boundary.Boundary.compile([pattern])
    got = {p for p in paths if b.matches(p)}
    assert got == want, f"pattern {pattern!r}: only ours {sorted(got - want)}, only git's {sorted(want - got)}"


@pytest.mark.slow
def test_all_two_segment_patterns_agree_with_git(glob_tree: tuple[Path, list[bytes]]) -> None:
    root, paths = glob_tree
    for a, b in itertools.product(SEGMENTS, repeat=2):
        _check(root, paths, f"{a}/{b}")
    for a in SEGMENTS:
        _check(root, paths, a)
        _check(root, paths, a + "/")


# Fuzzing (slow): test_all_two_segment_patterns_agree_with_git is the fast loop's comparison with git.
@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4), st.booleans())
def test_random_patterns_agree_with_git(
    glob_tree: tuple[Path, list[bytes]], segments: list[str], trailing: bool
) -> None:
    root, paths = glob_tree
    _check(root, paths, "/".join(segments) + ("/" if trailing else ""))


@pytest.mark.slow  # fuzzing, as above
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8))
def test_character_level_patterns_agree_with_git(glob_tree: tuple[Path, list[bytes]], tokens: list[str]) -> None:
    root, paths = glob_tree
    _check(root, paths, "".join(tokens))


@pytest.mark.slow
def test_combined_boundary_equals_union_of_patterns(glob_tree: tuple[Path, list[bytes]]) -> None:
    root, paths = glob_tree
    rng = random.Random(7)
    for _ in range(30):
        pats = []
        while len(pats) < 5:
            p = "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 3)))
            try:
                boundary.validate(p, "harness")
            except boundary.PatternError:
                continue
            pats.append(p)
        union: set[bytes] = set()
        for p in pats:
            union |= _git_matches(root, p)
        b = boundary.Boundary.compile(pats)
        assert {p for p in paths if b.matches(p)} == union
