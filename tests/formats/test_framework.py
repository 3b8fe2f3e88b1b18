"""The formats framework: configuration, detection by path, lint and the gate hook."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from harness_gate import boundary, config, evidence, formats
from harness_gate.errors import ConfigError
from tests.helpers import Repo


def test_default_paths_are_valid_boundary_patterns() -> None:
    for name, entry in formats.REGISTRY.items():
        for pattern in entry.paths:
            boundary.validate(pattern, "harness")
        assert formats.load(name).name == name


def test_config_switches_formats_off_and_sets_paths() -> None:
    cfg = config.parse(b'[formats.tasks]\nenabled = false\n[formats.loop]\npaths = ["ops/.harness/**"]\n', None)
    assert cfg.formats_disabled == ("tasks",)
    assert cfg.format_paths == (("loop", ("ops/.harness/**",)),)
    match = formats.matcher(cfg)
    assert match.which(b"a/harness-tasks.json") is None
    assert match.which(b"ops/.harness/state.json") == "loop"
    assert match.which(b".harness/state.json") is None


@pytest.mark.parametrize(
    "text",
    [
        b"[formats.nope]\nenabled = true\n",  # an unknown format
        b'[formats.tasks]\nenabled = "no"\n',  # a wrong type
        b'[formats.tasks]\npaths = ["/abs/x"]\n',  # not the boundary dialect
        b"[formats.tasks]\npaths = []\n",  # nothing would be found: say `enabled = false`
    ],
)
def test_bad_format_config_is_a_config_error(text: bytes) -> None:
    with pytest.raises(ConfigError):
        config.parse(text, None)


def test_the_gate_reads_format_files_from_the_index(repo: Repo) -> None:
    """A format file that is not a regular file in the index is HG690 when a change touches it."""
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.new_plan("p1", ("ops/**",))
    repo.approve()
    (repo.path / "ops").mkdir()
    (repo.path / "ops" / "harness-tasks.json").symlink_to("elsewhere")
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    found = [(f["code"], f["path"]) for f in json.loads(res.output)["findings"]]
    assert ("HG690", "ops/harness-tasks.json") in found


def test_formats_list_names_the_files(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.write("ops/harness-progress.txt", "")
    repo.write(".harness/spec.md", "x\n")
    res = repo.cli("formats", "list", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["data"]["files"]
    assert {"format": "tasks", "path": "ops/harness-progress.txt"} in rows
    assert {"format": "loop", "path": ".harness/spec.md"} in rows


def test_evidence_lookup_counts_a_record_only_in_its_own_plans_log() -> None:
    """A PASS copied into another plan's log, or one in the v1 form that names no plan,
    proves nothing; the same record in the log of the plan it names does."""
    tree = "a" * 40
    line = evidence.record_line(
        command_id="t",
        command="make a",
        exit_code=0,
        status="PASS",
        key_output="",
        duration_ms=1,
        tree=tree,
        plan="p1",
        plan_sha256="0" * 64,
        policy="0" * 64,
    )
    rec = json.loads(line)
    del rec["plan"]
    v1 = json.dumps({**rec, "schema": "harness-gate.evidence/v1"}, separators=(",", ":")) + "\n"
    assert evidence.parse_line(v1.rstrip("\n").encode(), 1)[0] is not None  # a valid line
    for log in ({"plans/p2/evidence.jsonl": line.encode()}, {"plans/p1/evidence.jsonl": v1.encode()}):
        assert (formats.evidence_lookup(log, lambda: tree)("make a") or "").startswith("missing:"), log
    assert formats.evidence_lookup({"plans/p1/evidence.jsonl": line.encode()}, lambda: tree)("make a") is None


def test_evidence_lookup_parses_the_logs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every query answers from one index of the newest record per (command, tree): the
    logs are parsed on the first query only, and a tie in time goes to the later line."""
    tree, other = "a" * 40, "b" * 40
    when = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    def line(command: str, status: str, on: str, later: int = 0) -> str:
        code = 0 if status == "PASS" else 1
        return evidence.record_line(
            command_id="t",
            command=command,
            exit_code=code,
            status=status,
            key_output="",
            duration_ms=1,
            tree=on,
            plan="p1",
            plan_sha256="0" * 64,
            policy="0" * 64,
            now=when + dt.timedelta(seconds=later),
        )

    log = "".join(
        [
            line("make a", "PASS", tree),
            line("make a", "FAIL", tree),  # same second, later line: the newest
            line("make b", "FAIL", tree),
            line("make b", "PASS", tree, later=1),
            line("make c", "PASS", other),
        ]
    )
    files = {"plans/p1/evidence.jsonl": log.encode(), "plans/p1/plan.md": b"x"}
    parsed = []
    real = evidence.parse_line

    def counting(raw: bytes, n: int) -> Any:
        parsed.append(n)
        return real(raw, n)

    monkeypatch.setattr(evidence, "parse_line", counting)
    lookup = formats.evidence_lookup(files, lambda: tree)
    assert lookup("make a") == "fail: the newest record on this tree"
    assert lookup("make b") is None
    assert (lookup("make c") or "").startswith("missing: no evidence for `make c` on tree aaaaaaaaaaaa")
    assert lookup("make a") == "fail: the newest record on this tree"
    assert parsed == [1, 2, 3, 4, 5]
