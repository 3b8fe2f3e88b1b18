"""`explain PATH`: whether a change of one path would be allowed, and by which rule or
pattern, told from the same tables the rules judge by."""

from __future__ import annotations

from harness_gate import artifacts_root, lifecycle, plans
from harness_gate import boundary as boundary_mod
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.config import Config
from harness_gate.rules.artifacts import APPEND_ONLY, amendable, was_approved
from harness_gate.rules.protected_paths import CONTROL, case_variant, protected
from harness_gate.rules.transition import signers_path


def _explain_artifact(rel: str, cfg: Config, trusted: ArtifactsTree) -> tuple[str, str]:
    """The artifact rules, as the gate applies them to a change of `rel`."""
    parts = rel[len(cfg.artifacts_dir) + 1 :].split("/")
    committed = rel in trusted.files
    if len(parts) == 3 and parts[0] == artifacts_root.PLANS and committed:
        name = parts[2]
        if name in APPEND_ONLY:
            return "allowed", "an append-only log: lines may be added, never changed or removed (HG211)"
        if was_approved(trusted, parts[1], name, trusted.files[rel]):
            return "blocked", "HG210: an approved artifact never changes; write a Plan Amendment"
        if plans.NUMBERED.match(name) and not amendable(name):
            return "blocked", "HG212: a committed lifecycle record never changes"
    return "allowed", "inside the artifacts root: no plan needed, but it must be a valid artifact"


def explain(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    rel: str,
    cfg: Config,
    allowed: boundary_mod.Boundary | None,
    exact: frozenset[str],
    life: lifecycle.Lifecycle | None,
    *,
    trusted: ArtifactsTree,
) -> tuple[str, str]:
    """Whether a change of `rel` is allowed or blocked, and by which rule or pattern (`explain`)."""
    raw = rel.encode("utf-8", "surrogateescape")
    if CONTROL.search(raw):
        return "blocked", "HG103: control characters are never allowed"
    variant = case_variant(rel, cfg.source, cfg.artifacts_dir)
    if variant:
        return "blocked", f"HG106: a case variant of the protected `{variant}`"
    if rel.startswith(artifacts_root.prefix(cfg.artifacts_dir)) and raw != signers_path(cfg.artifacts_dir):
        return _explain_artifact(rel, cfg, trusted)
    if life is None or allowed is None or not life.grants_writes:
        state = life.state.value if life else "no open plan"
        return "blocked", f"no write authority ({state})"
    return _by_boundary(rel, raw, cfg, allowed, exact)


def _by_boundary(
    rel: str, raw: bytes, cfg: Config, allowed: boundary_mod.Boundary, exact: frozenset[str]
) -> tuple[str, str]:
    """A write under an open plan: what its boundary says of `rel` (`raw`, as bytes)."""
    why = protected(rel, cfg.source, cfg.artifacts_dir)
    if why is not None:
        if rel in exact:
            return "allowed", f"protected ({why}), listed exactly in the boundary"
        return "blocked", f"HG102: protected ({why}); only an exact, wildcard-free pattern allows it"
    pattern = allowed.which(raw)
    if pattern is None:
        return "blocked", "HG101: outside the write boundary"
    return "allowed", f"by pattern `{pattern}`"
