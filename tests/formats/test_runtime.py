"""The `runtime` format, the agent runtime: the corpus through the real CLI, and the gate in a real repository.

tests/corpus/formats/runtime/positive/  valid files; `gate-*/` holds before.jsonl and after.jsonl,
                                        a committed log and its allowed successor
tests/corpus/formats/runtime/negative/  CODE-LINE-slug.ext: that code at that line (0: no line);
                                        CODE-LINE-slug/ with before.jsonl + after.jsonl: a gate
                                        rule, the finding points at the log as after.jsonl has it

Each case is written where the default paths find its kind, in a fresh git repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness_gate import boundary, formats
from harness_gate.findings import RULES
from harness_gate.formats import runtime
from tests.helpers import Repo

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "formats" / "runtime"
POSITIVE = sorted((CORPUS / "positive").iterdir())
NEGATIVE = sorted((CORPUS / "negative").iterdir())
NAME = re.compile(r"^(HG6[23][0-9])-(0|[1-9][0-9]*)-[a-z0-9][a-z0-9-]*(\.jsonl|\.json|\.md)?$")
BLOCK = sorted(c for c in RULES if "HG620" <= c <= "HG639")

# Where each kind lives in the test repositories (all found by the default paths).
EVENTS = ".codex/harness/evidence/2026-05-11.jsonl"
TEAM = "plans/report.harness-agent-team.json"
REQUIREMENTS = "docs/requirements/report.harness-requirements.md"
STATE = "docs/harness-state.md"
BOUNDARY = (".codex/**", "plans/**", "docs/**")

# The positive file on which each rule runs and passes: every rule has one.
POSITIVE_FOR = {
    **dict.fromkeys(("HG620", "HG621", "HG622", "HG623"), "events-mixed.jsonl"),
    **dict.fromkeys(("HG624", "HG625"), "gate-append"),
    **{f"HG6{n}": "team-mixed.json" for n in range(26, 36)},
    **dict.fromkeys(("HG636", "HG637"), "requirements-task-demand.md"),
    **dict.fromkeys(("HG638", "HG639"), "state-log.md"),
}


def _target(case: Path) -> str:
    """The repository path a corpus file is written to, by its kind."""
    code = NAME.match(case.name)
    if case.is_dir() or case.suffix == ".jsonl":
        return EVENTS
    if case.suffix == ".json":
        return TEAM
    state = case.name.startswith("state-") or (code is not None and code[1] in ("HG638", "HG639"))
    return STATE if state else REQUIREMENTS


def _expected(case: Path) -> tuple[str, int | None]:
    match = NAME.match(case.name)
    assert match, f"{case.name}: name must be CODE-LINE-slug.ext"
    return match[1], int(match[2]) or None


def _ids(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, id=p.name) for p in paths]


def _lint(repo: Repo, rel: str) -> tuple[int, list[tuple[str, str, int | None]]]:
    res = repo.cli("lint", rel, "--format", "json")
    report = json.loads(res.output)
    return res.exit_code, [(f["code"], f["path"], f["line"]) for f in report["findings"]]


def _adopted(repo: Repo, files: dict[str, bytes]) -> None:
    """harness-gate adopted with `files` committed, and an approved plan over the format files."""
    repo.write("README.md", "x\n")
    for rel, data in files.items():
        repo.write(rel, data)
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.new_plan("p1", BOUNDARY)
    repo.approve()


def _check_staged(repo: Repo) -> list[tuple[str, str, int | None]]:
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    return [(f["code"], f["path"], f["line"]) for f in json.loads(res.output)["findings"]]


# -- the corpus ------------------------------------------------------------------------


def test_corpus_cannot_pass_vacuously() -> None:
    assert len(BLOCK) == 20
    assert len(POSITIVE) == 5
    assert len(NEGATIVE) == 28
    assert {_expected(c)[0] for c in NEGATIVE} == set(BLOCK), "every rule has a negative case"
    assert set(POSITIVE_FOR) == set(BLOCK), "every rule has a positive case"
    assert {p.name for p in POSITIVE} == set(POSITIVE_FOR.values())
    for case in [*POSITIVE, *NEGATIVE]:
        if case.is_dir():  # gate cases: a committed log and what follows it
            assert {p.name for p in case.iterdir()} >= {"before.jsonl", "after.jsonl"}, case.name
    for case in NEGATIVE:
        if case.is_dir():
            assert (case / "README").is_file(), f"{case.name}: say which file the finding points at"


@pytest.mark.parametrize("case", _ids([p for p in POSITIVE if p.is_file()]))
def test_positive_lints_clean(repo: Repo, case: Path) -> None:
    rel = _target(case)
    repo.write(rel, case.read_bytes())
    exit_code, found = _lint(repo, rel)
    assert (exit_code, found) == (0, [])


@pytest.mark.parametrize("case", _ids([p for p in NEGATIVE if p.is_file()]))
def test_negative_lints_its_code_at_its_line(repo: Repo, case: Path) -> None:
    code, line = _expected(case)
    rel = _target(case)
    repo.write(rel, case.read_bytes())
    exit_code, found = _lint(repo, rel)
    assert exit_code == 1
    assert (code, rel, line) in found, found
    assert {c for c, _, _ in found} == {code}, found  # one broken thing per case


@pytest.mark.parametrize("case", _ids([p for p in [*POSITIVE, *NEGATIVE] if p.is_dir()]))
def test_gate_cases(repo: Repo, case: Path) -> None:
    _adopted(repo, {EVENTS: (case / "before.jsonl").read_bytes()})
    repo.write(EVENTS, (case / "after.jsonl").read_bytes())
    found = _check_staged(repo)
    if case.parent.name == "positive":
        assert found == []
    else:
        code, line = _expected(case)
        assert found == [(code, EVENTS, line)]


# -- the gate in a real repository -------------------------------------------------------


def test_staged_overlapping_worker_write_sets_are_blocked(repo: Repo) -> None:
    _adopted(repo, {})
    overlap = CORPUS / "negative" / "HG631-29-parent-overlaps-sibling-file.json"
    repo.write(TEAM, overlap.read_bytes())
    repo.write(EVENTS, (CORPUS / "negative" / "HG620-2-truncated-line.jsonl").read_bytes())
    found = _check_staged(repo)
    assert sorted(found) == [("HG620", EVENTS, 2), ("HG631", TEAM, 29)]
    res = repo.cli("check", "--staged")
    assert res.exit_code == 1
    assert f"{EVENTS}:2: HG620 " in res.output


def test_valid_runtime_files_pass_the_gate(repo: Repo) -> None:
    _adopted(repo, {})
    for name, rel in (
        ("team-mixed.json", TEAM),
        ("events-mixed.jsonl", EVENTS),
        ("requirements-task-demand.md", REQUIREMENTS),
        ("state-log.md", STATE),
    ):
        repo.write(rel, (CORPUS / "positive" / name).read_bytes())
    assert _check_staged(repo) == []


def test_a_new_checkpoint_without_verification_is_blocked(repo: Repo) -> None:
    state = (CORPUS / "positive" / "state-log.md").read_bytes()
    _adopted(repo, {STATE: state})
    bad = (CORPUS / "negative" / "HG639-16-unverified-development.md").read_bytes()
    entry = bad[bad.index(b"### ") :]
    repo.write(STATE, state + b"\n" + entry)
    line = (state + b"\n").count(b"\n") + 1 + entry[: entry.index(b"- verification:")].count(b"\n")
    assert _check_staged(repo) == [("HG639", STATE, line)]


def test_formats_status_counts_events(repo: Repo) -> None:
    repo.write(EVENTS, (CORPUS / "positive" / "events-mixed.jsonl").read_bytes())
    res = repo.cli("formats", "status", EVENTS, "--format", "json")
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["data"]["files"][0]
    assert row["status"] == ["events: 4 (decision 2, routine 1, unknown 1)", "malformed_count: 0"]


# -- detection and robustness ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "found"),
    [
        (EVENTS, True),
        ("home/.codex/harness/evidence/deep/x.jsonl", True),
        (TEAM, True),
        ("harness-agent-team.json", True),
        (REQUIREMENTS, True),
        ("docs/templates/harness-requirements.md", True),
        (STATE, True),
        ("sub/docs/harness-state.md", True),
        # look-alikes in repositories that do not use the runtime
        ("runtime/evidence/x.jsonl", False),
        (".codex/evidence/x.jsonl", False),
        ("PLAN.json", False),
        ("docs/requirements.md", False),
        ("harness-state.md", False),
        ("docs/harness-state.txt", False),
        # ordinary names that merely end the same way (a wiring harness, a test harness)
        ("docs/wiring-harness-requirements.md", False),
        ("test-harness-requirements.md", False),
        ("rigs/test-harness-agent-team.json", False),
        ("docs/requirements/report-harness-requirements.md", False),
    ],
)
def test_default_paths(path: str, found: bool) -> None:
    match = boundary.Boundary.compile(formats.REGISTRY["runtime"].paths)
    assert match.matches(path.encode()) is found


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00",
        b"[" * 100_000,
        b'{"agents": [' + b"1" * 5000 + b"]}",
        b'{"a": NaN}\n',
        b'{"a": 1, "a": 2}\n',
        b"\n\n\r\n",
        b'{"agents": [{"write_set": [null, 7, "", "C:/x"], "role": "worker", "task_demand": []}]}',
        b"## Task Demand (D_task)\n- estimated_level:\n```\n## State Log\n",
        b"## State Log\n### x\n- event: checkpoint\n- verification:\n  - unverified: true\n",
    ],
)
@pytest.mark.parametrize("path", [EVENTS, TEAM, REQUIREMENTS, STATE])
def test_never_raises(path: str, data: bytes) -> None:
    ctx = formats.Context(None, None)  # type: ignore[arg-type]  (the rules never consult it)
    for f in runtime.lint(path, data, ctx) + runtime.gate(path, data, data + data, ctx):
        assert f.code in RULES
        assert f.line is None or f.line >= 1


@pytest.mark.slow
def test_large_markdown_files_lint_in_linear_time() -> None:
    """Continuation lines were once gathered by rebuilding a tuple per line: a 1 MB
    requirements file took 37 s."""
    import time

    ctx = formats.Context(None, None)  # type: ignore[arg-type]  (the rules never consult it)
    requirements = b"## Task Demand (D_task)\n- estimated_level: low\n- L:\n" + b"  continuation line\n" * 55_000
    state = (
        b"# State\n\n## State Log\n\n### entry\n- event: checkpoint\n- phase: handoff\n- blockers:\n"
        + b"  - blocker line\n" * 60_000
    )
    assert len(requirements) > 1_000_000 and len(state) > 1_000_000
    for path, data in ((REQUIREMENTS, requirements), (STATE, state)):
        start = time.monotonic()
        runtime.lint(path, data, ctx)
        assert time.monotonic() - start < 5, path


@pytest.mark.slow
def test_findings_are_capped_per_rule_and_the_malformed_count_stays_exact() -> None:
    """A log of a million bad lines is one screen of findings, not a million."""
    ctx = formats.Context(None, None)  # type: ignore[arg-type]  (the rules never consult it)
    data = b"{}\n" * 20_000 + b"not json\n" * 30_000
    found = runtime.lint(EVENTS, data, ctx)
    cap = runtime.MAX_FINDINGS
    by_code: dict[str, list[str]] = {}
    for f in found:
        by_code.setdefault(f.code, []).append(f.message)
    assert sorted(by_code) == ["HG620", "HG621"]
    assert len(by_code["HG621"]) == cap + 1 and f"{20_000 - cap} more" in by_code["HG621"][-1]
    assert len(by_code["HG620"]) == cap + 1 and f"{30_000 - cap} more" in by_code["HG620"][-1]
    assert all("30000 malformed line(s)" in m for m in by_code["HG620"][:cap])
    unlabelled = runtime.gate(EVENTS, b"", b'{"command": "x"}\n' * 1000, ctx)
    assert len(unlabelled) == cap + 1 and unlabelled[-1].message.startswith(f"{1000 - cap} more HG625")


@pytest.mark.parametrize(
    ("stamp", "ok"),
    [
        ("2026-05-11T09:30:00Z", True),
        ("2026-05-11T09:30:00.123456+02:00", True),
        ("2024-02-29T23:59:59", True),
        ("2025-13-45T99:99:99", False),
        ("2025-02-29T10:00:00", False),
        ("2026-05-11T24:00:00", False),
        ("2026-05-11", False),
    ],
)
def test_event_timestamp_is_a_real_moment(stamp: str, ok: bool) -> None:
    ctx = formats.Context(None, None)  # type: ignore[arg-type]  (the rules never consult it)
    event = {"command": "make test", "exit_code": 0, "key_output": "ok", "timestamp": stamp, "evidence_kind": "routine"}
    found = runtime.lint(EVENTS, json.dumps(event).encode() + b"\n", ctx)
    assert [f.code for f in found] == ([] if ok else ["HG621"])
