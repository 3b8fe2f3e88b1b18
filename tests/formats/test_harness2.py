"""The `harness2` format, Harness² trees: the corpus through the real CLI, and the gate in a real repository.

tests/corpus/formats/harness2/ (README.md there) mirrors the plugin's data directory
`.dsh-harness2/`: each case is installed under `.dsh-harness2/` of a fresh git repository
and linted with `harness-gate lint FILE... --format json`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness_gate import config, formats
from harness_gate.findings import RULES
from harness_gate.formats import harness2
from tests.helpers import Repo

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "formats" / "harness2"
POSITIVE = sorted(p for p in (CORPUS / "positive").iterdir() if p.is_dir())
NEGATIVE = sorted((CORPUS / "negative").iterdir())
NAME = re.compile(r"(HG6[67][0-9])-(0|[1-9][0-9]*)-([a-z0-9][a-z0-9-]*?)(\.[a-z]+)?")
DATA = ".dsh-harness2"
# A single-file negative's slug starts with the file it stands for (below `.dsh-harness2/`).
ROLES = {
    "system": "harness/system.md",
    "guardrails": "harness/guardrails.md",
    "memory": "harness/memory.md",
    "tool-guidance": "harness/tool-guidance.md",
    "experience": "library/demo/EXPERIENCE.md",
    "run": "runs/r1/trajectory",
}
BLOCK = sorted(c for c in RULES if "HG660" <= c <= "HG679")
MATCH = formats.matcher(config.parse(b"", None))


def _ids(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, id=p.name) for p in paths]


def _install(repo: Repo, case: Path) -> list[str]:
    """Copy a case below `.dsh-harness2/`; the repository paths of its format files."""
    if case.is_dir():
        for src in sorted(case.rglob("*")):
            if src.is_file() and src.name != "README":
                repo.write(f"{DATA}/{src.relative_to(case).as_posix()}", src.read_bytes())
    else:
        repo.write(_single_target(case), case.read_bytes())
    rels = [p.relative_to(repo.path).as_posix() for p in (repo.path / DATA).rglob("*") if p.is_file()]
    return sorted(r for r in rels if MATCH.which(r.encode()) == "harness2")


def _single_target(case: Path) -> str:
    m = NAME.fullmatch(case.name)
    assert m, case.name
    slug, ext = m[3], m[4] or ""
    role = max((r for r in ROLES if slug == r or slug.startswith(r + "-")), key=len)
    target = ROLES[role]
    return f"{DATA}/{target}{ext if role == 'run' else ''}"


def _expected(case: Path) -> tuple[str, str, int | None]:
    m = NAME.fullmatch(case.name)
    assert m, f"{case.name}: name must be CODE-LINE-slug[.ext]"
    if case.is_dir():
        (line,) = [x for x in (case / "README").read_text("utf-8").splitlines() if x.startswith("file: ")]
        target = f"{DATA}/{line.removeprefix('file: ')}"
    else:
        target = _single_target(case)
    return m[1], target, int(m[2]) or None


def _lint(repo: Repo, paths: list[str]) -> tuple[int, list[tuple[str, str, int | None]]]:
    res = repo.cli("lint", *paths, "--format", "json")
    report = json.loads(res.output)
    return res.exit_code, [(f["code"], f["path"], f["line"]) for f in report["findings"]]


def test_corpus_is_complete() -> None:
    """The corpus cannot pass vacuously: every case is found, every code has a negative."""
    assert len(POSITIVE) == 3
    assert len(NEGATIVE) == 17
    assert {_expected(p)[0] for p in NEGATIVE} == set(BLOCK)
    assert [f"HG{n}" for n in range(660, 668)] == BLOCK
    for case in NEGATIVE:
        assert NAME.fullmatch(case.name), case.name
        assert case.is_file() or (case / "README").is_file(), case.name


@pytest.mark.parametrize("case", _ids(POSITIVE))
def test_positive(repo: Repo, case: Path) -> None:
    paths = _install(repo, case)
    assert paths
    code, found = _lint(repo, paths)
    assert found == []
    assert code == 0


@pytest.mark.parametrize("case", _ids(NEGATIVE))
def test_negative(repo: Repo, case: Path) -> None:
    paths = _install(repo, case)
    code, found = _lint(repo, paths)
    assert found == [_expected(case)]
    assert code == 1


def test_positive_tree_is_whole() -> None:
    """The full positive case exercises every component of its specification's table."""
    files = {p.relative_to(CORPUS / "positive" / "full").as_posix() for p in (CORPUS / "positive" / "full").rglob("*")}
    kinds = {harness2.role(f"{DATA}/{f}").kind for f in files}
    assert {"always-on", "skill", "sub-agent", "script", "plugin", "lesson"} <= kinds


