"""The server-side gate's input and ref policy (docs/pre-receive.md).

git runs a repository's `pre-receive` hook once per push, before any ref moves, with one
`<old> <new> <ref>` line per ref the push updates on its standard input, and rejects the
whole push when the hook exits non-zero. This module reads those lines (bounded: a line
that is too long, too many lines, a name that is not a ref, a line cut short, are errors,
never a shorter push), says what each update is (the default branch, a guarded branch,
a tag, another ref) and which updates the configuration's `[pre_receive]` table refuses
outright. The commits of a branch are judged by the gate itself (`check`), elsewhere.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from harness_gate.config import PreReceive
from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, finding

# git's own limit on a ref name is far below this; a push of more refs than this is a
# mirror or an import, made by an administrator with the hook out of the way.
MAX_LINE = 4096
MAX_UPDATES = 1000
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_ZERO = re.compile(r"0+")
# What git's check-ref-format refuses anywhere in a name, and what no ref of ours holds.
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock(/|$)|^refs/$|/$|\.$")


class Kind(enum.Enum):
    DEFAULT = "default branch"
    BRANCH = "branch"
    TAG = "tag"
    OTHER = "other ref"


@dataclass(frozen=True)
class Update:
    """One line of the hook's input: `old` None when the ref is created, `new` None when
    it is deleted."""

    old: str | None
    new: str | None
    ref: str


def bad_input(message: str) -> HarnessGateError:
    return HarnessGateError(
        "HG916",
        f"pre-receive input: {message}",
        "Install `harness-gate pre-receive` as the repository's `hooks/pre-receive`: git feeds it one "
        "`<old> <new> <ref>` line per updated ref (docs/pre-receive.md).",
    )


def read_updates(stream: BinaryIO) -> list[Update]:
    """Every ref update of the push, in git's order; any line that is not exactly
    `<old> <new> <ref>\\n` is an error."""
    data = stream.read(MAX_UPDATES * (MAX_LINE + 1) + 1)
    if not data:
        raise bad_input("no ref updates on standard input: nothing to judge")
    if not data.endswith(b"\n"):
        raise bad_input("the last line is cut short (no final newline)")
    lines = data[:-1].split(b"\n")
    if len(lines) > MAX_UPDATES:
        raise bad_input(f"more than {MAX_UPDATES} ref updates in one push")
    updates: list[Update] = []
    seen: set[str] = set()
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE:
            raise bad_input(f"line {number} is longer than {MAX_LINE} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise bad_input(f"line {number} is not UTF-8") from None
        fields = text.split(" ")
        if len(fields) != 3:
            raise bad_input(f"line {number} is not `<old> <new> <ref>`")
        old, new, ref = fields
        if not (_OID.fullmatch(old) and _OID.fullmatch(new)) or len(old) != len(new):
            raise bad_input(f"line {number}: {old[:80]!r} and {new[:80]!r} are not object ids")
        if _ZERO.fullmatch(old) and _ZERO.fullmatch(new):
            raise bad_input(f"line {number}: neither an old nor a new value for {ref[:200]!r}")
        if not ref.startswith("refs/") or _BAD_REF.search(ref):
            raise bad_input(f"line {number}: {ref[:200]!r} is not a ref name")
        if ref in seen:
            raise bad_input(f"line {number}: {ref!r} is updated twice")
        seen.add(ref)
        updates.append(Update(None if _ZERO.fullmatch(old) else old, None if _ZERO.fullmatch(new) else new, ref))
    return updates


def _pattern(pattern: str) -> re.Pattern[str]:
    """A ref pattern: `**` spans `/`, `*` stays within one name; anything else is itself."""
    out = []
    for i, part in enumerate(re.split(r"(\*\*|\*)", pattern)):
        out.append(("(?:.*)" if part == "**" else "[^/]*") if i % 2 else re.escape(part))
    return re.compile("".join(out))


def matches(patterns: Sequence[str], ref: str) -> bool:
    return any(_pattern(p).fullmatch(ref) for p in patterns)


def kind_of(ref: str, default_ref: str, policy: PreReceive) -> Kind:
    if ref == default_ref:
        return Kind.DEFAULT
    if matches(policy.branches, ref):
        return Kind.BRANCH
    if ref.startswith("refs/tags/"):
        return Kind.TAG
    return Kind.OTHER


def refused(update: Update, kind: Kind, policy: PreReceive) -> Finding | None:
    """The update the policy refuses whatever its commits hold, or None."""
    if update.new is None:
        return _deletion_refused(update, kind, policy)
    if kind is Kind.TAG and policy.tags == "reject":
        return _refused(update.ref, "pushes a tag: `pre_receive.tags` is `reject`")
    if kind is Kind.OTHER and policy.other_refs == "reject":
        return _refused(
            update.ref,
            "is neither a guarded branch (`pre_receive.branches`) nor a tag: `pre_receive.other_refs` is `reject`",
        )
    return None


def _deletion_refused(update: Update, kind: Kind, policy: PreReceive) -> Finding | None:
    """The deletion of a ref the policy refuses, or None."""
    if kind is Kind.DEFAULT:
        return _refused(update.ref, "deletes the default branch, the side every push is judged against")
    if kind is Kind.OTHER:
        return (
            _refused(update.ref, "deletes a ref that is neither a guarded branch nor a tag")
            if (policy.other_refs == "reject")
            else None
        )
    if policy.deletions == "reject":
        return _refused(update.ref, f"deletes a {kind.value}: `pre_receive.deletions` is `reject`")
    return None


def _refused(ref: str, why: str) -> Finding:
    return finding("HG518", ref, f"{ref}: the push {why}")


def before_default(update: Update, default_ref: str) -> Finding:
    """A push into a repository that has no default branch yet, of another ref."""
    return finding(
        "HG518",
        update.ref,
        f"{update.ref}: the repository has no default branch yet ({default_ref}), so nothing is trusted to "
        "judge this ref against",
        hint=f"Push {default_ref} on its own first (it adopts harness-gate), then the other refs.",
    )


def rewrites(update: Update) -> Finding:
    return finding(
        "HG517",
        update.ref,
        f"{update.ref}: the push rewrites the default branch ({(update.old or '')[:12]} is not in the history of "
        f"{(update.new or '')[:12]}): the approvals, evidence and reviews it held would be gone",
    )


def off_branch(update: Update, target: str | None) -> Finding:
    what = f"commit {target[:12]}, which no branch holds" if target else "an object that is not a commit"
    return finding("HG519", update.ref, f"{update.ref}: the tag points at {what}")


def no_default(message: str) -> HarnessGateError:
    return HarnessGateError(
        "HG917",
        message,
        "Point the repository's HEAD at its default branch: `git symbolic-ref HEAD refs/heads/main` in the bare "
        "repository (docs/pre-receive.md).",
    )
