"""The commands' logic, independent of click: each returns a Report."""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from harness_gate import approvals as approvals_mod
from harness_gate import (
    branches,
    cache,
    evidence,
    format_commands,
    formats,
    fsutil,
    git,
    hooks,
    lifecycle,
    plans,
    snapshot,
    templates,
    verification,
)
from harness_gate import config as config_mod
from harness_gate import report as report_mod
from harness_gate.artifacts.artifact import Artifact
from harness_gate.artifacts.kinds import BY_SLUG, REPAIR_PLAN
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.errors import HarnessGateError, Refused
from harness_gate.findings import Finding, Severity, finding
from harness_gate.report import Report


def usage(message: str, hint: str = "") -> HarnessGateError:
    return HarnessGateError("HG904", message, hint)


# -- lint ----------------------------------------------------------------------------


def lint(cwd: Path, files: Sequence[str]) -> Report:
    """Lint everything under the artifacts root, or what FILES (files or folders) name.

    A file inside a plan folder lints that whole folder (its lifecycle needs the
    context) plus the layout rules for the file itself; a file outside the artifacts
    root is parsed on its own.
    """
    location = git.locate(cwd)
    # The parse cache the check hook fills: at a commit, lint runs after it on the same
    # bytes and reads the clean parses back instead of importing the parsers again.
    cache.configure(location.cache_dir)
    try:
        return _lint(cwd, location.toplevel, files)
    finally:
        cache.configure(None)


def _lint(cwd: Path, root: Path, files: Sequence[str]) -> Report:
    snap = snapshot.from_worktree(root)
    if not files:
        if not snap.active:
            return report_mod.inactive("lint")
        return Report("lint", tuple(_lint_all(snap)))
    found: list[Finding] = []
    folders: set[str] = set()
    scopes: set[str] = set()  # paths and folder prefixes whose layout findings apply
    prefix = snap.artifacts_dir + "/"
    real_root = root.resolve()
    for name in files:
        path = Path(os.path.normpath(cwd / name))
        try:
            rel = path.relative_to(real_root).as_posix()
        except ValueError:
            rel = None
        if rel is not None and (rel + "/").startswith(prefix):
            if rel + "/" == prefix:
                return Report("lint", tuple(_lint_all(snap)))
            if not path.exists() and not path.is_symlink():
                found.append(finding("HG516", rel, "no such file"))
                continue
            parts = rel[len(prefix) :].split("/")
            if parts == ["plans"]:
                folders.update(i for i in plans.plan_ids(snap) if plans.PLAN_ID.match(i))
                scopes.add(rel + "/")
                continue
            if parts[0] == "plans" and plans.PLAN_ID.match(parts[1]):
                folders.add(parts[1])
            scopes.add(rel + "/" if path.is_dir() else rel)
            continue
        if path.is_dir():
            raise usage(f"{name} is a directory outside the artifacts root `{prefix}`")
        kind = format_commands.format_of(root, snap.config, rel) if rel is not None else None
        if kind is not None and rel is not None:  # a file of another harness format (docs/formats.md)
            found.extend(format_commands.lint_formats(root, snap.config, [(kind, rel)]))
            continue
        found.extend(_lint_standalone(name, path, snap.config))
    layout = _lint_root(snap)
    found.extend(f for f in layout if any(f.path == s or (s.endswith("/") and f.path.startswith(s)) for s in scopes))
    for plan_id in sorted(folders):
        found.extend(_lint_plan(snap, plan_id))
    return Report("lint", tuple(found))


def _lint_all(snap: snapshot.Snapshot) -> list[Finding]:
    found = _lint_root(snap)
    for plan_id in plans.plan_ids(snap):
        found.extend(_lint_plan(snap, plan_id))
    chosen = formats.worktree_files(snap.root, snap.config)
    found.extend(format_commands.lint_formats(snap.root, snap.config, chosen))
    return found


def _lint_root(snap: snapshot.Snapshot) -> list[Finding]:
    return plans.root_findings(snap)


def _lint_plan(snap: snapshot.Snapshot, plan_id: str) -> list[Finding]:
    folder = plans.load(snap, plan_id)
    life = lifecycle.replay(folder)
    log = f"{folder.path}/evidence.jsonl"
    problems = evidence.validate(log, snap.files[log]) if log in snap.files else []
    if log in snap.logs:
        problems = evidence.validate_file(log, snap.logs[log])
    return [*folder.findings, *life.findings, *problems]


