"""The `harness2` format: Harness² trees (docs/formats/harness2.md).

A Harness² tree keeps the eight components of a harness as files (docs/formats/harness2.md):

    .dsh-harness2/harness/system.md, guardrails.md, memory.md, tool-guidance.md   always-on
    .dsh-harness2/harness/skills/<name>/SKILL.md
    .dsh-harness2/harness/sub_agents/<name>/AGENT.md
    .dsh-harness2/harness/scripts/<name>.py
    .dsh-harness2/harness/plugins/<name>.md

The rules are the original harness's own validation: the always-on files within their cap, every
skill's literal name in system.md or guardrails.md, referenced scripts present in the
same tree, no template braces. The per-domain library's lessons (docs/formats/harness2.md) must carry a
cue, a lesson, evidence and a confidence, at most one per reflection, and run state
(ignored by the data directory's .gitignore) is never committed.

A file's role comes from its path *below* the tree root (the component layout above),
so `[formats.harness2] paths` may move the tree anywhere; the root is whatever precedes
the component part of the path.

A `§N` cited here is section N of the format's specification, which is not part of this
repository; docs/formats/harness2.md quotes the passage each rule enforces, section by section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_gate.findings import Finding, finding
from harness_gate.formats import Context, Format, capped

ALWAYS_ON = ("system.md", "guardrails.md", "memory.md", "tool-guidance.md")
NAMING = ("system.md", "guardrails.md")  # where a skill's name must appear (docs/formats/harness2.md)
CAP = 12_000  # characters per always-on file: the original harness's default cap
LESSON_FIELDS = ("cue", "lesson", "evidence", "confidence")
MAX_BRACE_FINDINGS = 20  # per file: enough to act on, bounded on a 16 MiB file
MAX_FINDINGS = 20  # per file and rule (HG662, HG664, HG665), then one finding counting the rest

_SKILL = re.compile(r"(?P<root>(?:.*/)?)skills/(?P<name>[^/]+)/SKILL\.md")
_AGENT = re.compile(r"(?P<root>(?:.*/)?)sub_agents/(?P<name>[^/]+)/AGENT\.md")
_PLUGIN = re.compile(r"(?P<root>(?:.*/)?)plugins/(?P<name>[^/]+)\.md")
_SCRIPT = re.compile(r"(?P<root>(?:.*/)?)scripts/(?P<name>[^/]+)\.py")
_ALWAYS_ON = re.compile(r"(?P<root>(?:.*/)?)(?P<name>system|guardrails|memory|tool-guidance)\.md")
# An always-on name inside a component folder is that component's file, not a tree's.
_INSIDE_COMPONENT = re.compile(r"(?:^|/)(?:(?:skills|sub_agents)/[^/]+|scripts|plugins)/$")
_RUNS = re.compile(r"(?:^|/)\.dsh-harness2/runs/")
_EXPERIENCE = re.compile(r"(?:.*/)?EXPERIENCE\.md")
# `scripts/<name>.py` as its own token: not the tail of a longer path (another tree, the
# runtime's resources directory) and not the head of a longer name (`.pyc`, `.py.bak`).
_SCRIPT_REF = re.compile(r"(?<![\w./-])scripts/[\w.-]+?\.py(?![\w-]|\.\w)")
_FENCE = re.compile(r"\s{0,3}(?:```|~~~)")
_SECTION_END = re.compile(r"#{1,2}(?:\s|$)")
_LESSON_HEADING = re.compile(r"##\s+transferable lesson\s*", re.IGNORECASE)
_FIELD = re.compile(r"\s*[-*]\s+\*\*(?P<key>[A-Za-z]+)(?::\*\*|\*\*\s*:)(?P<value>.*)")


@dataclass(frozen=True)
class Role:
    kind: str  # always-on, skill, sub-agent, plugin, script, lesson, run, other
    root: str  # the tree root ("" or ending in "/"); "" for lessons, runs, other
    name: str  # the component's name: a skill's directory name, an always-on file name


def role(path: str) -> Role:
    """What a path is in a Harness² tree, by its components below the tree root."""
    if _RUNS.search(path):
        return Role("run", "", "")
    if _EXPERIENCE.fullmatch(path):
        return Role("lesson", "", "")
    for kind, pattern in (("skill", _SKILL), ("sub-agent", _AGENT), ("plugin", _PLUGIN), ("script", _SCRIPT)):
        m = pattern.fullmatch(path)
        if m:
            return Role(kind, m["root"], m["name"])
    m = _ALWAYS_ON.fullmatch(path)
    if m and not _INSIDE_COMPONENT.search(m["root"]):
        return Role("always-on", m["root"], m["name"] + ".md")
    return Role("other", "", "")


def _decode(path: str, data: bytes) -> tuple[str | None, list[Finding]]:
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [finding("HG666", path, f"not UTF-8 text: byte {exc.start} ({exc.reason})", line=line)]


def _cap(path: str, text: str) -> list[Finding]:
    """§5 (docs/formats/harness2.md): "The four always-on files are capped (default 12,000 characters)"."""
    if len(text) <= CAP:
        return []
    line = text.count("\n", 0, CAP) + 1  # where character 12,001 falls
    message = f"{len(text):,} characters, over the {CAP:,}-character cap of an always-on file"
    return [finding("HG660", path, message, line=line)]


def _braces(path: str, text: str) -> list[Finding]:
    """§5 (docs/formats/harness2.md): "Template braces are rejected because DSH interpolates prompt variables
    strictly" — a stray `{` or `}` in prompt text breaks a strict interpolator."""
    found: list[Finding] = []
    for n, line in enumerate(text.split("\n"), start=1):
        col = next((i for i, c in enumerate(line) if c in "{}"), None)
        if col is None:
            continue
        if len(found) == MAX_BRACE_FINDINGS:
            found.append(finding("HG663", path, "more lines with template braces follow (not listed)", line=n))
            break
        found.append(finding("HG663", path, f"template brace `{line[col]}` at column {col + 1}", line=n))
    return found