# --- detection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (".dsh-harness2/harness/system.md", "harness2"),
        ("svc/.dsh-harness2/harness/skills/triage/SKILL.md", "harness2"),
        (".dsh-harness2/library/finance/EXPERIENCE.md", "harness2"),
        (".dsh-harness2/runs/r1/rollout.json", "harness2"),
        ("system.md", None),
        ("docs/guardrails.md", None),
        ("harness2/system.md", None),
        ("skills/triage/SKILL.md", None),
        (".dsh-harness2/library/finance/INDEX.md", None),
        (".dsh-harness2/config.json", None),
    ],
)
def test_detection_by_path(path: str, fmt: str | None) -> None:
    assert MATCH.which(path.encode()) == fmt


def test_unrelated_files_are_never_touched(repo: Repo) -> None:
    """A repository not using Harness² has system.md / SKILL.md files of its own."""
    repo.write("system.md", "Hello {name}\n" + "x" * 20_000)
    repo.write("skills/triage/SKILL.md", "unnamed anywhere\n")
    assert formats.worktree_files(repo.path, config.parse(b"", None)) == []


def test_configured_paths_move_the_tree(repo: Repo) -> None:
    """`[formats.harness2] paths` moves the tree; the root is what precedes the components."""
    cfg = config.parse(b'[formats.harness2]\npaths = ["ops/agent/**"]\n', None)
    match = formats.matcher(cfg)
    assert match.which(b"ops/agent/system.md") == "harness2"
    assert match.which(b".dsh-harness2/harness/system.md") is None
    repo.write(".harness-gate.toml", '[formats.harness2]\npaths = ["ops/agent/**"]\n')
    repo.write("ops/agent/system.md", "# System\n")
    repo.write("ops/agent/skills/triage/SKILL.md", "# Triage\n")
    code, found = _lint(repo, ["ops/agent/system.md", "ops/agent/skills/triage/SKILL.md"])
    assert found == [("HG661", "ops/agent/skills/triage/SKILL.md", None)]
    assert code == 1


def test_roles() -> None:
    role = harness2.role
    assert role("a/skills/x/SKILL.md") == harness2.Role("skill", "a/", "x")
    assert role("skills/x/SKILL.md") == harness2.Role("skill", "", "x")
    assert role("r/skills/x/system.md").kind == "other"  # a skill's own file, not the tree's
    assert role("r/scripts/system.md").kind == "other"
    assert role("r/system.md") == harness2.Role("always-on", "r/", "system.md")
    assert role(".dsh-harness2/runs/r/.dsh-harness2/harness/system.md").kind == "run"


@pytest.mark.parametrize(
    "data",
    [b"", b"\xff\xfe", b"{" * 100_000, b"## Transferable lesson\n" * 1000, b"\x00" * 64, "é".encode() * 20_000],
)
@pytest.mark.parametrize(
    "path",
    [
        ".dsh-harness2/harness/system.md",
        ".dsh-harness2/harness/skills/s/SKILL.md",
        ".dsh-harness2/harness/scripts/s.py",
        ".dsh-harness2/library/d/EXPERIENCE.md",
    ],
)
def test_never_raises(repo: Repo, path: str, data: bytes) -> None:
    ctx = formats.Context(config.parse(b"", None), formats.Files(repo.path, None, worktree=True))
    found = harness2.lint(path, data, ctx) + harness2.gate(path, data, None, ctx)
    assert all(f.code in RULES for f in found)
    assert len([f for f in found if f.code == "HG663"]) <= harness2.MAX_BRACE_FINDINGS + 1


def test_script_references() -> None:
    refs = harness2._SCRIPT_REF.findall
    assert refs("run `python scripts/a.py`, then scripts/b_c.py.") == ["scripts/a.py", "scripts/b_c.py"]
    assert refs("x/scripts/a.py scripts/a.pyc scripts/a.py.bak resources/scripts/d.py") == []


# --- the gate ------------------------------------------------------------------------------


