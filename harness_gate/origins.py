"""Whose plan is it: where each plan folder of a state came from, by the commit graph alone.

Many plans are open at once on many branches, and no shared file says which one governs.
A plan belongs to the line of commits that started it: the first-parent line from a commit
back to where it left the base branch. Along that line a plan folder can appear three ways:

- it was already there where the line left the base (or came in by merging the base
  branch again): the base's plan;
- a commit of the line added it: the line's **own** plan;
- it came in by merging some other branch: a **foreign** plan, which never authorises the
  line's commits ("a commit is never authorised by a plan another branch started").

The answer depends only on commits, so the author's clone and a fresh CI clone agree. The
local selection (`harness-gate plan use ID`, kept in `.git/config` per branch) only narrows
which of several own plans the local hook judges with; it never widens anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate import artifacts_root, git
from harness_gate.config import Config

# The per-branch local selection: `git config branch.<name>.harnessGatePlan ID`.
SELECTION_KEY = "harnessGatePlan"


@dataclass(frozen=True)
class Origins:
    """Where the plans of one state (a commit, the index or the work tree) came from.
    Plans in the state that are neither own nor foreign are the base's."""

    own: frozenset[str] = frozenset()  # started on this state's line since it left the base
    foreign: frozenset[str] = frozenset()  # brought in by merging another branch
    added: frozenset[str] = frozenset()  # started by this very state (in none of its parents)


BASE_ONLY = Origins()

PlansOf = Callable[[str], frozenset[str]]


def step(parents: Sequence[str], mine: frozenset[str], known: Mapping[str, Origins], plans_of: PlansOf) -> Origins:
    """The origins of a state with these parents and these plans, from its parents' origins
    (`known` holds those of the branch's own commits; any other parent is the base's)."""
    first = parents[0] if parents else None
    line = known.get(first) if first is not None else None
    own = set(line.own) if line is not None else set()
    foreign = set(line.foreign) if line is not None else set()
    first_plans = plans_of(first) if first is not None else frozenset()
    before = set(first_plans)
    for parent in parents[1:]:
        theirs = plans_of(parent)
        before |= theirs
        other = known.get(parent)
        if other is not None:
            # Another line of the branch (not the base): what was its own, or foreign to
            # it, is foreign here, unless this line already had it.
            foreign |= (other.own | other.foreign) - first_plans
    added = mine - before
    own = (own | added) & mine
    return Origins(frozenset(own), frozenset((foreign & mine) - own), frozenset(added))


def walk(listing: Sequence[git.Commit], plans_of: PlansOf) -> dict[str, Origins]:
    """The origins of every commit of a listing (parents first, as `git.commits` lists
    them); parents outside the listing are the base's."""
    known: dict[str, Origins] = {}
    for commit in listing:
        known[commit.oid] = step(commit.parents, plans_of(commit.oid), known, plans_of)
    return known


def locally(
    root: Path, cfg: Config, parents: Sequence[str], mine: frozenset[str], *, added: frozenset[str] | None = None
) -> Origins:
    """The origins of the index or the work tree, whose parents are HEAD (and a merge's
    other heads), relative to the branch the work goes into (`base_branch`, else the
    remote's default branch, else main or master). `added`, when the caller knows it from
    its diff against HEAD alone, is what this state adds.

    Only the artifacts root of the branch's own commits is listed (the newest 2000 at most:
    older ones count as the base's), and no blob is read; on the base branch itself (nothing
    of its own yet) not even that. The local view only: CI names its base."""
    if not parents:
        return Origins(own=mine, added=mine)  # a first commit: everything in it is its own
    if cfg.base_branch:
        git.configured_base(root, cfg.base_branch)  # a name that selects nothing is an error, said plainly
    # A shallow clone's cut commits (a CI job running the hooks, say) stand for the base:
    # what lies behind them is not here to walk.
    cut = sorted(git.shallow_commits(root))
    listing = git.commits(
        root,
        parents,
        cut,
        not_refs=git.base_refs(cfg.base_branch),
        paths=[artifacts_root.prefix(cfg.artifacts_dir)],
        limit=git.BRANCH_COMMITS_LIMIT,
    )
    if not listing and added is not None and len(parents) == 1:
        return Origins(own=added & mine, added=added)  # HEAD is the base's: only what this state adds is its own
    from harness_gate import history  # noqa: PLC0415  (only with commits of the branch's own)

    states = history.RangeStates(root, cfg, listing, extra=parents)
    return step(parents, mine, walk(listing, states.plan_ids), states.plan_ids)


def selected(root: Path) -> str | None:
    """The plan this branch's local selection names, if any."""
    branch = git.current_branch(root)
    return git.branch_setting(root, branch, SELECTION_KEY) if branch else None


def select(root: Path, plan_id: str) -> str | None:
    """Record `plan_id` as this branch's selection; the branch, or None when detached."""
    branch = git.current_branch(root)
    if branch is not None:
        git.set_branch_setting(root, branch, SELECTION_KEY, plan_id)
    return branch
