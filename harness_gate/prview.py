"""The pull request's plans, for a reviewer: the data `check` adds to its report (`plans`,
`commit_verdicts`) and its Markdown (the Action's step summary, `status --format markdown`).

Everything comes from commits (the head commit's artifacts tree, the range's commits), never
from the work tree. Every text a change can write (objectives, file names, messages,
approvers) is escaped: no raw HTML, no `@mention`, no link or image, no table break.
Not on the pre-commit path: `check --staged` never builds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_gate import artifacts_root, artifacts_tree, freshness, git, lifecycle, plans
from harness_gate.findings import Finding
from harness_gate.report import REPORT_ONLY, Report, bounded, clean, ordered, safe

UNSIGNED = "unsigned records count (require_signed_approvals is off)"
NOT_CHECKED = "signatures not checked here (`check` verifies them)"
# Past this many commits the list is folded the same way, but rows beyond it are counted only.
COMMITS_SHOWN = 200
# Findings shown in a comment's table: a pull request comment holds 65,536 characters;
# past this many, the rest are counted (the JSON report has them all). The step summary
# lists every one that fits in GitHub's 1 MiB (github.py): the annotations' notice sends
# the reader there for them.
FINDINGS_SHOWN = 100
# A plan's write boundary as a reader sees it: the first patterns, then a count.
PATTERNS_SHOWN = 50
NOTES_SHOWN = 50  # a review may list 500 findings; the rest are in the review itself

# Markdown and HTML punctuation, written as character references: the text shows as it is
# and none of it is markup: no tag, table cell, link or image (`[`, `]`), emphasis, code,
# math (`$`), `@mention` or `#123` reference; `://` and `www.` are broken up too (no autolink).
_ESCAPES = {c: f"&#{ord(c)};" for c in "|[]!@#*_~`\\<>&$"}
_AUTOLINK = re.compile(r"(?i)(www)\.|:(//)")


# Markdown decodes character references before GitHub looks for `@team` mentions and
# `#123` references: a zero-width space after `@` and `#` is what keeps them inert.
_INERT = {"@": "&#64;&#8203;", "#": "&#35;&#8203;"}


def text(value: object) -> str:
    """Any attacker-controlled text as one line of inert Markdown."""
    cleaned = re.sub(r"[\r\n\t\v\f]+", " ", str(clean(str(value))))
    cleaned = "".join(_INERT.get(c) or _ESCAPES.get(c, c) for c in safe(cleaned))  # control bytes shown as \xNN
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}&#46;" if m.group(1) else "&#58;//", cleaned)


def code(value: object) -> str:
    return f"<code>{text(value)}</code>"


def prose(value: object) -> str:
    """A message or hint as inert Markdown whose `code spans` show as code: each span's
    text is escaped as any other (`text`), only the pairing of backticks is read."""
    parts = str(value).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no span is certain, all of it is text
        return text(value)
    return "".join(code(p) if i % 2 else text(p) for i, p in enumerate(parts))


# -- the data -----------------------------------------------------------------------------


def plan_view(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    artifacts: artifacts_tree.ArtifactsTree,
    plan_id: str,
    tree: str,
    *,
    commit: str,
    signed: bool | None,
    findings: Sequence[Finding] = (),
) -> dict[str, Any]:
    """One plan as the state `artifacts` (the commit `commit`, fingerprint `tree`) holds it.
    `signed`: True when only signed approval records were read, False when unsigned ones
    count, None when not checked."""
    folder = plans.load(artifacts, plan_id)
    life = lifecycle.replay(folder)
    policy = life.policy
    objective = folder.plan.value("Objective") if folder.plan is not None else None
    commands = [
        {"id": c["id"], "command": c["command"], "timeout_seconds": c["timeout_seconds"]}
        for c in (policy.verification["required_commands"] if policy else [])
    ]
    approval: dict[str, Any] | None = None
    mine = [a for a in folder.approvals if a.gate == "plan" and a.artifact == artifacts_root.PLAN]
    if mine:
        newest = max(mine, key=lambda a: a.seq)
        approval = {
            "status": life.plan_approval.value,
            "approver": newest.approver,
            "approved_at": newest.approved_at,
            "sha256": newest.sha256,
            "signed": signed,
        }
    # An accepted amendment is the policy now: its objective, and who approved it.
    amendment: dict[str, Any] | None = None
    current = next(
        (
            e
            for e in folder.entries
            if e.artifact is not None and life.amendment_sha256 and e.artifact.sha256 == life.amendment_sha256
        ),
        None,
    )
    if current is not None and current.artifact is not None:
        objective = current.artifact.value("Objective") or objective
        records = [a for a in folder.approvals if a.artifact == current.name]
        newest_amendment = max(records, key=lambda a: a.seq) if records else None
        amendment = {
            "artifact": current.name,
            "sha256": current.artifact.sha256,
            "approver": newest_amendment.approver if newest_amendment else None,
            "approved_at": newest_amendment.approved_at if newest_amendment else None,
        }
    fresh, _ = freshness.state_freshness(artifacts, folder, life, tree)
    evidence = [
        {
            "command_id": f.command_id,
            "status": f.record.status if f.record else None,
            "duration_ms": f.record.duration_ms if f.record else None,
            "tree": f.record.tree if f.record else None,
            "fresh": f.fresh,
            "reason": f.reason,
        }
        for f in fresh
    ]
    return {
        "id": plan_id,
        "path": folder.path,
        "state": life.state.value,
        "objective": objective,
        "plan_sha256": life.plan_sha256,
        "amendment_sha256": life.amendment_sha256,
        "boundary": list(policy.boundary) if policy else [],
        "commands": commands,
        "approval": approval,
        "amendment": amendment,
        "tree": tree,
        "evidence": evidence,
        "review": _review(folder, findings),
        "approvers": _approvers(artifacts, folder, life, commit),
        "repairs": {"used": life.repairs_used, "budget": life.repair_budget},
        "completion": _completion(root, folder, commit),
    }


def _latest(folder: plans.PlanFolder, slug: str) -> plans.NumberedArtifact | None:
    found = [e for e in folder.entries if e.slug == slug and e.artifact is not None]
    return found[-1] if found else None


def _review(folder: plans.PlanFolder, findings: Sequence[Finding]) -> dict[str, Any] | None:
    """The newest review, with what this check found of it: `judged` is None when the
    check raised nothing on it (it counts, or the stage asks for no review), else
    `stale` or `blocks` with the finding's message; `notes` are the review's own findings."""
    entry = _latest(folder, "review")
    if entry is None or entry.artifact is None:
        return None
    binding = entry.artifact.value("Binding")
    reviewer = entry.artifact.value("Reviewer")
    change = binding.get("change") or {}
    judged: dict[str, str] | None = None
    for f in findings:
        if f.path == entry.path and f.code in (freshness.STALE_REVIEW, freshness.FAILED_REVIEW) and f.blocks:
            judged = {"state": "stale" if f.code == freshness.STALE_REVIEW else "blocks", "message": f.message}
            break
    notes = [
        {"id": n["id"], "severity": n["severity"], "path": n.get("path"), "summary": n["summary"]}
        for n in (entry.artifact.value("Findings") or [])[:NOTES_SHOWN]
    ]
    return {
        "judged": judged,
        "notes": notes,
        "path": entry.path,
        "verdict": entry.artifact.value("Verdict"),
        "reviewer": reviewer.get("identity"),
        "tree": binding.get("tree"),
        "change": change.get("patch_sha256"),
        "change_base": change.get("base"),
        "plan_sha256": binding.get("plan_sha256"),
        "amendment_sha256": binding.get("amendment_sha256"),
    }


def _completion(root: Path, folder: plans.PlanFolder, commit: str) -> dict[str, Any] | None:
    entry = _latest(folder, "completion")
    if entry is None or entry.artifact is None:
        return None
    # When: the commit that brought the record (its committer date), as history says.
    oid, when = git.last_change(root, commit, entry.path) or (None, None)
    return {"path": entry.path, "outcome": entry.artifact.value("Outcome"), "commit": oid, "at": when or None}


def commit_views(root: Path, oids: Sequence[str], findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """Each judged commit (oldest first) with its verdict and the codes of its findings."""
    if not oids:
        return []
    subjects = git.subjects(root, oids)
    codes: dict[str, set[str]] = {}
    blocking: set[str] = set()
    for f in findings:
        if f.commit is None:
            continue
        codes.setdefault(f.commit, set()).add(f.code)
        if f.blocks:
            blocking.add(f.commit)
    return [
        {
            "oid": o,
            "subject": subjects.get(o, ""),
            "verdict": "blocked" if o in blocking else "pass",
            "codes": sorted(codes.get(o, ())),
        }
        for o in oids
    ]


# -- the Markdown ---------------------------------------------------------------------------


def header(report: Report) -> str:
    """One line a reviewer reads first: result, stage, range, commits judged."""
    data = report.data
    parts = [f"**{report.result}**"]
    if "stage" in data:
        parts.append(f"stage {code(data['stage'])}")
    if data.get("base") and data.get("head"):
        parts.append(f"{code(str(data['base'])[:12])}..{code(str(data['head'])[:12])}")
    elif data.get("head"):
        parts.append(f"head {code(str(data['head'])[:12])}")
    elif data.get("mode") == "staged":
        parts.append("the index")
    if isinstance(data.get("commits"), int) and data.get("mode") not in (None, "staged"):
        n = data["commits"]
        parts.append(f"{n} commit{'s' * (n != 1)} judged")
    if data.get("check_result"):
        parts.append(f"check would say **{text(data['check_result'])}**")
    if data.get("active") is False:
        parts.append("inactive")
    return " · ".join(parts)


def _approvers(
    artifacts: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, life: Any, commit: str
) -> list[dict[str, Any]]:
    """The approvers rules' view, CODEOWNERS read as `commit` holds it (the view's own state)."""
    if not artifacts.config.approvers:
        return []
    from harness_gate import approvers  # noqa: PLC0415

    return approvers.view(artifacts, folder, life, artifacts_tree.file_reader(artifacts.root, commit))


def _approvers_markdown(views: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    for v in views:
        got = ", ".join(text(p) for p in v["approved"]) or "nobody yet"
        line = f"**Approvers** {code(v['rule'])}: {len(v['approved'])} of {int(v['count'])} ({got})"
        if v["needed"]:
            line += f"; still needed: {int(v['needed'])} of {', '.join(text(p) for p in v['waiting_for'])}"
        line += "; signatures verified" if v["verified"] else "; as the records name them (`check` verifies signatures)"
        out += [line, ""]
    return out


def _approval(a: Mapping[str, Any] | None) -> str:
    if a is None:
        return "none"
    signed = {True: "signed", False: UNSIGNED, None: NOT_CHECKED}[a.get("signed")]
    return (
        f"{text(a['status'])} by {text(a['approver'])} at {text(a['approved_at'])}, "
        f"sha256 {code(a['sha256'])}; {text(signed)}"
    )


def _seconds(ms: object) -> str:
    return f"{int(ms) / 1000:.2f} s" if isinstance(ms, int) else "-"


def plan_markdown(p: Mapping[str, Any]) -> list[str]:
    out = [f"### Plan {code(p['id'])} ({text(p['state'])})", ""]
    objective = p.get("objective")
    out += [f"**Objective**: {text(objective) if objective else '(does not parse)'}", ""]
    patterns = p["boundary"]
    boundary = ", ".join(code(bounded(b)) for b in patterns[:PATTERNS_SHOWN]) or "none"
    if len(patterns) > PATTERNS_SHOWN:
        boundary += f" and {len(patterns) - PATTERNS_SHOWN} more"
    out += [f"**Write boundary**: {boundary}", ""]
    out += [f"**Approval**: {_approval(p.get('approval'))}", ""]
    out += _approvers_markdown(p.get("approvers") or [])
    amended = p.get("amendment")
    if amended:
        who = (
            f"approved by {text(amended['approver'])} at {text(amended['approved_at'])}, "
            if amended["approver"]
            else ""
        )
        out += [
            f"**Amended by** {code(amended['artifact'])}: {who}sha256 {code(amended['sha256'])} "
            "(the objective, boundary and commands above are the amended ones)",
            "",
        ]
    out.append(f"**Repairs**: {int(p['repairs']['used'])} of {int(p['repairs']['budget'])}")
    out.append("")
    if p["commands"]:
        out += [f"<details><summary>Commands ({len(p['commands'])})</summary>", ""]
        out += ["| id | command | timeout |", "|---|---|---|"]
        out += [f"| {code(c['id'])} | {code(c['command'])} | {int(c['timeout_seconds'])} s |" for c in p["commands"]]
        out += ["", "</details>", ""]
    fresh = sum(1 for e in p["evidence"] if e["fresh"])
    again = p.get("reverified")
    if again is not None:
        # The header's verdict rests on the re-run, not on the records: say so first.
        verdict = "passed" if again["result"] == "pass" else f"failed ({', '.join(code(c) for c in again['codes'])})"
        out += [
            f"**Evidence**: the commands ran again in this job (`reverify`) and {verdict}; the records "
            "below are not what counts",
            "",
        ]
    out += [
        f"<details><summary>{'Recorded evidence' if again is not None else 'Evidence'}: {fresh} of "
        f"{len(p['evidence'])} fresh for tree {code(str(p['tree'])[:12])}</summary>",
        "",
        "| command | status | duration | tree | fresh |",
        "|---|---|---|---|---|",
    ]
    for e in p["evidence"]:
        status = text(e["status"]) if e["status"] else "no record"
        tree = code(str(e["tree"])[:12]) if e["tree"] else "-"
        why = "fresh" if e["fresh"] else f"no: {text(e['reason'])}"
        out.append(f"| {code(e['command_id'])} | {status} | {_seconds(e['duration_ms'])} | {tree} | {why} |")
    out += ["", "</details>", ""]
    r = p.get("review")
    if r is None:
        out += ["**Review**: none yet", ""]
    else:
        out += [
            f"**Review**: {text(r['verdict'])} by {text(r['reviewer'])} ({code(r['path'])})" + _judged(r.get("judged")),
            "",
            *_notes(r.get("notes") or []),
            "<details><summary>What the review is bound to</summary>",
            "",
            f"- tree {code(r['tree'])}",
            f"- the branch's change {code(r['change'] or '-')} (from {code(r['change_base'] or '-')})",
            f"- plan sha256 {code(r['plan_sha256'])}"
            + (f", amendment {code(r['amendment_sha256'])}" if r.get("amendment_sha256") else ""),
            "",
            "</details>",
            "",
        ]
    c = p.get("completion")
    if c is None:
        out += ["**Completion**: not yet", ""]
    else:
        when = f" at {text(c['at'])}" if c.get("at") else ""
        by = f" (commit {code(str(c['commit'])[:12])})" if c.get("commit") else ""
        out += [f"**Completion**: {text(c['outcome'])}{when}{by}", ""]
    return out


def _judged(judged: Mapping[str, str] | None) -> str:
    if judged is None:
        return ""
    label = "**stale**" if judged["state"] == "stale" else "**does not pass**"
    return f" — {label}: {prose(judged['message'])}"


def _notes(notes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The reviewer's findings (notes of a PASS_WITH_NOTES, or what REPAIR_REQUIRED asks)."""
    if not notes:
        return []
    out = [f"<details><summary>The reviewer's findings ({len(notes)})</summary>", ""]
    out += ["| id | severity | path | summary |", "|---|---|---|---|"]
    for n in notes:
        path = code(n["path"]) if n.get("path") else "-"
        out.append(f"| {code(n['id'])} | {text(n['severity'])} | {path} | {text(bounded(n['summary']))} |")
    return [*out, "", "</details>", ""]


