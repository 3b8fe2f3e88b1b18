"""Split an artifact into its H1 and H2 sections using markdown-it-py tokens.

Only top-level ATX headings are structure. Headings inside fenced or indented
code, blockquotes, lists and HTML blocks (comments included) are content, as
markdown-it-py reports them at a nesting level above zero or not as headings.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_gate import jsonstrict
from harness_gate.findings import Finding, finding

if TYPE_CHECKING:
    from markdown_it.token import Token

MAX_ARTIFACT_BYTES = 1024 * 1024
LAYOUT = " \t"  # the only characters CommonMark strips around a line's content
_ITEM_MARKER = re.compile(r"[-*+][ \t]+")
LEGACY_TITLES = frozenset({"Completion Report", "Harness Plan", "Review Report", "Repair Report"})


@dataclass(frozen=True)
class Section:
    title: str
    line: int  # 1-based line of the heading
    tokens: tuple[Token, ...]
    source: tuple[str, ...]  # every line of the document, for exact-line checks


@dataclass(frozen=True)
class Document:
    path: str
    text: str
    title: str
    title_line: int
    sections: tuple[Section, ...]


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt  # noqa: PLC0415  (lazy: start-up time)

    # commonmark only: no tables, strikethrough or other plugins that could
    # change what counts as a block.
    return MarkdownIt("commonmark")


def decode(path: str, data: bytes, max_bytes: int = MAX_ARTIFACT_BYTES) -> tuple[str | None, list[Finding]]:
    """Check the byte-level rules every artifact obeys and decode it."""
    if len(data) > max_bytes:
        return None, [finding("HG512", path, f"{len(data)} bytes is over the {max_bytes} byte cap")]
    if not data.strip():
        return None, [finding("HG511", path, "the file is empty")]
    if b"\x00" in data:
        return None, [finding("HG510", path, "the file holds NUL bytes (binary?)")]
    if data.startswith(b"\xef\xbb\xbf"):
        return None, [finding("HG510", path, "the file starts with a UTF-8 byte order mark", line=1)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [finding("HG510", path, f"not valid UTF-8 at byte {exc.start}", line=line)]
    if "\r" in text:
        line = text[: text.index("\r")].count("\n") + 1
        return None, [finding("HG510", path, "CR line ends (CRLF); artifacts use LF only", line=line)]
    # An approver reads the rendered text, an agent follows the bytes: a bidirectional
    # override, a zero-width character or a terminal escape makes the two differ.
    hidden = jsonstrict.UNSAFE_TEXT_CHARS.search(text)
    if hidden is not None:
        line = text[: hidden.start()].count("\n") + 1
        what = f"U+{ord(hidden.group()):04X}"
        message = f"{what}: control, zero-width or bidirectional-override characters are not allowed"
        return None, [finding("HG510", path, message, line=line)]
    return text, []


def parse(path: str, text: str) -> tuple[Document | None, list[Finding]]:
    """Find the H1 and the top-level H2 sections; report structural problems."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        return None, [finding("HG502", path, "top-level JSON artifacts are not supported", line=1)]
    env: dict[str, Any] = {}
    tokens: list[Token] = _parser().parse(text, env)
    lines = text.split("\n")
    source = tuple(lines)
    findings: list[Finding] = []
    headings = [
        i for i, tok in enumerate(tokens) if tok.type == "heading_open" and tok.level == 0 and tok.tag in ("h1", "h2")
    ]
    for i in headings:
        tok = tokens[i]
        if tok.markup not in ("#", "##"):
            findings.append(
                finding(
                    "HG514",
                    path,
                    "setext (underlined) headings are not allowed; use ATX `#`/`##`",
                    line=_line(tok),
                )
            )
    findings.extend(_unrendered(path, tokens, lines))
    if not findings and env.get("references"):
        # A link reference definition renders as nothing wherever it stands (inside a
        # list item or a blockquote too): words a reviewer would never see.
        findings.append(finding("HG514", path, "link reference definitions are not allowed (they render as nothing)"))
    if findings:
        return None, findings
    h1s = [i for i in headings if tokens[i].tag == "h1"]
    if not h1s or _line(tokens[h1s[0]]) != 1 or tokens[0] is not tokens[h1s[0]]:
        return None, [finding("HG501", path, "the first line must be the artifact's H1 heading", line=1)]
    title = _inline(tokens, h1s[0])
    if title in LEGACY_TITLES:
        return None, [finding("HG502", path, f"`# {title}` is a legacy shape", line=1)]
    if lines[0] != f"# {title}":
        findings.append(finding("HG514", path, "the H1 line must be exactly `# Title`", line=1))
    for i in h1s[1:]:
        findings.append(finding("HG506", path, f"second H1 `# {_inline(tokens, i)}`", line=_line(tokens[i])))
    sections: list[Section] = []
    first_h2 = next((i for i in headings if tokens[i].tag == "h2"), len(tokens))
    stray = [t for t in tokens[h1s[0] + 3 : first_h2] if t.level == 0 and not t.type.endswith("_close")]
    if stray and stray[0].tag != "h1":
        findings.append(
            finding(
                "HG514",
                path,
                "content between the H1 and the first section",
                line=_line(stray[0]),
            )
        )
    h2s = [i for i in headings if tokens[i].tag == "h2"]
    if h2s and h2s[0] < h1s[0]:
        findings.append(finding("HG505", path, "an H2 comes before the H1", line=_line(tokens[h2s[0]])))
    for n, i in enumerate(h2s):
        name = _inline(tokens, i)
        line = _line(tokens[i])
        if lines[line - 1] != f"## {name}":
            findings.append(finding("HG514", path, f"the heading must be exactly `## {name}`", line=line))
        end = h2s[n + 1] if n + 1 < len(h2s) else len(tokens)
        # A second H1 ends no section: it is already a finding of its own.
        body = tuple(t for t in tokens[i + 3 : end] if not (t.level == 0 and t.tag == "h1"))
        sections.append(Section(name, line, body, source))
    return Document(path, text, title, 1, tuple(sections)), findings


