"""The rule catalogue's HG2xx: plans and approvals."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
)
