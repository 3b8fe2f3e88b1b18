"""Approvers per path (docs/approvers.md): who must approve a plan whose write boundary
reaches the paths an `[[approvers]]` rule guards, and how many of them.

A rule counts the approvals of the artifact that put the boundary in force (plan.md, or
the accepted amendment), given since its bytes last changed. Where commits are judged
(pre-push, CI, pre-receive) an approval counts for the principal whose good signature,
by a key the trusted side's allowed_signers lists, is on the commit that added its
record: one principal once, one key once, and the artifact's author not at all when the
rule says so. On the index (pre-commit) nothing is signed yet: the records' approver
names are counted, so that too few is said early; the signatures are judged at push.
Decides from the facts it is handed (trust.Who); it runs no git itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_gate import artifacts_root, boundary
from harness_gate.config import Approvers
from harness_gate.findings import Finding, finding

if TYPE_CHECKING:
    from harness_gate.approvals import Approval
    from harness_gate.artifacts_tree import ArtifactsTree
    from harness_gate.lifecycle import Lifecycle
    from harness_gate.plans import PlanFolder

# Pairs of patterns compared before every rule is taken as reached (fail closed: more
# approvals asked for, never fewer).
MAX_COMPARISONS = 200_000
_EMAIL = re.compile(r"<([^<>]*)>\s*$")


@dataclass(frozen=True)
class Tally:
    """One rule's count for one artifact."""

    rule: Approvers
    artifact: str  # the repository path of the artifact whose approvals count
    approved: tuple[str, ...]  # the principals counted, in the order they approved
    uncounted: tuple[tuple[str, str], ...]  # (who, why not) for each record that counts for nothing
    verified: bool  # signatures were judged (a commit check); else the records' names were counted
    unknown_author: str | None = None  # why the author cannot be known, when the rule excludes them
    authors: tuple[str, ...] = ()  # the rule's principals who wrote the artifact, when it excludes them

    @property
    def met(self) -> bool:
        return len(self.approved) >= self.rule.count and self.unknown_author is None

    @property
    def needed(self) -> int:
        return max(0, self.rule.count - len(self.approved))

    @property
    def waiting_for(self) -> tuple[str, ...]:
        """The rule's principals who have not approved and may (any `needed` of them will do)."""
        return tuple(p for p in self.rule.principals if p not in self.approved and p not in self.authors)


def reached(rules: Sequence[Approvers], patterns: Sequence[str]) -> list[Approvers]:
    """The rules whose paths the boundary `patterns` may reach (boundary.overlaps). A
    CODEOWNERS line is not reached through a boundary pattern that a later line covers
    whole (GitHub: the last matching line owns a file)."""
    if not rules:
        return []
    if len(patterns) * sum(len(r.paths) + len(r.shadowed_by) for r in rules) > MAX_COMPARISONS:
        return list(rules)
    return [
        r
        for r in rules
        if any(
            any(boundary.overlaps(p, q) for q in r.paths) and not boundary.inside(p, r.shadowed_by) for p in patterns
        )
    ]


# GitHub reads at most 3 MB of a CODEOWNERS file; a line is a pattern and its owners.
MAX_CODEOWNERS_BYTES = 3 * 1024 * 1024
MAX_CODEOWNERS_LINES = 10_000


def codeowners_patterns(raw: str, artifacts_dir: str) -> tuple[str, ...] | None:
    """A CODEOWNERS pattern (gitignore's rules, as GitHub applies them) in the boundary
    dialect, or None where it has no sure translation (an escape, a negation, a set):
    the rule then fails closed. A pattern without a `/` but at its end matches at any
    depth; one without wildcards covers what is below it (the dialect's own rule for a
    literal), one ending in `/` only what is below it; one with wildcards covers what is
    below what it matches too (stricter than GitHub's `docs/*`, which owns no deeper
    file: more approvals asked for, never fewer)."""
    if not raw or "\\" in raw or raw.startswith("!") or "[" in raw or raw == "/":
        return None
    anchored = raw.startswith("/") or "/" in raw.rstrip("/")
    below_only = raw.endswith("/")
    core = raw.strip("/")
    if core in ("*", "**"):
        return ("**",)
    if not anchored:
        core = f"**/{core}"
    if below_only:
        out: tuple[str, ...] = (f"{core}/**",)
    elif boundary.has_wildcard(core):
        out = (core, f"{core}/**")
    else:
        out = (core,)
    try:
        for p in out:
            boundary.validate(p, artifacts_dir)
    except boundary.PatternError:
        return None
    return out


