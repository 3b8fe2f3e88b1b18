"""The rule catalogue's HG5xx: artifact syntax, and the ref updates the server-side gate refuses."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
)
