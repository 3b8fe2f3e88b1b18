"""The rule catalogue's HG4xx: review and lifecycle."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
)