def reverified(view: Mapping[str, Any], findings: Sequence[Finding]) -> dict[str, Any]:
    """The plan's view after `--reverify` ran its commands in this job: the recorded
    evidence no longer decides, the re-run does (its failures are HG3xx findings on the
    plan's folder)."""
    prefix = f"{view['path']}/"
    failed = sorted({f.code for f in findings if f.blocks and f.code.startswith("HG3") and f.path.startswith(prefix)})
    return {**view, "reverified": {"result": "fail" if failed else "pass", "codes": failed}}


def commits_markdown(commits: Sequence[Mapping[str, Any]]) -> list[str]:
    blocked = [c for c in commits if c["verdict"] == "blocked"]
    summary = f"Commits: {len(commits)} judged, {len(blocked)} blocked"
    out = [f"<details{' open' if blocked else ''}><summary>{summary}</summary>", ""]
    out += ["| commit | subject | verdict | codes |", "|---|---|---|---|"]
    for c in commits[:COMMITS_SHOWN]:
        verdict = "❌ blocked" if c["verdict"] == "blocked" else "✅ pass"
        codes = ", ".join(text(x) for x in c["codes"]) or "-"
        out.append(f"| {code(str(c['oid'])[:12])} | {text(c['subject'])} | {verdict} | {codes} |")
    if len(commits) > COMMITS_SHOWN:
        out.append(f"| … | {len(commits) - COMMITS_SHOWN} more (the JSON report lists them) | | |")
    out += ["", "</details>", ""]
    return out


