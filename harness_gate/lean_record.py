"""The record the staged check's lean path answers from (lean.py), written by the full check.

Written only after the full check passed an ordinary staged change with no finding at all,
and only when that verdict holds for every ordinary change inside the plan's prefix index
under the same key. Why it does: with the key fixed (lean.py's docstring), an ordinary
change (no path under the artifacts root, nothing protected or of a harness format, regular
files only, no merge) leaves the checked state's plans, configuration, candidates and the
`plan use` choice as they were, and the rules then judge each path alone: by its bytes
(control, non-ASCII), its modes, the words it holds, and the governing plan's boundary.
So the record is written when

* the check judged the index of a born HEAD with no merge, at pre-commit, with no `--plan`
  or `--config`, and found nothing;
* every staged change was ordinary, so the state it judged is the one an ordinary change
  sees;
* one plan allowed the change, and it is the first candidate (governance.candidates, as the
  write-authority rule asks it): the plan the full check tries first for the next change too;
* the plan grants writes, with no finding of its own, and pre-commit asks nothing of
  evidence, reviews, completion or approvers (those read the change's content);
* the key is the same before the check and after it.

The prefix index is the boundary's exact paths and `DIR/**` directories (boundary.py's
own sets, which `Boundary.matches` answers first): a path a wildcard allows is the full
check's to judge. tests/test_lean.py holds the lean path to the full check both ways.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from harness_gate import boundary, formats, fsutil, git, governance, lean, lifecycle, plans, rules
from harness_gate.config import Config

STAGE = "pre-commit"


def before() -> str | None:
    """The key at the check's start, to compare with the one at its end."""
    with contextlib.suppress(Exception):
        here = lean.locate()
        return here.key if here is not None else None
    return None


def write(started: str | None, transition: rules.Transition, used: set[str]) -> None:
    """Leave the record for the passed check of `transition` (the module's docstring says when).
    Never raises: without a record, the next commit is judged by the full check."""
    with contextlib.suppress(Exception):
        here = lean.locate()
        if here is None or started != here.key or here.head != transition.first_parent:
            return
        content = record(here.key, transition, used)
        if content is not None:
            fsutil.write_atomic(lean_path(here), content)


def lean_path(here: lean.Here) -> Path:
    return Path(here.cache) / lean.RECORD


def words(cfg: Config) -> tuple[bytes, ...] | None:
    """What makes a path uncommon, lower-cased: the protected names and the artifacts root
    (the rules' suspects), and the harness formats' literal pieces; None when a format has none
    (any path may be one of its files)."""
    names = (*rules.protected_names(cfg.source), cfg.artifacts_dir)
    found = [n.casefold().rstrip("/").encode("utf-8", "surrogateescape") for n in names]
    match = formats.matcher(cfg)
    if match.compiled:
        if match.pieces is None:
            return None
        found += [p.lower() for p in match.pieces]
    return tuple(dict.fromkeys(found))


def record(key: str, transition: rules.Transition, used: set[str]) -> bytes | None:  # noqa: PLR0911  (one return per case the record cannot answer, in the order they are judged)
    cfg, changes = transition.new.config, transition.changes
    if transition.merge or transition.rev is not None or not changes or len(used) != 1:
        return None
    if STAGE in (*cfg.evidence_stages, *cfg.review_stages, *cfg.completion_stages) or cfg.approvers:
        return None
    uncommon = words(cfg)
    if uncommon is None or not all(_ordinary(c, uncommon) for c in changes):
        return None
    (plan_id,) = used
    found = governance.candidates(transition.new, transition.origins, ending=frozenset())
    if len(found.ids) > 1:
        found = governance.narrow(found, transition.selected)
    if not found.ids or found.ids[0] != plan_id or plan_id in found.whole_life:
        return None
    folder = plans.load(transition.new, plan_id)
    life = lifecycle.replay(folder)
    if folder.plan is None or life.policy is None or folder.findings or life.findings or not life.grants_writes:
        return None
    literal, dirs = boundary.prefix_index(boundary.Boundary.compile(life.policy.boundary))
    sections = (sorted(literal), sorted(dirs), list(uncommon))
    if any(b"\n" in item or b"\0" in item for section in sections for item in section):
        return None
    if "\n" in plan_id:
        return None
    body = b"\n".join([lean.MAGIC, key.encode(), plan_id.encode(), *(b"\0".join(s) for s in sections)])
    return body + b"\n" + lean.digest(body)


def _ordinary(change: git.Change, uncommon: tuple[bytes, ...]) -> bool:
    """lean.py's test of one change, but for the boundary."""
    modes = {*change.old_modes, change.new_mode}
    path = change.path
    return (
        len(change.old_modes) == 1
        and modes <= lean.ORDINARY_MODES
        and change.status in ("A", "M", "D")
        and bool(path)
        and path.translate(None, lean.UNCOMMON_BYTES) == path
        and not any(word in path.lower() for word in uncommon)
    )
