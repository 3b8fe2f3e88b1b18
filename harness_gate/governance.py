"""Which plan governs a state: the candidates, in the order they are tried.

No committed pointer names "the" plan: the plans a state holds, where each came from
(`origins.Origins`) and their lifecycles decide, the same way in every clone.

- The open plans this branch started govern its work. When there are none, the open plans
  the base branch holds do (the solo flow: a plan committed and open on the default branch
  governs work there and on branches started from it).
- A plan another branch started, and a plan that has ended, govern nothing; so does a plan
  whose folder is gone.
- A commit that ends a plan which granted writes just before it (it adds the plan's
  Completion), or that holds a plan's whole life (a squash merge starts and ends it), is
  judged by that plan's final policy: what it held before the end is not in git any more (a
  squash), or is reviewed with it. A squash of several plans' whole lives allows each path
  one of them allows: each commit of the branch was judged by one of them.
- Of several candidates, a change is authorised when one of them allows all of it: plans
  are never combined into a wider boundary. The local selection (`plan use`) narrows the
  candidates to the one it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness_gate import artifacts_root, lifecycle, plans
from harness_gate.artifacts_tree import ArtifactsTree, plans_in
from harness_gate.errors import HarnessGateError, Refused, usage
from harness_gate.origins import Origins

if TYPE_CHECKING:
    from harness_gate.state_facts import RepoFacts

# Why no plan governs a change when the state holds no plan at all (ranges.py recognises it).
NO_PLAN_YET = "there is no plan yet"
_COMPLETION = re.compile(r"[0-9]{3}-completion\.md\Z")


@dataclass(frozen=True)
class Candidates:
    ids: tuple[str, ...]  # tried in this order: the first that allows the whole change authorises it
    whole_life: frozenset[str]  # ended plans started by this very state: judged by their final policy
    why: str  # how they were chosen, for people


def present(artifacts: ArtifactsTree) -> set[str]:
    return set(_folders(artifacts)[0])


def holds_completion(artifacts: ArtifactsTree, plan_id: str) -> bool:
    """Whether the plan folder holds a Completion: then the plan governs nothing, whether
    the Completion is valid (the plan ended) or not (its lifecycle has a blocking finding,
    reported where the folder changes and by `lint`). Deciding by the file name keeps a
    long-lived base branch, which keeps every plan it ever merged, from being replayed."""
    return plan_id in _folders(artifacts)[1]


def _folders(artifacts: ArtifactsTree) -> tuple[frozenset[str], frozenset[str]]:
    """The plans of a state and those holding a Completion, from one pass over its paths."""
    found: tuple[frozenset[str], frozenset[str]] | None = artifacts.memo.get("governance.folders")
    if found is None:
        prefix = artifacts_root.plans_prefix(artifacts.artifacts_dir)
        ended = set()
        for path in artifacts.files:
            if path.startswith(prefix):
                plan_id, _, name = path[len(prefix) :].partition("/")
                if _COMPLETION.match(name):
                    ended.add(plan_id)
        found = artifacts.memo["governance.folders"] = (
            frozenset(plans_in(artifacts.files, artifacts.artifacts_dir)),
            frozenset(ended),
        )
    return found


def candidates(artifacts: ArtifactsTree, origins: Origins, *, ending: frozenset[str] = frozenset()) -> Candidates:
    """`ending`: the plans whose Completion the judged change itself adds."""
    here = present(artifacts)
    own = sorted(origins.own & here)
    mine = [i for i in own if not holds_completion(artifacts, i)]
    lives = (origins.added | ending) - origins.foreign
    whole = [i for i in sorted(lives & here) if holds_completion(artifacts, i)]
    if mine or whole:
        ids, why = [*mine, *whole], "started on this branch"
    else:
        base = sorted(here - origins.own - origins.foreign)
        ids, why = [i for i in base if not holds_completion(artifacts, i)], "open on the base branch"
    return Candidates(tuple(ids), frozenset(whole), why)


def narrow(found: Candidates, selected: str | None) -> Candidates:
    """The candidates the local selection leaves: the one it names, when it is one of them."""
    if selected is None or selected not in found.ids:
        return found
    return Candidates((selected,), found.whole_life, "selected for this branch (harness-gate plan use)")


def no_candidate(artifacts: ArtifactsTree, origins: Origins) -> tuple[str, str, str]:
    """(rule code, path, reason) for a state where no plan governs."""
    here = present(artifacts)
    plans_dir = artifacts_root.plans_dir(artifacts.artifacts_dir)
    own = sorted(origins.own & here)
    foreign = sorted(origins.foreign & here)
    if foreign and not own:
        shown = ", ".join(f"`{i}`" for i in foreign[:3])
        return "HG201", plans_dir, f"no plan of this branch is open ({shown} came in by merging another branch)"
    ended = own or (sorted(here) if len(here) == 1 else [])
    if ended:
        last = ended[-1]
        life = lifecycle.replay(plans.load(artifacts, last))
        state = life.state.value if life.state in lifecycle.ENDED else "ended by a Completion"
        return (
            "HG209",
            artifacts_root.plan_file(artifacts.artifacts_dir, last),
            f"plan `{last}` is {state}: it grants no write authority",
        )
    if here:
        return "HG201", plans_dir, f"no plan is open ({len(here)} plans here, each ended by a Completion)"
    return "HG201", plans_dir, NO_PLAN_YET


def for_command(
    artifacts: ArtifactsTree, origins: Origins, *, plan_id: str | None, selected: str | None, open_only: bool = False
) -> str:
    """The plan an authoring command (status, approve, verify, review, complete) means:
    `--plan`, else this branch's selection, else the one open plan this branch (or, with
    none, the base) has, else the one plan this branch started (ended ones included, so an
    updated branch can verify and re-review a completed plan)."""
    here = present(artifacts)
    if plan_id is not None:
        return plan_id
    found = candidates(artifacts, origins).ids
    if not found and not open_only:
        found = tuple(sorted(origins.own & here))
    # The pick only narrows (docs/lifecycle.md): one naming a plan that is no candidate
    # while there are some (an ended plan, another branch's) is ignored. With none, it
    # still names a plan here (a completed one to verify again).
    if selected is not None and (selected in found or (not found and selected in here)):
        return selected
    if len(found) == 1:
        return found[0]
    if found:
        raise HarnessGateError(
            "HG222",
            f"more than one plan could be meant: {', '.join(found)}",
            "Name it with --plan ID, or pick it for this branch: `harness-gate plan use ID`.",
        )
    raise Refused(
        "HG201",
        artifacts_root.plans_dir(artifacts.artifacts_dir),
        "no plan of this branch is open" if here else NO_PLAN_YET,
        "Start one: `harness-gate plan new ID --objective ... --boundary ... --verify ID=COMMAND`.",
    )


def checked_id(plan_id: str | None) -> str | None:
    """A plan id as given (`--plan`, `plan new ID`), when it is one (a usage error, HG904,
    when it is not)."""
    if plan_id is not None and not plans.PLAN_ID.match(plan_id):
        raise usage(f"plan id {plan_id!r} is not valid", "Plan ids match [a-z0-9][a-z0-9._-]{0,63}.")
    return plan_id


def require_plan(artifacts: ArtifactsTree, plan_id: str, message: str) -> None:
    """A usage error (HG904, `message`) naming the plans there are, when `plan_id` is not one."""
    if plan_id not in plans.plan_ids(artifacts):
        here = ", ".join(plans.plan_ids(artifacts)) or "none yet (harness-gate plan new)"
        raise usage(message, f"Plans here: {here}.")


def plan_id_for(artifacts: ArtifactsTree, plan_id: str | None, facts: RepoFacts) -> str:
    """The plan a command on the work tree means (for_command): `--plan`, this
    branch's selection, or the one plan this branch has open (or started)."""
    if plan_id is not None:
        checked_id(plan_id)
        return plan_id
    origins = facts.worktree_origins(artifacts, frozenset(present(artifacts)))
    return for_command(artifacts, origins, plan_id=None, selected=facts.selected())


def plan_or_none(artifacts: ArtifactsTree, plan_id: str | None, facts: RepoFacts) -> str | HarnessGateError:
    """The plan a command that informs means (plan_id_for), or why there is none to name:
    no plan yet (HG201) or several open (HG222). Any other error still stops the command."""
    try:
        return plan_id_for(artifacts, plan_id, facts)
    except HarnessGateError as exc:
        if exc.code not in ("HG201", "HG222"):
            raise
        return exc


def plan_for(
    artifacts: ArtifactsTree, plan_id: str | None, facts: RepoFacts
) -> tuple[plans.PlanFolder, lifecycle.Lifecycle]:
    plan_id = plan_id_for(artifacts, plan_id, facts)
    folder = plans.load(artifacts, plan_id)
    life = lifecycle.replay(folder)
    if folder.plan is None or life.policy is None or life.plan_sha256 is None:
        problems = [*folder.findings, *life.findings]
        what = problems[0].message if problems else "it does not parse"
        raise Refused("HG201", artifacts_root.plan_md(folder.path), f"plan `{plan_id}` cannot be used: {what}")
    return folder, life
