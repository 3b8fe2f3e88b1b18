"""`[[approvers]]` without git: the configuration, and which boundaries reach a rule's
paths (boundary.overlaps), held to the matcher itself: never "no" where one path is
covered by both patterns."""

from __future__ import annotations

import itertools
import random
import re
import subprocess
from pathlib import Path

import pytest

from harness_gate import approvers, boundary, config
from harness_gate.errors import ConfigError

RULE = '[[approvers]]\npaths = ["payments/**"]\nprincipals = ["alice@x", "bob@x"]\n'


def test_a_rule_reads_with_its_defaults() -> None:
    [rule] = config.parse(RULE.encode(), None).approvers
    assert rule == config.Approvers("payments/**", ("payments/**",), ("alice@x", "bob@x"), 1, False)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("count = 3\n", "count 3 is more than its 2 principal(s)"),
        ('name = "x"\n' + RULE.replace("[[approvers]]\n", '[[approvers]]\nname = "x"\n'), "the same name"),
    ],
)
def test_a_rule_that_cannot_work_is_a_config_error(extra: str, said: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(said)):
        config.parse((RULE + extra).encode(), None)


@pytest.mark.parametrize(
    "bad",
    [
        'paths = ["/abs"]\nprincipals = ["a"]',  # not the boundary dialect
        'paths = ["harness/**"]\nprincipals = ["a"]',  # the artifacts root
        'paths = ["x"]\nprincipals = ["a b"]',  # a principal with a space
        'paths = ["x"]\nprincipals = []',
        'paths = ["x"]',
    ],
)
def test_a_malformed_rule_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError):
        config.parse(f"[[approvers]]\n{bad}\n".encode(), None)


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("payments/**", "payments/**", True),
        ("payments", "payments/api/x.py", True),  # a wildcard-free pattern covers what is below
        ("**/*.py", "payments/**", True),
        ("p*/x.py", "payments/**", True),
        ("src/**", "payments/**", False),
        ("*.py", "payments/**", False),  # `*` does not cross `/`
        ("src/*.py", "src/a/**", False),
        ("payments/a.py", "payments/b.py", False),
        ("pay[mn]ents/x", "payments/**", True),
        ("pay[xy]ents/x", "payments/**", False),
    ],
)
def test_which_boundaries_reach_a_rule(a: str, b: str, meet: bool) -> None:
    assert boundary.overlaps(a, b) is meet
    assert boundary.overlaps(b, a) is meet


SEGMENTS = ["a", "b", "ab", "a.py", "*", "*.py", "a*", "?", "[ab]", "**", "b**", "x"]


@pytest.mark.slow
def test_overlaps_never_says_no_where_a_path_is_covered_by_both() -> None:
    """The differential: generated patterns and paths, the matcher as the oracle."""
    rng = random.Random(20261203)
    patterns = {"/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 3))) for _ in range(400)}
    valid = []
    for p in sorted(patterns):
        try:
            boundary.validate(p, "harness")
        except boundary.PatternError:
            continue
        valid.append(p)
    names = ["a", "b", "ab", "a.py", "b.py", "x", "abc"]
    paths = {"/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(600)}
    covered = {p: {q for q in paths if boundary.Boundary.compile([p]).matches(q.encode())} for p in valid}
    checked = 0
    for a, b in itertools.combinations(valid, 2):
        if covered[a] & covered[b]:
            checked += 1
            assert boundary.overlaps(a, b), (a, b, sorted(covered[a] & covered[b])[:3])
    assert checked > 1000  # the test has something to hold


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("/payments/", ("payments/**",)),
        ("payments/", ("**/payments/**",)),
        ("docs", ("**/docs", "**/docs/**")),
        ("/docs/a.md", ("docs/a.md",)),
        ("*.py", ("**/*.py", "**/*.py/**")),
        ("*", ("**",)),
        ("src/*", ("src/*", "src/*/**")),
        ("\\#x", None),  # an escape
        ("!x", None),  # a negation, which GitHub does not read either
        ("x[ab]", None),
        ("/harness/**", None),  # the artifacts root: no boundary reaches it
    ],
)
def test_codeowners_patterns_in_the_boundary_dialect(raw: str, want: tuple[str, ...] | None) -> None:
    assert approvers.codeowners_patterns(raw, "harness") == want


@pytest.mark.slow
def test_a_translated_codeowners_pattern_covers_every_path_git_matches(tmp_path: Path) -> None:
    """The differential: gitignore's rules (CODEOWNERS' own), by `git check-ignore`, as
    the oracle. The translation may cover more, never less (more approvals, never fewer)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    rng = random.Random(3)
    pieces = ["a", "b", "a.py", "*", "*.py", "**", "d"]
    raws = set()
    for _ in range(60):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 3))]
        raws.add(("/" if rng.random() < 0.4 else "") + "/".join(parts) + ("/" if rng.random() < 0.3 else ""))
    paths = sorted(
        {"/".join(rng.choice(["a", "b", "a.py", "d", "x"]) for _ in range(rng.randint(1, 4))) for _ in range(300)}
    )
    compared = 0
    for raw in sorted(raws):
        mine = approvers.codeowners_patterns(raw, "harness")
        if mine is None:
            continue
        (tmp_path / ".gitignore").write_text(raw + "\n")
        out = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=tmp_path,
            check=False,
            capture_output=True,
            input="\0".join(paths).encode() + b"\0",
        ).stdout
        matched = {p for p in out.decode().split("\0") if p}
        ours = boundary.Boundary.compile(list(mine))
        missed = sorted(p for p in matched if not ours.matches(p.encode()))
        assert not missed, (raw, mine, missed[:3])
        compared += len(matched)
    assert compared > 200
