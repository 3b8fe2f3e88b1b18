"""The rules (harness_gate.rules) judged on transitions built in memory: no repository, no
git. Each rule code the package raises, once where it fires and once where it must not.
The facts a rule asks of the repository come from `MemoryFacts`, the in-memory answer to
state_facts.StateFacts."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness_gate import approvals, formats, rules, templates
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.change import NO_MODE, Change
from harness_gate.config import Config
from harness_gate.findings import Finding
from harness_gate.state_facts import StateFacts

PLANS = "harness/plans"
FILE, EXEC, LINK, GITLINK = "100644", "100755", "120000", "160000"
OID = "1" * 40
WHEN = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)


@dataclass
class MemoryFacts:
    """What the rules ask of a repository, answered from dictionaries."""

    links: dict[bytes, bytes] = field(default_factory=dict)
    parent_links: dict[bytes, bytes] = field(default_factory=dict)
    directories: frozenset[str] = frozenset()
    blobs_by_oid: dict[str, bytes] = field(default_factory=dict)
    format_files: dict[str, bytes] = field(default_factory=dict)

    def symlinks(self) -> dict[bytes, bytes]:
        return dict(self.links)

    def parent_symlinks(self) -> dict[bytes, bytes]:
        return dict(self.parent_links)

    def is_directory(self, path: str) -> bool:
        return path in self.directories

    def changes_from(self, rev: str) -> Sequence[Change]:
        return []

    def blobs(self, oids: Sequence[str]) -> Mapping[str, bytes]:
        return {o: self.blobs_by_oid[o] for o in oids if o in self.blobs_by_oid}

    def files(self) -> formats.Files:
        return formats.Files.of(self.format_files)

    def files_at(self, rev: str) -> formats.Files:
        return formats.Files.of({})

    def fingerprint(self, cfg: Config) -> str:
        return "2" * 40


def _facts(facts: MemoryFacts) -> StateFacts:
    return facts  # the protocol, checked by mypy


def plan_md(boundary: Sequence[str]) -> bytes:
    return templates.plan(
        objective="Do it",
        acceptance=["Every required verification command passes on the committed tree."],
        scope="Only the paths in the Write Boundary.",
        boundary=list(boundary),
        commands=[{"id": "tests", "command": "python -c pass", "timeout_seconds": 600}],
        kind="tdd",
    ).encode()


def approval(artifact: str, data: bytes, seq: int = 1) -> bytes:
    sha = hashlib.sha256(data).hexdigest()
    return approvals.record("plan", artifact, sha, "alice", plan="p1", seq=seq, repository=None, now=WHEN).encode()


def plan_files(boundary: Sequence[str] = ("src/**",), *, approved: bool = True) -> dict[str, bytes]:
    plan = plan_md(boundary)
    out = {f"{PLANS}/p1/plan.md": plan}
    if approved:
        out[f"{PLANS}/p1/approvals.jsonl"] = approval("plan.md", plan)
    return out


def tree(files: Mapping[str, bytes]) -> ArtifactsTree:
    return ArtifactsTree("index", Path(), Config(), dict(files))


def change(path: str | bytes, new_mode: str = FILE, old_mode: str = NO_MODE, *, old_oid: str = "0" * 40) -> Change:
    raw = path.encode() if isinstance(path, str) else path
    status = "A" if old_mode == NO_MODE else "D" if new_mode == NO_MODE else "M"
    return Change(raw, (old_mode,), new_mode, (old_oid,), OID, status)


def judge(
    changes: Sequence[Change],
    new: Mapping[str, bytes] | None = None,
    old: Mapping[str, bytes] | None = None,
    facts: MemoryFacts | None = None,
    plan_id: str | None = None,
) -> list[Finding]:
    after = tree(plan_files() if new is None else new)
    before = tree(after.files if old is None else old)
    transition = rules.Transition(
        "index", None, changes, after, lambda: [before], _facts(facts or MemoryFacts()), parent="0" * 40
    )
    return rules.check_transition(transition, plan_id)


def codes(found: Sequence[Finding]) -> set[str]:
    return {f.code for f in found if f.blocks}


def test_a_change_inside_the_boundary_passes() -> None:
    assert judge([change("src/a.py")]) == []


def test_hg101_outside_the_write_boundary() -> None:
    assert codes(judge([change("docs/a.md")])) == {"HG101"}
    assert codes(judge([change("docs/a.md")], new=plan_files(("src/**", "docs/**")))) == set()


def test_hg102_a_protected_path_needs_its_exact_name() -> None:
    assert codes(judge([change(".gitignore")], new=plan_files(("src/**", ".git*")))) == {"HG102"}
    assert codes(judge([change(".gitignore")], new=plan_files(("src/**", ".gitignore")))) == set()
    warned = rules.wildcard_reach([".github/**"], None, "harness")
    assert [(f.code, f.blocks) for f in warned] == [("HG102", False)]
    assert rules.wildcard_reach(["src/**"], None, "harness") == []


def test_hg103_control_characters_in_a_path() -> None:
    assert codes(judge([change(b"src/a\x1b[0m.py")])) == {"HG103"}
    assert codes(judge([change(b"src/a\x1b[0m.py", NO_MODE, FILE)])) == set()  # removing it is the fix


def test_hg104_a_link_that_leaves_the_repository() -> None:
    out = MemoryFacts(links={b"src/l": b"../../etc/passwd"})
    assert codes(judge([change("src/l", LINK)], facts=out)) == {"HG104"}
    inside = MemoryFacts(links={b"src/l": b"b.py"})
    assert codes(judge([change("src/l", LINK)], facts=inside)) == set()


def test_hg104_a_link_that_leads_out_of_the_boundary() -> None:
    out = MemoryFacts(links={b"src/l": b"../docs"})
    assert codes(judge([change("src/l", LINK)], facts=out)) == {"HG104"}
    wide = plan_files(("src/**", "docs/**"))
    to_a_directory = MemoryFacts(links=out.links, directories=frozenset({"docs"}))
    assert codes(judge([change("src/l", LINK)], new=wide, facts=to_a_directory)) == set()


def test_hg104_an_old_link_redirected_by_a_new_one() -> None:
    """`src/y -> ..` makes the old `src/x -> y/docs` lead to `docs`, outside the boundary."""
    links = {b"src/x": b"y/docs/a.md", b"src/y": b".."}
    moved = MemoryFacts(links=links, parent_links={b"src/x": b"y/docs/a.md"})
    assert codes(judge([change("src/y", LINK)], facts=moved)) == {"HG104"}
    kept = MemoryFacts(
        links={b"src/x": b"z.py", b"src/y": b"."}, parent_links={b"src/x": b"z.py"}, directories=frozenset({"src"})
    )
    assert codes(judge([change("src/y", LINK)], facts=kept)) == set()


def test_hg105_a_new_submodule_needs_its_exact_name() -> None:
    assert codes(judge([change("src/sub", GITLINK)])) == {"HG105"}
    assert codes(judge([change("src/sub", GITLINK, GITLINK)])) == set()  # its pointer moved
    assert codes(judge([change("src/sub", GITLINK)], new=plan_files(("src/**", "src/sub")))) == set()


def test_hg106_a_case_variant_of_a_protected_path() -> None:
    assert codes(judge([change("src/.GitIgnore")])) == {"HG106"}
    assert codes(judge([change("src/GitIgnore.txt")])) == set()


def test_hg201_no_plan_at_all() -> None:
    assert codes(judge([change("src/a.py")], new={}, old={})) == {"HG201"}
    assert codes(judge([change("harness/plans/p1/plan.md")], new=plan_files(), old={})) == set()


def test_hg202_an_unapproved_plan() -> None:
    assert codes(judge([change("src/a.py")], new=plan_files(approved=False))) == {"HG202"}


def test_hg209_a_cancelled_plan_grants_nothing() -> None:
    files = plan_files()
    binding = {
        "plan_sha256": hashlib.sha256(files[f"{PLANS}/p1/plan.md"]).hexdigest(),
        "amendment_sha256": None,
        "review": None,
        "review_sha256": None,
        "tree": "2" * 40,
    }
    completion = templates.completion(binding=binding, summary="Cancelled.", evidence=[], outcome="cancelled")
    ended = {**files, f"{PLANS}/p1/001-completion.md": completion.encode()}
    assert codes(judge([change("src/a.py")], new=ended, plan_id="p1")) == {"HG209"}
    assert codes(judge([change("src/a.py")], new=files, plan_id="p1")) == set()


def test_hg210_an_approved_artifact_never_changes() -> None:
    old = plan_files()
    new = {**old, f"{PLANS}/p1/plan.md": plan_md(("src/**", "docs/**"))}
    path = f"{PLANS}/p1/plan.md"
    assert "HG210" in codes(judge([change(path, FILE, FILE)], new=new, old=old))
    unapproved = plan_files(approved=False)
    new = {f"{PLANS}/p1/plan.md": plan_md(("src/**", "docs/**"))}
    assert "HG210" not in codes(judge([change(path, FILE, FILE)], new=new, old=unapproved))


def test_hg211_an_append_only_log_only_grows() -> None:
    old = plan_files()
    log = f"{PLANS}/p1/approvals.jsonl"
    assert codes(judge([change(log, FILE, FILE)], new={**old, log: b""}, old=old)) == {"HG211"}
    grown = old[log] + approval("plan.md", old[f"{PLANS}/p1/plan.md"], seq=2)
    assert codes(judge([change(log, FILE, FILE)], new={**old, log: grown}, old=old)) == set()


def test_hg212_a_committed_lifecycle_record_never_changes() -> None:
    old = {**plan_files(), f"{PLANS}/p1/001-review.md": b"# Review\n"}
    new = {**old, f"{PLANS}/p1/001-review.md": b"# Review, rewritten\n"}
    assert "HG212" in codes(judge([change(f"{PLANS}/p1/001-review.md", FILE, FILE)], new=new, old=old))
    old = {**plan_files(), f"{PLANS}/p1/001-amendment.md": b"# Amendment\n"}  # not approved yet: editable
    new = {**old, f"{PLANS}/p1/001-amendment.md": b"# Amendment, rewritten\n"}
    assert "HG212" not in codes(judge([change(f"{PLANS}/p1/001-amendment.md", FILE, FILE)], new=new, old=old))


def test_hg516_the_allowed_signers_must_be_a_regular_file() -> None:
    files = plan_files(("src/**", "harness/allowed_signers"))
    assert codes(judge([change("harness/allowed_signers", EXEC)], new=files)) == {"HG516"}
    assert codes(judge([change("harness/allowed_signers", FILE)], new=files)) == set()


def test_judge_writes_and_judge_artifacts_are_the_same_rules() -> None:
    after = tree(plan_files())
    transition = rules.Transition(
        "work tree", None, [change("docs/a.md")], after, lambda: [after], _facts(MemoryFacts())
    )
    assert codes(rules.judge_writes(transition)) == {"HG101"}
    assert rules.judge_artifacts(transition) == []


def test_every_rule_code_of_the_package_has_its_case_here() -> None:
    from tests.test_structure import rule_codes_raised

    cases = {name.split("_")[1].upper() for name in globals() if name.startswith("test_hg")}
    assert set(rule_codes_raised()) <= cases
