"""Symlinks (HG104): targets git writes only in part, resolution that must stay linear in
the links and the target bytes, and links that lead out of the write boundary.

Targets are staged as blobs (`update-index --cacheinfo 120000,...`): any bytes, no file
system symlink needed. Checks that could hang on a slow resolver run the real CLI in a
subprocess with a timeout, so a regression fails the test instead of stalling the suite."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.util import check, report, rev, run_json, setup_gated, staged
from tests.helpers import Repo

# Far above what these checks take once resolution is linear (well under a second), far
# below what the exponential and quadratic resolvers took (minutes).
DECIDES_WITHIN = 20
PROJECT = Path(__file__).resolve().parents[2]


def _stage_link(repo: Repo, path: str, target: bytes) -> None:
    """Stage a symlink at `path` whose target is exactly `target` (any bytes)."""
    oid = repo.git("hash-object", "-w", "--stdin", input=target).decode().strip()
    repo.git("update-index", "--add", "--cacheinfo", f"120000,{oid},{path}")


def _commit_index(repo: Repo, message: str) -> str:
    """Commit the index as it is (`git add -A` would drop links that exist only there)."""
    repo.git("commit", "-qm", message, "--no-verify")
    return rev(repo, "HEAD")


def _messages(doc: dict[str, Any], code: str = "HG104") -> dict[str, str]:
    return {f["path"]: f["message"] for f in doc["findings"] if f["code"] == code}


def _decides(repo: Repo, *args: str) -> tuple[int, list[tuple[str, str]]]:
    """`check ARGS` in a subprocess that must answer within DECIDES_WITHIN seconds."""
    try:
        # This checkout's package, whatever is installed: the test must judge the code beside it.
        code, doc, _ = run_json(repo, "check", *args, timeout=DECIDES_WITHIN, env={"PYTHONPATH": str(PROJECT)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"`check {' '.join(args)}` did not decide within {DECIDES_WITHIN} s")
    return code, sorted({(f["code"], f["path"]) for f in doc["findings"]})


# Item 1: a checkout writes a link's target only up to a NUL; the gate judged all of it.


@pytest.mark.parametrize("target", [b"../..\0", b"../.git\0/x"], ids=["leaves-repo", "into-dot-git"])
def test_nul_in_a_target_is_blocked_at_pre_commit(gated: Repo, target: bytes) -> None:
    _stage_link(gated, "src/link", target)
    assert staged(gated, "--stage", "pre-commit") == (1, [("HG104", "src/link")])
    assert "NUL" in _messages(report(gated, "check", "--staged"))["src/link"]


@pytest.mark.parametrize("target", [b"../..\0", b"../.git\0/x"], ids=["leaves-repo", "into-dot-git"])
def test_nul_in_a_target_is_blocked_in_a_range(gated: Repo, target: bytes) -> None:
    """Committed with `--no-verify`: pre-push (`--range`) and CI (`--base`) still block it."""
    base = rev(gated, "HEAD")
    _stage_link(gated, "src/link", target)
    tip = _commit_index(gated, "a link git writes as ../..")
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG104", "src/link")])
    assert check(gated, "--base", base, "--head", tip, "--stage", "ci") == (1, [("HG104", "src/link")])


@pytest.mark.parametrize(
    "target",
    [b"a.py\n", b"a\tb.py", b"a.py\x1b[31m", b"a\x7f.py", b"a\r.py", b"\x01", "a\u009b.py".encode()],
    ids=["newline", "tab", "escape", "del", "cr", "soh", "c1-csi"],
)
def test_control_characters_in_a_target(gated: Repo, target: bytes) -> None:
    """The same control characters a path may not hold (HG103), even where the rest of the
    target stays inside the boundary."""
    _stage_link(gated, "src/link", target)
    assert staged(gated) == (1, [("HG104", "src/link")])
    assert "control character" in _messages(report(gated, "check", "--staged"))["src/link"]


# Item 10: `l0 -> l1/l1`, `l1 -> l2/l2`, ... resolved every link twice per level (2^n).


def test_a_chain_of_26_doubling_links_decides_quickly(gated: Repo) -> None:
    """Every `src/lN` leads back to `src` (the last is `.`): inside the repository and the
    boundary, so they pass; `src/esc` goes through the whole chain and then two levels up,
    out of the repository. The kernel would refuse to open `src/l0` (it counts 2^26
    follows, over its 40), which only makes writes through it fail: nothing to block."""
    for i in range(25):
        _stage_link(gated, f"src/l{i}", f"l{i + 1}/l{i + 1}".encode())
    _stage_link(gated, "src/l25", b".")
    _stage_link(gated, "src/esc", b"l0/../..")
    assert _decides(gated, "--staged") == (1, [("HG104", "src/esc")])


# Item 11: one long target was resolved in time quadratic in its bytes.


def test_a_400_kb_target_is_blocked_quickly(gated: Repo) -> None:
    _stage_link(gated, "src/big", b"a/" * (200 * 1024))
    assert _decides(gated, "--staged") == (1, [("HG104", "src/big")])
    assert "longer than any path a checkout can write" in _messages(report(gated, "check", "--staged"))["src/big"]


# Item 12: a new or changed link leads where the plan's boundary allows, or is blocked.


@pytest.mark.parametrize(
    ("target", "lands", "why"),
    [
        (b"../.github/workflows/ci.yml", "`.github/workflows/ci.yml`", "protected"),
        (b"../secret/x", "`secret/x`", "outside the write boundary"),
        (b"..", "the repository root", "outside the write boundary"),  # writes reach every path
        (b"../harness/plans/p1/plan.md", "`harness/plans/p1/plan.md`", "artifacts root"),
        (b"../.GitHub/workflows/ci.yml", "`.GitHub/workflows/ci.yml`", "case variant"),
    ],
    ids=["workflow", "outside-file", "repository-root", "artifacts-root", "case-variant"],
)
def test_a_new_link_leading_out_of_the_boundary(gated: Repo, target: bytes, lands: str, why: str) -> None:
    _stage_link(gated, "src/wf", target)
    assert staged(gated) == (1, [("HG104", "src/wf")])
    message = _messages(report(gated, "check", "--staged"))["src/wf"]
    assert f"`src/wf` leads to {lands}" in message
    assert why in message


def test_a_link_to_a_workflow_in_a_range(gated: Repo) -> None:
    base = rev(gated, "HEAD")
    _stage_link(gated, "src/wf", b"../.github/workflows/ci.yml")
    tip = _commit_index(gated, "a workflow edited through src/wf")
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG104", "src/wf")])
    assert check(gated, "--base", base, "--head", tip, "--stage", "ci") == (1, [("HG104", "src/wf")])


def test_a_new_link_out_of_the_boundary_through_an_old_link(gated: Repo) -> None:
    """An old link outside the boundary (`lib/ci -> ../.github/workflows`) is its own
    matter; a new link inside the boundary that goes through it is judged by where it
    lands: the workflow."""
    _stage_link(gated, "lib/ci", b"../.github/workflows")
    _commit_index(gated, "an old link, outside the boundary")
    _stage_link(gated, "src/wf", b"../lib/ci/ci.yml")
    assert staged(gated) == (1, [("HG104", "src/wf")])
    assert ".github/workflows/ci.yml" in _messages(report(gated, "check", "--staged"))["src/wf"]


def test_a_link_inside_the_boundary_to_a_target_inside_it(gated: Repo) -> None:
    gated.write("src/sub/b.py", "b = 1\n")
    gated.git("add", "-A")
    for path, target in [("src/l", b"a.py"), ("src/d", b"sub"), ("src/self", b"."), ("src/sub/up", b"../a.py")]:
        _stage_link(gated, path, target)
    assert staged(gated) == (0, [])


@pytest.mark.parametrize(
    ("boundary", "path", "target"),
    [
        (("src/**", "docs/x.md"), "src/l", b"../docs/x.md"),
        (("src/**", ".github/workflows/ci.yml"), "src/wf", b"../.github/workflows/ci.yml"),
        (("src/**", "docs/**"), "src/d", b"../docs"),
        (("src/**", "docs"), "src/d", b"../docs/sub"),
    ],
    ids=["exact-file", "exact-protected-file", "covered-directory", "literal-directory"],
)
def test_a_link_to_a_target_the_boundary_allows(
    repo: Repo, boundary: tuple[str, ...], path: str, target: bytes
) -> None:
    """Outside `src/**`, but the target itself is allowed (a protected one only when named
    exactly, as for HG102): writes through the link land where the plan allows writes."""
    setup_gated(repo, boundary)
    repo.write("docs/sub/y.md", "y\n")
    repo.git("add", "-A")
    _commit_index(repo, "docs, before this plan's work")
    _stage_link(repo, path, target)
    assert staged(repo) == (0, [])


def test_a_link_to_a_directory_the_boundary_covers_only_in_part(repo: Repo) -> None:
    """`src/*` allows `src/sub` as a name, not the files below it: a link to the directory
    `src/sub` would let writes land in `src/sub/...`; a link to the file `src/a.py` is fine."""
    setup_gated(repo, ("src/*",))
    repo.write("src/sub/x.py", "x = 1\n")
    repo.git("add", "-A")
    _commit_index(repo, "a directory below src")
    _stage_link(repo, "src/m", b"a.py")
    assert staged(repo) == (0, [])
    _stage_link(repo, "src/l", b"sub")
    assert staged(repo) == (1, [("HG104", "src/l")])
    assert "directory" in _messages(report(repo, "check", "--staged"))["src/l"]


def test_an_unchanged_link_elsewhere_is_not_newly_blocked(gated: Repo) -> None:
    """Only the links a change adds or changes are judged against its plan: an old link to
    a file outside the boundary stays, while the plan's work (a new link among it) passes."""
    _stage_link(gated, "lib/old", b"../secret/x")
    _commit_index(gated, "an old link, before this plan")
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "src/a.py")  # not `-A`: lib/old exists only in the index
    _stage_link(gated, "src/new", b"a.py")
    assert staged(gated) == (0, [])


