"""Symlinks: a link is judged by where it really leads, through every other link of the
state. None may leave the repository; one a change adds or redirects may lead only where
the plan's boundary allows writes (HG104)."""

from __future__ import annotations

from collections.abc import Sequence

from harness_gate import boundary as boundary_mod
from harness_gate import links
from harness_gate.change import Change
from harness_gate.findings import Finding, finding
from harness_gate.rules.protected_paths import case_variant, protected
from harness_gate.rules.transition import SYMLINK, Transition, decode, root_prefix, show


def escaping_links(state: Transition) -> list[Finding]:
    """Resolve every symlink of the new state through the others: a link is judged by
    where it really leads (`up -> ..` then `esc -> up/..` leaves the repository)."""
    targets, ends = state.symlinks
    out = []
    for path in sorted(targets):
        end = ends[path]
        if isinstance(end, links.Stop):
            out.append(finding("HG104", show(path), links.stop_message(path, targets[path], end)))
    return out


def links_leaving(
    state: Transition, changes: Sequence[Change], plan_id: str, allowed: boundary_mod.Boundary, refused: set[str]
) -> list[Finding]:
    """The links this change adds or changes that lead out of the plan's boundary.

    A checkout turns a link into a door: what is written through `src/wf` lands where it
    leads, `.github/workflows/ci.yml`. A link the plan's boundary allows may lead only
    where the boundary allows writes. Old links that still lead where they led are not
    judged again (they were judged under the plan of their own change), nor links already
    refused by their own path, nor links that do not resolve (the escape rule reports
    those). An old link this change redirects (through a link it adds, changes or
    removes) is judged as if it were added here."""
    touched = {c.path for c in changes if SYMLINK in (c.new_mode, *c.old_modes)}
    if not touched:
        return []
    _, ends = state.symlinks
    mine = {c.path for c in changes if c.new_mode == SYMLINK} | set(state.moved_links)
    mine = {p for p in mine if p in ends and show(p) not in refused}
    out = []
    for path in sorted(mine):
        end = ends.get(path)
        if not isinstance(end, links.Ends):
            continue
        where = end.at.path()
        why = _lands_outside(state, where, allowed, plan_id)
        if why is not None:
            lands = f"`{show(where)}`" if where else "the repository root"
            out.append(finding("HG104", show(path), f"`{show(path)}` leads to {lands}: {why}"))
    return out


def _lands_outside(state: Transition, where: bytes, allowed: boundary_mod.Boundary, plan_id: str) -> str | None:  # noqa: PLR0911  (one return per case, in the order they are judged)
    """Why writes through a link to `where` would land outside the boundary, or None.
    A file must be allowed itself; a directory, every path below it."""
    cfg = state.new.config
    outside = f"outside the write boundary of `{plan_id}`"
    if not where:
        return f"every path of the repository, {outside}"
    text = decode(where)
    why = protected(text, cfg.source, cfg.artifacts_dir)
    if why is not None:
        # As for HG102: only the exact path allows it, and only as a file (what lies
        # below a protected directory needs its own exact names).
        if text in allowed.exact and not _is_directory(state, text):
            return None
        return f"protected ({why}); only an exact, wildcard-free pattern allows it"
    variant = case_variant(text, cfg.source, cfg.artifacts_dir)
    if variant is not None:
        return f"a case variant of the protected `{variant}`"
    if where.startswith(root_prefix(cfg.artifacts_dir)):
        return f"inside the artifacts root `{cfg.artifacts_dir}/`, which no write boundary opens"
    itself = allowed.matches(where)
    below = _covers_below(where, allowed.patterns)
    if itself == below:
        return None if itself else outside
    if _is_directory(state, text):
        return None if below else f"a directory the write boundary of `{plan_id}` allows only in part"
    return None if itself else outside


def _covers_below(path: bytes, patterns: Sequence[str]) -> bool:
    """Whether the boundary allows every path below `path`: a wildcard-free pattern
    naming it or a directory above it (git covers what is below a literal match), as
    `DIR`, `DIR/` or `DIR/**`."""
    for pattern in patterns:
        raw = pattern.encode("utf-8", "surrogateescape")
        base = raw[:-3] if raw.endswith(b"/**") else raw.rstrip(b"/")
        if base and not boundary_mod.has_wildcard(decode(base)) and (path == base or path.startswith(base + b"/")):
            return True
    return False


def _is_directory(state: Transition, path: str) -> bool:
    """Whether the new state holds files below `path` (asked only when it decides)."""
    return state.facts.is_directory(path)
