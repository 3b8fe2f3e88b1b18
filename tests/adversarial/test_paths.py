"""Paths and names: control characters, bytes that are not UTF-8, case variants and
look-alikes of protected paths, symlinks that leave the boundary or the repository,
very long names, names that resemble the artifacts root, and git's own config files."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness_gate import rules
from tests.adversarial.util import setup_gated, staged
from tests.helpers import Repo


def _stage_blob(repo: Repo, path: bytes, data: bytes = b"x\n", mode: str = "100644") -> None:
    """Stage `path` (any bytes git allows) without a file on disk."""
    blob = repo.git("hash-object", "-w", "--stdin", input=data).decode().strip()
    repo.git("update-index", "--add", "--index-info", input=f"{mode} {blob}\t".encode() + path + b"\n")


def _show(path: bytes) -> str:
    return path.decode("utf-8", "backslashreplace")


@pytest.mark.parametrize(
    "name",
    [
        b"src/new\nline.py",
        b"src/tab\there.py",
        b"src/esc\x1b[31m.py",
        b"src/del\x7f.py",
        b"src/cr\r.py",
        "src/c1\u009b31m.py".encode(),
        "src/nel\u0085.py".encode(),
    ],
    ids=["newline", "tab", "escape", "del", "cr", "c1-csi", "c1-nel"],
)
def test_control_characters_inside_the_boundary(gated: Repo, name: bytes) -> None:
    """Control characters (C0, DEL and C1) in a name block even inside the boundary."""
    (gated.path / os.fsdecode(name)).write_bytes(b"x\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG103", _show(name))])


@pytest.mark.parametrize(
    "name",
    [b"src\xc0\xafevil.py", b"src\xef\xbc\x8fevil.py", b"\xff\xfe/src/a.py", b"src\xed\xa0\x80/a.py"],
    ids=["overlong-slash", "fullwidth-slash", "invalid-lead", "encoded-surrogate"],
)
def test_non_utf8_names_are_matched_as_bytes(gated: Repo, name: bytes) -> None:
    """Bytes a lenient decoder would read as `src/...`: matched as the bytes they are."""
    _stage_blob(gated, name)
    assert staged(gated) == (1, [("HG101", _show(name))])


@pytest.mark.parametrize(
    "path", [".GitHub/workflows/x.yml", ".Pre-Commit-Config.yaml", ".HARNESS-gate.toml", "Action.yml", "sub/.GitIgnore"]
)
def test_case_variant_of_a_protected_path_under_a_covering_pattern(repo: Repo, path: str) -> None:
    """The boundary's `**/*.yml`-style patterns cover the variant's name; the variant still
    blocks (it is the protected path on a case-insensitive file system)."""
    setup_gated(repo, ("src/**", "**/*.yml", "**/*.yaml", "**/*.toml", "sub/**"))
    repo.write(path, "x\n")
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG106", path)])


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        (".pre-commit-hoo\u212as.yaml", ".pre-commit-hooks.yaml"),
        ("sub/.gitattribute\u017f", ".gitattributes"),
        ("harne\u017fs/plans/p1/x.md", "harness/"),
        (".GIT\u0130GNORE", None),
    ],
    ids=["kelvin-sign", "long-s-name", "long-s-artifacts-root", "dotted-capital-i"],
)
def test_case_variants_by_unicode_case_folding(repo: Repo, path: str, protected: str | None) -> None:
    """Case folding maps some non-ASCII letters to ASCII ones (K, long s): a name
    that folds to a protected one is its variant; one that folds elsewhere is not."""
    setup_gated(repo, ("src/**", "**/*.yaml", "sub/**", "**/*.md", "*"))
    repo.write(path, "x\n")
    repo.git("add", "-A")
    assert staged(repo) == ((1, [("HG106", path)]) if protected else (0, []))


def test_protected_paths_among_many(repo: Repo) -> None:
    """A few protected paths and variants among thousands inside the boundary: each is
    found, and nothing else."""
    setup_gated(repo, ("src/**", "**/*.yml"))
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    names = [f"src/d{i // 100}/f{i}.py" for i in range(3000)]
    odd = ["src/d7/.gitignore", ".GitHub/w.yml", "src/d20/\u017f.py", "src/\x1b[0m.py", "src/d29/zz/.GITATTRIBUTES"]
    names[700:700] = odd[:2]
    names[2000:2000] = odd[2:4]
    names.append(odd[4])
    info = "".join(f"100644 {blob}\t{n}\n" for n in names).encode()
    repo.git("update-index", "--add", "--index-info", input=info)
    assert staged(repo) == (
        1,
        sorted(
            [
                ("HG102", "src/d7/.gitignore"),
                ("HG106", ".GitHub/w.yml"),
                ("HG103", "src/\x1b[0m.py"),
                ("HG106", "src/d29/zz/.GITATTRIBUTES"),
            ]
        ),
    )


@pytest.mark.parametrize(
    "path",
    ["\u0455rc/evil.py", "src\uff0fevil.py", "\u0455rc/a.py", "h\u0430rness/plans/p1/plan.md", "cafe\u0301/x.py"],
    ids=["cyrillic-dze", "fullwidth-solidus", "cyrillic-src", "cyrillic-a-artifacts-root", "nfd-e-acute"],
)
def test_unicode_look_alikes(repo: Repo, path: str) -> None:
    """Names that render like `src/...`, `café/` or the artifacts root are other paths."""
    setup_gated(repo, ("src/**", "caf\u00e9/**"))
    repo.write(path, "x\n")
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG101", path)])


def test_symlink_inside_the_boundary_to_a_file_outside(gated: Repo) -> None:
    """A new link inside the boundary may not point at secret/x (HG104: in a checkout,
    writes through it land there); writing through it changes secret/x, and that change
    is what the commit records (HG101)."""
    (gated.path / "src" / "alias").symlink_to("../secret/x")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG104", "src/alias")])
    (gated.path / "src" / "alias").write_text("written through the link\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG101", "secret/x"), ("HG104", "src/alias")])


@pytest.mark.parametrize(
    ("links", "bad"),
    [
        ({"src/up": "..", "src/deep/esc": "../up/.."}, ["src/deep/esc", "src/up"]),  # up: the root (boundary)
        ({"src/hop": "hop2/x", "src/hop2": "../.."}, ["src/hop", "src/hop2"]),
        ({"src/l1": "l2", "src/l2": "l1"}, ["src/l1", "src/l2"]),
        ({"src/g": "../.GIT/hooks"}, ["src/g"]),
        ({"src/dots": "../src/../../outside"}, ["src/dots"]),
        ({"src/dot": "./../src/./a.py", "src/self": "."}, []),
    ],
    ids=["through-a-dir-link", "chain-of-two", "loop", "dot-git-case", "dotdot-detour", "harmless-dots"],
)
def test_symlink_targets(gated: Repo, links: dict[str, str], bad: list[str]) -> None:
    """Symlinks are judged by where they lead through every other link (HG104)."""
    for path, target in links.items():
        (gated.path / path).parent.mkdir(parents=True, exist_ok=True)
        (gated.path / path).symlink_to(target)
    gated.git("add", "-A")
    assert staged(gated) == (1 if bad else 0, [("HG104", p) for p in bad])


def test_very_long_names(gated: Repo) -> None:
    """Names of 5,000 bytes (longer than PATH_MAX) are judged like any other."""
    deep = "/".join(["d" * 200] * 25)
    _stage_blob(gated, f"src/{deep}/in.py".encode())
    assert staged(gated) == (0, [])
    _stage_blob(gated, f"{deep}/out.py".encode())
    assert staged(gated) == (1, [("HG101", f"{deep}/out.py")])


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/harness/active", []),
        ("src/harness/plans/p1/approvals.jsonl", []),
        ("harness.bak/plans/p1/plan.md", [("HG101", "harness.bak/plans/p1/plan.md")]),
        ("harnessx/active", [("HG101", "harnessx/active")]),
        ("docs/harness/plans/p1/evidence.jsonl", [("HG101", "docs/harness/plans/p1/evidence.jsonl")]),
    ],
)
def test_names_like_the_artifacts_root_elsewhere(gated: Repo, path: str, expected: list[tuple[str, str]]) -> None:
    """A file named like an artifact in another directory is code: judged by the boundary,
    never by (or as) the artifact rules."""
    gated.write(path, "not json at all\n")
    gated.git("add", "-A")
    assert staged(gated) == (1 if expected else 0, expected)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".gitattributes", "src/** filter=evil\n"),
        ("src/.gitattributes", "* -diff\n"),
        (".gitmodules", '[submodule "x"]\n\tpath = src/x\n\turl = https://example.com/x\n'),
        ("src/deep/.gitignore", "*.py\n"),
    ],
)
def test_git_config_files_are_protected(repo: Repo, path: str, text: str) -> None:
    """`.gitattributes`, `.gitmodules` and `.gitignore` edits need their exact path in the
    boundary, even inside `src/**` (HG102); listed exactly, they pass."""
    setup_gated(repo, ("src/**",))
    repo.write(path, text)
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG102", path)])
    repo.git("reset", "-q", "--hard")
    repo.git("clean", "-qfd")
    setup = "harness/plans/p2"
    repo.new_plan("p2", ("src/**", path))
    repo.approve()
    repo.write(path, text)
    repo.git("add", "-A")
    assert staged(repo) == (0, []), setup


_PIECES = [
    ".gitignore",
    ".gitattributes",
    ".github",
    "CODEOWNERS",
    "docs",
    "action.yml",
    ".harness-gate.toml",
    "harness",
    "pyproject.toml",
    "src",
    "x",
    "/",
    "\u017f",
    "\u212a",
    "\u0130",
    "S",
    "K",
    "I",
    "\u00df",
    "harne",
    ".gitattribute",
    ".pre-commit-hoo",
    "s.yaml",
    "CODEOWNER",
    ".g",
    "tignore",
    "s",
    ".claude",
    "settings.json",
    ".codex",
    "hooks.json",
    "CLAUDE.md",
    "AGENTS.md",
    "claude.md",
    "AGENTS.override.md",
    "CLAUDE.local.md",
    ".mcp.json",
    ".MCP.json",
    ".cl",
    "aude",
    ".Codex",
    "agents/",
    "harness/evidence/",
    "Harness/evidence/",
    "e.jsonl",
]


@settings(max_examples=400, deadline=None)
@example([".gitattribute\u017f", "harne\u017fs/x", ".pre-commit-hoo\u212as.yaml"], None)
@given(
    st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5).map("".join), max_size=40),
    st.sampled_from([None, ".harness-gate.toml", "pyproject.toml", "ci/Gate.toml"]),
)
def test_suspects_hold_every_protected_path_and_variant(names: list[str], source: str | None) -> None:
    """The bulk search misses nothing the per-path rules would find."""
    paths = [n.encode("utf-8", "surrogateescape") for n in names]
    suspects = rules.suspects(paths, source, "harness")
    for name, path in zip(names, paths, strict=True):
        if rules.protected(name, source, "harness") or rules.case_variant(name, source, "harness"):
            assert path in suspects, name
