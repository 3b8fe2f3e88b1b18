"""The `loop` format, the planner/generator/evaluator loop: the corpus through the real CLI, and the gate.

tests/corpus/formats/loop/ holds the contents of a `.harness/` directory (never a
directory named `.harness` itself, which this repository's own gate would judge):

positive/<case>/               a whole run: every file lints clean. Its README names the
                               codes it exercises (`exercises: HG640 ...`).
positive/<case>/before,after   a move the gate allows: `before/` committed, `after/` staged.
negative/CODE-LINE-slug.ext    one file, placed by its code (TARGET); linting it gives
                               exactly that code, at that line (0: no line).
negative/CODE-LINE-slug/       a tree; the README says which file the finding points at
                               (`points at `state.json``); with before/ (and after/) it is
                               a move the gate blocks.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_gate.findings import RULES
from tests.helpers import Repo

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "formats" / "loop"
NAME = re.compile(r"^(HG6[45][0-9])-([0-9]+)-[a-z0-9][a-z0-9-]*(?:\.(?:json|md|log))?$")
CODES = sorted(c for c in RULES if "HG640" <= c <= "HG659")
# Where a single-file negative is placed, by its code.
TARGET = {
    **dict.fromkeys(("HG640", "HG641", "HG642", "HG643"), "state.json"),
    **dict.fromkeys(("HG645", "HG646", "HG647"), "spec.md"),
    **dict.fromkeys(("HG650", "HG651", "HG652"), "iterations/01/verdict.json"),
    "HG653": "brief.md",
    "HG654": "run.log",
}
BOUNDARY_ONLY = 'artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n'


def _cases(group: str) -> list[Path]:
    return sorted((CORPUS / group).iterdir())


def _is_gate(case: Path) -> bool:
    return (case / "before").is_dir()


POSITIVE = [c for c in _cases("positive") if not _is_gate(c)]
POSITIVE_GATE = [c for c in _cases("positive") if _is_gate(c)]
NEGATIVE = [c for c in _cases("negative") if not _is_gate(c)]
NEGATIVE_GATE = [c for c in _cases("negative") if _is_gate(c)]


def _ids(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, id=p.name) for p in paths]


def _expected(case: Path) -> tuple[str, int | None]:
    m = NAME.match(case.name)
    assert m, f"{case.name}: name must be CODE-LINE-slug[.ext]"
    return m.group(1), int(m.group(2)) or None


def _points_at(case: Path) -> str:
    m = re.search(r"points at `([^`]+)`", (case / "README.md").read_text())
    assert m, f"{case.name}/README.md must say which file the finding points at"
    return m.group(1)


def _tree(src: Path) -> dict[str, bytes]:
    if not src.is_dir():
        return {}
    return {
        p.relative_to(src).as_posix(): p.read_bytes()
        for p in sorted(src.rglob("*"))
        if p.is_file() and p.relative_to(src).as_posix() != "README.md"
    }


def _place(repo: Repo, files: dict[str, bytes], root: str = ".harness") -> list[str]:
    shutil.rmtree(repo.path / root, ignore_errors=True)
    for rel, data in files.items():
        repo.write(f"{root}/{rel}", data)
    return [f"{root}/{rel}" for rel in files]


def _lint(repo: Repo, paths: list[str]) -> tuple[int, list[dict[str, Any]]]:
    res = repo.cli("lint", *paths, "--format", "json")
    return res.exit_code, json.loads(res.output)["findings"]


# --- the corpus, linted ---------------------------------------------------------------


def test_corpus_is_complete() -> None:
    """The parametrised tests below cannot pass vacuously."""
    assert (len(POSITIVE), len(POSITIVE_GATE), len(NEGATIVE), len(NEGATIVE_GATE)) == (4, 4, 44, 7)
    negatives = {_expected(c)[0] for c in NEGATIVE + NEGATIVE_GATE}
    assert negatives == set(CODES)
    exercised: set[str] = set()
    for case in POSITIVE + POSITIVE_GATE:
        m = re.search(r"^exercises: (.+)$", (case / "README.md").read_text(), re.MULTILINE)
        assert m, f"{case.name}/README.md must say which codes it exercises"
        exercised.update(m.group(1).split())
    assert exercised == set(CODES)
    for case in NEGATIVE:
        code, _ = _expected(case)
        assert case.is_dir() or code in TARGET, case.name


@pytest.mark.parametrize("case", _ids(POSITIVE))
@pytest.mark.parametrize("root", [".harness", "apps/web/.harness"])
def test_positive_lints_clean(repo: Repo, case: Path, root: str) -> None:
    paths = _place(repo, _tree(case), root)
    exit_code, found = _lint(repo, paths)
    assert (exit_code, found) == (0, [])


@pytest.mark.parametrize("case", _ids(NEGATIVE))
def test_negative_gives_its_code_at_its_line(repo: Repo, case: Path) -> None:
    code, line = _expected(case)
    if case.is_dir():
        _place(repo, _tree(case))
        target = _points_at(case)
    else:
        target = TARGET[code]
        _place(repo, {target: case.read_bytes()})
    exit_code, found = _lint(repo, [f".harness/{target}"])
    assert exit_code == 1, found
    assert {f["code"] for f in found} == {code}, found
    assert (code, line, f".harness/{target}") in [(f["code"], f["line"], f["path"]) for f in found], found


# --- the gate, in a real repository ----------------------------------------------------


@pytest.fixture
def gated(repo: Repo) -> Repo:
    """harness-gate adopted, and an approved plan whose boundary covers the loop's files."""
    repo.write("README.md", "hello\n")
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt harness-gate")
    repo.new_plan("p1", ("**/.harness/**",))
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan p1")
    return repo


