"""SARIF 2.1.0: the report as a static-analysis log, for GitHub code scanning and any
other collector of SARIF (docs/report.md).

One run; the driver lists every rule of the catalogue, so `ruleIndex` is a rule's place
in `harness_gate.findings.RULES`. Imported only when `--format sarif` (or the Action's
`sarif` input) asks for it: the hook path never pays for it.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any, TextIO

from harness_gate import __version__, rule_links
from harness_gate.artifacts_tree import CONFIG_PATHS
from harness_gate.findings import FAMILIES, RULES, Finding, Rule, Severity
from harness_gate.report import Report, bounded, clean, error_location, ordered

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
# The key other collectors may read; GitHub code scanning reads only
# `primaryLocationLineHash`, so the same value goes there too (upload-sarif then keeps it
# instead of hashing the text of the line, which moves when the file around it changes).
FINGERPRINT = "harnessGate/v1"
GITHUB_FINGERPRINT = "primaryLocationLineHash"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
# Rules that never block, whatever the stage: a finding of any other rule blocks unless
# the stage downgrades it (the result's own `level` says which it is).
_WARNING_RULES = frozenset({"HG310"})
_TAGS = {
    "HG1": "boundary",
    "HG2": "plan",
    "HG3": "evidence",
    "HG4": "lifecycle",
    "HG5": "artifact",
    "HG6": "harness-format",
    "HG9": "environment",
}
# The rules whose finding is a security problem, not only a process one, with GitHub code
# scanning's `security-severity` (0-10: 9.0 and over critical, 7.0 high, 4.0 medium): an
# attempt to write what only a reviewed change may (protected paths: the configuration,
# CI, hooks), a link out of the checkout, an approval or review that was forged, copied,
# replayed or rewritten, and trust anchors changed without a trusted signature. The one
# list: docs/report.md names the same codes (tests/test_sarif.py).
SECURITY_SEVERITY = {
    "HG102": "8.0",  # a protected path (the gate's configuration, .github/, hooks) written
    "HG103": "5.0",  # control characters: names that read as something else in a terminal
    "HG104": "8.0",  # a symlink out of the repository or the boundary
    "HG105": "6.0",  # a submodule: another repository's code pulled in unreviewed
    "HG106": "8.0",  # a protected path by another spelling
    "HG202": "7.0",  # a change under no approval at all
    "HG204": "8.0",  # an approval record not written by `approve`: forged or edited
    "HG210": "8.0",  # approved bytes changed after the approval
    "HG211": "8.0",  # the approval or evidence log rewritten
    "HG212": "8.0",  # a committed review or completion changed or deleted (authority handed back)
    "HG213": "8.0",  # an approval copied from another plan
    "HG214": "8.0",  # an approval copied from another repository
    "HG215": "8.0",  # an approval replayed
    "HG216": "8.0",  # an approval rolled back
    "HG217": "9.0",  # an approval not signed by an allowed signer
    "HG218": "9.0",  # a review not signed by an allowed signer
    "HG219": "7.0",  # the code's author reviewed it
    "HG221": "9.5",  # the trust anchors changed without a trusted signature
    "HG616": "8.0",  # an append-only progress log rewritten
    "HG624": "8.0",  # a runtime evidence log rewritten
}
_INDEX = {code: i for i, code in enumerate(RULES)}
# GitHub code scanning rejects a whole run with more results than this: the most important
# are kept (the report's order) and a notification counts the rest.
MAX_RESULTS = 25_000
# Code scanning refuses a SARIF file over 10 MB (gzipped; this bound holds uncompressed, so
# any upload passes): results past it are left out like those past MAX_RESULTS.
MAX_BYTES = 10_000_000
# The invocation, its notifications, an error's own result and the log's frame, with room;
# the driver's rules (every rule code, ~200 kB) are measured as written.
_FRAME_BYTES = 50_000

# What varies between runs of the same problem, normalised out of the fingerprint:
# the range prefix (the commit is a property), object ids and hashes, times, durations,
# and the details in parentheses (the files a stale tree differs in, an exit code, counts).
_COMMIT_PREFIX = re.compile(r"\Acommit [0-9a-f]{7,64}: ")
_PARENS = re.compile(r"\([^()]*\)")
_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|seconds?|minutes?)\b")
_HEX = re.compile(r"\b[0-9a-f]{7,64}\b")
_SPACE = re.compile(r"\s+")


def normalised(message: str) -> str:
    """The message as the fingerprint sees it: the same problem reads the same in every run."""
    text = _COMMIT_PREFIX.sub("", message)
    while True:  # nested parentheses, innermost first
        shorter = _PARENS.sub("", text)
        if shorter == text:
            break
        text = shorter
    text = _TIME.sub("<time>", text)
    text = _DURATION.sub("<duration>", text)
    text = _HEX.sub("<id>", text)
    return _SPACE.sub(" ", text).strip()


def fingerprint(code: str, path: str, message: str) -> str:
    """sha256 of the rule, the path's exact bytes and the normalised message (no line:
    records appended above a line move it, and it is the same problem)."""
    raw = b"\0".join(
        (code.encode(), path.encode("utf-8", "surrogateescape"), normalised(message).encode("utf-8", "surrogateescape"))
    )
    return hashlib.sha256(raw).hexdigest()[:32]


def rule_name(title: str) -> str:
    """A rule's title as an identifier (`PathOutsideTheWriteBoundary`), SARIF's `name`."""
    return "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", title))


def rule_help(code: str, rule: Rule, links: rule_links.RuleLinks) -> dict[str, str]:
    """The rule's entry of docs/rules.md (its family, meaning and fix: that page is
    rendered from the same catalogue), as text and as Markdown."""
    family = FAMILIES[code[:3]]
    security = " A security rule: code scanning lists it under security." if code in SECURITY_SEVERITY else ""
    text = f"{code}: {rule.title} ({code[:3]}xx, {family}).\n\nHow to fix: {rule.hint}{security}"
    markdown = f"**{code}: {rule.title}** ({code[:3]}xx, {family})\n\n**How to fix:** {rule.hint}"
    if security:
        markdown += f"\n\n{security.strip()}"
    url = links.rule_url(code)
    if url is not None:
        markdown += f"\n\n[{code} in the rule reference]({url})"
    return {"text": text, "markdown": markdown}


def _rules(links: rule_links.RuleLinks) -> list[dict[str, Any]]:
    out = []
    for code, rule in RULES.items():
        level = "warning" if code in _WARNING_RULES else "error"
        title = rule.title[:1].upper() + rule.title[1:]
        tags = ["harness-gate", _TAGS.get(code[:3], "other")]
        properties: dict[str, Any] = {
            "tags": tags,
            "precision": "very-high",  # every rule is an exact check of committed facts, not a heuristic
            "problem.severity": level,
        }
        if code in SECURITY_SEVERITY:
            tags.append("security")
            properties["security-severity"] = SECURITY_SEVERITY[code]
        entry: dict[str, Any] = {
            "id": code,
            "name": rule_name(rule.title),
            "shortDescription": {"text": title},
            "fullDescription": {"text": f"{title} ({code}). {rule.hint}"},
        }
        url = links.rule_url(code)
        if url is not None:  # no page known: no link rather than a dead one (rule_links)
            entry["helpUri"] = url
        entry.update(
            {"help": rule_help(code, rule, links), "defaultConfiguration": {"level": level}, "properties": properties}
        )
        out.append(entry)
    return out


def uri(path: str) -> str:
    """A path as a URI reference: its exact bytes, percent-encoded (RFC 3986), `/` kept."""
    return urllib.parse.quote(path.encode("utf-8", "surrogateescape"), safe="/")


def _location(path: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(path), "uriBaseId": SRCROOT}}
    if path.startswith("/"):  # `lint /abs/file.md`: no base to resolve it against
        physical["artifactLocation"] = {"uri": "file://" + uri(path)}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _result(f: Finding, fallback: str, seen: dict[str, int]) -> dict[str, Any]:
    path = f.path or fallback
    key = fingerprint(f.code, path, f.message)
    # The same problem twice in one run (two commits of a range, say): numbered in report
    # order, which a rebase that keeps the commits' order keeps too.
    seen[key] = seen.get(key, 0) + 1
    value = f"{key}:{seen[key]}"
    result: dict[str, Any] = {"ruleId": f.code}
    if f.code in _INDEX:
        result["ruleIndex"] = _INDEX[f.code]
    result.update(
        {
            "level": _LEVEL[f.severity],
            "message": {"text": bounded(f"{f.message} — {f.hint}" if f.hint else f.message)},
            "locations": [_location(path, f.line)],
            "partialFingerprints": {FINGERPRINT: value, GITHUB_FINGERPRINT: value},
        }
    )
    if f.commit is not None:
        result["properties"] = {"commit": f.commit}
    return result


def fallback_path(root: Path | None) -> str:
    """The configuration file a result without a path is shown on (GitHub requires a
    location, and it is the repository's one file about the gate): the one it has."""
    for name in CONFIG_PATHS:
        if root is not None and (root / name).is_file():
            return name
    return CONFIG_PATHS[0]


def to_sarif(report: Report, *, root: Path | None = None) -> dict[str, Any]:
    """The report as one SARIF 2.1.0 log. `root`: the repository, to pick the file that
    results without a path (an error, a finding about the whole repository) are shown on."""
    seen: dict[str, int] = {}
    fallback = fallback_path(root)
    findings = ordered(report.findings)
    room = MAX_RESULTS - (report.error is not None)
    results: list[dict[str, Any]] = []
    links = rule_links.resolve()
    rules = _rules(links)
    # As `write` prints them: four levels deep (each line), and cleaned.
    text = json.dumps(clean(rules), indent=2, ensure_ascii=False)
    size = _FRAME_BYTES + len(text.encode("utf-8")) + 10 * (text.count("\n") + 1)
    for f in findings[:room]:
        result = _result(f, fallback, seen)
        # As `write` prints it, indented three levels deeper (each line), and cleaned.
        text = json.dumps(clean(result), indent=2, ensure_ascii=False)
        size += len(text.encode("utf-8")) + 8 * (text.count("\n") + 1)
        if size > MAX_BYTES:
            break
        results.append(result)
    invocation: dict[str, Any] = {"executionSuccessful": report.error is None, "exitCode": report.exit_code}
    notifications: list[dict[str, Any]] = []
    if len(findings) > len(results):
        left = len(findings) - len(results)
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": (
                        f"{left} more finding{'s' * (left != 1)} left out: code scanning rejects a run with more than "
                        f"{MAX_RESULTS} results or a file over {MAX_BYTES // 1_000_000} MB; the JSON report "
                        "(--format json) lists every finding"
                    )
                },
            }
        )
    if report.error is not None:
        error = report.error
        # A result too, not only a notification: code scanning shows results, and the
        # alert closes once a run succeeds.
        path, line = error_location(error)
        results.append(_result(Finding(error.code, path or "", line, error.message, error.hint), fallback, seen))
        notification: dict[str, Any] = {"level": "error", "message": {"text": error.message}}
        if error.code in _INDEX:
            notification["associatedRule"] = {"id": error.code, "index": _INDEX[error.code]}
        notifications.insert(0, notification)
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    driver: dict[str, Any] = {"name": "harness-gate", "version": __version__}
    if links.home is not None:
        driver["informationUri"] = links.home
    driver["rules"] = rules
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The root of the repository's work tree."}}},
        "invocations": [invocation],
        "results": results,
        "properties": {"command": report.command, "result": report.result},
    }
    # Names that are not UTF-8 travel as surrogate escapes: shown as \xNN, as in the JSON report.
    log: dict[str, Any] = clean({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]})
    return log


def write(report: Report, stream: TextIO, *, root: Path | None = None) -> None:
    stream.write(json.dumps(to_sarif(report, root=root), indent=2, ensure_ascii=False) + "\n")
