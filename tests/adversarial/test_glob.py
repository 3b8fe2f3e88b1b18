"""Boundary semantics attacks, through the real gate and checked against git's own
`:(glob)` pathspec matching (the dialect's oracle): wildcards never cross `/`, prefixes
are not siblings, matching is on exact bytes; patterns into the artifacts root or `.git/`
and boundaries that match everything are refused at lint (HG205)."""

from __future__ import annotations

import pytest

from tests.adversarial.util import report, setup_gated, staged
from tests.helpers import Repo

PLAN2 = "harness/plans/p2/plan.md"


def _stage(repo: Repo, paths: list[str]) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    repo.git("update-index", "--add", "--index-info", input="".join(f"100644 {blob}\t{p}\n" for p in paths).encode())


def _oracle(repo: Repo, boundary: tuple[str, ...], paths: list[str]) -> set[str]:
    """The paths git's `:(glob)` magic matches, among `paths`."""
    out = repo.git("ls-files", "-z", "--", *(f":(glob){p}" for p in boundary))
    return {p for p in out.decode().split("\0") if p} & set(paths)


def _judge(repo: Repo, boundary: tuple[str, ...], inside: list[str], outside: list[str]) -> None:
    setup_gated(repo, boundary)
    _stage(repo, inside + outside)
    assert _oracle(repo, boundary, inside + outside) == set(inside)
    assert staged(repo) == (1 if outside else 0, sorted(("HG101", p) for p in outside))


def test_star_does_not_cross_a_slash(repo: Repo) -> None:
    """`src/*` covers `src/a.py`, not `src/sub/b.py` nor `src/.hidden/x`."""
    _judge(repo, ("src/*",), ["src/b", "src/.hidden"], ["src/sub/b.py", "src/.cfg/x", "src2/a.py"])


def test_a_directory_is_not_its_siblings(repo: Repo) -> None:
    """`src` covers `src/**`, never `src-evil/`, `srcx` or `src.py`."""
    _judge(repo, ("src",), ["src/b.py", "src/deep/x"], ["src-evil/x.py", "srcx", "src.py", "sr"])


def test_dir_star_star_is_not_the_file_of_that_name(repo: Repo) -> None:
    """`lib/**` covers what is below `lib/`, not a file named `lib`."""
    _judge(repo, ("src/**", "lib/**"), [], ["lib", "lib.py", "libs/x"])
    repo.git("rm", "-q", "--cached", "lib")
    _stage(repo, ["lib/x.py", "lib/a/b/c"])
    assert staged(repo) == (1, [("HG101", "lib.py"), ("HG101", "libs/x")])


@pytest.mark.parametrize(
    ("pattern", "inside", "outside"),
    [
        ("src/[ab].py", ["src/b.py", "src/[ab].py"], ["src/c.py", "src/ab.py", "src/B.py"]),
        ("src/[!a].py", ["src/b.py", "src/-.py"], ["src/bb.py", "src/x/.py"]),
        ("src/[0-9]*.py", ["src/5.py", "src/7x.py"], ["src/x5.py", "src/5/x.py"]),
    ],
    ids=["set", "negated", "range"],
)
def test_bracket_expressions(repo: Repo, pattern: str, inside: list[str], outside: list[str]) -> None:
    """`[...]`, `[!...]` and ranges match one character of one segment, never `/`."""
    _judge(repo, (pattern,), inside, outside)


def test_question_mark_is_one_character_of_one_segment(repo: Repo) -> None:
    """`s?c/?.py`: `?` is exactly one character and never `/`."""
    _judge(repo, ("s?c/?.py",), ["sxc/b.py", "src/_.py"], ["s/c/b.py", "src/ab.py", "src/.py", "sc/b.py"])


def test_double_star_in_the_middle(repo: Repo) -> None:
    """`src/**/test_*.py` spans zero or more directories, inside `src/` only."""
    _judge(
        repo,
        ("src/**/test_*.py",),
        ["src/test_b.py", "src/x/y/test_z.py"],
        ["src/x/y/z.py", "srcx/test_b.py", "src/x/test_z.pyc", "other/src/test_b.py"],
    )


def test_matching_is_case_sensitive(repo: Repo) -> None:
    """`src/**` and `docs/*.md` do not cover `Src/`, `SRC/` or `docs/A.MD`."""
    _judge(repo, ("src/**", "docs/*.md"), ["docs/a.md"], ["Src/a.py", "SRC/a.py", "docs/A.MD"])


@pytest.mark.parametrize(
    "pattern",
    [
        "harness/**",
        "Harness/plans/p1/plan.md",
        "h*/plans/**",
        "harness",
        ".git/hooks/pre-commit",
        "src/.git/config",
        ".GIT/x",
        "**",
        "**/*",
    ],
)
def test_refused_patterns_at_lint(gated: Repo, pattern: str) -> None:
    """A pattern into the artifacts root or `.git/`, or one matching everything, makes the
    plan invalid (HG205); a plan with it grants nothing."""
    gated.new_plan("p2", ("src/**",))
    gated.write(PLAN2, gated.read(PLAN2).replace(b"`src/**`", f"`{pattern}`".encode()))
    doc = report(gated, "lint")
    assert (doc["exit_code"], {(f["code"], f["path"]) for f in doc["findings"]}) == (1, {("HG205", PLAN2)})
    assert gated.cli("approve", input="y\n").exit_code == 1
    gated.write("src/a.py", "a = 9\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG205", PLAN2)])


def test_a_set_of_patterns_that_matches_everything(gated: Repo) -> None:
    """`*` plus `*/**`: no single pattern is the universe, the set is (HG205)."""
    gated.new_plan("p2", ("src/**",))
    gated.write(PLAN2, gated.read(PLAN2).replace(b"- `src/**`", b"- `*`\n- `*/**`"))
    doc = report(gated, "lint")
    assert (doc["exit_code"], {(f["code"], f["path"]) for f in doc["findings"]}) == (1, {("HG205", PLAN2)})
