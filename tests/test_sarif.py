"""SARIF 2.1.0 output (`--format sarif`, the Action's `sarif` input) and the annotations'
cap, held to what GitHub code scanning and the SARIF schema require.

Every log is validated against the official OASIS SARIF 2.1.0 schema, vendored in
tests/sarif/ (its source and sha256 in the README there: no network at test time).
`code_scanning_problems` adds what GitHub documents as required for code scanning."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from harness_gate import __version__, github, rule_links, sarif
from harness_gate.errors import HarnessGateError
from harness_gate.findings import FAMILIES, RULES, Finding, Severity
from harness_gate.report import Report
from tests.helpers import PY, Repo, adopted_main, blocked_branch

PROJECT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = Path(__file__).resolve().parent / "sarif" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
OFFICIAL: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
Draft4Validator.check_schema(OFFICIAL)
OFFICIAL_VALIDATOR = Draft4Validator(OFFICIAL)
# A rules page for the tests that look at links (otherwise the installed package decides).
RULES_PAGE = "https://github.com/acme/harness-gate/blob/v0.1.0/docs/rules.md"


URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*\Z")  # RFC 3986, nothing raw


def validate(log: dict[str, Any]) -> dict[str, Any]:
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in OFFICIAL_VALIDATOR.iter_errors(log)]
    assert not problems, problems[:10]
    assert not code_scanning_problems(log)
    return log


def code_scanning_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub's "SARIF support for code scanning" marks required, and the references
    the schema cannot check (ruleIndex into rules, uri-reference syntax)."""
    out = []
    if log.get("$schema") != sarif.SARIF_SCHEMA or log.get("version") != "2.1.0":
        out.append("$schema/version")
    if len(log["runs"]) != 1:
        out.append("one run")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    rules = driver.get("rules", [])
    if driver.get("name") != "harness-gate" or not rules:
        out.append("tool.driver.name and rules")
    for rule in rules:
        for key in ("shortDescription", "fullDescription", "help"):
            if not rule.get(key, {}).get("text") or len(rule[key]["text"]) > 1024:
                out.append(f"{rule['id']}: {key}.text (1-1024 characters)")
        if len(rule.get("name", "")) > 255:
            out.append(f"{rule['id']}: name")
    if len({r["id"] for r in rules}) != len(rules):
        out.append("rule ids not unique")
    if "results" not in run:
        out.append("results[] (may be empty, never absent)")
    for i, result in enumerate(run.get("results", [])):
        where = f"results[{i}]"
        if not result.get("message", {}).get("text"):
            out.append(f"{where}: message.text")
        if not result.get("ruleId"):
            out.append(f"{where}: ruleId")
        index = result.get("ruleIndex")
        if index is None or not 0 <= index < len(rules) or rules[index]["id"] != result.get("ruleId"):
            out.append(f"{where}: ruleIndex does not point at rule {result.get('ruleId')}")
        locations = result.get("locations") or []
        if not locations:
            out.append(f"{where}: at least one location")
        for loc in locations:
            artifact = loc.get("physicalLocation", {}).get("artifactLocation", {})
            if not artifact.get("uri") or not URI_REFERENCE.match(artifact["uri"]):
                out.append(f"{where}: artifactLocation.uri {artifact.get('uri')!r}")
            if artifact.get("uriBaseId") not in (None, sarif.SRCROOT):
                out.append(f"{where}: uriBaseId")
            region = loc["physicalLocation"].get("region")
            if region is not None and not (isinstance(region.get("startLine"), int) and region["startLine"] >= 1):
                out.append(f"{where}: region.startLine")
        prints = result.get("partialFingerprints", {})
        if not prints.get(sarif.GITHUB_FINGERPRINT) or not prints.get(sarif.FINGERPRINT):
            out.append(f"{where}: partialFingerprints")
    return out


