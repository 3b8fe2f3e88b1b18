"""The rule catalogue's HG6xx: the other harness formats (docs/formats.md)."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
    # HG620-HG639: `runtime`, the agent runtime (formats/runtime.py, formats/runtime_team.py)
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
)