def _script_dirs(r: Role) -> tuple[str, ...]:
    """Where a referenced `scripts/<name>.py` may live: the tree's scripts folder, and for a
    skill also its own folder (a skill-local script is in the same tree too)."""
    if r.kind == "skill":
        return (r.root, f"{r.root}skills/{r.name}/")
    return (r.root,)


def _missing_scripts(path: str, text: str, r: Role, ctx: Context, only: str | None = None) -> Iterator[Finding]:
    """§5 (docs/formats/harness2.md): "Referenced scripts must exist in the same tree" (`only`: that one reference)."""
    for n, line in enumerate(text.split("\n"), start=1):
        for ref in dict.fromkeys(_SCRIPT_REF.findall(line)):
            if only is not None and ref != only:
                continue
            if not any(ctx.files.exists(d + ref) for d in _script_dirs(r)):
                message = f"`{ref}` is referenced but not in the tree ({r.root + ref})"
                yield finding("HG662", path, message, line=n)


def _named(name: str, root: str, ctx: Context) -> bool:
    """§5 (docs/formats/harness2.md): "A skill's literal name must appear in system.md or guardrails.md"."""
    needle = name.encode("utf-8", "surrogateescape")  # a non-UTF-8 directory name arrives surrogate-escaped
    return any(needle in (ctx.files.read(root + f) or b"") for f in NAMING)


def _unnamed_skill(path: str, r: Role, ctx: Context) -> list[Finding]:
    if _named(r.name, r.root, ctx):
        return []
    message = f"skill `{r.name}` is named in neither {r.root}system.md nor {r.root}guardrails.md"
    return [finding("HG661", path, message)]


