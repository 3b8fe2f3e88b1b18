"""`harness-gate formats list|status`: the files of the other harness formats (docs/formats.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from harness_gate import artifacts_tree, formats, fsutil, git
from harness_gate.config import Config
from harness_gate.errors import usage
from harness_gate.findings import Finding
from harness_gate.report import Report


def _chosen(root: Path, cwd: Path, cfg: Config, names: Sequence[str]) -> list[tuple[str, str]]:
    """(format, path) for the named files (all format files in the work tree if none)."""
    if not names:
        return formats.worktree_files(root, cfg)
    match = formats.matcher(cfg)
    out = []
    for name in names:
        rel = fsutil.repository_path(root, cwd, name)
        fmt = match.which(os.fsencode(rel))
        if fmt is None:
            raise usage(f"{rel} is not a file of any enabled format", "See docs/formats.md for the paths each finds.")
        out.append((fmt, rel))
    return out


def list_files(cwd: Path) -> Report:
    root = git.toplevel(cwd)
    cfg = artifacts_tree.worktree_config(root)
    chosen = formats.worktree_files(root, cfg)
    lines = [f"{n:9} {p}" for n, p in chosen] or ["no files of the other harness formats"]
    return Report("formats list", data={"files": [{"format": n, "path": p} for n, p in chosen]}, lines=tuple(lines))


def status(cwd: Path, names: Sequence[str]) -> Report:
    """Validity, and the counts a format defines (a task list's counts by status), per file."""
    root = git.toplevel(cwd)
    cfg = artifacts_tree.worktree_config(root)
    chosen = _chosen(root, cwd, cfg, names)
    files = formats.Files(root, None, worktree=True)
    ctx = formats.Context(cfg, files)
    found: list[Finding] = []
    lines: list[str] = []
    rows = []
    for name, path in chosen:
        fmt = formats.load(name)
        data = files.read(path)
        problems = formats.lint_file(name, path, data, ctx)
        found.extend(problems)
        extra = fmt.status(path, data, ctx) if fmt.status is not None and data is not None and not problems else []
        lines.append(f"{path} ({fmt.title}): {'invalid' if problems else 'valid'}")
        lines.extend(f"  {line}" for line in extra)
        rows.append({"format": name, "path": path, "valid": not problems, "status": extra})
    return Report("formats status", tuple(found), {"files": rows}, lines=tuple(lines))