def _lint_standalone(name: str, path: Path, cfg: config_mod.Config) -> list[Finding]:
    try:
        # Opening a FIFO (or a device) would wait for a writer, or read forever.
        if not stat.S_ISREG(path.stat().st_mode):
            return [finding("HG516", name, "not a regular file")]
        data = snapshot.read_capped(path, snapshot.cap_for(name, cfg))
    except OSError as exc:
        return [finding("HG516", name, f"cannot read: {exc.strerror or exc}")]
    if path.name == "approvals.jsonl":
        return approvals_mod.parse(name, data)[1]
    _, found = parse_artifact(name, data, artifacts_dir=cfg.artifacts_dir, max_bytes=cfg.max_artifact_bytes)
    return found


# -- status --------------------------------------------------------------------------


def status(cwd: Path, plan_id: str | None) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("status")
    found: list[Finding] = _ignored_config(root)
    try:
        plan_id = verification.plan_id_for(snap, plan_id)
    except HarnessGateError as exc:
        if exc.code not in ("HG201", "HG222"):
            raise
        line = f"plan:       none chosen: {exc.message}"
        return Report("status", (), {"active": True, "plan": None}, lines=(line, f"next:       {exc.hint}"))
    folder = plans.load(snap, plan_id)
    if plan_id not in plans.plan_ids(snap):
        here = ", ".join(plans.plan_ids(snap)) or "none yet (harness-gate plan new)"
        raise usage(f"there is no plan `{plan_id}` here ({snap.artifacts_dir}/plans/{plan_id}/ is missing)",
                    f"Plans here: {here}.")  # fmt: skip
    life = lifecycle.replay(folder)
    found.extend(folder.findings)
    found.extend(life.findings)
    records = git.status_records(root, snap.artifacts_dir + "/")
    unstaged = [path for xy, path in records if xy == "??" or xy[1] != " "]
    policy = life.policy
    fresh: list[evidence.Freshness] = []
    tree = ""
    untracked: list[Finding] = []
    if policy is not None:
        tree = verification.fingerprint_worktree(root, snap.config)
        fresh, problems = verification.state_freshness(snap, folder, life, tree)
        found.extend(problems)
        if life.state not in lifecycle.ENDED - {lifecycle.State.COMPLETED}:
            untracked = verification.untracked_warning(root, snap.config, f"{folder.path}/evidence.jsonl")
            found.extend(untracked)
    next_step = _next_step(
        snap, folder, life, fresh, uncommitted=[path for _, path in records], untracked=bool(untracked)
    )
    # status informs, it never blocks: what it finds is what `lint` and `check` would say.
    found = [dataclasses.replace(f, severity=Severity.WARNING) for f in found]
    data: dict[str, Any] = {
        "active": True,
        "plan": plan_id,
        "state": life.state.value,
        "write_authority": life.grants_writes,
        "plan_sha256": life.plan_sha256,
        "plan_approval": life.plan_approval.value,
        "amendment_sha256": life.amendment_sha256,
        "boundary": list(policy.boundary) if policy else [],
        "unmodeled_commands": list(policy.unmodeled_commands) if policy else [],
        "required_commands": [
            {"id": c["id"], "command": c["command"], "timeout_seconds": c["timeout_seconds"]}
            for c in (policy.verification["required_commands"] if policy else [])
        ],
        "repairs": {"used": life.repairs_used, "budget": life.repair_budget},
        "next_step": next_step,
        "tree": tree,
        "evidence": [{"command_id": f.command_id, "freshness": f.reason} for f in fresh],
        "not_in_index": unstaged,
    }
    lines = [
        f"plan:       {plan_id}  ({folder.path}/plan.md)",
        f"state:      {life.state.value}  (write authority: {'yes' if life.grants_writes else 'no'})",
        f"approval:   {life.plan_approval.value}  sha256 {life.plan_sha256 or '-'}",
        f"boundary:   {', '.join(data['boundary']) or 'None'}",
        "commands:   " + (", ".join(f"{c['id']}={c['command']}" for c in data["required_commands"]) or "-"),
        f"repairs:    {life.repairs_used} of {life.repair_budget}",
        f"tree:       {tree or '-'}  (the work tree's fingerprint)",
        "evidence:   " + (", ".join(f"{f.command_id} {f.reason}" for f in fresh) or "-"),
        f"next:       {next_step}",
    ]
    if unstaged:
        lines.append("not staged: " + ", ".join(unstaged) + "  (the gate reads the index: git add them)")
    return Report("status", tuple(found), data, lines=tuple(lines))


