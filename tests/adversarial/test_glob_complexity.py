"""Patterns built to make matching backtrack (issue 15, item 9).

A plan comes with the pull request, so its boundary patterns are the attacker's. A
backtracking translation of `**/*_*_*_*_*.py` took 10 s on one 244-byte name and
`x*/*a*a*a*a*a*a*a*a*b` minutes on a 100-character one. Every pattern must be decided in
time linear in the path's length times the pattern's, with git's `:(glob)` answers (the
oracle, as in test_glob.py; git 2.39 itself takes minutes on some of these, so it judges
each case at a small size):

* each worst case, and a boundary of thousands of them, is decided correctly in a child
  process that gets 20 s (a backtracking matcher needs from seconds to centuries there;
  the timeout fails it, not a clock reading);
* ordinary patterns keep their plain regular expression (the fast path);
* random patterns with many `*` and `**/`, alone and several in one boundary, match
  exactly what git matches, and the linear expression agrees with the plain one.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_gate import boundary, globs
from tests import helpers

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT = 20  # seconds; each case takes milliseconds when matching is linear

CHILD = """
import json, sys
from harness_gate import boundary
patterns, root, paths = json.loads(sys.stdin.read())
for pattern in patterns:
    boundary.validate(pattern, root)
b = boundary.Boundary.compile(patterns)
print(json.dumps([[b.matches(p.encode()), b.which(p.encode()) if len(patterns) == 1 else None] for p in paths]))
"""


@dataclass(frozen=True)
class Case:
    misses: list[str]  # paths the pattern does not match
    hits: list[str]  # paths it matches
    root: str = "harness"  # the artifacts root it is validated against


def _deep(n: int) -> str:
    return "/".join(["a" * n] * (n // 2))


# Each worst case at a size n: git itself (2.39) takes minutes on some at the large size,
# so it confirms the expectation at the small size, and the large one runs in the child.
WORST: dict[str, tuple[int, int, Callable[[int], Case]]] = {
    "**/*_*_*_*_*.py": (240, 6, lambda n: Case(["a/" + "_" * n + ".pz"], ["a/" + "_" * n + ".py", "a/_x_y_z_.py"])),
    "x*/*a*a*a*a*a*a*a*a*b": (
        100,
        10,
        lambda n: Case(["x/" + "a" * n, "x/" + "a" * (n - 1) + "b/c"], ["x/" + "a" * n + "b"]),
    ),
    "*a*a*a*a*a*a*a*a*a*a*b": (200, 12, lambda n: Case(["a" * n, "c/" + "a" * n + "b"], ["a" * n + "b"])),
    "?*a*a*a*a*a*a*a*a*a*a*b": (200, 12, lambda n: Case(["a" * n], ["a" * n + "b"])),
    "**/a*a*a*a*a*/**/b*b*b*b*c": (
        20,
        6,
        lambda n: Case(
            [_deep(n) + "/" + "b" * 2 * n, _deep(n) + "/b/" + "b" * 2 * n],
            [_deep(n) + "/" + "b" * 2 * n + "c", _deep(n) + "/x/y/bbbbc", "z/aaaaa/bbbbc"],
        ),
    ),
    "**/**/**/**/**/x": (300, 5, lambda n: Case(["a/" * n + "y"], ["a/" * n + "x", "x"])),
    "**/**/**/**/**/x?": (300, 5, lambda n: Case(["a/" * n + "y", "a/" * n + "x"], ["a/" * n + "xy"])),
    "a**/**/a*a/**/**/*b*b*b*b*b*c": (
        150,
        4,
        lambda n: Case(["a" + "/aa" * n + "/" + "b" * 12], ["aa/aaa/bbbbbbc", "a" + "/aa" * n + "/bbbbbc"]),
    ),
    # Validation compares a pattern's first component with the artifacts root's name.
    "*a*a*a*a*a*a*a*a*a*a*b/x": (200, 12, lambda n: Case(["a" * n + "/x"], ["a" * 10 + "b/x"], root="a" * n)),
}


def _stage(repo: helpers.Repo, paths: list[str]) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    repo.git("update-index", "--add", "--index-info", input="".join(f"100644 {blob}\t{p}\n" for p in paths).encode())


@pytest.mark.parametrize("pattern", WORST)
def test_worst_cases_are_decided_correctly_and_in_time(repo: helpers.Repo, pattern: str) -> None:
    large, small, case = WORST[pattern]
    few = case(small)
    _stage(repo, few.misses + few.hits)
    oracle = repo.git("ls-files", "-z", "--", f":(glob){pattern}").decode().split("\0")
    assert {p for p in oracle if p} == set(few.hits), "the case's expectation disagrees with git"
    many = case(large)
    got = _in_child([pattern], many.root, [*few.misses, *few.hits, *many.misses, *many.hits])
    want = [
        [hit, pattern if hit else None] for c in (few, many) for hit in [False] * len(c.misses) + [True] * len(c.hits)
    ]
    assert got == want


def _in_child(patterns: list[str], root: str, paths: list[str]) -> Any:
    """[[matches, which (for one pattern)], ...] for `paths`, from a child process that
    gets TIMEOUT seconds."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD],
            input=json.dumps([patterns, root, paths]).encode(),
            capture_output=True,
            env=env,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{patterns[:3]!r}: not decided within {TIMEOUT} s (matching backtracks)")
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_many_backtracking_patterns_in_one_boundary(repo: helpers.Repo) -> None:
    """Thousands of patterns that need atomic groups, on a long path: each costs what it
    costs alone (one expression holding all their groups made every step pay for every
    group: quadratic in the number of patterns)."""
    pats = [f"**/x{i}*ab*cd*/**/c*{i}" for i in range(5000)]
    misses, hits = ["q/" + "x1abcd/" * 500 + "c", "q/x17zabqcdq/r/c18"], ["q/x17zabqcdq/r/cz17", "x4999abcd/c4999"]
    _stage(repo, misses + hits)
    oracle = repo.git("ls-files", "-z", "--", *(f":(glob){p}" for p in pats[:50] + pats[-10:])).decode()
    assert set(oracle.split("\0")) - {""} == set(hits)
    got = _in_child(pats, "harness", misses + hits)
    assert got == [[False, None]] * len(misses) + [[True, None]] * len(hits)


