"""Which approval and review records are authentic (docs/threat-model.md).

Anyone who can write the repository can write a well-formed record. Two things bind a
record to something a writer cannot forge alone:
- the repository: a record names the root commit of the history it was given in, so a
  record copied from another repository grants nothing here;
- signatures (`require_signed_approvals`, `require_signed_reviews`): a record counts only
  when the commit that added it carries a good SSH signature by a key in the
  allowed-signers file *as the trusted base holds it*. The change under test cannot
  add its own key: the file is read from the base commit into a private temporary copy.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness_gate import artifacts_root, git
from harness_gate.approvals import Approval
from harness_gate.config import Config
from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, finding

if TYPE_CHECKING:
    from harness_gate.artifacts_tree import ArtifactsTree, Vouch

_STATUS = {
    "B": "a bad signature",
    "U": "a signature by a key the base's allowed_signers does not list",
    "X": "an expired signature",
    "Y": "a signature by an expired key",
    "R": "a signature by a revoked key",
    "E": "a signature that cannot be checked (not an SSH signature)",
    "N": "no signature",
}


@dataclass
class Anchors:
    """The trust anchors of one check, read from its trusted side, with their caches."""

    root: Path
    config: Config
    base: str | None  # the trusted commit allowed_signers comes from; None: there is none
    head: str | None  # the judged history's tip; None: the index (HEAD may be unborn)
    signed: bool  # whether signatures are required here (commit checks with the setting on)
    _signers: Path | None = None
    _signers_read: bool = False
    _roots: frozenset[str] | None = None
    _root_known: dict[str, bool] = field(default_factory=dict)
    _descends: dict[str, bool] = field(default_factory=dict)
    _sigs: dict[str, git.Signature] = field(default_factory=dict)
    _blames: dict[tuple[str, str], git.Blame] = field(default_factory=dict)
    _shallow: frozenset[str] | None = None
    _files: dict[str, bytes | None] = field(default_factory=dict)

    # -- the repository ------------------------------------------------------------------
    def _trusted_roots(self) -> frozenset[str]:
        """The root commits of the trusted side (the base; the head when there is none).
        Not the head's when a base exists: a change could merge another repository's
        history in, and make its roots look like this repository's."""
        if self._roots is None:
            tip = self.base if self.base is not None else self.head
            self._roots = git.root_commits(self.root, tip) if tip is not None else frozenset()
        return self._roots

    def _in_history(self, oid: str) -> bool:
        if self.head is not None:
            # Commits under test: the record's root must be a root of the trusted history.
            return oid in self._trusted_roots()
        # The index: a root commit of this repository's object store. Cheap enough for
        # every commit; a local hook guarantees consistency, not authenticity.
        if oid not in self._root_known:
            self._root_known[oid] = git.is_root_commit(self.root, oid)
        return self._root_known[oid]

    # -- signatures ----------------------------------------------------------------------
    def _signers_file(self) -> Path | None:
        if not self._signers_read:
            self._signers_read = True
            data = self.trusted_file(artifacts_root.signers_file(self.config.artifacts_dir))
            if data is not None:
                try:
                    import tempfile  # noqa: PLC0415  (only with signed approvals)

                    fd, name = tempfile.mkstemp(prefix="harness-gate-signers-")
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                except OSError as exc:
                    why = f"cannot write a private copy of allowed_signers: {exc}"
                    raise HarnessGateError("HG906", why) from None
                self._signers = Path(name)
        return self._signers

    def close(self) -> None:
        if self._signers is not None:
            with contextlib.suppress(OSError):
                self._signers.unlink()
            self._signers = None

    def _no_anchor(self) -> str | None:
        """Why no signature can count here, or None."""
        if self.base is None:
            return "there is no trusted base commit to read allowed_signers from (a first push?)"
        if self._signers_file() is None:
            return f"the base commit {self.base[:12]} has no {artifacts_root.signers_file(self.config.artifacts_dir)}"
        return None

    def signature(self, oids: Sequence[str]) -> dict[str, git.Signature]:
        signers = self._signers_file()
        if signers is None:  # callers ask _no_anchor first; never verify against nothing
            raise RuntimeError("no allowed_signers to verify against")
        todo = sorted({o for o in oids if o not in self._sigs})
        self._sigs.update(git.signatures(self.root, todo, signers))
        return {o: self._sigs[o] for o in oids}

    def _blame(self, commit: str, path: str) -> git.Blame:
        key = (commit, path)
        if key not in self._blames:
            self._blames[key] = git.blame(self.root, commit, path)
        return self._blames[key]

    def _shallow_cuts(self) -> frozenset[str]:
        if self._shallow is None:
            self._shallow = git.shallow_commits(self.root)
        return self._shallow

    def _is_shallow(self) -> bool:
        return bool(self._shallow_cuts())

    def _unattributable(self, blame: git.Blame, oid: str) -> bool:
        return oid in blame.boundary or oid in self._shallow_cuts()

    def _from_here(self, oid: str) -> bool:
        """Whether commit `oid` descends from a root of the trusted history."""
        if oid not in self._descends:
            self._descends[oid] = any(git.is_ancestor(self.root, r, oid) for r in sorted(self._trusted_roots()))
        return self._descends[oid]

    def _line_signers(self, commit: str, path: str) -> tuple[git.Blame, dict[str, git.Signature]]:
        blame = self._blame(commit, path)
        return blame, self.signature(blame.commits)

    # -- the filters ---------------------------------------------------------------------
    def vouch(self, commit: str | None) -> Vouch:
        """The record filter for the state at `commit` (None: the index)."""

        def check(path: str, records: Sequence[Approval]) -> tuple[list[Approval], list[Finding]]:
            kept: list[Approval] = []
            problems: list[Finding] = []
            for r in records:
                if r.repository is None or self._in_history(r.repository):
                    kept.append(r)
                elif self._is_shallow():
                    problems.append(
                        finding(
                            "HG220",
                            path,
                            f"this record names root commit {r.repository[:12]}, which a shallow clone cannot show",
                            line=r.line,
                        )
                    )
                else:
                    problems.append(
                        finding(
                            "HG214",
                            path,
                            f"this record was given in the history of root commit {r.repository[:12]},"
                            " which is not this repository's",
                            line=r.line,
                        )
                    )
            if commit is None or not kept:
                return kept, problems
            if self.signed:
                return self._signed(commit, path, kept, problems)
            if self.config.approvers and self.head is not None and self._no_anchor() is None:
                return self._identified(commit, path, kept), problems
            return kept, problems

        return check

    def _identified(self, commit: str, path: str, records: list[Approval]) -> list[Approval]:
        """The records, each with the principal and key of the good signature on the commit
        that added it, for the approvers rules to count (docs/approvers.md); an unsigned
        one keeps "" and counts for no rule, but still approves as an approval does."""
        blame, sigs = self._line_signers(commit, path)
        out = []
        for r in records:
            added_by = blame.commits[r.line - 1] if r.line <= len(blame.commits) else ""
            sig = sigs.get(added_by) if added_by and not self._unattributable(blame, added_by) else None
            good = sig is not None and sig.status == "G" and self._from_here(added_by)
            out.append(dataclasses.replace(r, signer=sig.signer, key=sig.key) if good and sig else r)
        return out

    def trusted_file(self, rel: str) -> bytes | None:
        """A regular file as the trusted side holds it (the base; HEAD for the index), or
        None: allowed_signers, or a CODEOWNERS file, that the change under test edits
        counts only once it lands."""
        if self.base is None:
            return None
        if rel not in self._files:
            self._files[rel] = git.regular_file(self.root, self.base, rel)
        return self._files[rel]

    def who(self, commit: str | None) -> Who:
        """What the approvers rules may know of the state at `commit` (None: the index)."""
        return Who(self, commit)

    def authors(self, commit: str, path: str) -> tuple[frozenset[str], str | None]:
        """The principals whose good signatures are on the commits that wrote `path`'s
        lines at `commit`, or a reason they cannot be known (an unsigned line: its author
        could be anyone)."""
        why = self._no_anchor()
        if why is not None:
            return frozenset(), why
        blame, sigs = self._line_signers(commit, path)
        found: set[str] = set()
        for oid in dict.fromkeys(blame.commits):
            if self._unattributable(blame, oid):
                return frozenset(), f"commit {oid[:12]}, which wrote part of it, is beyond a shallow history"
            sig = sigs[oid]
            if sig.status != "G" or not self._from_here(oid):
                return (
                    frozenset(),
                    f"commit {oid[:12]}, which wrote part of it, has {_STATUS.get(sig.status, 'no good signature')}",
                )
            found.add(sig.signer)
        return frozenset(found), None

    def _signed(
        self, commit: str, path: str, records: list[Approval], problems: list[Finding]
    ) -> tuple[list[Approval], list[Finding]]:
        why = self._no_anchor()
        if why is not None:
            problems.append(finding("HG220", path, f"no approval can count: {why}"))
            return [], problems
        blame, sigs = self._line_signers(commit, path)
        kept: list[Approval] = []
        dropped: list[tuple[Approval, Finding]] = []
        for r in records:
            added_by = blame.commits[r.line - 1] if r.line <= len(blame.commits) else ""
            if not added_by or self._unattributable(blame, added_by):
                problems.append(
                    finding("HG220", path, "the commit that added this record is beyond a shallow history", line=r.line)
                )
                continue
            sig = sigs[added_by]
            if sig.status == "G" and not self._from_here(added_by):
                # A signed commit of another repository's history, merged in.
                problems.append(
                    finding(
                        "HG214",
                        path,
                        f"added by commit {added_by[:12]}, which descends from no root of the base's"
                        " history (another repository's commit, merged in)",
                        line=r.line,
                    )
                )
            elif sig.status == "G":
                kept.append(dataclasses.replace(r, signer=sig.signer, key=sig.key))
            else:
                dropped.append(
                    (
                        r,
                        finding(
                            "HG217",
                            path,
                            f"added by commit {added_by[:12]} with {_STATUS.get(sig.status, sig.status)}",
                            line=r.line,
                        ),
                    )
                )
        # An unsigned record next to a signed one for the same bytes is harmless noise.
        good = {(r.gate, r.artifact, r.sha256) for r in kept}
        problems.extend(f for r, f in dropped if (r.gate, r.artifact, r.sha256) not in good)
        return kept, problems

    def anchor_change(self, commit: str, path: str) -> list[Finding]:
        """With signatures required, a commit that changes allowed_signers must itself be
        signed by a key the base already lists: otherwise whoever can push could add a
        key, and approve anything once it is merged."""
        if not self.signed:
            return []
        why = self._no_anchor()
        if why is not None:
            return [finding("HG221", path, f"the trust anchor changes, but no signature can count: {why}")]
        sig = self.signature([commit])[commit]
        if sig.status != "G":
            why = _STATUS.get(sig.status, sig.status)
            return [finding("HG221", path, f"changed by commit {commit[:12]} with {why}")]
        return []

    def review(self, commit: str, path: str, code_commits: Sequence[str]) -> list[Finding]:  # noqa: PLR0911  (one return per case, in the order they are judged)
        """`require_signed_reviews` / `require_distinct_reviewer` for the review that counts."""
        cfg = self.config
        if not (cfg.require_signed_reviews or cfg.require_distinct_reviewer):
            return []
        why = self._no_anchor()
        if why is not None:
            return [finding("HG220", path, f"the review's signature cannot count: {why}")]
        blame, sigs = self._line_signers(commit, path)
        keys: set[str] = set()
        for oid in dict.fromkeys(blame.commits):
            if self._unattributable(blame, oid):
                return [finding("HG220", path, "the commit that added the review is beyond a shallow history")]
            sig = sigs[oid]
            if sig.status != "G":
                why = _STATUS.get(sig.status, sig.status)
                return [finding("HG218", path, f"added by commit {oid[:12]} with {why}")]
            keys.add(sig.key)
        if not cfg.require_distinct_reviewer:
            return []
        code = self.signature(code_commits)
        unsigned = sorted(oid for oid, sig in code.items() if sig.status != "G")
        if unsigned:
            # Without a signature on the code there is no key to tell the reviewer from.
            return [
                finding(
                    "HG219",
                    path,
                    "the reviewer's independence cannot be shown: code commit(s) "
                    + ", ".join(o[:12] for o in unsigned[:5])
                    + " carry no good signature by an allowed key",
                )
            ]
        shared = sorted(oid for oid, sig in code.items() if sig.key and sig.key in keys)
        if shared:
            return [
                finding(
                    "HG219",
                    path,
                    f"the review's key {sorted(keys)[0]} also signed code commit(s) "
                    + ", ".join(o[:12] for o in shared[:5]),
                )
            ]
        return []