def _lesson_sections(lines: list[str]) -> list[tuple[int, list[tuple[int, str]]]]:
    """(heading line, [(line, text)...]) per `## Transferable lesson`, outside code fences."""
    sections: list[tuple[int, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] | None = None
    fenced = False
    for n, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        if _LESSON_HEADING.fullmatch(line.rstrip("\r")):
            current = []
            sections.append((n, current))
        elif _SECTION_END.match(line):
            current = None
        elif current is not None:
            current.append((n, line))
    return sections


def _lesson(path: str, heading: int, body: list[tuple[int, str]]) -> Iterator[Finding]:
    """§4 (docs/formats/harness2.md): a lesson is "a cue ..., a lesson naming the component and the operation,
    the evidence, and a confidence"."""
    seen: set[str] = set()
    for n, line in body:
        m = _FIELD.fullmatch(line.rstrip("\r"))
        key = m["key"].lower() if m else ""
        if m is None or key not in LESSON_FIELDS:
            continue
        if key in seen:
            yield finding("HG664", path, f"the lesson's `{key}` is given twice", line=n)
        elif not m["value"].strip():
            yield finding("HG664", path, f"the lesson's `{key}` is empty", line=n)
        seen.add(key)
    missing = [k for k in LESSON_FIELDS if k not in seen]
    if missing:
        yield finding("HG664", path, f"the lesson has no {', '.join(missing)}", line=heading)


def _lessons(path: str, text: str) -> list[Finding]:
    sections = _lesson_sections(text.split("\n"))

    def each() -> Iterator[Finding]:
        for i, (heading, body) in enumerate(sections):
            if i > 0:
                # §4 (docs/formats/harness2.md): reflection writes "at most one transferable lesson".
                yield finding("HG665", path, f"lesson {i + 1} of {len(sections)} in one reflection", line=heading)
            yield from _lesson(path, heading, body)

    return capped(path, each(), MAX_FINDINGS)


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    r = role(path)
    if r.kind == "run":
        # §7 (docs/formats/harness2.md): runs, rollouts and workspace copies "are ignored by the data
        # directory's .gitignore"; only "the adopted harness and library" are committed.
        return [finding("HG667", path, "run state under .dsh-harness2/runs/ is not committed")]
    if r.kind in ("script", "other"):
        return []  # scripts are code, not harness text; other files carry no rule of the format
    text, found = _decode(path, data)
    if text is None:
        return found
    if r.kind == "lesson":
        return _lessons(path, text)
    if r.kind == "always-on":
        found += _cap(path, text) + _braces(path, text)
    if r.kind == "skill":
        found += _unnamed_skill(path, r, ctx)
    return found + capped(path, _missing_scripts(path, text, r, ctx), MAX_FINDINGS)


def _names_removed(path: str, old: bytes, r: Role, ctx: Context) -> list[Finding]:
    """system.md or guardrails.md changed: every skill it named before that is now named in
    neither file. (A new unnamed skill is caught on its own SKILL.md.)"""
    found = []
    for other in ctx.files.paths(r.root):
        s = role(other)
        if (
            s.kind == "skill"
            and s.root == r.root
            and s.name.encode("utf-8", "surrogateescape") in old
            and not _named(s.name, r.root, ctx)
        ):
            message = f"this change removes the last mention of skill `{s.name}` ({other})"
            found.append(finding("HG661", path, message))
    return found


def _script_deleted(path: str, r: Role, ctx: Context) -> list[Finding]:
    """A deleted script that the tree still references: the references are now missing."""
    ref = f"scripts/{r.name}.py"
    found = []
    for other in ctx.files.paths(r.root):
        s = role(other)
        if s.root != r.root or s.kind not in ("always-on", "skill", "sub-agent", "plugin"):
            continue
        text, _ = _decode(other, ctx.files.read(other) or b"")
        if text is not None:
            found += capped(other, _missing_scripts(other, text, s, ctx, only=ref), MAX_FINDINGS)
    return found


def gate(path: str, old: bytes | None, new: bytes | None, ctx: Context) -> list[Finding]:
    """The moves the per-file lint cannot see: a change elsewhere in the tree that breaks
    a rule of a file this change does not touch."""
    r = role(path)
    if r.kind == "always-on" and r.name in NAMING and old is not None:
        return _names_removed(path, old, r, ctx)
    if r.kind == "script" and new is None:
        return _script_deleted(path, r, ctx)
    return []


def status(path: str, data: bytes, ctx: Context) -> list[str]:
    r = role(path)
    text, _ = _decode(path, data)
    if text is None:
        return []
    if r.kind == "always-on":
        return [f"{len(text):,} of {CAP:,} characters"]
    if r.kind == "lesson":
        return [f"{len(_lesson_sections(text.split(chr(10))))} transferable lesson(s)"]
    return []


FORMAT = Format("harness2", "Harness² tree", lint, gate, status)
