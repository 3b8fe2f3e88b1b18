"""Parse one artifact: exact H1, exact ordered H2 sections, typed section values."""

from __future__ import annotations

from typing import Any

from harness_gate import boundary, jsonstrict, schema
from harness_gate.artifacts import markdown
from harness_gate.artifacts.artifact import Artifact, sha256_hex
from harness_gate.artifacts.kinds import CHOICES, KINDS, PLACEHOLDER_PREFIX, Content, KindSpec, SectionSpec
from harness_gate.findings import Finding, finding


def parse_artifact(
    path: str,
    data: bytes,
    *,
    artifacts_dir: str = "harness",
    max_bytes: int = markdown.MAX_ARTIFACT_BYTES,
) -> tuple[Artifact | None, list[Finding]]:
    """Parse and validate; an artifact is returned only when there is no finding."""
    text, found = markdown.decode(path, data, max_bytes)
    if text is None:
        return None, found
    doc, found = markdown.parse(path, text)
    if doc is None:
        return None, found
    kind = KINDS.get(doc.title)
    if kind is None:
        known = ", ".join(f"`# {t}`" for t in KINDS)
        return None, [finding("HG501", path, f"unknown artifact kind `# {doc.title}` (known: {known})", line=1)]
    found.extend(_check_order(path, kind, doc))
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    by_title = {s.title: s for s in doc.sections}
    for spec in kind.sections:
        section = by_title.get(spec.title)
        if section is None:
            continue
        lines[spec.title] = section.line
        value, problems = _read_section(path, kind, spec, section, artifacts_dir)
        found.extend(problems)
        values[spec.title] = value
    if kind.gate_line and doc.sections and doc.sections[-1].title != "Approval":
        found.append(finding("HG513", path, f"the artifact must end with the gate line `{kind.gate_line}`"))
    found.extend(_stray_gates(path, kind, text))
    if not found:
        found.extend(_semantics(path, kind, values, lines))
    if found:
        return None, found
    return Artifact(kind, path, sha256_hex(data), values, lines), []


GATE_LINES = tuple(sorted({k.gate_line for k in KINDS.values() if k.gate_line}))


def _stray_gates(path: str, kind: KindSpec, text: str) -> list[Finding]:
    """A gate question anywhere but the artifact's last line: it invites a `y` before the
    approver has read what follows (the Write Boundary, say), in prose, a comment or a code
    span alike. Compared on raw lines with whitespace runs (a no-break space too) folded."""
    lines = text.split("\n")
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    out = []
    for n, line in enumerate(lines, start=1):
        folded = " ".join(line.split())
        if not any(gate_line in folded for gate_line in GATE_LINES):
            continue
        if kind.gate_line and n == last and line == kind.gate_line:
            continue  # the Approval section's own line (checked exactly on its own)
        out.append(finding("HG513", path, "a gate question appears before the artifact's last line", line=n))
    return out


def _check_order(path: str, kind: KindSpec, doc: markdown.Document) -> list[Finding]:
    out = []
    expected = [s.title for s in kind.sections]
    seen: set[str] = set()
    actual = []
    for sec in doc.sections:
        if sec.title not in expected:
            out.append(finding("HG504", path, f"`## {sec.title}` is not a section of `# {kind.title}`", line=sec.line))
        elif sec.title in seen:
            out.append(finding("HG504", path, f"`## {sec.title}` appears twice", line=sec.line))
        else:
            seen.add(sec.title)
            actual.append(sec)
    for title in expected:
        if title not in seen:
            out.append(finding("HG503", path, f"missing section `## {title}`"))
    in_order = [t for t in expected if t in seen]
    for want, got in zip(in_order, actual, strict=True):
        if want != got.title:
            out.append(
                finding(
                    "HG505",
                    path,
                    f"`## {got.title}` is out of order (expected `## {want}` here)",
                    line=got.line,
                )
            )
            break
    return out


def _read_section(
    path: str, kind: KindSpec, spec: SectionSpec, section: markdown.Section, artifacts_dir: str
) -> tuple[Any, list[Finding]]:
    c = spec.content
    if c is Content.PROSE:
        if markdown.is_blank(section):
            return "", [finding("HG514", path, f"`## {spec.title}` is empty", line=section.line)]
        prose = "\n".join(_prose(section))
        if prose.lstrip().startswith(PLACEHOLDER_PREFIX):
            # A template's placeholder left in place: the section says nothing yet.
            return prose, [
                finding(
                    "HG514",
                    path,
                    f"`## {spec.title}` still holds the template's placeholder ({prose.strip()[:80]!r}): write it",
                    line=section.line,
                )
            ]
        return prose, []
    if c is Content.JSON:
        return _read_json(path, spec, section)
    if c is Content.GATE:
        return _read_gate(path, kind.gate_line, spec, section)
    if c is Content.CHOICES:
        items = markdown.list_items(section)
        blocks = markdown.top_blocks(section)
        if [i.text for i in items] != list(CHOICES) or len(blocks) != 1 or blocks[0].type != "bullet_list_open":
            want = ", ".join(CHOICES)
            return (), [
                finding("HG514", path, f"`## {spec.title}` must be exactly the list: {want}", line=section.line)
            ]
        return CHOICES, []
    return _read_code_list(path, spec, section, artifacts_dir)