def status_view(cwd: Path, plan_id: str | None, base: str | None) -> Report:
    """The plan for a reviewer (`status --format markdown`), read from commits only: the
    plan `status` picks as the HEAD commit holds it, or with `base` every plan the
    commits since `base` used or brought and each commit's verdict, as `check` judges them
    at the `ci` stage. It informs, it never blocks (`check` does)."""
    from harness_gate import check, prview  # noqa: PLC0415

    if base is not None:
        judged = check.run_check(
            cwd, stage="ci", mode=check.Mode("base", base, "HEAD"), plan_id=plan_id, config_file=None
        )
        found = tuple(dataclasses.replace(f, severity=Severity.WARNING) for f in judged.findings)
        data = {**judged.data, "check_result": judged.result}
        return Report("status", found, data, lines=judged.lines)
    root = git.toplevel(cwd)
    head = git.head(root)
    if head is None:
        raise usage("there is no commit yet: the view is of the HEAD commit", "Commit the plan first.")
    cfg = snapshot.read_config(root, head)
    snap = snapshot.from_commit(root, head, cfg)
    if not snap.active:
        return report_mod.inactive("status")
    try:
        plan_id = verification.plan_id_for(snap, plan_id)
    except HarnessGateError as exc:
        if exc.code not in ("HG201", "HG222"):
            raise
        return Report("status", (), {"active": True, "head": head, "plan": None, "plans": []},
                      lines=(f"plan: none chosen: {exc.message}", f"next: {exc.hint}"))  # fmt: skip
    if plan_id not in plans.plan_ids(snap):
        raise usage(f"the HEAD commit has no plan `{plan_id}` ({snap.artifacts_dir}/plans/{plan_id}/ is missing)")
    folder = plans.load(snap, plan_id)
    life = lifecycle.replay(folder)
    found = tuple(dataclasses.replace(f, severity=Severity.WARNING) for f in (*folder.findings, *life.findings))
    tree = verification.fingerprint_commit(root, head, cfg)
    # status reads no signature: where they are required, `check` is what verifies them.
    signed = None if cfg.require_signed_approvals else False
    view = prview.plan_view(root, snap, plan_id, tree, commit=head, signed=signed)
    data = {"active": True, "head": head, "plan": plan_id, "plans": [view]}
    return Report("status", found, data, lines=(f"plan: {plan_id} ({view['state']}) at HEAD {head[:12]}",))


def _ignored_config(root: Path) -> list[Finding]:
    read = {p: (root / p).read_bytes() for p in snapshot.CONFIG_PATHS if (root / p).is_file()}
    if not config_mod.ignored_table(read.get(config_mod.CONFIG_FILE), read.get("pyproject.toml")):
        return []
    return [finding(
        "HG902", "pyproject.toml", f"its [tool.harness-gate] table is not read: {config_mod.CONFIG_FILE} is the "
        "configuration (docs/config.md)", severity=Severity.WARNING,
    )]  # fmt: skip


def _next_step(
    snap: snapshot.Snapshot,
    folder: plans.PlanFolder,
    life: lifecycle.Lifecycle,
    fresh: Sequence[evidence.Freshness],
    *,
    uncommitted: Sequence[str],
    untracked: bool,
) -> str:
    """What to do next, from the lifecycle and what the folder and the work tree hold now."""
    pending = _unfilled_review(snap, folder)
    if pending is not None:
        return (
            f"a reviewer who did not write the change fills in {pending}: Reviewer identity, Scope Reviewed, "
            "Findings and Verdict; then commit it"
        )
    state = life.state
    plan_files = {f"{folder.path}/plan.md", f"{folder.path}/approvals.jsonl"}
    if state is lifecycle.State.EXECUTING and plan_files & set(uncommitted):
        return (
            f"commit the plan and its approval: git add {snap.artifacts_dir} && git commit -m 'Plan: {folder.plan_id}'"
        )
    stale = [f for f in fresh if not f.fresh]
    if untracked and stale and state not in lifecycle.ENDED - {lifecycle.State.COMPLETED}:
        # verify would record them as part of the tree, and a commit leaves them out (HG310).
        return "commit, remove or ignore the untracked files HG310 names; then harness-gate verify"
    if state is lifecycle.State.COMPLETED and stale:
        # An update from the base (or any later change) left the completed plan's code unverified.
        return "harness-gate verify, then commit its evidence: the tree changed since the plan completed"
    if state is lifecycle.State.EXECUTING and fresh and not stale:
        return "ask for a review by someone who did not write the change: harness-gate review new"
    if state is lifecycle.State.EXECUTING and any(f.reason == "tree-moved" for f in stale):
        # Verified once, changed since: more work, or a file that joined the tree.
        return "the work tree changed since verify: finish the work, commit it, then harness-gate verify again"
    if state is lifecycle.State.EXECUTING:
        return "do the work inside the write boundary and commit it; then harness-gate verify"
    if state is lifecycle.State.REVIEWING and stale:
        # complete needs fresh evidence and a passing review of exactly this tree.
        return "the tree changed since the review: harness-gate verify, then harness-gate review new"
    return life.next_step


