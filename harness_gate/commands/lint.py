"""`harness-gate lint`: validate plans, records and their lifecycle, and the other formats' files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from harness_gate import artifacts_root, artifacts_tree, cache, formats, git, lifecycle, plans
from harness_gate import report as report_mod
from harness_gate.errors import usage
from harness_gate.findings import Finding
from harness_gate.report import Report


def lint(cwd: Path, files: Sequence[str], *, artifacts_only: bool = False) -> Report:
    """Lint everything under the artifacts root, or what FILES (files or folders) name.

    A file inside a plan folder lints that whole folder (its lifecycle needs the
    context) plus the layout rules for the file itself; a file outside the artifacts
    root is parsed on its own. `artifacts_only` (the lint hook, which pre-commit hands
    every staged file): only the FILES under the configured artifacts root, and none
    given or kept lints nothing, so the hook needs no file pattern of its own.
    """
    location = git.locate(cwd)
    # The parse cache the check hook fills: at a commit, lint runs after it on the same
    # bytes and reads the clean parses back instead of importing the parsers again.
    cache.configure(location.cache_dir)
    try:
        return _lint(cwd, location.toplevel, files, artifacts_only=artifacts_only)
    finally:
        cache.configure(None)


def _under(cwd: Path, root: Path, name: str, prefix: str) -> bool:
    path = Path(os.path.normpath(cwd / name))
    try:
        rel = path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return False
    return (rel + "/").startswith(prefix)


def _lint(cwd: Path, root: Path, files: Sequence[str], *, artifacts_only: bool = False) -> Report:
    snap = artifacts_tree.from_worktree(root)
    if artifacts_only:
        if not snap.active:
            return report_mod.inactive("lint")
        files = [name for name in files if _under(cwd, root, name, artifacts_root.prefix(snap.artifacts_dir))]
        if not files:
            return Report("lint")
    if not files:
        return Report("lint", tuple(_lint_all(snap))) if snap.active else report_mod.inactive("lint")
    found: list[Finding] = []
    folders: set[str] = set()
    scopes: set[str] = set()  # paths and folder prefixes whose layout findings apply
    prefix = artifacts_root.prefix(snap.artifacts_dir)
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
                found.append(plans.missing_file(rel))
                continue
            parts = rel[len(prefix) :].split("/")
            if parts == [artifacts_root.PLANS]:
                folders.update(i for i in plans.plan_ids(snap) if plans.PLAN_ID.match(i))
                scopes.add(rel + "/")
                continue
            if parts[0] == artifacts_root.PLANS and plans.PLAN_ID.match(parts[1]):
                folders.add(parts[1])
            scopes.add(rel + "/" if path.is_dir() else rel)
            continue
        found.extend(_outside_root(root, snap, name, path, rel))
    layout = plans.root_findings(snap)
    found.extend(f for f in layout if any(f.path == s or (s.endswith("/") and f.path.startswith(s)) for s in scopes))
    for plan_id in sorted(folders):
        found.extend(lifecycle.folder_findings(snap, plan_id))
    return Report("lint", tuple(found))


def _outside_root(
    root: Path, snap: artifacts_tree.ArtifactsTree, name: str, path: Path, rel: str | None
) -> list[Finding]:
    """A file named outside the artifacts root: another harness format's, or an artifact
    named by its own path (`rel`: its path in the repository, None outside it)."""
    if path.is_dir():
        raise usage(f"{name} is a directory outside the artifacts root `{artifacts_root.prefix(snap.artifacts_dir)}`")
    kind = formats.format_of(snap.config, rel) if rel is not None else None
    if kind is not None and rel is not None:  # a file of another harness format (docs/formats.md)
        return list(formats.lint_worktree(root, snap.config, [(kind, rel)]))
    return list(plans.file_findings(name, path, snap.config))


def _lint_all(snap: artifacts_tree.ArtifactsTree) -> list[Finding]:
    found = plans.root_findings(snap)
    for plan_id in plans.plan_ids(snap):
        found.extend(lifecycle.folder_findings(snap, plan_id))
    files = formats.Files(snap.root, None, worktree=True)  # listed once: for the choice and the cross-file rules
    found.extend(formats.lint_files(files, snap.config, formats.matched(files, formats.matcher(snap.config))))
    return found