def _adopted(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.new_plan("p1", (".dsh-harness2/**",))
    repo.approve()


def _check(repo: Repo) -> list[tuple[str, str, int | None]]:
    res = repo.cli("check", "--staged", "--format", "json")
    found = json.loads(res.output)["findings"]
    return sorted((f["code"], f["path"], f["line"]) for f in found if f["code"].startswith("HG6"))


def _tree(repo: Repo, **extra: str) -> None:
    base = {
        "system.md": "# System\n\nUse the triage skill; run scripts/check.py.\n",
        "guardrails.md": "# Guardrails\n",
        "skills/triage/SKILL.md": "# Triage\n",
        "scripts/check.py": "print({})\n",
    }
    for rel, text in {**base, **extra}.items():
        repo.write(f"{DATA}/harness/{rel}", text)


def test_gate_blocks_an_always_on_file_over_its_cap_and_an_unnamed_skill(repo: Repo) -> None:
    """The two headline rules of its specification, staged in a real repository, with exact codes."""
    _adopted(repo)
    _tree(repo, **{"memory.md": "m" * 12_001, "skills/summarize/SKILL.md": "# Summarize\n"})
    repo.git("add", "-A")
    assert _check(repo) == [
        ("HG660", f"{DATA}/harness/memory.md", 1),
        ("HG661", f"{DATA}/harness/skills/summarize/SKILL.md", None),
    ]
    res = repo.cli("check", "--staged")
    assert res.exit_code == 1


def test_gate_passes_a_valid_tree(repo: Repo) -> None:
    _adopted(repo)
    _tree(repo, **{"memory.md": "m" * 12_000})
    repo.write(
        f"{DATA}/library/finance/EXPERIENCE.md",
        "## Transferable lesson\n- **cue**: a\n- **lesson**: b\n- **evidence**: c\n- **confidence**: high\n",
    )
    repo.git("add", "-A")
    assert _check(repo) == []


def test_gate_blocks_removing_a_skill_name_or_deleting_a_referenced_script(repo: Repo) -> None:
    """A change to one file that breaks a rule of another file the change does not touch."""
    _adopted(repo)
    _tree(repo)
    repo.git("add", "-A")
    assert _check(repo) == []
    repo.git("commit", "-qm", "tree")
    repo.write(f"{DATA}/harness/system.md", "# System\n\nRun scripts/check.py.\n")
    repo.git("add", "-A")
    assert _check(repo) == [("HG661", f"{DATA}/harness/system.md", None)]
    repo.git("reset", "-q", "--hard")
    repo.git("rm", "-q", f"{DATA}/harness/scripts/check.py")
    assert _check(repo) == [("HG662", f"{DATA}/harness/system.md", 3)]


def test_gate_moving_a_skill_name_to_guardrails_is_allowed(repo: Repo) -> None:
    _adopted(repo)
    _tree(repo)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "tree")
    repo.write(f"{DATA}/harness/system.md", "# System\n\nRun scripts/check.py.\n")
    repo.write(f"{DATA}/harness/guardrails.md", "# Guardrails\n\n- Load triage before edits.\n")
    repo.git("add", "-A")
    assert _check(repo) == []


def test_gate_blocks_committed_run_state(repo: Repo) -> None:
    _adopted(repo)
    repo.write(f"{DATA}/runs/r1/workspace/secret.txt", "copied workspace\n")
    repo.git("add", "-f", "-A")
    assert _check(repo) == [("HG667", f"{DATA}/runs/r1/workspace/secret.txt", None)]


def test_formats_status_counts_characters(repo: Repo) -> None:
    _tree(repo, **{"memory.md": "é" * 10})
    res = repo.cli("formats", "status", f"{DATA}/harness/memory.md", "--format", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.output)["data"]["files"]
    assert row["valid"] is True
    assert row["status"] == ["10 of 12,000 characters"]


def test_docs_name_every_code() -> None:
    doc = (CORPUS.parents[3] / "docs" / "formats" / "harness2.md").read_text("utf-8")
    for code in BLOCK:
        assert code in doc
    for pattern in formats.REGISTRY["harness2"].paths:
        assert f"`{pattern}`" in doc


def test_gate_blocks_deleting_the_file_that_named_a_skill(repo: Repo) -> None:
    _adopted(repo)
    _tree(repo, **{"system.md": "# System\n", "guardrails.md": "# Guardrails\n\n- Load triage first.\n"})
    repo.git("add", "-A")
    assert _check(repo) == []
    repo.git("commit", "-qm", "tree")
    repo.git("rm", "-q", f"{DATA}/harness/guardrails.md")
    assert _check(repo) == [("HG661", f"{DATA}/harness/guardrails.md", None)]


def test_findings_are_capped_per_rule(repo: Repo) -> None:
    ctx = formats.Context(config.parse(b"", None), formats.Files(repo.path, None, worktree=True))
    cap = harness2.MAX_FINDINGS
    scripts = harness2.lint(f"{DATA}/harness/memory.md", b"run scripts/gone.py\n" * 500, ctx)
    assert [f.code for f in scripts] == ["HG662"] * (cap + 1)
    assert scripts[-1].message.startswith(f"{500 - cap} more HG662")
    lesson = b"## Transferable lesson\n" + b"- **Cue:** again\n" * 501
    found = harness2.lint(f"{DATA}/library/d/EXPERIENCE.md", lesson, ctx)
    assert [f.code for f in found] == ["HG664"] * (cap + 1)
    assert found[-1].message.startswith(f"{501 - cap} more HG664")  # 500 repeats, 1 lesson short


def test_a_skill_directory_name_that_is_not_utf8(repo: Repo) -> None:
    """Git paths are bytes: a non-UTF-8 skill name arrives surrogate-escaped and must not
    crash the naming rule (it once raised UnicodeEncodeError, reported as HG999)."""
    _adopted(repo)
    _tree(repo)
    skill = repo.path / DATA / "harness" / "skills" / os.fsdecode(b"caf\xe9")
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(b"# Cafe\n")
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    codes = [f["code"] for f in json.loads(res.output)["findings"]]
    assert "HG999" not in codes and res.exit_code != 2
    assert "HG661" in codes  # named nowhere: the rule ran
    repo.git("commit", "-qm", "skill")
    repo.write(f"{DATA}/harness/guardrails.md", "# Guardrails\n\nBe careful.\n")  # the gate's naming rule
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    assert "HG999" not in [f["code"] for f in json.loads(res.output)["findings"]] and res.exit_code != 2