def results(log: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = log["runs"][0]["results"]
    return found


def prints(log: dict[str, Any]) -> dict[str, str]:
    """ruleId + fingerprint -> the commit property (or "")."""
    return {
        r["ruleId"] + " " + r["partialFingerprints"][sarif.FINGERPRINT]: r.get("properties", {}).get("commit", "")
        for r in results(log)
    }


def sha(repo: Repo, rev: str) -> str:
    return repo.git("rev-parse", rev).decode().strip()


@pytest.fixture
def blocked(repo: Repo) -> Repo:
    """A branch with a plan, verified work, and a commit outside the boundary after it."""
    blocked_branch(adopted_main(repo))
    return repo


def check_sarif(repo: Repo, *args: str) -> tuple[int, dict[str, Any]]:
    proc = repo.run("check", "--base", "main", "--stage", "ci", "--format", "sarif", *args)
    assert "Traceback" not in proc.stderr.decode()
    return proc.returncode, validate(json.loads(proc.stdout))


@pytest.mark.slow
def test_a_blocked_range_is_a_valid_log_with_commits_lines_and_rules(
    blocked: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(rule_links.ACTION_REPOSITORY_ENV, "acme/harness-gate")
    monkeypatch.setenv(rule_links.ACTION_REF_ENV, "v1.2.3")
    monkeypatch.setenv(rule_links.SERVER_URL_ENV, "https://github.com")
    code, log = check_sarif(blocked)
    assert code == 1
    run = log["runs"][0]
    assert run["tool"]["driver"]["version"] == __version__
    assert run["tool"]["driver"]["informationUri"] == "https://github.com/acme/harness-gate"
    assert run["tool"]["driver"]["rules"][0]["helpUri"] == (
        "https://github.com/acme/harness-gate/blob/v1.2.3/docs/rules.md#hg101"
    )
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    by_rule = {r["ruleId"]: r for r in results(log)}
    outside = by_rule["HG101"]
    assert outside["level"] == "error"
    assert outside["properties"] == {"commit": sha(blocked, "feature")}
    assert outside["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "other.py", "uriBaseId": "%SRCROOT%"}  # no line: none is known
    }
    stale = by_rule["HG302"]  # the head's evidence: no commit, the stale record's line
    assert "properties" not in stale
    log_lines = blocked.read("harness/plans/p1/evidence.jsonl").decode().splitlines()
    assert stale["locations"][0]["physicalLocation"]["region"] == {"startLine": len(log_lines)}
    assert [r["level"] for r in results(log)] == sorted(
        (r["level"] for r in results(log)), key=["error", "warning", "note"].index
    )


def test_every_rule_is_in_the_driver_and_its_help_uri_is_a_real_anchor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rule_links.RULES_URL_ENV, RULES_PAGE)
    log = validate(sarif.to_sarif(Report("check")))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    doc = (PROJECT / "docs" / "rules.md").read_text()
    for rule in rules:
        base, _, anchor = rule["helpUri"].partition("#")
        assert base == RULES_PAGE
        assert f'<a id="{anchor}"></a>{rule["id"]} |' in doc, rule["id"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
    assert len({r["name"] for r in rules}) == len(rules)
    assert log["runs"][0]["results"] == []


def test_the_vendored_schema_is_the_official_one() -> None:
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    assert SCHEMA_SHA256 in (SCHEMA_FILE.parent / "README.md").read_text()
    assert (
        OFFICIAL["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )


def test_the_official_schema_refuses_what_the_log_must_not_hold() -> None:
    """The validation can fail: a log the schema refuses is refused by `validate`."""
    log = sarif.to_sarif(Report("check", findings=(Finding("HG101", "a.py", 3, "outside", "fix it"),)))
    validate(log)
    for broken in (
        {**log, "version": "2.0.0"},
        {**log, "runs": [{**log["runs"][0], "results": [{"message": {"text": "x"}, "level": "fatal"}]}]},
        {**log, "runs": [{**log["runs"][0], "invocations": [{"exitCode": 1}]}]},  # executionSuccessful missing
    ):
        assert list(OFFICIAL_VALIDATOR.iter_errors(broken)), broken


def _docs_rows() -> dict[str, tuple[str, str, str]]:
    """docs/rules.md's rows: code -> (family heading, meaning, how to fix)."""
    rows: dict[str, tuple[str, str, str]] = {}
    family = ""
    for line in (PROJECT / "docs" / "rules.md").read_text().splitlines():
        if line.startswith("## HG"):
            family = line.partition(": ")[2]
        m = re.fullmatch(r'\| <a id="hg\d+"></a>(HG\d+) \| (.*?) \| (.*) \|', line)
        if m:
            rows[m[1]] = (family, m[2], m[3].replace("\\|", "|"))
    return rows


def test_rule_help_is_the_rules_page_entry_as_text_and_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rule_links.RULES_URL_ENV, RULES_PAGE)
    rows = _docs_rows()
    rules = sarif.to_sarif(Report("check"))["runs"][0]["tool"]["driver"]["rules"]
    assert set(rows) == {r["id"] for r in rules}
    for rule in rules:
        family, meaning, fix = rows[rule["id"]]
        assert family == FAMILIES[rule["id"][:3]]
        text, markdown = rule["help"]["text"], rule["help"]["markdown"]
        for part in (rule["id"], meaning, fix, family):
            assert part in text and part in markdown, (rule["id"], part)
        assert f"]({RULES_PAGE}#{rule['id'].lower()})" in markdown
        assert text != fix  # more than the one line it was


def test_security_rules_carry_a_severity_and_the_tag_and_the_docs_list_them() -> None:
    rules = {r["id"]: r for r in sarif.to_sarif(Report("check"))["runs"][0]["tool"]["driver"]["rules"]}
    assert set(sarif.SECURITY_SEVERITY) <= set(rules)
    # The kinds the threat model names: protected paths (the configuration among them),
    # symlinks, forged or missing approvals, trust anchors.
    assert {"HG102", "HG104", "HG106", "HG202", "HG204", "HG217", "HG218", "HG221"} <= set(sarif.SECURITY_SEVERITY)
    for code, rule in rules.items():
        props = rule["properties"]
        if code in sarif.SECURITY_SEVERITY:
            assert "security" in props["tags"]
            severity = props["security-severity"]
            assert isinstance(severity, str) and 0.0 < float(severity) <= 10.0
        else:
            assert "security" not in props["tags"] and "security-severity" not in props
    documented = (PROJECT / "docs" / "report.md").read_text().partition("**Security rules.**")[2].partition("\n- ")[0]
    assert set(re.findall(r"HG\d{3}", documented)) == set(sarif.SECURITY_SEVERITY)


def test_a_finding_with_a_line_has_a_region_and_one_without_has_none() -> None:
    report = Report(
        "check", findings=(Finding("HG302", "e.jsonl", 7, "stale", ""), Finding("HG101", "a.py", None, "out", ""))
    )
    by_rule = {r["ruleId"]: r for r in validate(sarif.to_sarif(report))["runs"][0]["results"]}
    assert by_rule["HG302"]["locations"][0]["physicalLocation"]["region"] == {"startLine": 7}
    assert "region" not in by_rule["HG101"]["locations"][0]["physicalLocation"]


def test_no_link_without_a_known_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """No page known (no configuration, no Action ref, no Source in the metadata): no
    helpUri, no informationUri, and the log is still valid."""
    monkeypatch.setattr(rule_links, "_installed", lambda: rule_links.NO_LINKS)
    log = validate(sarif.to_sarif(Report("check")))
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert all("helpUri" not in r for r in driver["rules"])
    assert all("](" not in r["help"]["markdown"] for r in driver["rules"])


def test_lint_speaks_sarif_with_lines(repo: Repo) -> None:
    repo.cli("init")
    repo.new_plan()
    plan = repo.path / "harness/plans/p1/plan.md"
    plan.write_text(plan.read_text() + "\n## Extra\n")
    res = repo.cli("lint", "--format", "sarif")
    assert res.exit_code == 1
    log = validate(json.loads(res.stdout))
    [extra] = [r for r in results(log) if r["ruleId"] == "HG504"]
    region = extra["locations"][0]["physicalLocation"]["region"]
    assert plan.read_text().splitlines()[region["startLine"] - 1] == "## Extra"


@pytest.mark.slow
def test_an_error_still_writes_a_valid_log_located_on_the_configuration(blocked: Repo, tmp_path: Path) -> None:
    blocked.write(".harness-gate.toml", 'artifacts_dir = "harness"\nbogus = 1\n')
    proc = blocked.run("lint", "--format", "sarif")  # lint reads the work tree's configuration
    assert proc.returncode == 2
    log = validate(json.loads(proc.stdout))
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "unknown key `bogus`" in note["message"]["text"]
    assert note["associatedRule"]["id"] == "HG902"
    [result] = results(log)
    assert result["ruleId"] == "HG902"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": ".harness-gate.toml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2},
    }
    # Not a repository at all: the result still has a location (the configuration's name).
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    proc = subprocess.run(
        [PY, "-m", "harness_gate", "check", "--staged", "--format", "sarif"],
        cwd=outside,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 2
    log = validate(json.loads(proc.stdout))
    [result] = results(log)
    assert result["ruleId"] == "HG901"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".harness-gate.toml"


@pytest.mark.slow
def test_an_inactive_repository_gives_an_empty_valid_log(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    for args in (("check", "--staged"), ("lint",)):
        res = repo.cli(*args, "--format", "sarif")
        assert res.exit_code == 0
        log = validate(json.loads(res.stdout))
        assert results(log) == []
        assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


@pytest.mark.slow
def test_fingerprints_survive_a_moved_pull_request_and_go_when_fixed(blocked: Repo) -> None:
    _, before = check_sarif(blocked)
    # The pull request moves: every commit is rewritten (new ids), the problems stay.
    blocked.git(
        "rebase",
        "-q",
        "--no-verify",
        "--committer-date-is-author-date",
        "--force-rebase",
        "main",
        "--exec",
        "git commit -q --amend --no-edit --no-verify --date=2026-02-02T00:00:00Z",
    )
    _, after = check_sarif(blocked)
    assert set(prints(before)) == set(prints(after))
    assert set(prints(before).values()) != set(prints(after).values())  # the commits did change
    # Fixed: the commit that wrote outside the boundary is gone, and with it the file that
    # made the evidence stale: both alerts close, nothing new opens.
    blocked.git("reset", "-q", "--hard", "HEAD~1")
    _, fixed = check_sarif(blocked)
    gone = set(prints(before)) - set(prints(fixed))
    assert sorted(key.split()[0] for key in gone) == ["HG101", "HG302"]
    assert set(prints(fixed)) <= set(prints(before))


def test_the_same_problem_twice_gets_two_numbered_fingerprints() -> None:
    first = Finding("HG101", "x.py", None, "commit aaaaaaaaaaaa: added outside the boundary", "h", commit="a" * 40)
    second = Finding("HG101", "x.py", None, "commit bbbbbbbbbbbb: added outside the boundary", "h", commit="b" * 40)
    values = [
        r["partialFingerprints"][sarif.FINGERPRINT] for r in results(sarif.to_sarif(Report("check", (first, second))))
    ]
    assert values[0].split(":")[0] == values[1].split(":")[0]
    assert [v.split(":")[1] for v in values] == ["1", "2"]


def test_normalised_messages_drop_what_moves() -> None:
    moved = "`tests`: tree-moved (verified tree 199b10480542, this tree 113b72fd80d2; differs in other.py)"
    assert sarif.normalised(moved) == "`tests`: tree-moved"
    assert sarif.normalised("commit 0123456789ab: added outside the write boundary of `p1` (allowed: `src/**`)") == (
        "added outside the write boundary of `p1`"
    )
    assert sarif.normalised("ran 2026-01-01T00:00:00Z for 1.5s on abcdef0123") == "ran <time> for <duration> on <id>"
    assert sarif.fingerprint("HG101", "a.py", "m") != sarif.fingerprint("HG101", "b.py", "m")
    assert sarif.fingerprint("HG101", "a.py", "m") != sarif.fingerprint("HG102", "a.py", "m")


def test_uris_keep_every_byte_of_a_name() -> None:
    name = "dir/a b%#?\u00e9" + b"\xff".decode("utf-8", "surrogateescape") + ".py"
    log = validate(sarif.to_sarif(Report("check", (Finding("HG101", name, 3, "m", "h"),))))
    uri = results(log)[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "dir/a%20b%25%23%3F%C3%A9%FF.py"
    assert urllib.parse.unquote_to_bytes(uri) == name.encode("utf-8", "surrogateescape")
    abs_log = validate(sarif.to_sarif(Report("lint", (Finding("HG501", "/tmp/x.md", None, "m", "h"),))))
    assert results(abs_log)[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///tmp/x.md"}


def test_notes_and_levels_map_one_to_one() -> None:
    report = Report(
        "check",
        (
            Finding("HG310", "a", None, "m", "h", Severity.NOTE),
            Finding("HG310", "b", None, "m", "h", Severity.WARNING),
            Finding("HG101", "c", None, "m", "h"),
        ),
    )
    assert [r["level"] for r in results(validate(sarif.to_sarif(report)))] == ["error", "warning", "note"]


def test_a_run_stays_under_code_scannings_result_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sarif, "MAX_RESULTS", 3)
    findings = tuple(Finding("HG101", f"{i}.py", None, "m", "h") for i in range(4))
    findings += (Finding("HG103", "first.py", None, "m", "h"),)
    log = validate(sarif.to_sarif(Report("check", findings)))
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results(log)] == [
        "first.py",
        "0.py",
        "1.py",  # the most important first: an always-blocked path
    ]
    [note] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and note["message"]["text"].startswith("2 more findings left out")
    errored = validate(sarif.to_sarif(Report("check", findings, error=HarnessGateError("HG903", "git failed"))))
    assert [r["ruleId"] for r in results(errored)] == ["HG103", "HG101", "HG903"]
    notes = errored["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["error", "warning"]


# -- annotations ------------------------------------------------------------------------


def annotate(report: Report) -> list[str]:
    stream = io.StringIO()
    github.write_annotations(report, stream)
    return stream.getvalue().splitlines()


def test_annotations_are_capped_per_kind_with_one_notice_for_the_rest() -> None:
    findings = [Finding("HG101", f"b{i:02}.py", None, "m", "h") for i in range(25)]
    findings += [Finding("HG302", f"w{i:02}.jsonl", i + 1, "m", "h", Severity.WARNING) for i in range(12)]
    findings += [Finding("HG103", "first.py", None, "m", "h")]  # always blocked: shown first
    lines = annotate(Report("check", tuple(findings)))
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["::error"] * 10 + ["::warning"] * 10 + ["::notice"]
    assert lines[0].startswith("::error file=first.py,title=HG103 ")
    assert "line=1," in lines[10]
    notice = lines[-1]
    assert "title=harness-gate%3A 18 more findings not annotated::" in notice
    assert "16 blocking, 2 warning" in notice and "step summary" in notice and "report-path" in notice


def test_a_few_findings_are_all_annotated_without_a_notice() -> None:
    report = Report(
        "check", (Finding("HG302", "w.jsonl", 4, "m", "h", Severity.WARNING), Finding("HG101", "b.py", None, "m", "h"))
    )
    assert annotate(report) == [
        "::error file=b.py,title=HG101 path outside the write boundary::m — h",
        "::warning file=w.jsonl,line=4,title=HG302 evidence is for another tree::m — h",
    ]


def test_an_error_annotation_comes_first_and_counts_against_the_errors() -> None:
    error = HarnessGateError("HG905", "too shallow")
    lines = annotate(
        Report("check", tuple(Finding("HG101", f"{i}.py", None, "m", "h") for i in range(10)), error=error)
    )
    assert lines[0].startswith("::error title=HG905::too shallow — ")
    assert len([line for line in lines if line.startswith("::error")]) == 10
    assert "1 blocking" in lines[-1]
    config = HarnessGateError("HG902", ".harness-gate.toml, line 2: unknown key `bogus`")
    assert annotate(Report("check", error=config))[0].startswith(
        "::error file=.harness-gate.toml,line=2,title=HG902::.harness-gate.toml, line 2: unknown key"
    )


# -- the Action ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration  # the Action's steps, installed
def test_the_action_writes_sarif_and_json_with_commit_and_line_for_a_blocked_pr(
    blocked: Repo, runner_temp: Path
) -> None:
    from tests.github_runner import run_action

    payload = {"pull_request": {"base": {"sha": sha(blocked, "main")}, "head": {"sha": sha(blocked, "feature")}}}
    out = run_action(blocked.path, runner_temp, "pull_request", payload, sarif="true")
    assert out.code == 1
    assert out.outputs["result"] == "blocked"
    path = Path(out.outputs["sarif-path"])
    # The name docs/action.md's upload-artifact step globs for.
    assert path.parent == runner_temp and path.name.startswith("harness-gate-sarif-") and path.suffix == ".sarif"
    log = validate(json.loads(path.read_text()))
    by_rule = {r["ruleId"]: r for r in results(log)}
    assert by_rule["HG101"]["properties"]["commit"] == sha(blocked, "feature")
    assert by_rule["HG302"]["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    doc = json.loads(Path(out.outputs["report-path"]).read_text())
    findings = {f["code"]: f for f in doc["findings"]}
    assert findings["HG101"]["commit"] == sha(blocked, "feature")
    assert findings["HG302"]["line"] == by_rule["HG302"]["locations"][0]["physicalLocation"]["region"]["startLine"]
    annotations = [line for line in out.stdout.splitlines() if line.startswith("::")]
    assert annotations[0].startswith("::error file=other.py,title=HG101")
    assert any(line.startswith("::error file=harness/plans/p1/evidence.jsonl,line=") for line in annotations)
    # Without the input, no SARIF and no output naming one.
    plain = run_action(blocked.path, runner_temp, "pull_request", payload)
    assert "sarif-path" not in plain.outputs


@pytest.mark.slow
@pytest.mark.integration  # the Action's steps, installed
def test_the_action_writes_a_failed_invocation_when_it_cannot_decide(blocked: Repo, runner_temp: Path) -> None:
    from tests.github_runner import run_action

    out = run_action(blocked.path, runner_temp, "workflow_dispatch", {}, sarif="true")  # no base: an error
    assert out.code == 2
    log = validate(json.loads(Path(out.outputs["sarif-path"]).read_text()))
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["associatedRule"]["id"] == "HG904"
    assert [r["ruleId"] for r in results(log)] == ["HG904"]


def test_a_name_that_is_not_utf8_has_a_fingerprint() -> None:
    """A plan id of undecodable bytes reaches the message as a surrogate: no exception."""
    name = b"harness/plans/p\xff/plan.md".decode("utf-8", "surrogateescape")
    first = sarif.fingerprint("HG206", name, f"`{name}` is not a valid plan id")
    assert first == sarif.fingerprint("HG206", name, f"`{name}` is not a valid plan id")
