"""The rule catalogue's HG1xx: the write boundary (the gate, `check`)."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
)