def _unfilled_review(snap: snapshot.Snapshot, folder: plans.PlanFolder) -> str | None:
    """The newest review still holding a placeholder `review new` wrote (verdict, identity), if any."""
    from harness_gate import review  # noqa: PLC0415

    latest = folder.entries[-1] if folder.entries else None
    if latest is None or latest.slug != "review" or latest.artifact is not None:
        return None
    data = snap.files.get(latest.path, b"")
    placeholders = (review.VERDICT_PLACEHOLDER.encode(), review.IDENTITY_PLACEHOLDER.encode())
    return latest.path if any(p in data for p in placeholders) else None


# -- init and plan new ---------------------------------------------------------------

GITATTRIBUTES_LINES = (
    # Artifacts are hashed byte for byte: no end-of-line conversion on any platform.
    "harness/** -text",
    "harness/plans/*/approvals.jsonl merge=union",
    "harness/plans/*/evidence.jsonl merge=union",
)
CONFIG_TEMPLATE = """\
# harness-gate configuration (docs/config.md)
artifacts_dir = "harness"
"""


def init(cwd: Path, agents: Sequence[str] = ()) -> Report:
    root = git.toplevel(cwd)
    lines: list[str] = []
    for runtime in agents:  # checked first: a settings file it cannot merge writes nothing at all
        hooks.agent_settings(root, runtime)
    cfg = root / ".harness-gate.toml"
    if not cfg.exists():
        fsutil.write_atomic(cfg, CONFIG_TEMPLATE.encode())
        lines.append("wrote .harness-gate.toml")
    snap = snapshot.from_worktree(root)
    keep = root / snap.artifacts_dir / "plans" / ".gitkeep"
    if not keep.exists():
        fsutil.write_atomic(keep, b"")
        lines.append(f"wrote {snap.artifacts_dir}/plans/.gitkeep")
    attrs = root / ".gitattributes"
    old = attrs.read_text("utf-8") if attrs.exists() else ""
    wanted = [ln.replace("harness/", snap.artifacts_dir + "/", 1) for ln in GITATTRIBUTES_LINES]
    missing = [ln for ln in wanted if ln not in old.splitlines()]
    if missing:
        sep = "" if not old or old.endswith("\n") else "\n"
        fsutil.write_atomic(attrs, (old + sep + "\n".join(missing) + "\n").encode())
        lines.append("added merge=union for the JSONL logs to .gitattributes")
    pcc = root / ".pre-commit-config.yaml"
    config = hooks.local_config(snap.artifacts_dir)
    if not pcc.exists():
        fsutil.write_atomic(pcc, config.encode())
        lines.append("wrote .pre-commit-config.yaml")
    elif all(f"id: {hook.id}" in pcc.read_text("utf-8", "replace") for hook in hooks.HOOKS):
        lines.append(".pre-commit-config.yaml has harness-gate's hooks")
    else:
        # Someone else's configuration: never rewritten, and said once what to add to it.
        lines.append(
            ".pre-commit-config.yaml exists: add harness-gate's hooks to it (this entry under `repos:`, and "
            f"`default_install_hook_types: [{', '.join(hooks.INSTALL_TYPES)}]` at its top):\n"
            + config[config.index("  - repo: local") :]
        )
    agent_files = []
    for runtime in agents:
        path, merged, changed = hooks.agent_settings(root, runtime)
        agent_files.append(path)
        if changed:
            fsutil.write_atomic(root / path, merged)
            lines.append(f"wrote the {runtime} agent hook to {path}")
        else:
            lines.append(f"{path} has harness-gate's agent hook")
    types = " ".join(f"--hook-type {t}" for t in hooks.INSTALL_TYPES)
    set_up = [".harness-gate.toml", ".gitattributes", ".pre-commit-config.yaml", snap.artifacts_dir, *agent_files]
    # Only the set-up's own files: `git add -A` would sweep work in progress into the adoption.
    steps = (
        [f"git add {' '.join(set_up)} && git commit -m 'Adopt harness-gate'   (the adopting commit is not judged)"]
        if git.status_records(root, *set_up)
        else []
    )
    steps += [
        f"pre-commit install {types}   (in each clone)",
        "harness-gate plan new ID --objective '...' --boundary 'src/**' --verify 'tests=pytest -q'",
    ]
    lines += [("next: " if i == 0 else "      ") + step for i, step in enumerate(steps)]
    return Report("init", lines=tuple(lines))


