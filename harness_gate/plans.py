"""Plan folders: `plans/<id>/plan.md`, approvals and numbered artifacts."""

from __future__ import annotations

import dataclasses
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_root, cache
from harness_gate.artifacts.artifact import Artifact
from harness_gate.artifacts.kinds import BY_SLUG, KINDS, PLAN, Content, KindSpec
from harness_gate.artifacts_tree import ArtifactsTree, cap_for, read_capped
from harness_gate.config import Config
from harness_gate.findings import Finding, finding

PLAN_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
NUMBERED = re.compile(r"([0-9]{3})-([a-z][a-z-]*)\.md\Z")
# The trust anchor of signed approvals: under the artifacts root, but a protected path that
# a plan must name exactly (gate.protected), in every mode: a key added while signatures
# are off would be trusted the day they are switched on.
# Empty placeholders that keep the folders in git; nothing else unknown lives there.
KEEP_FILES = frozenset({".gitkeep", f"{artifacts_root.PLANS}/.gitkeep"})
ROOT_FILES = frozenset({artifacts_root.SIGNERS, *KEEP_FILES})
PLAN_FILES = frozenset({artifacts_root.PLAN, *artifacts_root.LOGS})


@dataclass(frozen=True)
class NumberedArtifact:
    """A numbered artifact of a plan folder (`001-review.md`, ...)."""

    number: int
    name: str
    path: str
    slug: str
    artifact: Artifact | None


@dataclass(frozen=True)
class PlanFolder:
    plan_id: str
    path: str
    plan: Artifact | None
    approvals: tuple[approvals_mod.Approval, ...]
    entries: tuple[NumberedArtifact, ...]
    findings: tuple[Finding, ...]
    # Work derived from this folder alone (its lifecycle replay), done once.
    memo: dict[str, Any] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)


def kind_of_file(name: str) -> KindSpec | None:
    """The artifact kind a plan folder's file name says it holds (`plan.md`, `NNN-slug.md`)."""
    if name == artifacts_root.PLAN:
        return PLAN
    m = NUMBERED.match(name)
    return BY_SLUG.get(m.group(2)) if m else None


def parse_cached(path: str, data: bytes, artifacts_dir: str, max_bytes: int) -> tuple[Artifact | None, list[Finding]]:
    settings = f"{artifacts_dir}\0{max_bytes}\0".encode()

    def parse() -> tuple[Artifact | None, list[Finding]]:
        from harness_gate.artifacts.parse import parse_artifact  # noqa: PLC0415  (only on a cache miss)

        return parse_artifact(path, data, artifacts_dir=artifacts_dir, max_bytes=max_bytes)

    art, problems = cache.cached(
        "artifact",
        settings + data,
        parse,
        lambda a: {"kind": a.kind.title, "sha256": a.sha256, "values": dict(a.values), "lines": dict(a.lines)},
        lambda doc: _restore(path, doc),
    )
    return art, list(problems)


def _restore(path: str, doc: dict[str, Any]) -> Artifact:
    kind = KINDS[doc["kind"]]
    values = dict(doc["values"])
    for spec in kind.sections:  # JSON has no tuples: the list sections come back as tuples
        if spec.content in (Content.BOUNDARY, Content.COMMANDS, Content.PATHS, Content.CHOICES):
            values[spec.title] = tuple(values[spec.title])
    return Artifact(kind, path, doc["sha256"], values, dict(doc["lines"]))


def _approvals_cached(path: str, data: bytes) -> tuple[list[approvals_mod.Approval], list[Finding]]:
    records, problems = cache.cached(
        "approvals",
        data,
        lambda: approvals_mod.parse(path, data),
        lambda recs: [dataclasses.astuple(r) for r in recs],
        lambda rows: [approvals_mod.Approval(*row) for row in rows],
    )
    return records or [], list(problems)


def _own(
    plan_id: str, path: str, records: list[approvals_mod.Approval]
) -> tuple[list[approvals_mod.Approval], list[Finding]]:
    """A record names its plan: one copied here from another plan folder grants nothing."""
    foreign = [
        finding("HG213", path, f"this record approves plan `{r.plan}`, not `{plan_id}`", line=r.line)
        for r in records
        if r.plan != plan_id
    ]
    return [r for r in records if r.plan == plan_id], foreign


def plan_ids(artifacts: ArtifactsTree) -> list[str]:
    prefix = artifacts_root.plans_prefix(artifacts.artifacts_dir)
    ids = {
        p[len(prefix) :].split("/", 1)[0] for p in artifacts.files if p.startswith(prefix) and "/" in p[len(prefix) :]
    }
    return sorted(ids)


