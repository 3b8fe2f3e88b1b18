"""Findings: every per-file problem is a value, never an exception.

A finding carries a stable rule code (its family: docs/rules.md), the repository
relative path, an optional 1-based line, a one-line message and a fix hint; in a
commit range, also the commit whose own change it is about.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(str, enum.Enum):
    ERROR = "error"  # blocks: exit 1
    WARNING = "warning"
    NOTE = "note"  # informs; no command raises one yet, but every reporter maps it


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    hint: str


@dataclass(frozen=True, order=True)
class Finding:
    code: str
    path: str
    line: int | None
    message: str
    hint: str
    severity: Severity = Severity.ERROR
    # The commit of a range whose own change the finding is about; None for the index and
    # for what the head state must hold (evidence, review). The message names it too, for
    # a reader; this field is for tools (its full id, never abbreviated).
    commit: str | None = None

    @property
    def blocks(self) -> bool:
        return self.severity is Severity.ERROR


# The families' names: docs/rules.md's headings and SARIF's rule help.
FAMILIES = {
    "HG1": "Boundary (the gate, `check`)",
    "HG2": "Plans and approvals",
    "HG3": "Evidence",
    "HG4": "Review and lifecycle",
    "HG5": "Artifact syntax",
    "HG6": "Other harness formats",
    "HG9": "Environment and internal",
}


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {r.code: r for r in rules}


# The catalogue is the single place where codes are defined; docs/rules.md is
# checked against it by the test-suite so the two cannot drift apart.
RULES: dict[str, Rule] = _rules(
    # HG1xx: the write boundary
    Rule(
        "HG101",
        "path outside the write boundary",
        "Keep the change inside the boundary, or amend the plan: harness-gate plan amend --add-boundary PATTERN.",
    ),
    Rule(
        "HG102",
        "protected path not listed exactly",
        "List this exact path (no wildcard) in the Write Boundary, or leave it alone.",
    ),
    Rule("HG103", "control characters in a path", "Rename the file: control characters are never allowed."),
    Rule(
        "HG104",
        "symbolic link escapes the repository or the boundary",
        "A symlink may not be absolute, hold control characters, leave the repository, point into .git, "
        "or (when added or changed) lead where the plan's boundary does not allow writes.",
    ),
    Rule("HG105", "new submodule not named in the boundary", "List the submodule's exact path in the Write Boundary."),
    Rule(
        "HG106",
        "case variant of a protected path",
        "Use the path's exact spelling: case variants collide on case-insensitive file systems.",
    ),
    # HG2xx: plans and approvals
    Rule(
        "HG201",
        "no plan governs the change",
        "Start a plan on this branch (`harness-gate plan new ID ...`), approve it, and commit it (docs/lifecycle.md).",
    ),
    Rule("HG202", "plan not approved", "Run `harness-gate approve` and answer exactly `y`."),
    Rule("HG203", "approval is stale", "The artifact changed after approval; review it and approve again."),
    Rule(
        "HG204", "invalid approval record", "Approval records are written by `harness-gate approve`; do not edit them."
    ),
    Rule("HG205", "invalid write boundary pattern", "See docs/boundary.md for the pattern dialect."),
    Rule("HG206", "invalid plan id", "Plan ids match [a-z0-9][a-z0-9._-]{0,63}."),
    Rule("HG207", "invalid verification policy", "Each required command needs a unique id, a command and a timeout."),
    Rule("HG208", "approval refused", "Only the exact answer `y` approves."),
    Rule(
        "HG209",
        "plan grants no write authority",
        "A completed, cancelled or paused plan grants nothing: start a new plan or resume.",
    ),
    Rule(
        "HG210",
        "approved artifact modified",
        "Approved artifacts never change: write a Plan Amendment (or a new plan) instead.",
    ),
    Rule(
        "HG211",
        "append-only log rewritten",
        "approvals.jsonl and evidence.jsonl only grow: restore the removed or changed lines.",
    ),
    Rule(
        "HG212",
        "lifecycle record changed or deleted",
        "Committed reviews, repairs, pauses and completions are history: add a new artifact instead.",
    ),
    Rule(
        "HG213",
        "approval bound to another plan",
        "An approval names the plan it was given for; a record copied from another plan folder grants nothing.",
    ),
    Rule(
        "HG214",
        "approval bound to another repository",
        "An approval names the root commit of the history it was given in: approve again in this repository.",
    ),
    Rule(
        "HG215",
        "replayed approval",
        "Each approval of an artifact carries a higher sequence number than the last; run `harness-gate approve`.",
    ),
    Rule(
        "HG216",
        "approval rolled back",
        "These bytes were approved once, but a newer approval replaced them: restore the newer version or re-approve.",
    ),
    Rule(
        "HG217",
        "approval not signed by an allowed signer",
        "Commit approvals with `git commit -S` and an SSH key the base's allowed_signers lists (docs/threat-model.md).",
    ),
    Rule(
        "HG218",
        "review not signed by an allowed signer",
        "Commit the review with `git commit -S` using an SSH key listed in the base's allowed_signers.",
    ),
    Rule(
        "HG219",
        "reviewer also signed the code",
        "The review must be signed by a key that signed none of the reviewed code commits.",
    ),
    Rule(
        "HG220",
        "signatures cannot be established",
        "Signed approvals need the base's allowed_signers file and the full history (fetch-depth: 0).",
    ),
    Rule(
        "HG221",
        "trust anchor changed without an allowed signature",
        "Commit changes to allowed_signers signed by a key the base's allowed_signers already lists.",
    ),
    Rule(
        "HG222",
        "more than one plan could be meant",
        "Name it with --plan ID, or pick it for this branch: `harness-gate plan use ID`.",
    ),
    Rule(
        "HG223",
        "a plan that authorised the change is gone",
        "Restore the plan folder: a plan that authorised code stays until it is completed or cancelled.",
    ),
    Rule(
        "HG224",
        "approvers' threshold not met",
        "The boundary reaches paths an `[[approvers]]` rule guards: each principal it names still needed runs "
        "`harness-gate approve` and commits it signed (`git commit -S`; docs/approvers.md).",
    ),
    Rule(
        "HG225",
        "the author cannot be known",
        "The rule does not count the plan's author: commit the plan (or amendment) signed by an allowed key, so its "
        "author is known (docs/approvers.md).",
    ),
    Rule(
        "HG226",
        "approvers' owners cannot be read",
        "The CODEOWNERS file an `[[approvers]]` rule names must be on the trusted side, in GitHub's syntax, with "
        "patterns the boundary dialect can say (docs/approvers.md).",
    ),
    # HG3xx: verification evidence
    Rule("HG301", "evidence missing", "Run `harness-gate verify` on the tree you commit, and commit evidence.jsonl."),
    Rule(
        "HG302",
        "evidence is for another tree",
        "The files changed after verification: run `harness-gate verify` on exactly the tree you commit (an untracked "
        "file it saw, HG310, is not in the commit: commit, remove or ignore it first) and commit its evidence.",
    ),
    Rule(
        "HG303", "evidence is for another plan", "The plan changed after verification: run `harness-gate verify` again."
    ),
    Rule("HG304", "evidence is for another command", "The required command changed: run `harness-gate verify` again."),
    Rule("HG305", "verification failed", "Fix the failure, then run `harness-gate verify` again."),
    Rule("HG306", "verification timed out", "Make the command faster or raise its timeout in an amendment."),
    Rule(
        "HG307", "invalid evidence record", "Evidence records are written by `harness-gate verify`; do not edit them."
    ),
    Rule(
        "HG308",
        "the index hides edits",
        "Clear assume-unchanged / skip-worktree (`git update-index --no-assume-unchanged --no-skip-worktree`).",
    ),
    Rule(
        "HG309",
        "a verify command changed the work tree",
        "A file the command writes and git should not track: ignore it, in `.git/info/exclude` (this clone, at once) "
        "or in `.gitignore` (every clone; a protected file the plan must list exactly), remove it, and verify again. "
        "`verify_outputs` in the configuration (protected too, docs/config.md) only leaves it out of the fingerprint: "
        "`git add -A` would still commit it. A tracked file the command changes: make the command leave it alone.",
    ),
    Rule(
        "HG310",
        "untracked files in the verified tree",
        "verify records the work tree with them, and a commit holds them only if you add them: commit them, remove "
        "them, ignore them (`.git/info/exclude` for this clone only), or name them in `verify_outputs`; then verify.",
    ),
    Rule(
        "HG311",
        "a repository without a commit in the work tree",
        "git cannot add a repository of its own that has no commit: make a commit in it, move it out of the work "
        "tree, or ignore it (`.git/info/exclude` for this clone only), then try again.",
    ),
    Rule(
        "HG320",
        "evidence is another plan's",
        "A record counts only in the log of the plan it names (a copy from another plan's log, even one whose "
        "plan.md has the same bytes, is not this plan's; a v1 record names no plan): run `harness-gate verify`.",
    ),
    Rule(
        "HG340",
        "a re-run command wrote the runner's files",
        "A `--reverify` command runs without the runner's file-command variables; one that writes those files "
        "anyway (found by their path) is the change's code reaching for later steps: the files are put back, "
        "and the change is blocked (docs/action.md).",
    ),
    # HG4xx: review and lifecycle
    Rule("HG401", "illegal lifecycle sequence", "See docs/lifecycle.md for the allowed order of artifacts."),
    Rule(
        "HG402",
        "repair budget exhausted",
        "Write the Pause Report (`harness-gate pause`), then a Repair Resume (`harness-gate resume`, `approve`).",
    ),
    Rule(
        "HG403",
        "repeated finding without pause",
        "A finding seen in two consecutive reviews requires a Pause Report: `harness-gate pause`.",
    ),
    Rule(
        "HG404",
        "no progress without pause",
        "Two repairs without progress require a Pause Report: `harness-gate pause`.",
    ),
    Rule(
        "HG405",
        "completion without a passing review",
        "Complete only after a PASS or PASS_WITH_NOTES review bound to the current plan.",
    ),
    Rule("HG406", "amendment without material delta", "Declare at least one material delta, or do not amend."),
    Rule("HG407", "unapproved artifact acted upon", "Approve the amendment or resume before later artifacts."),
    Rule(
        "HG408",
        "repair widens the write boundary",
        "A repair stays inside the effective write boundary; amend the plan instead.",
    ),
    Rule(
        "HG409",
        "repair weakens verification",
        "A repair keeps every required command unchanged; amend the plan instead.",
    ),
    Rule("HG410", "stale binding", "Regenerate the artifact against the current plan and amendment hashes."),
    Rule(
        "HG411",
        "artifact after the plan ended",
        "A completed or cancelled plan takes no further artifacts; start a new plan.",
    ),
    Rule("HG412", "bad artifact numbering", "Number artifacts 001, 002, ... without gaps, one kind per file name."),
    Rule(
        "HG413",
        "no fresh passing review",
        "Ask someone who did not write the change for a review: `harness-gate review new`, "
        "on exactly the tree you commit.",
    ),
    Rule(
        "HG414",
        "the review does not pass",
        "Repair the review's findings, `harness-gate verify`, then a new review: `harness-gate review new` (after "
        "BLOCKED: `harness-gate pause` first).",
    ),
    Rule(
        "HG419",
        "cancelled plan's code on the branch",
        "A cancelled plan's pull request lands its folder alone, as the record of the attempt: rebuild the branch "
        "from the base with that folder and force-push it, or close the pull request (docs/workflows.md, "
        '"Ending a plan without finishing it").',
    ),
    Rule(
        "HG415",
        "plan still open",
        "Finish it before it merges: `harness-gate review new`, then `harness-gate complete` (or "
        "`harness-gate complete --cancel`); `completion_stages` in the configuration (docs/config.md).",
    ),
    # HG5xx: artifact syntax
    Rule("HG501", "unknown artifact kind", "The first line must be one of the H1 headings in docs/artifacts.md."),
    Rule("HG502", "legacy artifact shape", "Rewrite the artifact in the current Markdown shape (docs/artifacts.md)."),
    Rule("HG503", "missing section", "Add the section with its exact heading, in order."),
    Rule("HG504", "unexpected section", "Remove it or turn it into content (H3 or lower)."),
    Rule("HG505", "sections out of order", "Put the sections in the order listed in docs/artifacts.md."),
    Rule("HG506", "more than one H1", "An artifact has exactly one H1, on its first line."),
    Rule("HG507", "invalid JSON block", "Fix the JSON syntax of the ```json block."),
    Rule("HG508", "duplicate JSON key", "Each key appears once in a JSON object."),
    Rule("HG509", "schema violation", "See the schema named in the message (harness_gate/schemas/)."),
    Rule("HG510", "bad encoding", "Artifacts are UTF-8 without BOM, with LF line ends and no NUL bytes."),
    Rule("HG511", "empty artifact", "Write the artifact from its template (docs/artifacts.md)."),
    Rule(
        "HG512",
        "file too large",
        "Artifacts are capped at `max_artifact_bytes` (1 MiB), logs at 256 MiB: start a new plan for more evidence.",
    ),
    Rule(
        "HG513",
        "approval gate line missing or altered",
        "The Approval section holds exactly the gate line of its kind.",
    ),
    Rule("HG514", "bad section content", "See docs/artifacts.md for what the section must hold."),
    Rule("HG515", "file name does not match the artifact kind", "Rename the file after its kind (docs/artifacts.md)."),
    Rule(
        "HG516",
        "unexpected file in the artifacts root",
        "Only the files listed in docs/artifacts.md live under the artifacts root.",
    ),
    # HG517-HG519: ref updates the server-side gate refuses (receive.py, docs/pre-receive.md)
    Rule(
        "HG517",
        "push rewrites the default branch",
        "Push a fast-forward of the default branch: merge or rebase onto it instead of rewriting its history.",
    ),
    Rule(
        "HG518",
        "ref update refused",
        "The `[pre_receive]` table of the default branch's configuration says which refs may be pushed, created "
        "and deleted (docs/pre-receive.md).",
    ),
    Rule(
        "HG519",
        "tag points off the branches",
        "Tag a commit that is on a branch (push the branch with the tag), or set `pre_receive.tags` "
        "(docs/pre-receive.md).",
    ),
    # HG6xx: other harness formats (docs/formats.md). Each format owns a block of codes.
    # HG601-HG619: `tasks`, the long-running task harness (formats/tasks.py)
    Rule(
        "HG601",
        "task file is not strict JSON",
        "harness-tasks.json must be UTF-8 strict JSON: restore it from harness-tasks.json.bak or fix the line shown.",
    ),
    Rule(
        "HG602",
        "task file breaks the schema",
        "Fix the field shown; docs/formats/tasks.md lists every field of version 2.",
    ),
    Rule("HG603", "duplicate task id", "Task ids identify tasks in depends_on and the log: give each task its own id."),
    Rule("HG604", "dependency on an unknown task", "Every depends_on entry must be the id of a task in the same file."),
    Rule(
        "HG605", "circular dependency", "Break the cycle: a task may not depend on itself, directly or through others."
    ),
    Rule(
        "HG606",
        "completed task without a validation command",
        "A task is completed only after its non-empty validation.command passed; set it, or keep the task open.",
    ),
    Rule(
        "HG607", "completed task without completed_at", "Set completed_at (ISO timestamp) when the task is completed."
    ),
    Rule(
        "HG608",
        "completed before its dependencies",
        "A task runs only when every depends_on task is completed: reopen it, or complete its dependencies first.",
    ),
    Rule(
        "HG609",
        "attempts exceed max_attempts",
        "A task is retried only while attempts < max_attempts; fix the counters.",
    ),
    Rule(
        "HG610",
        "in_progress task without a claim",
        "In concurrent mode a claimed task carries claimed_by and lease_expires_at.",
    ),
    Rule(
        "HG611",
        "progress log line is not an entry",
        "One entry per line: `[ISO-timestamp] [SESSION-N] TYPE [task-id]? [category]? message`.",
    ),
    Rule(
        "HG612",
        "unknown progress entry type",
        "Types: INIT, Starting, Completed, ERROR, CHECKPOINT, ROLLBACK, RECOVERY, STATS, LOCK, WARN.",
    ),
    Rule(
        "HG613",
        "ERROR entry without a known category",
        "Write `ERROR [task-id] [CATEGORY] message` with a category from docs/formats/tasks.md.",
    ),
    Rule(
        "HG614",
        "task entry without a task id",
        "Starting, Completed, CHECKPOINT, ROLLBACK and RECOVERY entries name their task: `[task-id]`.",
    ),
    Rule(
        "HG615",
        "malformed STATS entry",
        "Write `STATS tasks_total=N completed=N failed=N pending=N blocked=N attempts_total=N checkpoints=N`.",
    ),
    Rule(
        "HG616",
        "progress log rewritten",
        "harness-progress.txt is append-only: restore the removed or changed lines and append instead.",
    ),
    Rule(
        "HG617",
        "task file backup or temporary file committed",
        "harness-tasks.json.bak/.tmp are local recovery files: unstage them and add them to .gitignore.",
    ),
    Rule(
        "HG618",
        "task completed without fresh passing evidence",
        "Run the task's validation command with `harness-gate record` on the tree you commit, and stage the evidence.",
    ),
    Rule(
        "HG619",
        "validation command changed while completing or completed",
        "A completion is proven by the command the task already had: reopen the task, change the command, then"
        " complete it with evidence in a later commit.",
    ),
    # HG620-HG639: `runtime`, the agent runtime (formats/runtime.py)
    Rule(
        "HG620",
        "malformed evidence event line",
        "Each line of a runtime evidence log is one JSON object (UTF-8, no duplicate keys); fix or drop the line.",
    ),
    Rule(
        "HG621",
        "evidence event lacks a required verification field",
        "Every event carries `command` (text), `exit_code` (integer), `key_output` (text) and an ISO `timestamp`.",
    ),
    Rule(
        "HG622",
        "unknown evidence_kind",
        "`evidence_kind` is `decision`, `routine` or (legacy events only) `unknown`; omit it on legacy events.",
    ),
    Rule(
        "HG623",
        "incomplete agent_team_validated receipt",
        "The receipt is a `decision` event with metadata.plan_sha256, agent_count, worker_count and repo_root.",
    ),
    Rule(
        "HG624",
        "evidence log rewritten",
        "Runtime evidence logs only grow: restore the changed or removed lines and append new events instead.",
    ),
    Rule(
        "HG625",
        "new evidence event without a decision/routine kind",
        "New appends set `evidence_kind` to `decision` or `routine`; `unknown` is only how legacy lines are read.",
    ),
    Rule(
        "HG626",
        "invalid agent-team plan",
        "An agent-team plan is a strict JSON object with a non-empty `agents` list.",
    ),
    Rule(
        "HG627",
        "agent lacks a required field",
        "Give every agent a unique `id`, a `role` (planner, worker, reviewer, security, qa), a `scope`, "
        "a `write_set` list and a `verification_command`.",
    ),
    Rule(
        "HG628",
        "read-only role with a write set",
        "Planner, reviewer, security and qa agents get an empty `write_set`; give the writes to a worker.",
    ),
    Rule(
        "HG629",
        "worker without a write set",
        "A worker owns a non-empty `write_set`; a task with nothing to write is a read-only role.",
    ),
    Rule(
        "HG630",
        "write-set path is empty, absolute or climbs out",
        "Write-set paths are non-empty and repo-relative, without `..` segments.",
    ),
    Rule(
        "HG631",
        "overlapping worker write sets",
        "Dispatch is blocked until the task is split again so that no two workers own the same path.",
    ),
    Rule(
        "HG632",
        "worker claims a protected state surface",
        "Workers never own `docs/harness-state.md` or a parent such as `docs/`; the main agent writes checkpoints.",
    ),
    Rule(
        "HG633",
        "worker task_demand or green_gate missing or malformed",
        "A worker carries task_demand {level, L, H_tool, S_state, N_obs} and green_gate "
        "{gate_scope, command, rationale}.",
    ),
    Rule(
        "HG634",
        "green_gate does not match the declared demand",
        "medium/high need focused_gate_command, high also full_gate_command and new_probe; "
        "the gate command must match verification_command.",
    ),
    Rule(
        "HG635",
        "read-only role carries a demand gate",
        "Remove task_demand and green_gate from planner, reviewer, security and qa agents.",
    ),
    Rule(
        "HG636",
        "requirements artifact without a Task Demand section",
        "Add `## Task Demand (D_task)` with estimated_level, L, H_tool, S_state and N_obs.",
    ),
    Rule(
        "HG637",
        "task demand field missing or invalid",
        "`estimated_level` is exactly low, medium or high; L, H_tool, S_state and N_obs are non-empty.",
    ),
    Rule(
        "HG638",
        "checkpoint entry incomplete",
        "A checkpoint records phase, changed_surfaces, verification (command, exit_code, key_output), "
        "blockers, next_safe_task and git latest_commit.",
    ),
    Rule(
        "HG639",
        "unverified checkpoint outside a handoff",
        "Only a `handoff` checkpoint with an explicit blocker may be unverified; record fresh verification.",
    ),
    # HG640-HG659: `loop`, the planner/generator/evaluator loop (formats/loop.py)
    Rule(
        "HG640",
        "loop state.json is not valid JSON",
        "state.json is one strict JSON object in UTF-8 (no duplicate keys).",
    ),
    Rule(
        "HG641",
        "loop state.json does not have the loop's documented shape",
        "Keys: iteration, max_iterations (1-99), status, eval_override, yolo, started_at (docs/formats/loop.md).",
    ),
    Rule(
        "HG642",
        "loop iteration past max_iterations",
        "The loop stops at the cap: set status `exhausted` instead of running another iteration.",
    ),
    Rule(
        "HG643",
        "loop passed without a passing verdict",
        'Set status `passed` only when the latest iteration\'s verdict.json has `"result": "pass"`.',
    ),
    Rule(
        "HG644",
        "finished loop run reopened",
        "A passed or aborted run is over: delete .harness/ to start a new run.",
    ),
    Rule(
        "HG645",
        "loop spec.md empty or without frontmatter",
        "spec.md is UTF-8 and starts with YAML frontmatter between `---` lines, each key once.",
    ),
    Rule(
        "HG646",
        "loop spec evaluation missing or invalid",
        "The frontmatter needs `evaluation: frontend`, `backend` or `fullstack`, once.",
    ),
    Rule(
        "HG647",
        "blocked loop spec without a Blocker",
        "A spec with `status: blocked` explains it under `## Blocker`.",
    ),
    Rule(
        "HG648",
        "loop spec changed after the loop started",
        "The spec is frozen once iterations run: revert spec.md, or delete .harness/ and start over.",
    ),
    Rule(
        "HG649",
        "loop iteration directory misnamed",
        "Iteration directories are two-digit numbers 01-99: rename it (e.g. `1` -> `01`).",
    ),
    Rule(
        "HG650",
        "loop verdict.json is not valid JSON",
        "verdict.json is one strict JSON object in UTF-8; a malformed verdict is replaced by a synthesized fail.",
    ),
    Rule(
        "HG651",
        "loop verdict result not exactly pass or fail",
        'Write `"result": "pass"` or `"result": "fail"`; `blockers`, if present, is an array.',
    ),
    Rule(
        "HG652",
        "loop verdict for another iteration",
        "A verdict's `iteration` is the number of the directory it is in.",
    ),
    Rule("HG653", "loop brief.md empty", "The brief is the feature request, written verbatim: it is never empty."),
    Rule(
        "HG654",
        "loop run.log line without a timestamp",
        "Each run.log line starts with a UTC timestamp (`date -u +%Y-%m-%dT%H:%M:%SZ`) and a space.",
    ),
    # HG660-HG679: `harness2`, Harness² trees (formats/harness2.py)
    Rule(
        "HG660",
        "always-on file over its cap",
        "system.md, guardrails.md, memory.md and tool-guidance.md hold at most 12,000 characters each: move detail "
        "into a skill.",
    ),
    Rule(
        "HG661",
        "skill not named in system.md or guardrails.md",
        "Write the skill's literal directory name in system.md or guardrails.md, or remove the skill.",
    ),
    Rule(
        "HG662",
        "referenced script missing",
        "Add scripts/<name>.py to the same harness tree, or drop the reference.",
    ),
    Rule(
        "HG663",
        "template braces in an always-on file",
        "Remove `{` and `}`: DSH interpolates prompt variables strictly; describe the shape in words instead.",
    ),
    Rule(
        "HG664",
        "incomplete lesson",
        "A transferable lesson has non-empty `- **cue**:`, `- **lesson**:`, `- **evidence**:` and "
        "`- **confidence**:` lines.",
    ),
    Rule(
        "HG665",
        "more than one lesson",
        "A reflection writes at most one transferable lesson: keep the best-supported one.",
    ),
    Rule("HG666", "harness text not UTF-8", "Save the file as UTF-8 text."),
    Rule(
        "HG667",
        "run state committed",
        "Runs, rollouts and workspace copies under .dsh-harness2/runs/ stay uncommitted: `git rm --cached` them.",
    ),
    # HG690-HG699: shared by the formats
    Rule("HG690", "format file unreadable", "A format file must be a regular file of at most 16 MiB."),
    # HG9xx: environment and internal
    Rule("HG901", "not a git repository", "Run harness-gate inside a git work tree."),
    Rule("HG902", "invalid configuration", "See docs/config.md."),
    Rule("HG903", "git failed", "Run the git command shown to see why."),
    Rule("HG904", "usage error", "See `harness-gate --help`."),
    Rule(
        "HG905",
        "not enough history",
        "Fetch the full history: `git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout.",
    ),
    Rule("HG906", "cannot verify signatures", "Install OpenSSH's ssh-keygen (signed approvals are verified with it)."),
    Rule(
        "HG907",
        "a dependency failed to load",
        "Install harness-gate in an environment of its own (`pipx install`), where no package of the repository it "
        "guards (a directory on PYTHONPATH, the current directory) can stand in for one of its dependencies.",
    ),
    Rule(
        "HG908",
        "inside a coding agent",
        "Approve from a terminal of your own, outside the coding agent: an approval is a human's answer, never an "
        "agent's tool call (docs/agents.md).",
    ),
    Rule(
        "HG909",
        "git directory elsewhere",
        "The git directory's `commondir` names a folder that is not the main repository of a linked work tree: git "
        "would read its configuration, hooks and objects from there. Remove `.git/commondir` (docs/agents.md).",
    ),
    Rule(
        "HG910",
        "agent settings that switch hooks off",
        "Move these keys from .claude/settings.local.json to ~/.claude/settings.json (or remove them), then run "
        "`harness-gate agent-sandbox` again (docs/agents.md).",
    ),
    Rule(
        "HG911",
        "agent hook not live",
        "The runtime will not run harness-gate's hook in this clone: do what the finding says, then run "
        '`harness-gate doctor` again (docs/agents.md, "Is the hook live?").',
    ),
    Rule(
        "HG912",
        "agent hook may fail open",
        "A runtime runs the tool when its hook cannot start, crashes or times out: make sure it can run here "
        '(docs/agents.md, "What it cannot guarantee").',
    ),
    Rule(
        "HG913",
        "agent settings unreadable",
        "A runtime's settings file that cannot be read says nothing about its hook: fix the file, then run "
        "`harness-gate doctor` again.",
    ),
    Rule(
        "HG916",
        "invalid pre-receive input",
        "Run `harness-gate pre-receive` as git's pre-receive hook, which feeds it `<old> <new> <ref>` lines "
        "(docs/pre-receive.md).",
    ),
    Rule(
        "HG917",
        "no default branch",
        "Point the bare repository's HEAD at its default branch: `git symbolic-ref HEAD refs/heads/main`.",
    ),
    Rule(
        "HG918",
        "GitLab pipeline variables unusable",
        "Run the gate in merge request pipelines or pushes to the default branch, or name the commits with "
        "`--base` and `--head` (docs/gitlab.md).",
    ),
    Rule(
        "HG950",
        "nothing to judge in CI",
        "In CI the gate judges a pull request's commits: use the GitHub Action (docs/action.md) or "
        "`harness-gate check --base origin/main`; pre-commit.ci skips the hooks (docs/hooks.md).",
    ),
    Rule("HG999", "internal error", "This is a bug in harness-gate; the gate failed closed."),
)


def finding(
    code: str,
    path: str,
    message: str,
    *,
    line: int | None = None,
    hint: str | None = None,
    severity: Severity = Severity.ERROR,
) -> Finding:
    """Build a finding for a catalogued rule (an unknown code is a bug)."""
    rule = RULES[code]
    return Finding(code, path, line, message, hint or rule.hint, severity)


def blocking(findings: list[Finding] | tuple[Finding, ...]) -> bool:
    return any(f.blocks for f in findings)


def rule_anchor(code: str) -> str:
    """The fragment of the rule's row in docs/rules.md (tests/test_docs.py renders it)."""
    return code.lower()