def _bad_options(problems: Sequence[Finding], what: str) -> HarnessGateError:
    """Options that would make an invalid artifact are a usage error (nothing is written):
    said as the problem, without the line of a file that does not exist."""
    first = next((f for f in problems if f.severity is Severity.ERROR), None)
    message = first.message if first else "it does not validate"
    return usage(f"the options make an invalid {what}, not written: {message}", "Fix that option and run it again.")


def _check_patterns(option: str, patterns: Sequence[str], artifacts_dir: str) -> None:
    from harness_gate import boundary  # noqa: PLC0415

    for pattern, reason in boundary.validate_all(patterns, artifacts_dir):
        raise usage(f"{option} {pattern!r}: {reason}", "docs/boundary.md gives the pattern dialect.")


def parse_verify(spec: str, timeout: int) -> dict[str, Any]:
    ident, sep, command = spec.partition("=")
    if not sep or not ident or not command.strip():
        raise usage(f"--verify {spec!r}: expected ID=COMMAND", "e.g. --verify 'tests=pytest -q'")
    return {"id": ident, "command": command, "timeout_seconds": timeout}


def plan_new(
    cwd: Path,
    plan_id: str,
    *,
    objective: str,
    acceptance: Sequence[str],
    scope: str | None,
    boundary: Sequence[str],
    verify: Sequence[str],
    timeout: int,
    kind: str,
    mode: str,
    risks: Sequence[str],
) -> Report:
    root = git.toplevel(cwd)
    if not plans.PLAN_ID.match(plan_id):
        raise usage(f"plan id {plan_id!r} is invalid", "Plan ids match [a-z0-9][a-z0-9._-]{0,63}.")
    if not verify:
        raise usage("at least one --verify 'ID=COMMAND' is required", "Every plan carries its verification commands.")
    snap = snapshot.from_worktree(root)
    folder = root / snap.artifacts_dir / "plans" / plan_id
    if folder.exists():
        raise usage(
            f"{folder.relative_to(root).as_posix()} already exists", "Pick another id; plans are never overwritten."
        )
    _check_patterns("--boundary", boundary, snap.artifacts_dir)
    text = templates.plan(
        objective=objective,
        acceptance=list(acceptance) or ["Every required verification command passes on the committed tree."],
        scope=scope or "Only the paths in the Write Boundary.",
        boundary=[b for b in boundary if b != "None"],
        commands=[parse_verify(v, timeout) for v in verify],
        kind=kind,
        execution_mode=mode,
        risks=risks,
    )
    rel = f"{snap.artifacts_dir}/plans/{plan_id}/plan.md"
    art, found = parse_artifact(rel, text.encode(), artifacts_dir=snap.artifacts_dir)
    if art is None:
        raise _bad_options(found, "plan")
    fsutil.write_atomic(root / rel, text.encode())
    # This branch's local pick, for when it has more than one plan open (never committed).
    branch = branches.select(root, plan_id) if git.head(root) is not None else None
    picked = (f"picked for branch `{branch}` (harness-gate plan use)",) if branch else ()
    return Report(
        "plan new",
        data={"plan": plan_id, "path": rel, "sha256": art.sha256},
        lines=(
            f"wrote {rel} (sha256 {art.sha256})",
            *picked,
            "next: review the plan, then `harness-gate approve`",
        ),
    )