def body(report: Report) -> list[str]:
    """The plans and the commits of a report's data, as Markdown lines."""
    out: list[str] = []
    plans_ = report.data.get("plans")
    if isinstance(plans_, list):
        if not plans_:
            out += ["No plan governs this change.", ""]
        for p in plans_:
            out += plan_markdown(p)
    commits = report.data.get("commit_verdicts")
    if isinstance(commits, list) and commits:
        out += commits_markdown(commits)
    return out


def findings_markdown(findings: Sequence[Finding], shown: int | None = FINDINGS_SHOWN) -> list[str]:
    """The findings table, most important first; past `shown` rows (None: no cap) the rest are counted."""
    if not findings:
        return []
    out = [
        f"<details open><summary>Findings ({len(findings)})</summary>",
        "",
        "| code | path | line | message | how to fix |",
        "|---|---|---|---|---|",
    ]
    rows = ordered(tuple(findings))[:shown]
    for f in rows:
        out.append(
            f"| {text(f.code)} | {code(bounded(f.path))} | {f.line or ''} | {prose(bounded(f.message))} "
            f"| {prose(bounded(f.hint))} |"
        )
    if len(findings) > len(rows):
        out.append(f"| | | | {len(findings) - len(rows)} more: the JSON report lists every finding | |")
    return [*out, "", "</details>", ""]


