"""A shell command, which cannot be judged by its text: a patch applied through the shell
is judged as the patch; `harness-gate approve` is denied; a way round the commit gate, or
a command that names a protected path or the artifacts root and may write, is asked
about (a heuristic, docs/agents.md); anything else is let through, the commit gate being
the enforcement."""

from __future__ import annotations

import re
from pathlib import Path

from harness_gate.agent import patches, paths
from harness_gate.agent.decisions import Decision, Malformed
from harness_gate.agent.judging import judge, repository
from harness_gate.agent.runtimes import JsonObject

# Ways round the commit gate a shell command can take: git's --no-verify (any prefix git
# accepts, and `commit -n`), core.hooksPath, and pre-commit's SKIP.
_BYPASS = re.compile(r"--no-ver(?:i(?:fy?)?)?\b|\bcommit\b[^;&|\n]*\s-[a-z]*n[a-z]*\b|hookspath|\bskip=")
# git's plumbing that makes a commit or moves a ref without `git commit` and its hooks.
_PLUMBING = re.compile(
    r"\bgit\b[^;&|\n]*?\s(commit-tree|update-ref|write-tree|mktree|hash-object|read-tree|update-index|fast-import"
    r"|symbolic-ref|replace|filter-branch|filter-repo)\b"
)
# `harness-gate approve` (or `python -m harness_gate approve`) in one simple command.
_APPROVE = re.compile(r"harness[-_]gate[^\s;&|]*\s+(?:[^\s;&|]+\s+)*?approve\b")
APPROVE_DENIED = (
    "harness-gate denies this command: it runs `harness-gate approve`. An approval is a human's answer at their own "
    "terminal, never an agent's tool call (and `approve` refuses inside one, HG908). Ask the human to approve."
)
# Programs that only read files (with no option that writes: `sort -o`, `sed -i`, `git log
# --output` are not among them), and git's reading commands.
_READERS = frozenset(
    {
        "cat",
        "less",
        "more",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ls",
        "stat",
        "wc",
        "file",
        "diff",
        "cmp",
        "jq",
        "tree",
        "find",
        "echo",
        "printf",
        "pwd",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "true",
    }
)
_GIT_READERS = frozenset({"status", "diff", "log", "show", "ls-files", "blame", "grep", "rev-parse", "cat-file"})
_WRITES = re.compile(r"[>`]|\$\(|-(?:exec|execdir|delete|fprint\w*|o)\b|--output\b")


def shell(cwd: Path, tool_input: JsonObject) -> Decision:
    """A shell command cannot be judged by its text: allowed (the git gate stays the
    enforcement), `ask` when it names a protected path or the artifacts root (a heuristic)."""
    command = tool_input.get("command")
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        text = " ".join(str(w) for w in command)
    elif isinstance(command, str):
        text = command
    else:
        raise Malformed("the shell call carries no `command`")
    if "*** begin patch" in text.casefold():
        # `apply_patch` run through the shell (Codex does): judged as the patch when the
        # command is exactly that one patch, every byte of it one the runtime acts on.
        if tool_input.get("workdir") not in (None, "", "."):
            raise Malformed("a patch applied in another directory cannot be judged by its text")
        return judge(cwd, patches.patch_paths(patches.shell_patch(command)), "apply_patch")
    if _APPROVE.search(text.casefold()):
        return Decision("deny", APPROVE_DENIED)
    repo = repository(paths.project())
    if isinstance(repo, Decision):
        return repo
    from harness_gate import rules  # noqa: PLC0415

    cfg = repo.cfg
    folded = text.casefold()
    hits = [n for n in dict.fromkeys(rules.protected_names(cfg.source)) if n.casefold() in folded]
    # The artifacts root, `.git` and the runtimes' folders as words (`rm -rf harness`,
    # `> .git/hooks/pre-commit`, `rm -rf .claude`), never as part of one (`harness-gate
    # verify`, `.github`, `.harness/`); and the ways round the commit gate itself.
    for word in (cfg.artifacts_dir, ".git", *rules.AGENT_DIRS):
        if re.search(rf"(?<![\w.-]){re.escape(word.casefold())}(?![\w-])", folded):
            hits.append(word + "/")
    around = [m.group(0) for m in _BYPASS.finditer(folded)]
    around += [f"git {m.group(1)}" for m in _PLUMBING.finditer(folded)]
    if around:
        # A way round the commit gate: asked in Claude Code; denied where no human can be
        # asked (Codex), since the commit it makes is seen by no hook but Stop.
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys([*around, *hits][:5]))
        what = (
            f"harness-gate: this command names {shown}, a way round the commit gate (skipping its hooks, or git's "
            "plumbing that commits or moves a branch without `git commit`)"
        )
        return Decision(
            "ask",
            f"{what}; a shell command cannot be judged by its text, so a human decides. Stop judges the commits "
            "made in this session.",
            cannot_ask_reason=f"{what}, and Codex and Gemini CLI cannot ask a human from a hook: denied. Commit "
            "with plain `git commit`.",
        )
    if hits and not reads_only(text):
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys(hits[:5]))
        return Decision(
            "ask",
            f"harness-gate: this command names {shown} (a protected path or the artifacts root); a shell command "
            "cannot be judged by its text, so a human decides. The commit gate still judges what it changes.",
            cannot_ask="allow",
        )
    return Decision("allow", "harness-gate: shell commands are not judged by their text; `check` judges the commit")


def reads_only(text: str) -> bool:
    """Whether a shell command plainly only reads: every simple command in it (split at
    `;`, `&`, `|` and new lines) is a reader, with no redirection, command substitution or
    option that writes. Anything else may write (a heuristic, docs/agents.md)."""
    if _WRITES.search(text):
        return False
    for part in re.split(r"[;&|\n]+", text):
        words = part.split()
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
            words = words[1:]  # VAR=value before the program
        if not words:
            continue
        if words[0] == "git":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if not rest or rest[0] not in _GIT_READERS:
                return False
        elif words[0] not in _READERS:
            return False
    return True