def plan_amend(
    cwd: Path,
    plan_id: str | None,
    *,
    objective: str | None,
    add_boundary: Sequence[str],
    remove_boundary: Sequence[str],
    add_verify: Sequence[str],
    remove_verify: Sequence[str],
    timeout: int,
    why: str | None,
) -> Report:
    """Write the next Plan Amendment: the plan's effective policy with these changes, its
    deltas marked, bound to the plan and the amendment in force, ready for `approve`."""
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("plan amend")
    folder, life = verification.plan_for(snap, plan_id)
    plan_md = f"{folder.path}/plan.md"
    if life.state in lifecycle.ENDED:
        raise Refused("HG411", plan_md, f"plan `{folder.plan_id}` is {life.state.value}: start a new plan instead")
    if life.state is lifecycle.State.AWAITING_AMENDMENT:
        raise Refused(
            "HG407", plan_md, "an amendment is waiting for its approval", "Approve it first: harness-gate approve"
        )
    if life.policy is None or life.plan_sha256 is None:
        raise Refused("HG201", plan_md, f"plan `{folder.plan_id}` does not parse")
    policy = life.policy
    source = next((e.artifact for e in folder.entries if e.path == policy.source), None) or folder.plan
    assert source is not None  # noqa: S101  (a parsed plan: plan_for checked it)
    _check_patterns("--add-boundary", add_boundary, snap.artifacts_dir)
    boundary = [p for p in policy.boundary if p not in remove_boundary]
    unknown = [p for p in remove_boundary if p not in policy.boundary]
    if unknown:
        raise usage(
            f"--remove-boundary {unknown[0]!r} is not in the boundary ({', '.join(policy.boundary) or 'None'})",
            "Name a pattern exactly as the boundary lists it.",
        )
    boundary += [p for p in dict.fromkeys(add_boundary) if p not in boundary]
    current = list(policy.verification["required_commands"])
    ids = {c["id"] for c in current}
    gone = [i for i in remove_verify if i not in ids]
    if gone:
        raise usage(f"--remove-verify {gone[0]!r} is not a required command ({', '.join(sorted(ids))})")
    commands = [c for c in current if c["id"] not in remove_verify]
    for spec in add_verify:
        added = parse_verify(spec, timeout)
        if added["id"] in {c["id"] for c in commands}:
            raise usage(f"--add-verify {spec!r}: `{added['id']}` is already required", "Remove it first to change it.")
        commands.append(added)
    new_objective = objective if objective is not None else source.value("Objective")

    def delta(changed: bool, summary: str) -> dict[str, Any]:
        return {"material": changed, "summary": summary if changed else "Unchanged."}

    bounds = [f"adds {', '.join(add_boundary)}" if add_boundary else "", f"removes {', '.join(remove_boundary)}"
              if remove_boundary else ""]  # fmt: skip
    checks = [f"adds {', '.join(a.partition('=')[0] for a in add_verify)}" if add_verify else "",
              f"removes {', '.join(remove_verify)}" if remove_verify else ""]  # fmt: skip
    deltas = {
        # The old objective in the summary: approve shows the deltas, so a human sees both.
        "objective": delta(
            new_objective != source.value("Objective"),
            f"{why + ' ' if why else ''}(was: {source.value('Objective')})",
        ),
        "acceptance_criteria": delta(False, ""),
        "scope": delta(False, ""),
        "write_boundary": delta(boundary != list(policy.boundary), "; ".join(b for b in bounds if b)),
        "verification": delta(commands != current, "; ".join(c for c in checks if c)),
        "risk": delta(False, ""),
    }
    if not any(d["material"] for d in deltas.values()):
        raise usage(
            "nothing to amend", "Give --objective, --add-boundary, --remove-boundary, --add-verify or --remove-verify."
        )
    text = templates.amendment(
        plan_sha256=life.plan_sha256,
        amendment_sha256=life.amendment_sha256,
        deltas=deltas,
        objective=new_objective,
        acceptance=[
            line.removeprefix("- ") for line in source.value("Acceptance Criteria").splitlines() if line.strip()
        ],
        scope=source.value("Scope"),
        boundary=boundary,
        verification={"kind": policy.verification["kind"], "required_commands": commands},
        unmodeled=policy.unmodeled_commands,
        risks=_section_markdown(snap.files.get(source.path, b""), "Risks") or source.value("Risks"),
    )
    rel = f"{folder.path}/{len(folder.entries) + 1:03d}-amendment.md"
    art, problems = parse_artifact(rel, text.encode(), artifacts_dir=snap.artifacts_dir)
    if art is None:
        raise _bad_options(problems, "amendment")
    fsutil.write_atomic(root / rel, text.encode())
    changed = [f"  {name}: {d['summary']}" for name, d in deltas.items() if d["material"]]
    return Report("plan amend", data={"plan": folder.plan_id, "path": rel, "sha256": art.sha256}, lines=(
        f"wrote {rel} (sha256 {art.sha256})", *changed,
        "next: review it, then `harness-gate approve` (the plan keeps its policy until then)",
    ))  # fmt: skip


def _section_markdown(data: bytes, title: str) -> str | None:
    """A section's Markdown as written (its lists keep their markers), or None."""
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[str] | None = None
    fence = False
    for line in lines:
        if line.startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("## "):
            if out is not None:
                break
            if line[3:].strip() == title:
                out = []
                continue
        if out is not None:
            out.append(line)
    text = "\n".join(out).strip() if out is not None else ""
    return text or None