def render(report: Report, *, title: str | None = None, shown: int | None = FINDINGS_SHOWN) -> str:
    """The whole report as Markdown: for a pull request comment (`gh pr comment --body-file
    FILE`), and with `title` "harness-gate" and every finding (`shown` None) the Action's
    step summary (github.py). A headline, the one-line header, the error, the plans and
    commits, the report's lines where no plan is shown, the findings."""
    # `status --base` reports what check would say as warnings: its headline is that verdict.
    result = str(report.data.get("check_result") or report.result)
    icon = {"pass": "✅", "blocked": "❌", "would-block": "🟡", "error": "⚠️"}.get(result, "⚠️")
    name = title or f"harness-gate {text(report.command)}"
    lines = [f"## {icon} {name}: {text(result.replace('-', ' '))}", "", header(report), ""]
    if report.would_block:
        lines += [f"**Would block**: {text(REPORT_ONLY)}; the findings below are what the gate would block.", ""]
    if report.error is not None:
        lines += [f"**{text(report.error.code)}**: {text(report.error.message)}", "", text(report.error.hint), ""]
    lines += body(report)
    # `status` lines say what its plan view shows; check's (adopting, inactive, nothing to
    # check) come only where there is no plan. Two trailing spaces: one line each.
    if not report.data.get("plans") and report.lines:
        lines += [text(line) + "  " for line in report.lines] + [""]
    lines += findings_markdown(report.findings, shown)
    return "\n".join(lines).rstrip("\n") + "\n"