def _staged(repo: Repo) -> tuple[int, list[tuple[str, str, int | None]]]:
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    doc = json.loads(res.output)
    return res.exit_code, sorted((f["code"], f["path"], f["line"]) for f in doc["findings"])


def _move(repo: Repo, before: dict[str, bytes], after: dict[str, bytes]) -> tuple[int, list[Any]]:
    _place(repo, before)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "before", "--no-verify")
    _place(repo, after)
    return _staged(repo)


@pytest.mark.parametrize("case", _ids(POSITIVE_GATE))
def test_gate_allows(gated: Repo, case: Path) -> None:
    assert _move(gated, _tree(case / "before"), _tree(case / "after")) == (0, [])


@pytest.mark.parametrize("case", _ids(NEGATIVE_GATE))
def test_gate_blocks(gated: Repo, case: Path) -> None:
    code, line = _expected(case)
    exit_code, found = _move(gated, _tree(case / "before"), _tree(case / "after"))
    assert (exit_code, found) == (1, [(code, f".harness/{_points_at(case)}", line)])


STATE = {
    "iteration": 1,
    "max_iterations": 10,
    "status": "evaluating",
    "eval_override": None,
    "yolo": False,
    "started_at": "2026-01-01T00:00:00Z",
}
SPEC = "---\nevaluation: backend\n---\n\n# Spec\n"


def _state(**changes: Any) -> str:
    return json.dumps({**STATE, **changes}, indent=2) + "\n"


@pytest.mark.parametrize(
    ("verdict", "blocked"),
    [(None, True), ('{"result": "fail"}', True), ('{"result": "pass"}', False)],
    ids=["verdict-missing", "verdict-fail", "verdict-pass"],
)
def test_gate_blocks_a_premature_passed(gated: Repo, verdict: str | None, blocked: bool) -> None:
    """state.json set to passed: blocked unless the latest iteration's verdict says pass,
    read from the index (the same judged state), not the work tree."""
    gated.write(".harness/spec.md", SPEC)
    gated.write(".harness/state.json", _state())
    gated.write(".harness/iterations/01/feedback.md", "x\n")
    if verdict is not None:
        gated.write(".harness/iterations/01/verdict.json", verdict)
    gated.git("add", "-A")
    gated.git("commit", "-qm", "iteration 1", "--no-verify")
    gated.write(".harness/state.json", _state(status="passed"))
    # A passing verdict in the work tree only, never staged, proves nothing.
    gated.write(".harness/iterations/01/verdict.json", '{"result": "pass"}')
    gated.git("add", ".harness/state.json")
    res = gated.cli("check", "--staged", "--format", "json")
    found = [(f["code"], f["path"], f["line"]) for f in json.loads(res.output)["findings"]]
    if blocked:
        assert (res.exit_code, found) == (1, [("HG643", ".harness/state.json", 4)])
    else:
        assert (res.exit_code, found) == (0, [])


