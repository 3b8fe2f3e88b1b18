"""The artifact corpus: every positive file parses clean, every negative file fails as named.

tests/corpus/positive/<kind-slug>/*.md  valid artifacts of that kind
tests/corpus/negative/<kind-slug>/*.md  one broken artifact per file, named
                                        CODE-LINE-what.md: the rule code and the 1-based
                                        line the parser reports (`none` for file-level
                                        findings). The name carries the expectation because
                                        any comment inside the file would change its bytes.

Each positive `minimal.md` is also the example printed in docs/artifacts.md.

The corpus is read twice: by the parser directly, and through the CLI
(`harness-gate lint FILE --format json`) from inside a fresh git repository, so the
exit code and the reported path and line are checked end to end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_gate.artifacts import markdown
from harness_gate.artifacts.kinds import BY_SLUG
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.cli import cli
from harness_gate.findings import RULES
from tests.helpers import Repo

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
DOCS = HERE.parent / "docs" / "artifacts.md"
POSITIVE = sorted((CORPUS / "positive").glob("*/*.md"))
NEGATIVE = sorted((CORPUS / "negative").glob("*/*.md"))
NAME = re.compile(r"^(HG[0-9]{3})-(none|[1-9][0-9]*)-[a-z0-9][a-z0-9-]*\.md$")

# One file per layer of the reader: bytes, strict JSON, section content.
SUBPROCESS_CASES = (
    "plan/HG510-1-crlf.md",
    "plan/HG507-27-command-escape-sequence.md",
    "repair/HG514-28-changed-file-absolute.md",
)


def _key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _params(paths: list[Path]) -> list[Any]:
    return [pytest.param(path, id=_key(path)) for path in paths]


def _rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def _expected(path: Path) -> tuple[str, int | None]:
    match = NAME.match(path.name)
    assert match, f"{_key(path)}: name must be CODE-LINE-what.md"
    code, line = match.groups()
    return code, None if line == "none" else int(line)


def _lint_json(path: Path) -> tuple[int, dict[str, Any]]:
    """`harness-gate lint <abs path> --format json`, in-process; the exit code and the report."""
    result = CliRunner().invoke(cli, ["lint", str(path), "--format", "json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("path", _params(POSITIVE))
def test_positive(path: Path) -> None:
    artifact, findings = parse_artifact(_rel(path), path.read_bytes())
    assert findings == []
    assert artifact is not None
    assert artifact.kind.slug == path.parent.name


@pytest.mark.parametrize("path", _params(NEGATIVE))
def test_negative(path: Path) -> None:
    code, line = _expected(path)
    artifact, findings = parse_artifact(_rel(path), path.read_bytes())
    got = [(f.code, f.line) for f in findings]
    assert (code, line) in got, "\n".join(f"{f.code} line {f.line}: {f.message}" for f in findings)
    assert artifact is None


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize("path", _params(POSITIVE))
def test_cli_lint_positive(path: Path) -> None:
    exit_code, report = _lint_json(path)
    assert exit_code == 0, report
    assert report["result"] == "pass"
    assert report["findings"] == []


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize("path", _params(NEGATIVE))
def test_cli_lint_negative(path: Path) -> None:
    code, line = _expected(path)
    exit_code, report = _lint_json(path)
    assert exit_code == 1, report
    assert report["result"] == "blocked"
    assert {f["path"] for f in report["findings"]} == {str(path)}
    got = [(f["code"], f["line"]) for f in report["findings"]]
    assert (code, line) in got, report["findings"]
    # The CLI reports exactly what the parser finds, nothing lost or added on the way.
    _, direct = parse_artifact(str(path), path.read_bytes())
    assert sorted(got, key=str) == sorted(((f.code, f.line) for f in direct), key=str)


@pytest.mark.parametrize("key", SUBPROCESS_CASES)
def test_cli_lint_subprocess(repo: Repo, key: str) -> None:
    path = CORPUS / "negative" / key
    code, line = _expected(path)
    proc = repo.run("lint", str(path))
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 1, (out, proc.stderr)
    assert f"{path}:{line}: {code} " in out
    assert "blocked (1 blocking finding)" in out
    assert proc.stderr == b""


def test_corpus_layout() -> None:
    for group in ("positive", "negative"):
        dirs = {d.name for d in (CORPUS / group).iterdir() if d.is_dir()}
        assert dirs == set(BY_SLUG), group
        for slug in BY_SLUG:
            assert list((CORPUS / group / slug).glob("*.md")), f"{group}/{slug} is empty"
        strays = [p for p in (CORPUS / group).rglob("*") if p.is_file() and p.suffix != ".md"]
        assert strays == []
    for slug in BY_SLUG:
        assert (CORPUS / "positive" / slug / "minimal.md").is_file()
    for key in SUBPROCESS_CASES:
        assert (CORPUS / "negative" / key).is_file(), key


def test_negative_names() -> None:
    for path in NEGATIVE:
        code, _ = _expected(path)
        assert code in RULES, _key(path)


def test_size_cap() -> None:
    plan = (CORPUS / "positive" / "plan" / "minimal.md").read_bytes()
    filler = markdown.MAX_ARTIFACT_BYTES - len(plan) + len(b"None identified.")
    at_cap = plan.replace(b"None identified.", b"x" * filler)
    assert len(at_cap) == markdown.MAX_ARTIFACT_BYTES
    assert parse_artifact("plan.md", at_cap)[1] == []
    artifact, findings = parse_artifact("plan.md", at_cap.replace(b"xx", b"xxx", 1))
    assert artifact is None
    assert [(f.code, f.line) for f in findings] == [("HG512", None)]


@pytest.mark.parametrize("slug", sorted(BY_SLUG))
def test_docs_show_the_minimal_example(slug: str) -> None:
    example = (CORPUS / "positive" / slug / "minimal.md").read_text("utf-8")
    assert f"````markdown\n{example}````\n" in DOCS.read_text("utf-8")