def root_findings(artifacts: ArtifactsTree) -> list[Finding]:
    """Files under the artifacts root that no rule knows."""
    out = list(artifacts.problems)
    prefix = artifacts_root.prefix(artifacts.artifacts_dir)
    for path in sorted(artifacts.files):
        rel = path[len(prefix) :]
        if rel in KEEP_FILES and artifacts.files.get(path):
            out.append(finding("HG516", path, "a `.gitkeep` must be empty"))
            continue
        if rel in ROOT_FILES:
            continue
        parts = rel.split("/")
        if len(parts) == 3 and parts[0] == artifacts_root.PLANS:
            if not PLAN_ID.match(parts[1]):
                out.append(finding("HG206", path, f"`{parts[1]}` is not a valid plan id"))
                continue
            if parts[2] in PLAN_FILES or NUMBERED.match(parts[2]):
                continue
        if rel == "active":
            # Earlier builds kept one shared pointer here; two branches always conflicted on it.
            out.append(
                finding("HG516", path, "`active` is no longer used: delete it (docs/lifecycle.md, which plan governs)")
            )
            continue
        out.append(finding("HG516", path, "not an artifact harness-gate knows"))
    return out


def next_path(folder: PlanFolder, slug: str) -> str:
    """Where the folder's next numbered artifact of this kind goes (`004-review.md`)."""
    return f"{folder.path}/{len(folder.entries) + 1:03d}-{slug}.md"


def load(artifacts: ArtifactsTree, plan_id: str) -> PlanFolder:
    """The plan folder as `artifacts` holds it; loaded once per state (and plan)."""
    key = ("plans.load", plan_id)
    loaded: PlanFolder | None = artifacts.memo.get(key)
    if loaded is None:
        loaded = artifacts.memo[key] = _load(artifacts, plan_id)
    return loaded


def _load(artifacts: ArtifactsTree, plan_id: str) -> PlanFolder:
    folder = artifacts_root.plan_folder(artifacts.artifacts_dir, plan_id)
    found: list[Finding] = []
    max_bytes = artifacts.config.max_artifact_bytes
    plan_path = artifacts_root.plan_md(folder)
    plan: Artifact | None = None
    if plan_path not in artifacts.files:
        found.append(finding("HG201", plan_path, f"plan `{plan_id}` has no plan.md"))
    else:
        plan, problems = parse_cached(plan_path, artifacts.files[plan_path], artifacts.artifacts_dir, max_bytes)
        found.extend(problems)
        if plan is not None and plan.kind is not PLAN:
            found.append(finding("HG515", plan_path, f"plan.md holds a `# {plan.kind.title}`", line=1))
            plan = None
    approvals_path = artifacts_root.approvals_log(folder)
    records: list[approvals_mod.Approval] = []
    if approvals_path in artifacts.files:
        records, problems = _approvals_cached(approvals_path, artifacts.files[approvals_path])
        found.extend(problems)
        records, problems = _own(plan_id, approvals_path, records)
        found.extend(problems)
        if artifacts.vouch is not None:
            records, problems = artifacts.vouch(approvals_path, records)
            found.extend(problems)
    entries: list[NumberedArtifact] = []
    for path in sorted(
        p for p in artifacts.files if p.startswith(folder + "/") and p.count("/") == folder.count("/") + 1
    ):
        name = path.rsplit("/", 1)[1]
        m = NUMBERED.match(name)
        if not m:
            continue
        slug = m.group(2)
        kind = BY_SLUG.get(slug)
        if kind is None or kind is PLAN:
            found.append(finding("HG515", path, f"`{slug}` is not an artifact kind (see docs/artifacts.md)"))
            continue
        art, problems = parse_cached(path, artifacts.files[path], artifacts.artifacts_dir, max_bytes)
        found.extend(problems)
        if art is not None and art.kind is not kind:
            found.append(finding("HG515", path, f"`{name}` holds a `# {art.kind.title}`", line=1))
            art = None
        entries.append(NumberedArtifact(int(m.group(1)), name, path, slug, art))
    for n, entry in enumerate(entries, start=1):
        if entry.number != n:
            found.append(
                finding("HG412", entry.path, f"expected number {n:03d} here (numbers run 001, 002, ... without gaps)")
            )
            break
    return PlanFolder(plan_id, folder, plan, tuple(records), tuple(entries), tuple(found))


def missing_file(rel: str) -> Finding:
    """What `lint` says of a path under the artifacts root it was named that is not there (HG516)."""
    return finding("HG516", rel, "no such file")


def file_findings(name: str, path: Path, cfg: Config) -> list[Finding]:
    """What `lint` finds in a file outside the artifacts root, read on its own: an artifact,
    or an approvals log."""
    from harness_gate.artifacts.parse import parse_artifact  # noqa: PLC0415  (lint only)

    try:
        # Opening a FIFO (or a device) would wait for a writer, or read forever.
        if not stat.S_ISREG(path.stat().st_mode):
            return [finding("HG516", name, "not a regular file")]
        data = read_capped(path, cap_for(name, cfg))
    except OSError as exc:
        return [finding("HG516", name, f"cannot read: {exc.strerror or exc}")]
    if path.name == artifacts_root.APPROVALS:
        return approvals_mod.parse(name, data)[1]
    _, found = parse_artifact(name, data, artifacts_dir=cfg.artifacts_dir, max_bytes=cfg.max_artifact_bytes)
    return found
