"""Report-only mode is read from the trusted side only: a change that switches it on for
itself is judged, and blocked, as if it had not (docs/config.md, "Report-only mode")."""

from __future__ import annotations

from tests.adversarial.util import BOUNDARY_ONLY, check, commit, report, rev, setup_gated
from tests.adversarial.util import staged as staged_codes
from tests.helpers import Repo

CI = ("--base", "main", "--head", "HEAD", "--stage", "ci")
REPORT_ONLY = BOUNDARY_ONLY + "report_only = true\n"
# The plan names the configuration exactly: the change to it is approved (no HG102), and
# only the trusted side's report_only may decide.
APPROVED_CONFIG = ("src/**", ".harness-gate.toml")


def test_a_pull_request_that_turns_report_only_on_for_itself_is_blocked(repo: Repo) -> None:
    setup_gated(repo, boundary=APPROVED_CONFIG)
    repo.git("checkout", "-qb", "pr")
    repo.write(".harness-gate.toml", REPORT_ONLY)
    repo.write("other.py", "x = 2\n")
    commit(repo, "report-only for this pull request, and a write outside the boundary")
    doc = report(repo, "check", *CI)
    assert (doc["exit_code"], doc["result"]) == (1, "blocked")
    assert "report_only" not in doc["data"]
    assert ("HG101", "other.py") in {(f["code"], f["path"]) for f in doc["findings"]}


def test_a_push_that_turns_it_on_in_an_earlier_commit_is_blocked(repo: Repo) -> None:
    setup_gated(repo, boundary=APPROVED_CONFIG)
    base = rev(repo, "HEAD")
    repo.write(".harness-gate.toml", REPORT_ONLY)
    commit(repo, "report-only from now on")
    repo.write("other.py", "x = 2\n")
    commit(repo, "outside the boundary")
    code, found = check(repo, "--range", f"{base}..HEAD", "--stage", "pre-push")
    assert code == 1
    assert ("HG101", "other.py") in found


def test_a_commit_that_stages_it_is_blocked(repo: Repo) -> None:
    """The index check trusts HEAD's configuration: the staged one is the change."""
    setup_gated(repo, boundary=APPROVED_CONFIG)
    repo.write(".harness-gate.toml", REPORT_ONLY)
    repo.write("other.py", "x = 2\n")
    repo.git("add", "-A")
    code, found = staged_codes(repo)
    assert code == 1
    assert ("HG101", "other.py") in found


def test_a_pull_request_cannot_turn_it_off_either_but_is_only_reported(repo: Repo) -> None:
    """The base's report_only stands for the pull request that removes it: the mode is the
    base's to give and to take (the next pull request is enforced)."""
    setup_gated(repo, boundary=APPROVED_CONFIG, config=REPORT_ONLY)
    repo.git("checkout", "-qb", "pr")
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    repo.write("other.py", "x = 2\n")
    commit(repo, "enforce, and a write outside the boundary")
    doc = report(repo, "check", *CI)
    assert (doc["exit_code"], doc["result"]) == (0, "would-block")
    assert doc["data"]["report_only"] is True