def plan_use(cwd: Path, plan_id: str) -> Report:
    """Pick the plan this branch's local commands and hook use when it has several open."""
    root = git.toplevel(cwd)
    if not plans.PLAN_ID.match(plan_id):
        raise usage(f"plan id {plan_id!r} is invalid", "Plan ids match [a-z0-9][a-z0-9._-]{0,63}.")
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("plan use")
    if plan_id not in plans.plan_ids(snap):
        here = ", ".join(plans.plan_ids(snap)) or "none yet (harness-gate plan new)"
        raise usage(f"there is no plan `{plan_id}` in {snap.artifacts_dir}/plans/", f"Plans here: {here}.")
    branch = branches.select(root, plan_id)
    if branch is None:
        raise usage("HEAD is detached: a pick is kept per branch", "Check out a branch first.")
    return Report("plan use", data={"plan": plan_id, "branch": branch}, lines=(
        f"branch `{branch}` uses plan `{plan_id}` (kept in .git/config as branch.{branch}.{branches.SELECTION_KEY})",
    ))  # fmt: skip


# -- approve -------------------------------------------------------------------------


def approve(cwd: Path, plan_id: str | None, artifact: str | None, stdin: BinaryIO, out: TextIO, *, tty: bool) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("approve")
    plan_id = verification.plan_id_for(snap, plan_id)
    folder = plans.load(snap, plan_id)
    target = _approval_target(folder, artifact, cwd, root)
    path = f"{folder.path}/{target}"
    if path not in snap.files:
        raise usage(f"{path} does not exist")
    art, found = parse_artifact(
        path, snap.files[path], artifacts_dir=snap.artifacts_dir, max_bytes=snap.config.max_artifact_bytes
    )
    if art is None:
        return Report("approve", tuple(found), lines=("not approvable: fix the artifact first",))
    if art.kind is REPAIR_PLAN:
        return Report(
            "approve",
            (
                finding(
                    "HG208",
                    path,
                    "a Repair Plan is strict/manual compatibility only: approving it grants and records nothing",
                ),
            ),
        )
    gate = art.kind.gate_name
    if not gate:
        return Report("approve", (finding("HG208", path, f"a `# {art.kind.title}` takes no approval"),))
    log_problems = [f for f in folder.findings if f.path.endswith("/approvals.jsonl") and f.blocks]
    if log_problems:
        return Report("approve", tuple(log_problems), lines=("approvals.jsonl is invalid; nothing appended",))
    if approvals_mod.status(folder.approvals, gate, target, art.sha256) is approvals_mod.Status.APPROVED:
        return Report("approve", lines=(f"{path} is already approved at sha256 {art.sha256}",))
    # An artifact the lifecycle already rejects (stale binding, no material delta, out
    # of order) is not put before the approver: a `y` to it would grant nothing.
    life = lifecycle.replay(folder)
    # Stale, rolled back or awaiting approval: exactly what a new `y` is for.
    refused = [
        f for f in (*folder.findings, *life.findings) if f.path == path and f.code not in ("HG203", "HG216", "HG407")
    ]
    if refused:
        return Report("approve", tuple(refused), lines=("not approvable: fix the artifact first",))
    approver = git.ident(root)
    if not approvals_mod.valid_approver(approver):
        raise HarnessGateError(
            "HG904",
            f"the git identity {approver!r} holds characters an approval record cannot carry",
            "Set a plain `git config user.name` and `user.email`.",
        )
    out.write("".join(f"{line}\n" for line in _what_is_approved(art)))
    out.write(f"artifact: {path}\nsha256:   {art.sha256}\napprover: {approver}\n{art.kind.gate} ")
    out.flush()
    if tty:
        raw = stdin.readline(approvals_mod.MAX_ANSWER_BYTES)
        raw += _pending(stdin)  # a pasted second line is part of the answer, and refused
    else:
        raw = stdin.read(approvals_mod.MAX_ANSWER_BYTES + 1)
        out.write("\n")  # the piped answer is not echoed; end the prompt line
    if not approvals_mod.answer_approves(raw):
        shown = raw.decode("utf-8", "backslashreplace")[: approvals_mod.MAX_ANSWER_BYTES]
        return Report(
            "approve",
            (
                finding(
                    "HG208",
                    path,
                    f"answer {shown!r} is not exactly `y`; nothing was written",
                ),
            ),
        )
    head = git.head(root)
    if head is not None and git.is_shallow(root):
        # A shallow clone's cut looks like a root commit: the record would name a commit
        # that is no root of the real history, and grant nothing anywhere else.
        raise HarnessGateError("HG905", "cannot approve in a shallow clone: its root commit is not the repository's")
    # The record binds the repository by its root commit (None before the first commit).
    repository = min(git.root_commits(root, head)) if head else None
    seq = approvals_mod.next_seq(folder.approvals)
    try:
        line = approvals_mod.record(gate, target, art.sha256, approver, plan=plan_id, seq=seq, repository=repository)
    except ValueError as exc:  # the sequence is exhausted (a forged record took the last number)
        where = f"{folder.path}/approvals.jsonl"
        return Report("approve", (finding("HG215", where, f"cannot number a record: {exc}"),))
    log = root / folder.path / "approvals.jsonl"
    try:
        fsutil.append_line_atomic(log, line.encode("utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessGateError("HG903", f"cannot append to {log}: {exc}") from None
    return Report(
        "approve",
        data={"artifact": path, "sha256": art.sha256, "gate": gate},
        lines=(
            f"Approval activated: {gate} {path} sha256 {art.sha256}",
            f"recorded in {folder.path}/approvals.jsonl; commit it with the artifact",
        ),
    )


def _what_is_approved(art: Artifact) -> list[str]:
    """What a `y` approves, said before the hash: a human approves an objective, a boundary
    and commands (or an amendment's changes, a resume's rounds), not a hash."""

    def commands(strategy: dict[str, Any]) -> list[str]:
        return [f"  {c['id']}: {c['command']}  (timeout {c['timeout_seconds']}s{', shell' if c.get('shell') else ''})"
                for c in strategy["required_commands"]]  # fmt: skip

    def patterns(items: Sequence[str]) -> list[str]:
        return [f"  {p}" for p in items] or ["  None (no path outside the artifacts root may change)"]

    title = art.kind.title
    if title == "Plan":
        return [
            f"objective: {art.value('Objective')}",
            "write boundary:", *patterns(art.value("Write Boundary")),
            "verification commands:", *commands(art.value("Verification Strategy")),
            *(["commands whose writes cannot be modeled:", *(f"  {c}" for c in art.value("Unmodeled Commands"))]
              if art.value("Unmodeled Commands") else []),
            "",
        ]  # fmt: skip
    if title == "Plan Amendment":
        changed = [f"  {name}: {d['summary']}" for name, d in art.value("Deltas").items() if d["material"]]
        return [
            "changes (material):", *changed,
            f"objective: {art.value('Objective')}",
            "write boundary (complete, as amended):", *patterns(art.value("Write Boundary")),
            "verification commands (as amended):", *commands(art.value("Verification Strategy")),
            "",
        ]  # fmt: skip
    if title == "Repair Resume":
        return [f"additional repair rounds: {art.value('Additional Budget')['rounds']}", ""]
    return []


def _pending(stdin: BinaryIO) -> bytes:
    """Whatever a terminal already holds after the first line (a paste), without waiting."""
    import select  # noqa: PLC0415

    try:
        fd = stdin.fileno()
        if select.select([fd], [], [], 0.2)[0]:
            return os.read(fd, 4096) or b""
    except (OSError, ValueError):
        return b""
    return b""


def _approval_target(folder: plans.PlanFolder, artifact: str | None, cwd: Path, root: Path) -> str:
    if artifact is not None:
        name = artifact
        candidate = (cwd / artifact).resolve()
        if candidate.exists():
            try:
                rel = candidate.relative_to(root.resolve()).as_posix()
            except ValueError:
                raise usage(f"{artifact} is outside the repository") from None
            if rel.rsplit("/", 1)[0] != folder.path:
                raise usage(f"{artifact} is not in {folder.path}/", "Use --plan to pick another plan.")
            name = rel.rsplit("/", 1)[1]
        return name
    plan = folder.plan
    if (
        plan is None
        or approvals_mod.status(folder.approvals, "plan", "plan.md", plan.sha256) is not approvals_mod.Status.APPROVED
    ):
        return "plan.md"
    for entry in reversed(folder.entries):
        gate = BY_SLUG[entry.slug].gate_name
        if gate:
            sha = entry.artifact.sha256 if entry.artifact else ""
            if approvals_mod.status(folder.approvals, gate, entry.name, sha) is not approvals_mod.Status.APPROVED:
                return entry.name
            break
    return "plan.md"


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
