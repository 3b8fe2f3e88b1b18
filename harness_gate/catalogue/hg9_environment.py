"""The rule catalogue's HG9xx: the environment and harness-gate's own failures."""

from __future__ import annotations

from harness_gate.catalogue.rule import Rule

RULES = (
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