@dataclass(frozen=True)
class Who:
    """The approvers rules' view of one state's signatures: verified only where commits
    are judged (pre-push, CI, pre-receive), with the trusted side's allowed_signers."""

    anchors: Anchors
    commit: str | None

    @property
    def unverified(self) -> str | None:
        """Why no signature can be counted here, or None when they are."""
        if self.commit is None or self.anchors.head is None:
            return "signatures are checked where commits are judged (pre-push, CI), not on the index"
        return self.anchors._no_anchor()

    def trusted_file(self, rel: str) -> bytes | None:
        return self.anchors.trusted_file(rel)

    def authors(self, path: str) -> tuple[frozenset[str], str | None]:
        if self.commit is None:
            return frozenset(), "the index has no signed author"
        return self.anchors.authors(self.commit, path)


@contextlib.contextmanager
def anchors(root: Path, config: Config, *, base: str | None, head: str | None) -> Iterator[Anchors]:
    """Anchors for one check; signatures are required only where commits are judged."""
    found = Anchors(root, config, base, head, signed=head is not None and config.require_signed_approvals)
    try:
        yield found
    finally:
        found.close()


@contextlib.contextmanager
def head_state(root: Path, config: Config, base: str | None) -> Iterator[ArtifactsTree | None]:
    """The HEAD commit's state with its records vouched for as a check from `base` would
    (signatures counted against the base's allowed_signers): what `status` and `approve`
    count the approvers rules on, so that they say what CI will. None before a commit."""
    from harness_gate import artifacts_tree  # noqa: PLC0415  (a cycle at import time)

    head = git.head(root)
    if head is None:
        yield None
        return
    snap = artifacts_tree.from_commit(root, head, config)
    with anchors(root, config, base=base, head=head) as found:
        yield vouched(snap, found, head)


def vouched(snap: ArtifactsTree, anchors: Anchors | None, commit: str | None) -> ArtifactsTree:
    """The state with its approval records filtered by the check's trust anchors."""
    if anchors is None:
        return snap
    return dataclasses.replace(snap, vouch=anchors.vouch(commit), who=anchors.who(commit))