def test_gate_judges_every_commit_of_a_range(gated: Repo) -> None:
    """A premature passed committed with --no-verify is caught by `check` over the range."""
    base = gated.git("rev-parse", "HEAD").decode().strip()
    gated.write(".harness/state.json", _state(status="passed"))
    gated.write(".harness/iterations/01/verdict.json", '{"result": "fail"}\n')
    gated.git("add", "-A")
    gated.git("commit", "-qm", "premature", "--no-verify")
    gated.write(".harness/iterations/02/verdict.json", '{"result": "pass"}\n')
    gated.write(".harness/state.json", _state(status="passed", iteration=2))
    gated.git("add", "-A")
    gated.git("commit", "-qm", "fixed later", "--no-verify")
    res = gated.cli("check", "--range", f"{base}..HEAD", "--format", "json")
    found = [(f["code"], f["path"]) for f in json.loads(res.output)["findings"]]
    assert res.exit_code == 1
    assert found == [("HG643", ".harness/state.json")]


def test_one_finding_when_state_and_verdict_change_together(gated: Repo) -> None:
    gated.write(".harness/state.json", _state(status="passed"))
    gated.write(".harness/iterations/01/verdict.json", '{"result": "fail"}\n')
    assert _staged(gated) == (1, [("HG643", ".harness/state.json", 4)])


def test_repositories_without_the_loop_are_untouched(gated: Repo) -> None:
    """Only the file names its specification writes are found: another tool's `.harness/` is not."""
    gated.write(".harness/pipeline.yaml", "pipeline: {}\n")
    gated.write(".harness/state.yaml", "x: [\n")
    assert _staged(gated) == (0, [])
    res = gated.cli("formats", "list", "--format", "json")
    assert json.loads(res.output)["data"]["files"] == []


# --- odd inputs: findings, never exceptions ---------------------------------------------


@pytest.mark.parametrize(
    ("target", "data", "code"),
    [
        ("state.json", b"\xef\xbb\xbf{}", "HG640"),  # a BOM is not JSON
        ("state.json", b"[" * 100_000, "HG640"),  # nesting too deep
        ("state.json", b'{"iteration": 1' + b"0" * 5000 + b"}", "HG640"),  # beyond int digits
        ("state.json", _state(iteration=10**40, max_iterations=10).encode(), "HG642"),
        ("iterations/01/verdict.json", b'{"result": "pass\\u202e"}', "HG650"),  # bidi override
        ("iterations/01/verdict.json", b'{"result": NaN}', "HG650"),
        ("spec.md", b"\xff\xfe", "HG645"),
        ("spec.md", b"---\r\nevaluation: backend\r\n---\r\n", None),  # CRLF frontmatter reads the same
        ("run.log", b"\xff\n" * 1000, "HG654"),
    ],
)
def test_odd_inputs_are_findings(repo: Repo, target: str, data: bytes, code: str | None) -> None:
    _place(repo, {target: data})
    exit_code, found = _lint(repo, [f".harness/{target}"])
    assert exit_code == (1 if code else 0)
    assert {f["code"] for f in found} == ({code} if code else set()), found
    assert len(found) <= 21  # run.log: 20 lines, then one "more follow"


def test_formats_status_shows_the_run(repo: Repo) -> None:
    _place(repo, {"state.json": _state(status="passed").encode(), "iterations/01/verdict.json": b'{"result":"pass"}'})
    res = repo.cli("formats", "status", ".harness/state.json", "--format", "json")
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["data"]["files"][0]
    assert row["status"] == ["status passed, iteration 1 of 10", "iteration directories: 1 (latest 01)"]


class _Files:
    """The judged state as a dict: enough for the format's cross-file reads."""

    def __init__(self, data: dict[str, bytes]) -> None:
        self.data = data

    def paths(self, prefix: str = "") -> list[str]:
        return sorted(p for p in self.data if p.startswith(prefix))

    def exists(self, path: str) -> bool:
        return path in self.data

    def read(self, path: str) -> bytes | None:
        return self.data.get(path)


TARGETS = sorted({*TARGET.values(), "iterations/01/feedback.md", "iterations/7/verdict.json"})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    target=st.sampled_from(TARGETS),
    data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)),
    old=st.one_of(st.none(), st.binary(max_size=100)),
    verdict=st.binary(max_size=60),
)
def test_never_raises(target: str, data: bytes, old: bytes | None, verdict: bytes) -> None:
    from harness_gate import config
    from harness_gate.formats import Context, loop

    path = f"x/.harness/{target}"
    files = _Files({path: data, "x/.harness/iterations/01/verdict.json": verdict})
    ctx = Context(config.parse(b"", None), files)  # type: ignore[arg-type]
    found = loop.lint(path, data, ctx) + loop.gate(path, old, data, ctx) + loop.gate(path, data, None, ctx)
    assert all(f.code in CODES for f in found)
    assert all(f.line is None or f.line >= 1 for f in found)
    loop.status(path, data, ctx)
