"""The rule catalogue's HG3xx: verification evidence."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
)
