"""Hypothesis fuzzing of the boundary dialect against git's own `:(glob)` pathspec magic.

One real repository with a few hundred varied paths is built per module; hypothesis
generates patterns (segments with `*`, `?`, `**`, `[a-c]`, `[!a]`, literal letters, `/`,
dots and dashes, plus mutations of valid patterns) and compares
`Boundary.compile([p]).matches(path)` for every path with `git ls-files -z ':(glob)p'`.

Properties:

* `boundary.validate` raises only `PatternError`, and a valid pattern compiles and matches
  any bytes without raising;
* validation is exactly the documented rule set (docs/boundary.md, docs/artifacts.md): a
  pattern is rejected when, and only when, it falls in a documented invalid class; a
  rejection for naming the artifacts root is justified by git itself (`:(glob,icase)`
  matches a path under the root);
* every valid pattern matches exactly the paths git matches, and a compiled list of
  patterns matches exactly the union of git's matches; `which` names a pattern that
  covers the path; "matches every path" is decided as git would on the probe paths.
"""

from __future__ import annotations

import functools
import os
import random
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_gate import boundary
from tests import helpers

pytestmark = pytest.mark.slow  # property-based fuzzing against git

ROOT = "harness"  # the artifacts root the patterns are validated against


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=helpers.examples(examples),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


# -- the repository -------------------------------------------------------------------

NAMES: tuple[bytes, ...] = (
    *(b"a", b"b", b"c", b"ab", b"abc", b"ba", b"bc", b"ca", b"A", b"B", b"Ab", b"aB"),
    *(b"a.b", b"b.c", b"a.py", b".x", b".a", b"..a", b"a.", b"-a", b"a-b", b"a_b", b"x y", b"_"),
    *(b"\xc3\xa9", b"e\xcc\x81", b"caf\xc3\xa9", b"\xff", b"a\xffb"),  # NFC, NFD, not UTF-8
    *(b"[a]", b"a*", b"a?", b"b]", b"]", b"**", b"!a", b":a", b"a:b", b"[", b"a[b]"),  # names like patterns
    *(b"`", b"^", b"Z", b"z", b"_a"),
)
FIXED: tuple[bytes, ...] = (
    # the artifacts root, for rejections that name it
    *(b"harness/active", b"harness/plans/p1/plan.md", b"harness/x.py", b"harness/.h", b"Harness/y"),
    # boundary.covers_everything's probes, for "matches every path"
    *(b"zq9x.k", b"zq9x/yw8v/ut7s.k", b".zq9x/r", b"zq9x/.yw8v/ut7s"),
    *(b".github/workflows/ci.yml", b"src/app/x.py", b"src/app.py", b"src/application.py", b"docs/index.md"),
)


def _git(root: Path, *args: str) -> bytes:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": str(root),
    }
    res = subprocess.run(
        ["git", "-c", "core.ignorecase=false", *args], cwd=root, capture_output=True, env=env, check=False
    )
    assert res.returncode == 0, (args, res.stderr)
    return res.stdout