def from_codeowners(rule: Approvers, data: bytes | None, artifacts_dir: str) -> tuple[list[Approvers], str | None]:
    """One rule per CODEOWNERS line, its owners mapped to principals (`aliases`; an email
    owner is its own principal), each line shadowed by the lines after it; or why not."""
    where = f"{rule.codeowners} (approvers rule `{rule.name}`)"
    if data is None:
        return [], f"{where} is not a file on the trusted side (the base commit; HEAD for a commit)"
    if len(data) > MAX_CODEOWNERS_BYTES:
        return [], f"{where} is over {MAX_CODEOWNERS_BYTES} bytes"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [], f"{where} is not UTF-8"
    lines = text.splitlines()
    if len(lines) > MAX_CODEOWNERS_LINES:
        return [], f"{where} has over {MAX_CODEOWNERS_LINES} lines"
    aliases = dict(rule.aliases)
    entries: list[tuple[int, tuple[str, ...], tuple[str, ...], bool]] = []
    for n, line in enumerate(lines, start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        patterns = codeowners_patterns(words[0], artifacts_dir)
        if patterns is None:
            return [], f"{where}, line {n}: `{words[0]}` has no sure meaning in the boundary dialect"
        principals: list[str] = []
        for owner in words[1:]:
            principals += aliases.get(owner, [owner] if "@" in owner and not owner.startswith("@") else [])
        entries.append((n, patterns, tuple(dict.fromkeys(principals)), len(words) > 1))
    out = []
    for i, (n, patterns, owners, owned) in enumerate(entries):
        if not owned:
            continue  # a line without owners: its paths need no approval (it still shadows)
        # A later line shadows only what it surely owns: its first, narrow translation
        # (`docs/*`, not the `docs/*/**` a rule asks for besides).
        later = tuple(pats[0] for _, pats, _, _ in entries[i + 1 :])
        out.append(Approvers(f"{rule.name}:{n}", patterns, owners, rule.count, rule.exclude_author, shadowed_by=later))
    return out, None


def expanded(
    rules: Sequence[Approvers], read: Callable[[str], bytes | None] | None, artifacts_dir: str
) -> tuple[list[Approvers], list[str]]:
    """The rules with each CODEOWNERS rule replaced by its lines, and why any cannot be."""
    out: list[Approvers] = []
    problems: list[str] = []
    for rule in rules:
        if rule.codeowners is None:
            out.append(rule)
            continue
        lines, why = from_codeowners(rule, read(rule.codeowners) if read else None, artifacts_dir)
        out += lines
        if why is not None:
            problems.append(why)
    return out, problems


def _since_change(records: Sequence[Approval], gate: str, name: str, sha256: str) -> list[Approval]:
    """The artifact's records given since its bytes last changed (an approval of other
    bytes, older or newer, ends the run: a rollback counts nobody's earlier approval)."""
    run: list[Approval] = []
    for r in sorted((r for r in records if r.gate == gate and r.artifact == name), key=lambda r: r.seq):
        if r.sha256 == sha256:
            run.append(r)
        else:
            run.clear()
    return run


def principal_of(approver: str) -> str:
    """The principal a record's `approver` (`Name <email>`) claims: its email, as
    allowed_signers files name principals."""
    m = _EMAIL.search(approver)
    return m.group(1) if m else approver


def tally(rule: Approvers, artifacts: ArtifactsTree, records: Sequence[Approval], artifact: str) -> Tally:
    who = artifacts.who
    verified = who is not None and who.unverified is None
    authors: frozenset[str] = frozenset()
    unknown_author = None
    if rule.exclude_author and verified and who is not None:
        authors, unknown_author = who.authors(artifact)
    approved: list[str] = []
    keys: set[str] = set()
    uncounted: list[tuple[str, str]] = []
    for r in records:
        principal = r.signer if verified else principal_of(r.approver)
        shown = principal or principal_of(r.approver)
        if not principal:
            uncounted.append((shown, "no good signature by an allowed key on the commit that added it"))
        elif principal not in rule.principals:
            uncounted.append((shown, f"not one of the `{rule.name}` principals"))
        elif principal in approved or (verified and r.key in keys):
            uncounted.append((shown, "already counted (one principal, one key, once)"))
        elif principal in authors:
            uncounted.append((shown, "the author, who does not count for their own plan here"))
        else:
            approved.append(principal)
            keys.add(r.key)
    mine = tuple(p for p in rule.principals if p in authors)
    return Tally(rule, artifact, tuple(approved), tuple(uncounted), verified, unknown_author, mine)


def _reader(
    artifacts: ArtifactsTree, read: Callable[[str], bytes | None] | None
) -> Callable[[str], bytes | None] | None:
    return artifacts.who.trusted_file if artifacts.who is not None else read


def tallies(
    artifacts: ArtifactsTree, folder: PlanFolder, life: Lifecycle, read: Callable[[str], bytes | None] | None = None
) -> list[Tally]:
    """Each reached rule's count, for every artifact that put a boundary in force (the
    plan, each accepted amendment): code written under a boundary that reached a rule
    answers to it, though a later amendment narrowed the boundary.
    `read`: the trusted side's files, where the state has no signatures to read them by."""
    rules, _ = expanded(artifacts.config.approvers, _reader(artifacts, read), artifacts.artifacts_dir)
    return _tallies(artifacts, folder, life, rules)


def _tallies(artifacts: ArtifactsTree, folder: PlanFolder, life: Lifecycle, rules: Sequence[Approvers]) -> list[Tally]:
    if not rules or life.policy is None or folder.plan is None:
        return []
    out: list[Tally] = []
    for policy in life.policies or (life.policy,):
        source = policy.source
        name = source.rsplit("/", 1)[-1]
        if name == artifacts_root.PLAN:
            gate, sha = "plan", folder.plan.sha256
        else:
            entry = next((e for e in folder.entries if e.path == source), None)
            art = entry.artifact if entry is not None else None
            # The replay only accepts an approved artifact: one that is not there now is
            # counted as approved by nobody (fail closed), never skipped.
            gate, sha = (art.kind.approval_gate, art.sha256) if art is not None else ("amendment", "")
        records = _since_change(folder.approvals, gate, name, sha) if sha else []
        out += [tally(rule, artifacts, records, source) for rule in reached(rules, policy.boundary)]
    return out


def findings(artifacts: ArtifactsTree, folder: PlanFolder, life: Lifecycle) -> list[Finding]:
    """HG224 for each reached rule whose count falls short, HG225 where the author a rule
    excludes cannot be known, HG220 where no signature can be counted at all."""
    out: list[Finding] = []
    who = artifacts.who
    rules, problems = expanded(artifacts.config.approvers, _reader(artifacts, None), artifacts.artifacts_dir)
    if folder.plan is not None and life.policy is not None:
        out += [finding("HG226", life.policy.source, why) for why in problems]
    for t in _tallies(artifacts, folder, life, rules):
        if who is not None and who.commit is not None and who.unverified is not None:
            why = who.unverified
            out.append(finding("HG220", t.artifact, f"the `{t.rule.name}` approvers cannot be counted: {why}"))
            continue
        if t.unknown_author is not None:
            out.append(
                finding(
                    "HG225",
                    t.artifact,
                    f"the `{t.rule.name}` rule does not count the author, who cannot be known: {t.unknown_author}",
                )
            )
        if t.needed:
            out.append(finding("HG224", t.artifact, describe(t)))
    return out


def describe(t: Tally) -> str:
    """One line: the rule, what it needs, who counted, who did not and why."""
    counted = ", ".join(t.approved) or "nobody"
    by = ", ".join(t.rule.principals) or "nobody it can name (map the CODEOWNERS owners to principals: `aliases`)"
    text = (
        f"`{t.rule.name}` needs {t.rule.count} approval(s) by {by}"
        f"{' (not the author)' if t.rule.exclude_author else ''}; counted: {counted}; {t.needed} more needed"
    )
    if t.uncounted:
        text += "; not counted: " + "; ".join(f"{who} ({why})" for who, why in t.uncounted[:5])
    if not t.verified:
        text += " (names as the records give them: the signatures are judged at push)"
    return text


def view(
    artifacts: ArtifactsTree, folder: PlanFolder, life: Lifecycle, read: Callable[[str], bytes | None] | None = None
) -> list[dict[str, Any]]:
    """Who has approved and who is still needed, per reached rule (status, the PR view)."""
    return [
        {
            "rule": t.rule.name,
            "artifact": t.artifact,
            "count": t.rule.count,
            "approved": list(t.approved),
            "needed": t.needed,
            "waiting_for": list(t.waiting_for),
            "exclude_author": t.rule.exclude_author,
            "authors": list(t.authors),
            "verified": t.verified,
            "not_counted": [{"who": who, "why": why} for who, why in t.uncounted],
        }
        for t in tallies(artifacts, folder, life, read)
    ]


def line(v: Mapping[str, Any]) -> str:
    """`status`'s line for one rule's view."""
    approved, waiting = v["approved"], v["waiting_for"]
    text = f"{v['rule']}: {len(approved)} of {v['count']} ({', '.join(approved) or 'nobody yet'})"
    if v["needed"]:
        text += f"; still needed: {v['needed']} of {', '.join(waiting)}"
    if not v["verified"]:
        text += "  (as the records name them: CI counts the signatures)"
    return text