@pytest.mark.parametrize(
    "pattern",
    [
        "src/**",
        "**/*.py",
        "docs/*.md",
        "src/*/tests/test_*.py",
        "lib/m1/a*b?.py",
        "docs/**/index.md",
        "src/**/tests/**",
        "a**/x",
        "pkg/[a-c]1/**",
        "*",
    ],
)
def test_ordinary_patterns_keep_their_plain_expression(pattern: str) -> None:
    """At most one `*` per component and one `**/`: no atomic group, no cost added."""
    raw = pattern.encode()
    assert globs.compile_pattern(raw).pattern == globs.translate(raw)


@pytest.mark.parametrize("pattern", ["*a*b", "**/*_*.py", "**/x/**/y", "a**/**/b", "x/*?*"])
def test_backtracking_patterns_get_the_linear_expression(pattern: str) -> None:
    """Several `*` in one component, or several `**/`: atomic groups or one-byte runs."""
    raw = pattern.encode()
    assert globs.compile_pattern(raw).pattern != globs.translate(raw)


# -- differential, against git --------------------------------------------------------

NAMES = ("a", "b", "_", "ab", "ba", "aa", "bb", "aab", "abb", "a_b", "abab", "baba", "aabb", "x", "xa")
TOKENS = ("a", "b", "_", "x", "*", "*", "**", "?", "[ab]", "[!a]", "/", "**/", "/**/", "*a*", "*b*", "**a")


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": str(root),
    }
    res = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, env=env, check=False)
    assert res.returncode == 0, (args, res.stderr)
    return res.stdout


@pytest.fixture(scope="module")
def star_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """One index (no work tree) of paths that give many ways to place each `*` and `**/`."""
    root = tmp_path_factory.mktemp("startree")
    rng = random.Random(15)
    wanted: set[str] = set()
    while len(wanted) < 400:
        wanted.add("/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 7))))
    files: list[str] = []
    for p in sorted(wanted, key=len, reverse=True):
        if not any(f.startswith(p + "/") or p.startswith(f + "/") for f in files):
            files.append(p)
    _git(root, "init", "-q")
    blob = _git(root, "hash-object", "-w", "--stdin", stdin=b"x\n").decode().strip()
    _git(root, "update-index", "--add", "--index-info", stdin="".join(f"100644 {blob}\t{f}\n" for f in files).encode())
    return root, _git(root, "ls-files", "-z").split(b"\0")[:-1]


def _valid(pattern: str) -> bool:
    try:
        boundary.validate(pattern, "harness")
    except boundary.PatternError:
        return False
    return True


def _git_matches(root: Path, pattern: str) -> set[bytes]:
    return set(_git(root, "ls-files", "-z", "--", f":(glob){pattern}").split(b"\0")[:-1])


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=helpers.examples(examples),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


STARRY = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=10).map("".join).filter(_valid)


# Fuzzing (slow): the worst cases above and tests/test_boundary.py's comparison with git stay in the fast loop.
@pytest.mark.slow
@fuzz(200)
@given(STARRY)
def test_starry_patterns_match_what_git_matches(star_tree: tuple[Path, list[bytes]], pattern: str) -> None:
    root, paths = star_tree
    b = boundary.Boundary.compile([pattern])
    assert {p for p in paths if b.matches(p)} == _git_matches(root, pattern), pattern
    raw = pattern.encode()
    # Also without letter case, as validation compares a component with the artifacts root.
    for flags in (re.DOTALL, re.DOTALL | re.IGNORECASE):
        linear, plain = re.compile(globs.source(raw)[0], flags), re.compile(globs.translate(raw), flags)
        assert [p for p in paths if linear.fullmatch(p)] == [p for p in paths if plain.fullmatch(p)], pattern


@pytest.mark.slow  # fuzzing, as above
@fuzz(60)
@given(st.lists(STARRY, min_size=2, max_size=5))
def test_a_starry_boundary_matches_the_union(star_tree: tuple[Path, list[bytes]], pats: list[str]) -> None:
    """Several patterns in one combined expression (each atomic group named once)."""
    root, paths = star_tree
    union: set[bytes] = set()
    for pattern in pats:
        union |= _git_matches(root, pattern)
    b = boundary.Boundary.compile(pats)
    assert {p for p in paths if b.matches(p)} == union, pats
