"""The files an `apply_patch` patch writes (Codex's patch format), from the tool's input or
from a shell command that applies one patch and does nothing else. Anything this cannot
read exactly as the runtime applies it is Malformed: denied."""

from __future__ import annotations

import re

from harness_gate.agent.decisions import Malformed
from harness_gate.agent.runtimes import JsonObject

_PATCH_LINES = (
    ("*** Add File: ", "A"),
    ("*** Update File: ", "M"),
    ("*** Delete File: ", "D"),
    ("*** Move to: ", "A"),
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"})
# `apply_patch <<'EOF'` (or <<EOF, <<"EOF", <<-EOF): the here-document's opening line.
_HEREDOC = re.compile(r"\s*apply_patch\s+<<(-?)[ \t]*(?:'(\w+)'|\"(\w+)\"|(\w+))[ \t]*\n")
_QUOTED = re.compile(r"\s*apply_patch\s+'([^']*)'\s*", re.S)
_MORE = "a shell command that does more than apply one patch cannot be judged by its text"


def patch_text(tool_input: JsonObject) -> str:
    """The patch of an `apply_patch` call: `input`, `patch`, or the last word of `command`."""
    for key in ("input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    command = tool_input.get("command")
    if isinstance(command, str):  # Codex's hook payload: the patch itself
        return command
    if isinstance(command, list) and command and isinstance(command[-1], str):
        return command[-1]
    raise Malformed("`apply_patch` carries no patch (`input`, `patch` or `command`)")


def patch_paths(text: str) -> list[tuple[str, str]]:
    """The files an apply_patch patch names, as (path, "A"|"M"|"D"): a move is the deletion
    of its source and the addition of its destination, and both are judged."""
    lines = [line.rstrip("\r") for line in text.strip().splitlines()]
    if not lines or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
        raise Malformed("the patch does not run from `*** Begin Patch` to `*** End Patch`")
    marks = [line.strip() for line in lines if line.strip() in ("*** Begin Patch", "*** End Patch")]
    if len(marks) != 2:
        # An early `*** End Patch` does not end what the runtime applies: what follows it
        # would be applied unjudged. One patch, one pair of marks.
        raise Malformed("the patch holds `*** Begin Patch` or `*** End Patch` more than once")
    out: list[tuple[str, str]] = []
    for line in (raw.lstrip() for raw in lines[1:-1]):  # the runtime trims padding: so does this
        for prefix, status in _PATCH_LINES:
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if not path:
                    raise Malformed(f"`{prefix.strip()}` names no file")
                if prefix == "*** Move to: ":
                    if not out or out[-1][1] != "M":
                        raise Malformed("`*** Move to:` does not follow an `*** Update File:`")
                    out[-1] = (out[-1][0], "D")
                out.append((path, status))
                break
        else:
            if line.startswith("*** ") and not line.startswith("*** End of File"):
                raise Malformed(f"the patch holds a line this hook does not know: {line[:80]!r}")
    if not out:
        raise Malformed("the patch names no file")
    return out


def shell_patch(command: object) -> str:
    """The patch of a shell command that applies one and does nothing else: `["apply_patch",
    PATCH]`, or a script (alone, or under `bash -lc`) that is `apply_patch` with the patch in
    a here-document or single quotes. Anything else, Malformed: a command after the patch
    (on a new line too), a second patch, an unquoted here-document the shell would expand."""
    if isinstance(command, list):
        if len(command) == 2 and command[0] == "apply_patch" and isinstance(command[1], str):
            return command[1]
        if (
            len(command) == 3
            and command[0] in _SHELLS
            and command[1] in ("-c", "-lc", "-l -c")
            and isinstance(command[2], str)
        ):
            command = command[2]
        else:
            raise Malformed(_MORE)
    if not isinstance(command, str):
        raise Malformed("the shell call carries no `command`")
    heredoc = _HEREDOC.match(command)
    if heredoc is not None:
        return _heredoc_body(heredoc, command[heredoc.end() :])
    quoted = _QUOTED.fullmatch(command)
    if quoted is not None:
        return quoted.group(1)
    raise Malformed(_MORE)


def _heredoc_body(opening: re.Match[str], rest: str) -> str:
    """The here-document's body as the shell reads it: up to the first line that is the
    delimiter (after leading tabs, for `<<-`); nothing but blank space may follow it."""
    strip = bool(opening.group(1))
    delimiter = opening.group(2) or opening.group(3) or opening.group(4)
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        if (line.lstrip("\t") if strip else line) == delimiter:
            if "\n".join(lines[i + 1 :]).strip():
                raise Malformed(_MORE)
            body = [line.lstrip("\t") for line in lines[:i]] if strip else lines[:i]
            text = "\n".join(body)
            if opening.group(4) is not None and re.search(r"[$`\\]", text):
                raise Malformed("an unquoted here-document: the shell would expand `$`, backquotes and backslashes")
            return text
    raise Malformed("the here-document of the patch has no end line")