def _unrendered(path: str, tokens: list[Token], lines: list[str]) -> list[Finding]:
    """Text that renders as nothing (link reference definitions) is hidden from review.

    Every non-blank line must belong to a top-level block; otherwise it could carry
    words a reviewer never sees in the rendered artifact.
    """
    covered: set[int] = set()
    for tok in tokens:
        if tok.level == 0 and tok.map:
            covered.update(range(tok.map[0], tok.map[1]))
    for i, text in enumerate(lines):
        if text.strip() and i not in covered:
            return [finding("HG514", path, "this line renders as nothing (a link reference definition?)", line=i + 1)]
    return []


def _line(tok: Token) -> int:
    return (tok.map[0] + 1) if tok.map else 0


def _inline(tokens: list[Token], open_index: int) -> str:
    return tokens[open_index + 1].content


# -- helpers that read a section's content -------------------------------------------


def top_blocks(section: Section) -> list[Token]:
    """The section's top-level block tokens (openers and leaf blocks)."""
    return [t for t in section.tokens if t.level == 0 and not t.type.endswith("_close")]


def json_fences(section: Section) -> list[Token]:
    # Only spaces and tabs may surround the info string: Python's bare strip() also
    # drops NBSP, U+3000, U+2028 and the controls U+000B/U+000C/U+001C-U+001F/U+0085.
    return [t for t in section.tokens if t.type == "fence" and t.level == 0 and t.info.strip(LAYOUT) == "json"]


def fence_closed(section: Section, fence: Token) -> bool:
    """markdown-it lets an unclosed fence run to the end of the document; we do not."""
    if not fence.map:
        return False
    start, end = fence.map
    last = section.source[end - 1].strip() if end - 1 < len(section.source) else ""
    return end - start >= 2 and last.startswith(fence.markup) and set(last) == {fence.markup[0]}


def paragraphs(section: Section) -> list[tuple[str, int]]:
    out = []
    toks = section.tokens
    for i, t in enumerate(toks):
        if t.type == "paragraph_open" and t.level == 0:
            out.append((toks[i + 1].content, _line(t)))
    return out


def one_line(section: Section, block: Token) -> str | None:
    """The source line of a block that spans exactly one line, without the spaces and
    tabs around it; None for a longer block."""
    if not block.map or block.map[1] - block.map[0] != 1:
        return None
    return section.source[block.map[0]].strip(LAYOUT)


def exact_line(section: Section, text: str) -> bool:
    """True when the section is exactly one paragraph of one source line equal to `text`."""
    blocks = top_blocks(section)
    if len(blocks) != 1 or blocks[0].type != "paragraph_open" or not blocks[0].map:
        return False
    start, end = blocks[0].map
    return end - start == 1 and section.source[start] == text


@dataclass(frozen=True)
class ListItem:
    line: int
    code: str | None  # the code span, when the item is exactly one code span
    text: str


def list_items(section: Section) -> list[ListItem]:
    """Items of the section's top-level bullet lists (one paragraph each)."""
    out = []
    toks = section.tokens
    for i, t in enumerate(toks):
        if t.type == "list_item_open" and t.level == 1:
            # An item is exactly one paragraph: nested lists or further blocks are rejected.
            shape = [x.type for x in toks[i + 1 : i + 5]]
            if shape != ["paragraph_open", "inline", "paragraph_close", "list_item_close"]:
                out.append(ListItem(_line(t), None, ""))
                continue
            inline = toks[i + 2]
            # An item is one source line, its text framed only by the marker, spaces and
            # tabs. markdown-it trims Unicode spaces (NBSP, U+3000, U+000B...) around it,
            # and a code span may run over a line break (`src/` + LF + `**` reads `src/ **`):
            # either lets an item read differently in the file than it parses.
            line = one_line(section, toks[i + 1])
            marker = _ITEM_MARKER.match(line) if line is not None else None
            if line is None or marker is None or line[marker.end() :] != inline.content:
                out.append(ListItem(_line(t), None, ""))
                continue
            children = inline.children or []
            code = children[0].content if len(children) == 1 and children[0].type == "code_inline" else None
            out.append(ListItem(_line(t), code, inline.content))
    return out


def is_blank(section: Section) -> bool:
    # An HTML block (a comment, say) renders as nothing a reviewer reads.
    return all(t.type == "html_block" for t in top_blocks(section))
