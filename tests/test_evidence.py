"""Evidence for exact trees: fingerprint, verify, record, freshness, review and completion."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness_gate import evidence, templates
from tests.helpers import SCOPE_READ, Repo, adopted_main, plan_sha, planned_branch

PY = Path(sys.executable).as_posix()
OK = f"{PY} -c pass"
FOLDER = "harness/plans/p1"
LOG = f"{FOLDER}/evidence.jsonl"


def findings(repo: Repo, *args: str) -> tuple[int, list[tuple[str, str]]]:
    res = repo.cli("check", *args, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == doc["exit_code"], res.output
    return res.exit_code, [(f["code"], f["message"]) for f in doc["findings"]]


def codes(repo: Repo, *args: str) -> list[str]:
    return [c for c, _ in findings(repo, *args)[1]]


# pre-push requiring evidence (the default only warns there) and no completion rule: the
# evidence rules on their own. The defaults have tests of their own at the end.
STRICT = 'artifacts_dir = "harness"\nevidence_stages = ["pre-push", "ci"]\ncompletion_stages = []\n'


def init_strict(repo: Repo) -> None:
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", STRICT)


def make_plan(repo: Repo, command: str = OK, timeout: int = 60) -> None:
    res = repo.cli(
        "plan",
        "new",
        "p1",
        "--objective",
        "x",
        "--boundary",
        "src/**",
        "--verify",
        f"tests={command}",
        "--timeout",
        str(timeout),
    )
    assert res.exit_code == 0, res.output
    repo.approve()


@pytest.fixture
def planned(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    init_strict(repo)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    make_plan(repo)
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    return repo


def records(repo: Repo) -> list[dict[str, object]]:
    return [json.loads(line) for line in repo.read(LOG).splitlines()]


# -- fingerprint ---------------------------------------------------------------------------


def test_fingerprint_is_reproducible_with_plumbing(planned: Repo) -> None:
    planned.git("commit", "-qm", "work")
    tree = planned.git("rev-parse", "HEAD^{tree}").decode().strip()
    listing = planned.git("ls-tree", tree).decode()
    kept = "".join(line + "\n" for line in listing.splitlines() if not line.endswith("\tharness"))
    expected = planned.git("mktree", input=kept.encode()).decode().strip()
    for source in ("HEAD", "index", "worktree"):
        res = planned.cli("fingerprint", source)
        assert res.exit_code == 0, res.output
        assert res.output.strip() == expected
    planned.write("src/untracked.py", "u\n")  # untracked, not ignored: part of the work tree
    assert planned.cli("fingerprint").output.strip() != expected
    planned.write(".gitignore", "*.log\n")
    planned.write("noise.log", "ignored\n")
    before = planned.cli("fingerprint").output
    planned.write("noise.log", "still ignored\n")
    assert planned.cli("fingerprint").output == before
    assert planned.git("diff", "--cached", "--name-only") == b""  # the real index was not touched


def test_a_repository_without_a_commit_in_the_work_tree_is_named(planned: Repo) -> None:
    """`git add -A` fails on it with "adding files failed" and nothing more: the fingerprint
    says which folder, and what to do (HG311, a finding, not a git error)."""
    planned.git("init", "-q", "src/empty")
    for args in (("verify",), ("status",)):
        res = planned.cli(*args)
        assert res.exit_code == 1, res.output
        assert "HG311" in res.output and "src/empty" in res.output and "HG903" not in res.output
    planned.write("src/empty/x.py", "x\n")
    planned.git("-C", "src/empty", "add", "x.py")
    planned.git("-C", "src/empty", "commit", "-qm", "first")
    assert "HG311" not in planned.cli("status").output


# -- verify and freshness --------------------------------------------------------------------


def test_verify_records_and_check_passes(planned: Repo) -> None:
    res = planned.cli("verify")
    assert res.exit_code == 0, res.output
    [rec] = records(planned)
    assert list(rec) == evidence.KEY_ORDER
    assert rec["status"] == "PASS"
    assert rec["exit_code"] == 0
    assert rec["command"] == OK
    assert rec["plan_sha256"] == plan_sha(planned, FOLDER)
    assert rec["tree"] == planned.cli("fingerprint").output.strip()
    planned.git("add", "-A")
    assert findings(planned, "--stage", "pre-push", "--staged") == (0, [])
    assert "tests fresh" in planned.cli("status").output


def test_missing_evidence(planned: Repo) -> None:
    assert codes(planned, "--stage", "pre-push", "--staged") == ["HG301"]
    assert codes(planned, "--stage", "pre-commit", "--staged") == []  # not required before the push


def test_tree_moved_names_the_paths(planned: Repo) -> None:
    planned.cli("verify")
    planned.write("src/a.py", "a = 2\n")
    planned.git("add", "-A")
    code, found = findings(planned, "--stage", "pre-push", "--staged")
    assert code == 1
    assert found[0][0] == "HG302"
    assert "src/a.py" in found[0][1]


def test_failed_command(repo: Repo) -> None:
    init_strict(repo)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    make_plan(repo, f"{PY} -c 'import sys; print(\"boom\"); sys.exit(3)'")
    repo.write("src/a.py", "x\n")
    res = repo.cli("verify")
    assert res.exit_code == 1
    assert "HG305" in res.output
    assert "boom" in res.output
    [rec] = records(repo)
    assert (rec["status"], rec["exit_code"]) == ("FAIL", 3)
    repo.git("add", "-A")
    assert codes(repo, "--stage", "pre-push", "--staged") == ["HG305"]


@pytest.mark.slow
def test_timeout_kills_the_process_group(repo: Repo) -> None:
    init_strict(repo)
    # A child named by this test alone: another run of the suite on the machine has its own.
    token = f"sleep-{uuid.uuid4().hex}"
    child = f'["{PY}", "-c", "import time; time.sleep(60)", "{token}"]'
    make_plan(repo, f"{PY} -c 'import subprocess,time; subprocess.Popen({child}); time.sleep(60)'", 1)
    start = time.monotonic()
    res = repo.cli("verify")
    assert time.monotonic() - start < 20
    assert res.exit_code == 1
    assert "HG306" in res.output
    [rec] = records(repo)
    assert (rec["status"], rec["exit_code"]) == ("TIMEOUT", None)
    left = subprocess.run(["pgrep", "-f", token], capture_output=True, check=False).stdout
    assert left == b""


def test_command_drift_and_plan_changed(planned: Repo) -> None:
    planned.cli("verify")
    [rec] = records(planned)

    def rewrite(**changes: object) -> None:
        fields = {k: v for k, v in rec.items() if k != "schema"}
        fields.update(changes)
        line = evidence.record_line(**{k: v for k, v in fields.items() if k != "timestamp"})  # type: ignore[arg-type]
        (planned.path / LOG).write_text(line)
        planned.git("add", "-A")

    rewrite(command="true")
    assert codes(planned, "--stage", "pre-push", "--staged") == ["HG304"]
    rewrite(plan_sha256="0" * 64)
    assert codes(planned, "--stage", "pre-push", "--staged") == ["HG303"]
    rewrite(policy="1" * 64)
    assert codes(planned, "--stage", "pre-push", "--staged") == ["HG304"]


def test_a_command_that_rewrites_the_tree_fails(repo: Repo) -> None:
    init_strict(repo)
    make_plan(repo, f'{PY} -c \'open("src_gen.py", "w").write("x")\'')
    res = repo.cli("verify")
    assert res.exit_code == 1
    [rec] = records(repo)
    assert rec["status"] == "FAIL"
    assert "changed the work tree" in str(rec["key_output"])


def test_hidden_edits_refuse_recording(planned: Repo) -> None:
    planned.git("commit", "-qm", "work")
    planned.git("update-index", "--assume-unchanged", "src/a.py")
    planned.write("src/a.py", "hidden\n")
    res = planned.cli("verify")
    assert res.exit_code == 1  # a refusal: one finding, nothing written
    assert "HG308" in res.output
    assert not (planned.path / LOG).exists()


def test_record_adhoc(planned: Repo) -> None:
    res = planned.cli("record", "--id", "lint", "--", PY, "-c", "print('ok')")
    assert res.exit_code == 0, res.output
    [rec] = records(planned)
    assert rec["command_id"] == "lint"
    assert rec["status"] == "PASS"
    assert "ok" in str(rec["key_output"])
    refused = planned.cli("record", "--id", "tests", "--", PY, "-c", "pass")
    assert refused.exit_code == 2  # a usage error: that id names a required command


# -- bad input -----------------------------------------------------------------------------

BAD_LINES = {
    "exit-code-false": lambda r: {**r, "exit_code": False},
    "exit-code-string": lambda r: {**r, "exit_code": "0"},
    "missing-field": lambda r: {k: v for k, v in r.items() if k != "tree"},
    "unknown-schema": lambda r: {**r, "schema": "harness-gate.evidence/v9"},
    "extra-field": lambda r: {**r, "extra": 1},
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_evidence_lines_are_findings(planned: Repo, case: str) -> None:
    planned.cli("verify")
    planned.git("add", "-A")
    planned.git("commit", "-qm", "verified")
    [rec] = records(planned)
    line = json.dumps(BAD_LINES[case](rec), separators=(",", ":"))
    with (planned.path / LOG).open("a") as fh:
        fh.write(line + "\n")
    assert "HG307" in planned.cli("lint").output
    planned.git("add", "-A")
    assert "HG307" in codes(planned, "--staged")


@pytest.mark.parametrize(
    "raw",
    [b'{"exit_code": 0.0}', b'{"exit_code": NaN}', b'{"a": 1, "a": 2}', b"not json"],
    ids=["float", "nan", "duplicate-key", "garbage"],
)
def test_malformed_json_lines(raw: bytes) -> None:
    rec, why = evidence.parse_line(raw, 1)
    assert rec is None
    assert why


def test_truncated_last_line(planned: Repo) -> None:
    planned.cli("verify")
    data = planned.read(LOG)
    (planned.path / LOG).write_bytes(data[:-1])
    res = planned.cli("lint")
    assert res.exit_code == 1
    assert "truncated" in res.output
    refused = planned.cli("verify")
    assert refused.exit_code == 1 and "HG307" in refused.output  # never appends to a broken log


@pytest.mark.slow
def test_atomic_append_survives_a_kill(tmp_path: Path) -> None:
    writer = (
        "import sys\n"
        "from pathlib import Path\n"
        "from harness_gate import fsutil\n"
        "n = 0\n"
        "while True:\n"
        "    n += 1\n"
        "    fsutil.append_line_atomic(Path(sys.argv[1]), (str(n) * 2000 + '\\n').encode())\n"
    )
    for delay in (0.05, 0.13, 0.21, 0.34):
        log = tmp_path / f"evidence-{delay}.jsonl"
        proc = subprocess.Popen([sys.executable, "-c", writer, str(log)], cwd=Path(__file__).parent.parent)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        lines = log.read_bytes().split(b"\n") if log.exists() else [b""]
        assert lines[-1] == b""  # ends with a newline: no torn last line
        # The old file plus whole lines, in order: exactly records 1..k.
        assert lines[:-1] == [str(i).encode() * 2000 for i in range(1, len(lines))]


# -- review and completion -------------------------------------------------------------------


@pytest.mark.slow
def test_ci_requires_a_fresh_passing_review(planned: Repo) -> None:
    planned.cli("verify")
    planned.git("add", "-A")
    assert codes(planned, "--stage", "ci", "--staged") == ["HG413"]
    res = planned.cli("review", "new", "--reviewer", "Rae")
    assert res.exit_code == 0, res.output
    review = planned.path / FOLDER / "001-review.md"
    planned.git("add", "-A")
    assert "HG509" in codes(planned, "--stage", "ci", "--staged")  # the verdict is not filled in
    review.write_text(
        review.read_text()
        .replace(
            '"findings": []',
            '"findings": [{"id": "F1", "severity": "major", "path": "src/a.py", "summary": "off by one"}]',
        )
        .replace(*SCOPE_READ)
        .replace("FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", "REPAIR_REQUIRED")
    )
    planned.git("add", "-A")
    _, found = findings(planned, "--stage", "ci", "--staged")
    assert "HG414" in [c for c, _ in found]
    assert any("off by one" in m for _, m in found)
    review.write_text(
        review.read_text()
        .replace('[{"id": "F1", "severity": "major", "path": "src/a.py", "summary": "off by one"}]', "[]")
        .replace("REPAIR_REQUIRED", "PASS")
    )
    planned.git("add", "-A")
    assert findings(planned, "--stage", "ci", "--staged") == (0, [])
    planned.write("src/a.py", "changed after the review\n")
    planned.cli("verify")
    planned.git("add", "-A")
    assert codes(planned, "--stage", "ci", "--staged") == ["HG413"]  # the review is for the older tree


@pytest.mark.slow
def test_review_needs_fresh_evidence_and_complete_needs_a_review(planned: Repo) -> None:
    res = planned.cli("review", "new")
    assert res.exit_code == 1  # refused: a finding, not an error
    assert "HG301" in res.output
    planned.cli("verify")
    res = planned.cli("complete")
    assert res.exit_code == 1
    assert "HG405" in res.output
    planned.cli("review", "new")
    review = planned.path / FOLDER / "001-review.md"
    review.write_text(
        review.read_text()
        .replace(*SCOPE_READ)
        .replace("FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", "PASS")
    )
    res = planned.cli("complete")
    assert res.exit_code == 1 and "HG509" in res.output  # who reviewed is the reviewer's to fill in
    review.write_text(review.read_text().replace("FILL_IN: the reviewer's name (not the author's)", "Rae Viewer"))
    res = planned.cli("complete")
    assert res.exit_code == 0, res.output
    assert planned.cli("lint").exit_code == 0
    assert "state:      completed" in planned.cli("status").output


def test_completion_without_review_is_a_finding(planned: Repo) -> None:
    psha = plan_sha(planned, FOLDER)
    planned.write(
        f"{FOLDER}/001-completion.md",
        templates.completion(
            binding={
                "plan_sha256": psha,
                "amendment_sha256": None,
                "review": None,
                "review_sha256": None,
                "tree": "0" * 40,
            },
            summary="done",
            evidence=[],
            outcome="completed",
        ),
    )
    res = planned.cli("lint")
    assert res.exit_code == 1
    assert "HG405" in res.output


def test_review_copied_from_another_plan(planned: Repo) -> None:
    planned.cli("verify")
    planned.cli("review", "new", "--reviewer", "Rae")
    review = planned.path / FOLDER / "001-review.md"
    text = (
        review.read_text()
        .replace(*SCOPE_READ)
        .replace("FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", "PASS")
    )
    review.write_text(text.replace(plan_sha(planned, FOLDER), "e" * 64))
    planned.git("add", "-A")
    found = codes(planned, "--stage", "ci", "--staged")
    assert "HG410" in found


# -- found in review ---------------------------------------------------------------------------


def test_removing_the_plan_folder_at_the_head_does_not_skip_evidence(planned: Repo) -> None:
    planned.git("commit", "-qm", "work")  # code without evidence, under plan p1
    base = planned.git("rev-parse", "HEAD~1").decode().strip()
    planned.git("rm", "-rq", "harness/plans/p1")
    planned.git("commit", "-qm", "drop the plan", "--no-verify")
    code, found = findings(planned, "--stage", "pre-push", "--range", f"{base}..HEAD")
    assert code == 1
    assert "HG223" in [c for c, _ in found]  # p1 authorised the code, and is gone at the head


def test_starting_another_plan_at_the_head(planned: Repo) -> None:
    planned.git("commit", "-qm", "work")
    base = planned.git("rev-parse", "HEAD~1").decode().strip()
    assert planned.cli("plan", "new", "p2", "--objective", "y", "--verify", "ok=true").exit_code == 0
    planned.cli("verify")  # p2 is this branch's pick now: p1's code stays unverified
    planned.git("add", "-A")
    planned.git("commit", "-qm", "start p2")
    found = codes(planned, "--stage", "pre-push", "--range", f"{base}..HEAD")
    assert found == ["HG301"]  # p1 authorised the code: its evidence is still owed


@pytest.mark.slow
def test_a_merge_that_adds_a_bad_evidence_line(planned: Repo) -> None:
    planned.cli("verify")
    planned.git("add", "-A")
    planned.git("commit", "-qm", "verified")
    base = planned.git("rev-parse", "HEAD").decode().strip()
    planned.git("checkout", "-qb", "side")
    planned.cli("record", "--id", "lint", "--", PY, "-c", "pass")
    planned.git("add", "-A")
    planned.git("commit", "-qm", "side record")
    planned.git("checkout", "-q", "main")
    planned.cli("record", "--id", "fmt", "--", PY, "-c", "pass")
    planned.git("add", "-A")
    planned.git("commit", "-qm", "main record")
    planned.git("merge", "-q", "--no-commit", "side")  # merge=union joins both appends
    data = planned.read(LOG).splitlines(keepends=True)
    bad = b'{"schema":"harness-gate.evidence/v1","command_id":"tests","exit_code":NaN}\n'
    (planned.path / LOG).write_bytes(b"".join(data[:-1]) + bad + data[-1])
    planned.git("add", "-A")
    planned.git("commit", "-qm", "merge side", "--no-verify")
    assert "HG307" in codes(planned, "--stage", "pre-push", "--range", f"{base}..HEAD")


@pytest.mark.slow
def test_gate_reports_a_timeout_and_bad_numbers(repo: Repo) -> None:
    init_strict(repo)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    make_plan(repo, f"{PY} -c 'import time; time.sleep(30)'", 1)
    repo.write("src/a.py", "x\n")
    repo.cli("verify")
    repo.git("add", "-A")
    assert codes(repo, "--stage", "pre-push", "--staged") == ["HG306"]
    repo.git("commit", "-qm", "timed out")
    with (repo.path / LOG).open("a") as fh:
        fh.write('{"schema":"harness-gate.evidence/v1","command_id":"tests","exit_code":0.0}\n')
    repo.git("add", "-A")
    assert "HG307" in codes(repo, "--staged")


def test_dirty_submodule_refuses_recording(planned: Repo, tmp_path: Path) -> None:
    sub = tmp_path / "lib"
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    (sub / "lib.txt").write_text("v1\n")
    subprocess.run(["git", "-C", str(sub), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(sub), "commit", "-qm", "v1"], check=True)
    planned.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "src/vendor")
    planned.git("commit", "-qm", "vendor", "--no-verify")
    (planned.path / "src" / "vendor" / "lib.txt").write_text("patched\n")
    res = planned.cli("verify")
    assert res.exit_code == 1
    assert "HG308" in res.output


@pytest.mark.slow
def test_concurrent_records_keep_every_line(planned: Repo) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "harness_gate", "record", "--id", f"r{i}", "--", PY, "-c", "pass"],
            cwd=planned.path,
            stdout=subprocess.DEVNULL,
        )
        for i in range(6)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 6
    assert sorted(str(r["command_id"]) for r in records(planned)) == [f"r{i}" for i in range(6)]


def test_a_killed_writers_leftover_is_cleaned(planned: Repo) -> None:
    planned.cli("verify")
    leftover = planned.path / FOLDER / ".evidence.jsonl.abc123.tmp"
    leftover.write_bytes(b"half a rec")
    assert planned.cli("verify").exit_code == 0
    assert not leftover.exists()
    assert len(records(planned)) == 2


def test_record_validates_before_running(planned: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    res = planned.cli("record", "--id", "Bad ID", "--", "touch", str(marker))
    assert res.exit_code == 2
    assert "HG904" in res.output
    assert not marker.exists()


@pytest.mark.slow  # the whole demo, as tests/test_demo.py runs it
def test_demo_never_touches_a_repository_named_by_git_dir(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    subprocess.run(["git", "init", "-q", str(victim)], check=True)
    (victim / "keep.txt").write_text("mine\n")
    before = subprocess.run(["git", "-C", str(victim), "status", "--porcelain"], capture_output=True, check=True)
    env = {**os.environ, "GIT_DIR": str(victim / ".git"), "GIT_WORK_TREE": str(victim)}
    res = subprocess.run(
        [sys.executable, "-m", "harness_gate", "demo"], cwd=tmp_path, env=env, capture_output=True, check=False
    )
    assert res.returncode == 0, res.stdout.decode()
    after = subprocess.run(["git", "-C", str(victim), "status", "--porcelain"], capture_output=True, check=True)
    assert after.stdout == before.stdout
    log = subprocess.run(["git", "-C", str(victim), "log", "--oneline"], capture_output=True, check=False)
    assert log.stdout == b""  # still no commits


def test_init_pins_line_endings_of_the_artifacts(repo: Repo) -> None:
    init_strict(repo)
    out = repo.git("check-attr", "text", "--", "harness/plans/p/plan.md").decode()
    assert out.strip().endswith("text: unset")


@pytest.mark.slow
def test_same_second_edit_after_staging_is_seen(planned: Repo) -> None:
    """git trusts an index entry whose stat data matches unless it is racy; the private
    index copy keeps the index's mtime so a same-second edit is still re-read."""
    planned.git("commit", "-qm", "work")
    target = planned.path / "src" / "a.py"
    target.write_text("1\n")
    planned.git("add", "src/a.py")
    target.write_text("2\n")  # same size, same second as the index write
    time.sleep(1.2)  # a copy of the index made now would look newer than the edit
    index_tree = planned.cli("fingerprint", "index").output.strip()
    work_tree = planned.cli("fingerprint").output.strip()
    assert work_tree != index_tree


def test_a_review_whose_scope_is_still_the_placeholder_does_not_lint(repo: Repo) -> None:
    """Filling in the verdict alone is not a review: the reviewer says what they read."""
    planned_branch(adopted_main(repo))
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    assert repo.cli("verify").exit_code == 0
    out = repo.cli("review", "new", "--reviewer", "Rae")
    assert '"severity": "blocking|major|minor|note"' in out.output  # the shape of a finding
    review = repo.path / "harness/plans/p1/001-review.md"
    review.write_text(review.read_text().replace("FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED", "PASS"))
    res = repo.cli("lint", "harness/plans/p1/001-review.md")
    assert res.exit_code == 1 and "HG514" in res.output and "Scope Reviewed" in res.output, res.output
    review.write_text(review.read_text().replace(*SCOPE_READ))
    assert repo.cli("lint", "harness/plans/p1/001-review.md").exit_code == 0