# A later change redirecting an old link: the old link is judged where it now leads.


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # `src/y` does not exist yet: `src/x` leads to `src/.github/...`, inside the boundary.
        ([("src/x", b"y/../.github/workflows/ci.yml")], [("src/y", b".")]),
        # `src/y` leads two directories down, so `src/x` stays inside; then `src/y` becomes a
        # directory of its own, and `y/../..` is the repository root.
        ([("src/y", b"sub/deep"), ("src/x", b"y/../../.github/workflows/ci.yml")], [("src/y/f", None)]),
    ],
    ids=["link-added-later", "link-changed-later"],
)
def test_an_old_link_redirected_by_a_later_commit(
    gated: Repo, first: list[tuple[str, bytes]], second: list[tuple[str, bytes | None]]
) -> None:
    base = rev(gated, "HEAD")
    for path, target in first:
        _stage_link(gated, path, target)
    _commit_index(gated, "a link that leads inside the boundary, for now")
    assert check(gated, "--base", base, "--stage", "ci")[0] == 0
    for path, target in second:
        if target is None:  # a regular file where the link was
            gated.git("rm", "-q", "--cached", path.rsplit("/", 1)[0])
            oid = gated.git("hash-object", "-w", "--stdin", input=b"f\n").decode().strip()
            gated.git("update-index", "--add", "--cacheinfo", f"100644,{oid},{path}")
        else:
            _stage_link(gated, path, target)
    assert staged(gated)[1] == [("HG104", "src/x")]
    tip = _commit_index(gated, "the door opens")
    assert ("HG104", "src/x") in check(gated, "--range", f"{base}..{tip}")[1]
    assert ("HG104", "src/x") in check(gated, "--base", base, "--stage", "ci")[1]


def test_more_than_forty_nested_links(gated: Repo) -> None:
    """A chain deeper than the kernel follows (ELOOP) is a loop to a checkout."""
    for i in range(45):
        _stage_link(gated, f"src/l{i}", f"l{i + 1}".encode())
    gated.write("src/l45", "end\n")
    gated.git("add", "src/l45")
    found = _messages(report(gated, "check", "--staged"))
    assert "nested symlinks" in found["src/l0"]


def test_a_resolved_path_longer_than_a_checkout_can_write(gated: Repo) -> None:
    """Each target is short enough; where the two lead together is not."""
    _stage_link(gated, "src/a", b"x" * 200 + b"/" + b"y" * 200)
    _stage_link(gated, "src/b", b"a/" + b"/".join([b"z" * 200] * 20))
    found = _messages(report(gated, "check", "--staged"))
    assert "longer than any a checkout can write" in found["src/b"]