def _prose(section: markdown.Section) -> list[str]:
    # Prose is kept for display only; structure never depends on it.
    return [t.content for t in section.tokens if t.type == "inline" and t.level <= 3]


def _read_json(path: str, spec: SectionSpec, section: markdown.Section) -> tuple[Any, list[Finding]]:
    fences = markdown.json_fences(section)
    if len(fences) != 1 or len(markdown.top_blocks(section)) != 1:
        message = f"`## {spec.title}` holds exactly one ```json block and nothing else"
        return None, [finding("HG514", path, message, line=section.line)]
    fence = fences[0]
    line = (fence.map[0] + 1) if fence.map else section.line
    if not markdown.fence_closed(section, fence):
        return None, [finding("HG514", path, f"`## {spec.title}`: the ```json block is not closed", line=line)]
    try:
        obj = jsonstrict.loads_object(fence.content)
    except jsonstrict.StrictJSONError as exc:
        code = "HG508" if exc.duplicate else "HG507"
        return None, [finding(code, path, f"`## {spec.title}`: {exc}", line=line)]
    problems = schema.errors(spec.schema, obj)
    if problems:
        return None, [finding("HG509", path, p, line=line) for p in problems]
    return obj[spec.key], []


def _read_gate(path: str, gate_line: str, spec: SectionSpec, section: markdown.Section) -> tuple[Any, list[Finding]]:
    if not markdown.exact_line(section, gate_line):
        return None, [
            finding(
                "HG513",
                path,
                f"`## {spec.title}` must hold exactly the line `{gate_line}`",
                line=section.line,
            )
        ]
    return gate_line, []


def _read_code_list(
    path: str, spec: SectionSpec, section: markdown.Section, artifacts_dir: str
) -> tuple[Any, list[Finding]]:
    blocks = markdown.top_blocks(section)
    paras = markdown.paragraphs(section)
    # `None` is the one word on one line (spaces and tabs around it are layout).
    if len(blocks) == 1 and len(paras) == 1 and markdown.one_line(section, blocks[0]) == "None":
        return (), []
    items = markdown.list_items(section)
    if len(blocks) != 1 or blocks[0].type != "bullet_list_open" or not items:
        return (), [
            finding(
                "HG514",
                path,
                f"`## {spec.title}` holds `None` or one bullet list of `code` items, nothing else",
                line=section.line,
            )
        ]
    out: list[str] = []
    problems: list[Finding] = []
    for item in items:
        if item.code is None:
            problems.append(
                finding(
                    "HG514",
                    path,
                    f"each item of `## {spec.title}` is one `code` span, nothing else",
                    line=item.line,
                )
            )
            continue
        if spec.content is Content.BOUNDARY:
            try:
                boundary.validate(item.code, artifacts_dir)
            except boundary.PatternError as exc:
                problems.append(finding("HG205", path, f"`{item.code}`: {exc}", line=item.line))
                continue
        elif spec.content is Content.PATHS:
            try:
                boundary.validate(item.code, artifacts_dir)
                if boundary.has_wildcard(item.code) or item.code.endswith("/"):
                    raise boundary.PatternError("a changed file is one exact path, without wildcards")
            except boundary.PatternError as exc:
                problems.append(finding("HG514", path, f"`{item.code}`: {exc}", line=item.line))
                continue
        elif not item.code.strip() or jsonstrict.UNSAFE_CHARS.search(item.code):
            problems.append(
                finding("HG514", path, f"empty or control characters in `## {spec.title}` item", line=item.line)
            )
            continue
        out.append(item.code)
    if spec.content is Content.BOUNDARY and not problems and boundary.Boundary.compile(out).covers_everything():
        problems.append(
            finding(
                "HG205",
                path,
                "the write boundary matches every path; list what the work may write",
                line=section.line,
            )
        )
    return tuple(out), problems


def _semantics(path: str, kind: KindSpec, values: dict[str, Any], lines: dict[str, int]) -> list[Finding]:
    out = []
    strategy = values.get("Verification Strategy")
    if strategy is not None:
        ids = [c["id"] for c in strategy["required_commands"]]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            out.append(
                finding(
                    "HG207",
                    path,
                    f"duplicate required command id(s): {', '.join(dupes)}",
                    line=lines.get("Verification Strategy"),
                )
            )
    if kind.title == "Clean-context Review":
        verdict = values["Verdict"]
        items = values["Findings"]
        ids = [f["id"] for f in items]
        if len(set(ids)) != len(ids):
            out.append(finding("HG514", path, "finding ids must be unique", line=lines["Findings"]))
        if verdict in ("PASS", "PASS_WITH_NOTES") and any(f["severity"] == "blocking" for f in items):
            out.append(
                finding("HG514", path, f"a {verdict} review cannot carry blocking findings", line=lines["Verdict"])
            )
        if verdict == "REPAIR_REQUIRED" and not items:
            out.append(finding("HG514", path, "REPAIR_REQUIRED needs at least one finding", line=lines["Verdict"]))
    if kind.title == "Completion":
        binding = values["Binding"]
        if values["Outcome"] == "completed" and (binding["review"] is None or binding["review_sha256"] is None):
            out.append(
                finding(
                    "HG405",
                    path,
                    "a completed outcome binds the passing review it relies on",
                    line=lines["Binding"],
                )
            )
    return out
