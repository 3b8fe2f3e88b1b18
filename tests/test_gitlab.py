"""GitLab CI: the gate in merge request pipelines with the variables GitLab sets
(tests/gitlab/pipelines.json, filled with a real repository's commits), and `--format
gitlab`, the Code Quality report, held to its documented shape (docs/gitlab.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness_gate import gitlab
from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, Severity
from harness_gate.report import Report
from tests.helpers import Repo, adopted_main, blocked_branch, completed_branch

FIXTURES = Path(__file__).resolve().parent / "gitlab"
PIPELINES: dict[str, dict[str, str]] = json.loads((FIXTURES / "pipelines.json").read_text())
SCHEMA = json.loads((FIXTURES / "code-quality.schema.json").read_text())


def sha(repo: Repo, rev: str) -> str:
    return repo.git("rev-parse", rev).decode().strip()


def environment(kind: str, **commits: str) -> dict[str, str]:
    """The recorded variables of a `kind` pipeline, its placeholders filled with commits."""

    def fill(value: str) -> str:
        def one(m: re.Match[str]) -> str:
            oid = commits[m.group(1)]
            return oid[: int(m.group(2))] if m.group(2) else oid

        return re.sub(r"\{(\w+)(?::(\d+))?\}", one, value)

    return {name: fill(value) for name, value in PIPELINES[kind].items()}


def job(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`harness-gate check ARGS` as a GitLab job runs it: a real process, GitLab's variables."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CI_", "GITLAB"))}
    return subprocess.run(
        [sys.executable, "-m", "harness_gate", "check", *args],
        cwd=repo.path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def valid(text: str) -> list[dict[str, Any]]:
    doc: list[dict[str, Any]] = json.loads(text)
    jsonschema.validate(doc, SCHEMA)
    assert len({i["fingerprint"] for i in doc}) == len(doc)  # GitLab shows one issue per fingerprint
    return doc


def merged(repo: Repo, branch: str = "feature") -> str:
    """The merge GitLab makes for a merged results pipeline (or a train): `branch` into
    main, checked out detached, as the runner leaves it."""
    repo.git("checkout", "-q", "--detach", "main")
    repo.git("merge", "-q", "--no-ff", "--no-verify", "-m", f"Merge branch '{branch}' into 'main'", branch)
    return sha(repo, "HEAD")


@pytest.fixture
def finished(repo: Repo) -> Repo:
    """main adopted; `feature` planned, worked, verified, reviewed and completed."""
    return completed_branch(repo)


@pytest.mark.slow
def test_a_merged_results_pipeline_judges_the_source_head_not_gitlabs_merge(repo: Repo) -> None:
    outside = blocked_branch(adopted_main(repo))
    source, target = sha(repo, "feature"), sha(repo, "main")
    merge = merged(repo)
    env = environment("merged_result", source=source, target=target, merge=merge, diff_base=target)
    out = job(repo, env, "--format", "gitlab")
    assert out.returncode == 1, out.stderr
    issues = valid(out.stdout)
    [boundary] = [i for i in issues if i["check_name"] == "HG101"]
    assert boundary["location"]["path"] == "other.py" and boundary["severity"] == "major"
    assert outside[:12] in boundary["description"]
    doc = json.loads(job(repo, env, "--format", "json").stdout)
    assert doc["data"]["head"] == source and doc["data"]["base"] == target
    assert doc["data"]["stage"] == "ci"


@pytest.mark.slow
def test_a_detached_pipeline_of_a_finished_merge_request_passes(finished: Repo) -> None:
    repo = finished
    source, base = sha(repo, "feature"), sha(repo, "main")
    out = job(repo, environment("detached", source=source, diff_base=base), "--format", "gitlab")
    assert out.returncode == 0, out.stdout
    assert valid(out.stdout) == []
    text = job(repo, environment("detached", source=source, diff_base=base))
    assert text.returncode == 0 and "passed" in text.stdout


@pytest.mark.slow
def test_a_merge_train_judges_what_lands(finished: Repo) -> None:
    repo = finished
    source, target = sha(repo, "feature"), sha(repo, "main")
    train = merged(repo)
    env = environment("merge_train", source=source, target=target, merge=train, diff_base=target)
    out = job(repo, env, "--format", "json")
    assert out.returncode == 0, out.stdout
    assert json.loads(out.stdout)["data"]["head"] == train
    # A train car whose plan is still open: what lands must be ended.
    repo.git("checkout", "-q", "-b", "open", target)
    planned_branch_name = "open"
    repo.write("src/b.py", "b = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "no plan of its own", "--no-verify")
    train = merged(repo, planned_branch_name)
    env = environment("merge_train", source=sha(repo, "open"), target=target, merge=train, diff_base=target)
    out = job(repo, env, "--format", "gitlab")
    assert out.returncode == 1
    assert {i["check_name"] for i in valid(out.stdout)} >= {"HG201"}


@pytest.mark.slow
def test_a_push_to_the_default_branch_judges_what_landed(finished: Repo) -> None:
    repo = finished
    before = sha(repo, "main")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-verify", "-m", "Merge feature", "feature")
    out = job(repo, environment("push_default", before=before, merge=sha(repo, "HEAD")), "--format", "json")
    assert out.returncode == 0, out.stdout
    assert json.loads(out.stdout)["data"]["base"] == before


@pytest.mark.slow
def test_a_push_to_another_branch_names_no_change_set(finished: Repo) -> None:
    repo = finished
    out = job(repo, environment("push_branch", before="0" * 40, source=sha(repo, "feature")), "--format", "gitlab")
    assert out.returncode == 2
    [issue] = valid(out.stdout)
    assert issue["check_name"] == "HG904" and issue["severity"] == "blocker"


@pytest.mark.parametrize(
    ("kind", "drop", "set_"),
    [
        ("merged_result", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", {}),
        ("merged_result", "CI_MERGE_REQUEST_TARGET_BRANCH_SHA", {}),
        ("detached", "CI_MERGE_REQUEST_DIFF_BASE_SHA", {}),
        ("merge_train", None, {"CI_COMMIT_SHA": "HEAD"}),
        ("detached", None, {"CI_MERGE_REQUEST_EVENT_TYPE": "merge_queue"}),
        ("detached", None, {"CI_COMMIT_SHA": "a" * 39}),
        ("push_default", None, {"CI_COMMIT_BEFORE_SHA": "0" * 40}),
    ],
)
def test_variables_that_do_not_name_commits_are_an_error(kind: str, drop: str | None, set_: dict[str, str]) -> None:
    env = environment(kind, source="a" * 40, target="b" * 40, merge="c" * 40, diff_base="d" * 40, before="e" * 40)
    if drop:
        del env[drop]
    env.update(set_)
    with pytest.raises(HarnessGateError) as exc:
        gitlab.pipeline(env)
    assert exc.value.code == "HG918"


def test_outside_gitlab_nothing_is_inferred() -> None:
    env = environment("detached", source="a" * 40, diff_base="d" * 40)
    assert gitlab.pipeline({**env, "GITLAB_CI": "false"}) is None
    assert gitlab.pipeline(environment("push_branch", before="e" * 40, source="a" * 40)) is None


@pytest.mark.slow
def test_a_shallow_clone_says_how_to_fetch_enough(finished: Repo, tmp_path: Path) -> None:
    source, base = sha(finished, "feature"), sha(finished, "main")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{finished.path}", str(clone)], check=True
    )
    out = job(Repo(clone), environment("detached", source=source, diff_base=base), "--format", "gitlab")
    assert out.returncode == 2
    [issue] = valid(out.stdout)
    assert issue["check_name"] == "HG905"


# -- the format itself --------------------------------------------------------------------


def test_the_format_is_bounded_escaped_and_stable() -> None:
    weird = "src/\x1b[2Jx\udcff.py"  # a control character, and a name that is not UTF-8
    findings = (
        *(
            Finding("HG101", f"src/f{i}.py", None, f"commit {i:040x}: {'x' * 100}", "fix it", Severity.ERROR)
            for i in range(gitlab.MAX_ISSUES + 50)
        ),
        Finding("HG101", weird, 3, "odd name", "", Severity.WARNING),
    )
    issues = valid(json.dumps(gitlab.code_quality(Report("check", findings))))
    assert len(issues) == gitlab.MAX_ISSUES + 1
    assert issues[-1]["severity"] == "info" and "51 more findings left out" in issues[-1]["description"]
    # The same problem in another run, another commit id: the same fingerprint.
    again = gitlab.code_quality(
        Report(
            "check", (Finding("HG101", "src/f0.py", None, f"commit {'f' * 40}: {'x' * 100}", "fix it", Severity.ERROR),)
        )
    )
    assert again[0]["fingerprint"] == issues[0]["fingerprint"]
    small = gitlab.code_quality(Report("check", (findings[-1],)))
    assert small[0]["location"] == {"path": "src/\x1b[2Jx\\xff.py", "lines": {"begin": 3}}
    assert small[0]["severity"] == "minor"
    assert "\x1b" not in json.dumps(small)  # escaped as JSON writes control characters


def test_long_messages_are_cut_and_the_file_stays_under_its_bound() -> None:
    findings = tuple(
        Finding("HG101", f"src/f{i}.py", None, "x" * 50_000, "fix it", Severity.ERROR) for i in range(6000)
    )
    text = json.dumps(gitlab.code_quality(Report("check", findings)), indent=2)
    issues = valid(text)
    assert len(text.encode()) <= gitlab.MAX_BYTES + 100_000  # the indentation gitlab.write adds, with room
    assert max(len(i["description"]) for i in issues) < 2100  # report.bounded
    assert "left out" in issues[-1]["description"] and len(issues) < 6000


def test_security_rules_are_critical_and_errors_blockers(tmp_path: Path) -> None:
    report = Report("check", (Finding("HG102", ".github/workflows/ci.yml", None, "protected", "", Severity.ERROR),))
    assert gitlab.code_quality(report)[0]["severity"] == "critical"
    error = Report("check", error=HarnessGateError("HG902", ".harness-gate.toml, line 2: unknown key `x`"))
    [issue] = valid(json.dumps(gitlab.code_quality(error, root=tmp_path)))
    assert issue["severity"] == "blocker" and issue["check_name"] == "HG902"
    assert issue["location"] == {"path": ".harness-gate.toml", "lines": {"begin": 2}}