@dataclass(frozen=True)
class Tree:
    root: Path
    paths: list[bytes] = field(repr=False)

    def __iter__(self) -> Iterator[Any]:  # `root, paths = tree`
        return iter((self.root, self.paths))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """ONE repository with a few hundred varied paths (a file is never also a directory)."""
    root = tmp_path_factory.mktemp("fuzzglob")
    rng = random.Random(20261130)
    wanted = set(FIXED)
    while len(wanted) < 420:
        wanted.add(b"/".join(rng.choice(NAMES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    files: list[bytes] = []
    for p in sorted(wanted, key=len, reverse=True):
        if any(f.startswith(p + b"/") for f in files) or any(p.startswith(f + b"/") for f in files):
            continue
        files.append(p)
    for f in files:
        full = Path(os.fsdecode(os.fsencode(root) + b"/" + f))  # names that are not UTF-8 too
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(b"x")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    paths = _git(root, "ls-files", "-z").split(b"\0")[:-1]
    assert len(paths) >= 300
    assert set(FIXED) <= set(paths)
    return Tree(root, paths)


@functools.cache
def _git_matches(root: Path, pattern: str, magic: str = "glob") -> frozenset[bytes]:
    out = _git(root, "ls-files", "-z", "--", f":({magic}){pattern}")
    return frozenset(out.split(b"\0")[:-1])


# -- the documented invalid classes, written from the docs, not from the code ----------

_UNSAFE = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _bracket_problems(pattern: str) -> set[str]:
    raw = pattern.encode("utf-8")
    out: set[str] = set()
    i = 0
    while i < len(raw):
        if raw[i : i + 1] != b"[":
            i += 1
            continue
        j = i + 1
        if raw[j : j + 1] in (b"!", b"^"):
            j += 1
        start = j
        if raw[j : j + 1] == b"]":  # `]` first in a set is literal
            j += 1
        close = raw.find(b"]", j)
        if close < 0:
            out.add("unclosed `[`")
            break
        body = raw[start:close]
        if any(x in body for x in (b"[:", b"[=", b"[.")):
            out.add("character class")
        if b"/" in body:
            out.add("`/` inside `[...]`")
        k = 0
        while k < len(body):
            if k + 2 < len(body) and body[k + 1 : k + 2] == b"-":
                if body[k] > body[k + 2]:
                    out.add("reversed range")
                k += 3
            else:
                k += 1
        i = close + 1
    return out


def documented_problems(pattern: str) -> set[str]:
    """Every documented invalid class `pattern` falls in, except naming the artifacts root
    (decided separately) and matching everything (a property of a whole boundary)."""
    if pattern == "":
        return {"empty"}
    out = set()
    if _UNSAFE.search(pattern):
        out.add("control, bidi or zero-width character")
    if pattern != pattern.strip():
        out.add("leading or trailing spaces")
    if "\\" in pattern:
        out.add("backslash")
    if pattern.startswith("/") or re.match(r"[A-Za-z]:", pattern):
        out.add("absolute (`/x`, `C:/x`)")
    if pattern.startswith("!"):
        out.add("negation")
    if pattern.startswith(":"):
        out.add("pathspec magic")
    if pattern == "." or pattern.startswith("./"):
        out.add("`.` or a leading `./`")
    body = pattern[:-1] if pattern.endswith("/") else pattern  # one trailing `/` is allowed
    for segment in body.split("/"):
        if segment in ("", ".", ".."):
            out.add("empty, `.` or `..` segment")
        if segment.lower() == ".git":
            out.add("into `.git`")
    if pattern.endswith("/") and any(c in pattern for c in "*?["):
        out.add("trailing `/` after a wildcard")
    return out | _bracket_problems(pattern)


def _validate(pattern: str) -> str | None:
    """None when valid, else the PatternError message; any other exception fails the test."""
    try:
        boundary.validate(pattern, ROOT)
    except boundary.PatternError as exc:
        return str(exc)
    return None


def _check_validation(root: Path, pattern: str) -> bool:
    """Validation agrees with the documented classes; returns whether the pattern is valid."""
    why = _validate(pattern)
    documented = documented_problems(pattern)
    if why is None:
        assert not documented, f"{pattern!r} was accepted but is {documented}"
        first = pattern.split("/", maxsplit=1)[0]
        assert boundary.has_wildcard(first) or first.lower() != ROOT, f"{pattern!r} names the artifacts root"
        return True
    if not documented:
        # The one class the docs leave to judgement: a pattern that names the artifacts root
        # (literally, in another case, or with wildcards around its name); generic patterns
        # (`*/x`, `**/*.py`) stay valid. Git must agree that its first segment, taken as a
        # directory (or as it is, when it crosses `/` itself), reaches into the root in some
        # letter case.
        assert "artifacts root" in why, f"{pattern!r} was rejected ({why}) but is in no documented class"
        first, *rest = pattern.split("/")
        assert set(first) != {"*"}, f"{pattern!r} is generic, yet rejected for naming the artifacts root"
        # One segment reaches into the root only as git matches it (literally, or crossing `/`);
        # a longer pattern when its first segment matches the root's name as a directory.
        probe = first + "/**" if rest else pattern
        reached = _git_matches(root, probe, "glob,icase")
        assert any(p.lower().startswith(b"harness/") for p in reached), f"{pattern!r} does not name the root"
    return False


def _check_matches(root: Path, paths: list[bytes], pattern: str) -> None:
    want = _git_matches(root, pattern)
    b = boundary.Boundary.compile([pattern])
    got = {p for p in paths if b.matches(p)}
    assert got == want, f"{pattern!r}: only ours {sorted(got - want)[:5]}, only git's {sorted(want - got)[:5]}"


# -- pattern strategies ---------------------------------------------------------------

SEGMENTS = (
    *("*", "?", "**", "***", "[a-c]", "[!a]", "[^b]", "[]a]", "[a-]", "[-a]", "[!]a]", "[Z-a]", "[B-a]"),
    *("a", "b", "c", "ab", "A", "Ab", "é", "e\u0301", "a.b", ".x", ".a", "-a", "a-b", "a_b", "x y", "a.py"),
    *("*.b", "a*", "*b", "*a*", "[a-c]*", "?*", "*?", "**a", "a**", "a**b", "?**", "[ab]**", "*.py", "a?"),
    *("src", "app", "docs", "zq9x", ".zq9x", ".github", "a:b", "_", "]", "b]", "[a]", "a[b]"),
    *("[]-a]", "[!]]", "[a-a]", "[!-]", "[*]", "[?]", "[[]", "[\\]]", "[é]", "[\xff]", "\xff", "[!a-c]*"),
)
BAD_SEGMENTS = (
    *("", ".", "..", ".git", ".GIT", "[b-a]", "[[:alpha:]]", "[=a=]", "[a", "a[", "[a/b]", "\\a", " a", "a "),
    *("harness", "Harness", "HARNESS", "h?rness", "harness**", "h*", "[h]arness", "\u200ba", "a\u202e", "a\tb"),
)
PREFIXES = st.sampled_from(["", "", "", "", "/", "./", "!", ":", "C:/", ":(icase)"])
SUFFIXES = st.sampled_from(["", "", "", "/", "//"])


@st.composite
def patterns(draw: st.DrawFn, bad: bool = True) -> str:
    pool = SEGMENTS + BAD_SEGMENTS if bad and draw(st.integers(0, 3)) == 0 else SEGMENTS
    segs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    prefix = draw(PREFIXES) if bad else ""
    return prefix + "/".join(segs) + draw(SUFFIXES)


TOKENS = ("a", "b", "c", "A", "/", "*", "**", "?", "[a-c]", "[!a]", "[", "]", "-", ".", "!", "^", "é", "x y")
CHAR_PATTERNS = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8).map("".join)
VALID_SEEDS = ("src/app", "src/app/", "src/**", "**/*.py", "docs/**/index.md", "src/[ab]?.c", "a-b/c.d", "*/x")
EDIT_CHARS = st.sampled_from([*"ab/*?[]!^-.:\\ ~Hh", "\u00a0", "\u200b", "\t", "é"])


@st.composite
def mutated_patterns(draw: st.DrawFn) -> str:
    """One edit away from a valid pattern: inserted, deleted or replaced character, a
    trailing space or slash, a leading `/`, `./` or `!`."""
    p: str = draw(st.sampled_from(VALID_SEEDS))
    i = draw(st.integers(0, len(p)))
    op = draw(st.sampled_from(["insert", "delete", "replace", "append", "prepend"]))
    char: str = draw(EDIT_CHARS)
    if op == "insert":
        return p[:i] + char + p[i:]
    if op == "delete":
        return p[: max(0, i - 1)] + p[i:]
    if op == "replace":
        return p[: max(0, i - 1)] + char + p[i:]
    suffix: str = draw(st.sampled_from([" ", "/", "//", "\n", "/.", "/..", "**"]))
    prefix: str = draw(st.sampled_from(["/", "./", "!", ":", "../", " "]))
    return p + suffix if op == "append" else prefix + p


# -- the properties -------------------------------------------------------------------


@fuzz(400)
@given(st.text(max_size=40), st.lists(st.binary(max_size=30), max_size=5))
def test_validate_raises_only_pattern_errors(pattern: str, paths: list[bytes]) -> None:
    if _validate(pattern) is None:
        b = boundary.Boundary.compile([pattern])
        for p in paths:
            assert b.matches(p) == (b.which(p) == pattern)
        b.covers_everything()


@fuzz(800)
@given(st.one_of(patterns(), CHAR_PATTERNS, mutated_patterns()))
def test_validation_is_exactly_the_documented_classes(tree: Tree, pattern: str) -> None:
    root, paths = tree
    if _check_validation(root, pattern):
        _check_matches(root, paths, pattern)


@fuzz(1000)
@given(st.one_of(patterns(bad=False), CHAR_PATTERNS))
def test_valid_patterns_match_what_git_matches(tree: Tree, pattern: str) -> None:
    root, paths = tree
    if _check_validation(root, pattern):
        _check_matches(root, paths, pattern)


PROBES = (b"zq9x.k", b"zq9x/yw8v/ut7s.k", b".zq9x/r", b"zq9x/.yw8v/ut7s")


@fuzz(400)
@given(st.lists(st.one_of(patterns(bad=False), CHAR_PATTERNS), min_size=2, max_size=5))
def test_a_boundary_matches_the_union_of_its_patterns(tree: Tree, pats: list[str]) -> None:
    root, paths = tree
    valid = [pattern for pattern in pats if _check_validation(root, pattern)]
    union: set[bytes] = set()
    for pattern in valid:
        union |= _git_matches(root, pattern)
    b = boundary.Boundary.compile(valid)
    assert {p for p in paths if b.matches(p)} == union, valid
    for path in sorted(union)[:20]:
        which = b.which(path)
        assert which is not None
        assert path in _git_matches(root, which)
    # "Matches every path" is decided on the probe paths, as git matches them.
    everything = set(PROBES) <= union
    assert b.covers_everything() == everything
    flagged = any("every path" in why for _, why in boundary.validate_all(valid, ROOT))
    assert flagged == (bool(valid) and everything)


@pytest.mark.parametrize(
    ("pattern", "valid"),
    [("a//", False), ("src/x//", False), ("a/", True), ("[Z-a]/x", True), ("[B-a]", True), ("[b-a]", False)],
)
def test_documented_examples(tree: Tree, pattern: str, valid: bool) -> None:
    root, paths = tree
    assert _check_validation(root, pattern) == valid
    if valid:
        _check_matches(root, paths, pattern)


def test_the_documented_classes_oracle_agrees_with_the_examples() -> None:
    """The oracle is not vacuous: it flags every documented invalid example, and no valid one."""
    from tests.test_boundary import INVALID, VALID

    for pattern in VALID:
        assert documented_problems(pattern) == set(), pattern
    for pattern, reason in INVALID.items():
        assert documented_problems(pattern) or reason == "artifacts root", pattern
