"""Hypothesis fuzzing of every parser: artifacts, approvals, evidence, configuration.

Three properties for each parser:

(a) it never raises on arbitrary input: per-file problems are findings, the config
    parser raises only `ConfigError`;
(b) starting from a VALID input, a mutation (one byte inserted, deleted or replaced, a
    line duplicated or swapped, CRLF, a trailing space, a BOM, an invisible or odd
    whitespace character, JSON re-serialised with other spacing or key order, a
    duplicated JSON key, a number spelled another way, a field given another value) is
    either reported, or the mutated input is itself valid in the strict sense defined
    below. Each oracle is written from the docs, independently of the parser, and each
    has a test showing that it rejects what a lenient parser would accept;
(c) what the writers produce (`approvals.record`, `evidence.record_line`, `templates`)
    parses back to the values they were given, and a writer refuses (ValueError) exactly
    the values the oracle calls invalid.

Plus two differentials: the config parser against `tomllib` + the documented key rules,
and the three evidence readers (whole log, from the end in memory, from the end on disk in
chunks) against each other.

What "valid" means for an accepted mutation:

* JSONL records (approvals, evidence): the line is exactly
  `jsonstrict.dumps_canonical(value) + "\\n"` with the writer's key order, and every field
  satisfies the documented field rules (`_approval_field_ok`, `_evidence_problem`).
* Markdown artifacts: the file re-renders canonically except in its *free regions*:

  - FREE TEXT: the body of every prose section (the lines strictly between its `## `
    heading and the next heading, or the end of the file). Anything may change there;
    the structured values of the other sections must then stay exactly as they were.
  - DOCUMENTED LAYOUT, outside prose (the freedom docs/artifacts.md and CommonMark give):
    blank lines made of spaces and tabs, anywhere, in any number; JSON whitespace
    (space, tab, LF) between tokens, and string escapes that decode to the same text
    (numbers keep their one spelling: no `-0`, fraction or exponent);
    a fence indented 0-3 spaces, of backticks or tildes, at least three long, its info
    string `json` with spaces or tabs around it, closed by the same character at least
    as long; list items (and the `None` line) indented 0-3 spaces, with any of the
    markers `-`, `*`, `+` followed by spaces or tabs, and trailing spaces or tabs.
  - Everything else must be byte-for-byte the canonical rendering of the parsed value
    (`templates.json_block`, `templates.code_list`, the gate line, the choices list):
    the H1 line, every `## ` heading line, the gate line, each item's code span on ONE
    line, and no other character (no control, no Unicode space, no invisible mark).

  Value edits that re-render to the same bytes (a hex digit, a changed pattern, a JSON
  key order) are valid artifacts in their own right, so they may be accepted.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import difflib
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness_gate import approvals, config, evidence, jsonstrict, templates
from harness_gate.artifacts import kinds
from harness_gate.artifacts.kinds import CHOICES, KINDS, Content, KindSpec, SectionSpec
from harness_gate.artifacts.parse import Artifact, parse_artifact
from harness_gate.errors import ConfigError
from harness_gate.findings import RULES
from tests import helpers

pytestmark = pytest.mark.slow  # property-based fuzzing

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# No example database: nothing is written into the repository, every run explores anew.
FUZZ = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def fuzz(examples: int) -> settings:
    return settings(FUZZ, max_examples=helpers.examples(examples))


SHA_A = "0bbe5bc4573bcf1caa8ba13b58efe7c468bb397ddfe2f5a83f9c76ba92cec5b4"
SHA_B = "709b3dc4ca6442dbec79068d94a61eaf401dfa22064e9b1373f037871fb807db"
NOW = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)

# Characters a reader cannot see: zero-width marks and every Unicode Bidi_Control character.
INVISIBLE = (
    *("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"),  # zero width
    *("\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"),  # Bidi_Control
    *("\u2066", "\u2067", "\u2068", "\u2069"),
)
_UNSEEN = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff" + "".join(INVISIBLE) + "]")
_UNSEEN_TEXT = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\ud800-\\udfff" + "".join(INVISIBLE) + "]")

# =====================================================================================
# Mutations
# =====================================================================================

INTERESTING = list(b" \t\n\r#`~-*+>[]{}\":,!\\/0a9Z_.<=|'\x00\x0b\x0c\x1c\x1f\x7f\x80\xa0\xc2\xe2\xff")
_BYTE = st.one_of(st.sampled_from(INTERESTING), st.integers(0, 255))
BYTE_MUTATIONS = (
    *("insert", "delete", "replace", "dup_line", "swap_lines", "crlf", "trailing_space", "bom", "invisible"),
    "odd_char",
)
# Characters Python counts as whitespace (str.strip drops them) that CommonMark does not, and
# other look-alikes: where a parser built on Python string methods turns lenient.
ODD_CHARS = (
    *("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u00a0", "\u1680", "\u2000", "\u2007"),
    *("\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u00ad", "\u034f", "\uff03", "\u2010", "\u00b4"),
)


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    starts.extend(i + 1 for i, b in enumerate(data) if b == 0x0A)
    return starts


@st.composite
def _position(draw: st.DrawFn, data: bytes, *, inclusive: bool) -> int:
    """A byte offset, chosen line first so that short structural lines are hit as often as long prose."""
    starts = _line_starts(data)
    n = draw(st.integers(0, len(starts) - 1))
    end = starts[n + 1] - 1 if n + 1 < len(starts) else len(data)  # the line's LF, or the end
    where = draw(st.sampled_from(["start", "end", "any", "any"]))
    if where == "start":
        pos = starts[n]
    elif where == "end":
        pos = end
    else:
        pos = draw(st.integers(starts[n], max(starts[n], end)))
    return min(pos, len(data) if inclusive else len(data) - 1)


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes, kinds_: tuple[str, ...] = BYTE_MUTATIONS) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(kinds_))
    lines = data.split(b"\n")
    if kind == "insert":
        pos = draw(_position(data, inclusive=True))
        return kind, data[:pos] + bytes([draw(_BYTE)]) + data[pos:]
    if kind == "delete":
        pos = draw(_position(data, inclusive=False))
        return kind, data[:pos] + data[pos + 1 :]
    if kind == "replace":
        pos = draw(_position(data, inclusive=False))
        return kind, data[:pos] + bytes([draw(_BYTE)]) + data[pos + 1 :]
    if kind == "dup_line":
        i = draw(st.integers(0, len(lines) - 1))
        return kind, b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
    if kind == "swap_lines":
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
        return kind, b"\n".join(lines)
    if kind == "crlf":
        if draw(st.booleans()):
            return kind, data.replace(b"\n", b"\r\n")
        i = draw(st.integers(0, max(0, len(lines) - 2)))
        lines[i] += b"\r"
        return kind, b"\n".join(lines)
    if kind == "trailing_space":
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] += draw(st.sampled_from([b" ", b"\t", b"  "]))
        return kind, b"\n".join(lines)
    if kind == "bom":
        return kind, b"\xef\xbb\xbf" + data
    # invisible or odd characters: at a character boundary, so the bytes stay valid UTF-8
    pos = draw(_position(data, inclusive=True))
    while pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos += 1
    chars = st.sampled_from(INVISIBLE) if kind == "invisible" else st.sampled_from(ODD_CHARS) | st.characters()
    return kind, data[:pos] + draw(chars).encode("utf-8", "surrogatepass") + data[pos:]


def _dumps_dup(value: Any, target: int, key_index: int, counter: list[int], indent: str | None = "") -> str:
    """JSON with one key of the `target`-th object (pre-order) written twice: indented by
    two spaces, or compact and canonical (`indent=None`)."""
    pretty = indent is not None
    inner = (indent or "") + "  "
    nl, sep, colon = ("\n", ",\n", ": ") if pretty else ("", ",", ":")
    pad = inner if pretty else ""
    if isinstance(value, dict):
        me = counter[0]
        counter[0] += 1
        pairs = list(value.items())
        if me == target and pairs:
            pairs.append(pairs[key_index % len(pairs)])
        if not pairs:
            return "{}"
        body = sep.join(
            f"{pad}{json.dumps(k, ensure_ascii=False)}{colon}"
            + _dumps_dup(v, target, key_index, counter, inner if pretty else None)
            for k, v in pairs
        )
        return "{" + nl + body + nl + (indent or "") + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        body = sep.join(pad + _dumps_dup(v, target, key_index, counter, inner if pretty else None) for v in value)
        return "[" + nl + body + nl + (indent or "") + "]"
    return json.dumps(value, ensure_ascii=False)


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in `value`, in pre-order."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def _reorder(value: Any, target: int, order: list[int], counter: list[int]) -> Any:
    if isinstance(value, dict):
        me = counter[0]
        counter[0] += 1
        items = [(k, _reorder(v, target, order, counter)) for k, v in value.items()]
        if me == target:
            items = [items[i] for i in order]
        return dict(items)
    if isinstance(value, list):
        return [_reorder(v, target, order, counter) for v in value]
    return value


SPACINGS: tuple[dict[str, Any], ...] = (
    {"separators": (",", ":")},
    {},
    {"indent": 0},
    {"indent": 1},
    {"indent": 4},
    {"indent": "\t"},
    {"indent": 2, "separators": (" ,", " : ")},
)


def _dumps(value: Any, *, compact: bool) -> str:
    if compact:
        return jsonstrict.dumps_canonical(value)
    return json.dumps(value, indent=2, ensure_ascii=False)


@st.composite
def json_mutation(draw: st.DrawFn, value: Any, *, compact: bool = False) -> tuple[str, str]:
    """(kind, new JSON text) for a JSON value written indented (artifacts) or compact (JSONL):
    other spacing, other key order, a duplicate key, or a number spelled another way."""
    kind = draw(st.sampled_from(["respace", "reorder", "dup_key", "respell"]))
    objects = list(_objects(value))
    if kind == "respell":
        # One integer in another spelling of the same value (or of none): `-0`, `0600`,
        # `600.0`, `6e2`, `+600`.
        text = _dumps(value, compact=compact)
        numbers = list(re.finditer(r"(?<![\w.\"-])-?[0-9]+(?![\w.\"])", text))
        if not numbers:
            return "respace", text
        m = numbers[draw(st.integers(0, len(numbers) - 1))]
        n = m.group()
        spelling = draw(st.sampled_from(["-" + n.lstrip("-"), "0" + n, n + ".0", n + "e0", "+" + n, n + "E+0"]))
        return kind, text[: m.start()] + spelling + text[m.end() :]
    if kind == "respace":
        style = draw(st.sampled_from(SPACINGS))
        return kind, json.dumps(value, ensure_ascii=draw(st.booleans()), **style)
    target = draw(st.integers(0, len(objects) - 1))
    if kind == "reorder":
        order = draw(st.permutations(range(len(objects[target]))))
        return kind, _dumps(_reorder(value, target, list(order), [0]), compact=compact)
    keyed = [i for i, o in enumerate(objects) if o]
    target = keyed[target % len(keyed)]
    return kind, _dumps_dup(value, target, draw(st.integers(0, 50)), [0], None if compact else "")


# =====================================================================================
# Markdown artifacts
# =====================================================================================

VERIFICATION: dict[str, Any] = {
    "kind": "regression_first",
    "required_commands": [
        {"id": "tests", "command": "pytest -q", "timeout_seconds": 600},
        {"id": "lint", "command": "ruff check .", "timeout_seconds": 60, "shell": False},
    ],
}
DELTAS = {
    name: {"material": name in ("scope", "write_boundary"), "summary": f"{name} changed."}
    for name in ("objective", "acceptance_criteria", "scope", "write_boundary", "verification", "risk")
}


def _valid_artifacts() -> dict[str, str]:
    """One valid instance of every kind, built by the writers (templates, test helpers)."""
    return {
        "plan": templates.plan(
            objective="Fix the off-by-one error in `paginate()` so the last page is returned.",
            acceptance=["A request for the last page returns its items.", "Existing tests still pass."],
            scope="The pagination helper and its tests only.",
            boundary=["src/app/pagination.py", "tests/", "docs/**/*.md"],
            commands=VERIFICATION["required_commands"],
            kind="regression_first",
            unmodeled=["make docs"],
            risks=["A caller relying on the old last page."],
        ),
        "amendment": templates.amendment(
            plan_sha256=SHA_A,
            amendment_sha256=None,
            deltas=DELTAS,
            objective="Fix the off-by-one error and the CLI `--page` option.",
            acceptance=["The last page returns its items.", "`--page` counts from 1."],
            scope="The pagination helper, the CLI and their tests.",
            boundary=["src/app/pagination.py", "src/app/cli.py", "tests/"],
            verification=VERIFICATION,
            risks="The CLI change is user-visible.",
        ),
        "review": helpers.review_md(SHA_A, "REPAIR_REQUIRED", ("F1", "F2")),
        "repair": helpers.repair_md(SHA_A, "001-review.md", 1, changed=("src/a.py", "tests/test_a.py")),
        "pause": templates.pause(
            binding={"plan_sha256": SHA_A, "amendment_sha256": None},
            pause={
                "state": "paused_no_progress",
                "reason": "F1 was reported by two consecutive reviews.",
                "completed_rounds": 0,  # a zero, to respell as `-0`
                "remaining_findings": ["F1"],
                "verification_trend": "unchanged",
                "latest_diff": helpers.TREE,
                "latest_verification": helpers.V1,
            },
        ),
        "resume": templates.resume(
            binding={
                "plan_sha256": SHA_A,
                "amendment_sha256": SHA_B,
                "pause": "003-pause.md",
                "pause_sha256": helpers.V2,
                "latest_diff": helpers.TREE,
                "latest_verification": helpers.V1,
            },
            rounds=1,
        ),
        "completion": templates.completion(
            binding={
                "plan_sha256": SHA_A,
                "amendment_sha256": None,
                "review": "001-review.md",
                "review_sha256": SHA_B,
                "tree": helpers.TREE,
            },
            summary="The last page is returned; a regression test covers it.",
            evidence=[{"command_id": "tests", "record_sha256": helpers.V1}],
            outcome="completed",
        ),
        "repair-plan": templates.repair_plan(
            context={
                "plan_sha256": SHA_A,
                "finding_id": "F1",
                "classification": "IN_PLAN_REPAIR",
                "no_delta_evidence": ["Objective, acceptance criteria, scope and boundary are unchanged."],
                "verification": "unchanged",
                "topology": "root_only",
                "approach_retained": True,
            },
            scope=["src/app/pagination.py"],
        ),
    }


VALID = {slug: text.encode() for slug, text in _valid_artifacts().items()}
SLUGS = sorted(VALID)
# Every code parse_artifact may report (docs/artifacts.md): syntax, plus HG205, HG207 and HG405.
ARTIFACT_CODES = {f"HG5{n:02d}" for n in range(1, 15)} | {"HG205", "HG207", "HG405"}


def _file_name(slug: str) -> str:
    return "plan.md" if slug == "plan" else f"001-{slug}.md"


def _parse(slug: str, data: bytes) -> tuple[Artifact | None, list[Any]]:
    art, found = parse_artifact(_file_name(slug), data)
    assert (art is None) == bool(found)
    assert {f.code for f in found} <= ARTIFACT_CODES, found
    return art, found


def _parsed(slug: str) -> Artifact:
    art, found = _parse(slug, VALID[slug])
    assert art is not None, found
    return art


def _canonical_body(kind: KindSpec, spec: SectionSpec, value: Any) -> str:
    """A section body exactly as the writers render `value`."""
    c = spec.content
    if c is Content.JSON:
        return templates.json_block({spec.key: value})
    if c is Content.GATE:
        return kind.gate_line
    if c is Content.CHOICES:
        return "\n".join(f"- {choice}" for choice in CHOICES)
    assert c in (Content.BOUNDARY, Content.COMMANDS, Content.PATHS)
    return templates.code_list(value)


def _heading_indexes(kind: KindSpec, art: Artifact) -> list[int]:
    return [art.line(s.title) - 1 for s in kind.sections]


def _bodies(kind: KindSpec, art: Artifact, lines: list[str]) -> Iterator[tuple[SectionSpec, int, list[str]]]:
    """(section, heading index, body lines) for each section, in order."""
    heads = _heading_indexes(kind, art)
    for n, spec in enumerate(kind.sections):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        yield spec, heads[n], lines[heads[n] + 1 : end]


def _rerender(kind: KindSpec, art: Artifact, text: str) -> str:
    """The canonical rendering of `art`'s values, with its prose copied verbatim."""
    lines = text.split("\n")
    sections = []
    for spec, _, body in _bodies(kind, art, lines):
        if spec.content is Content.PROSE:
            sections.append((spec.title, "\n".join(body)))
        else:
            sections.append((spec.title, _canonical_body(kind, spec, art.value(spec.title))))
    return templates.render(kind.title, sections)


_BLANK = re.compile(r"[ \t]*")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*json[ \t]*")
_ITEM = re.compile(r" {0,3}([-*+])[ \t]+(.*?)[ \t]*")
_NONE = re.compile(r" {0,3}None[ \t]*")
_JSON_TOKEN = re.compile(
    r'[ \t\n]*(?:(?P<s>"(?:[^"\\]|\\.)*")|(?P<n>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
    r"|(?P<p>true|false|null|[{}\[\]:,]))"
)


def _json_tokens(text: str) -> list[tuple[str, Any]] | None:
    """The token stream of JSON text, independent of any JSON parser: whitespace dropped,
    strings by the text they decode to, numbers and punctuation by their spelling."""
    out: list[tuple[str, Any]] = []
    pos = 0
    while True:
        m = _JSON_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        if m.group("s") is not None:
            try:
                out.append(("s", json.loads(m.group("s"))))
            except ValueError:
                return None
        else:
            out.append(("n" if m.group("n") else "p", m.group("n") or m.group("p")))
    return out if _BLANK.fullmatch(text[pos:].replace("\n", "")) else None


def _section_layout_problem(kind: KindSpec, spec: SectionSpec, body: list[str], value: Any) -> str | None:
    canon = _canonical_body(kind, spec, value).split("\n")
    got = [line for line in body if not _BLANK.fullmatch(line)]
    c = spec.content
    if c is Content.GATE:
        return None if got == canon else f"gate section holds {got!r}"
    if c is Content.JSON:
        if len(got) < 2:
            return "no closed fenced block"
        m = _FENCE_OPEN.fullmatch(got[0])
        if m is None:
            return f"opening fence {got[0]!r}"
        fence = m.group(1)
        if not re.fullmatch(f" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", got[-1]):
            return f"closing fence {got[-1]!r}"
        tokens = _json_tokens("\n".join(got[1:-1]))
        if tokens is None or tokens != _json_tokens("\n".join(canon[1:-1])):
            return f"JSON differs beyond whitespace: {got[1:-1]!r}"
        return None
    if c is not Content.CHOICES and canon == ["None"]:
        return None if len(got) == 1 and _NONE.fullmatch(got[0]) else f"`None` section holds {got!r}"
    items = [_ITEM.fullmatch(line) for line in got]
    if len(items) != len(canon) or any(m is None for m in items):
        return f"list holds {got!r}"
    if len({m.group(1) for m in items if m}) != 1:
        return "items of more than one list"
    if [m.group(2) for m in items if m] != [line[2:] for line in canon]:
        return f"items {got!r} are not the canonical {canon!r}"
    return None


def _layout_problems(kind: KindSpec, art: Artifact, text: str) -> list[str]:
    """Everything outside prose and documented layout that differs from the canonical rendering."""
    lines = text.split("\n")
    out = []
    if lines[0] != f"# {kind.title}":
        out.append(f"H1 line {lines[0]!r}")
    heads = _heading_indexes(kind, art)
    if heads != sorted(heads) or len(set(heads)) != len(heads):
        out.append(f"sections at lines {heads}")
        return out
    if any(not _BLANK.fullmatch(line) for line in lines[1 : heads[0]]):
        out.append("content between the H1 and the first section")
    for spec, head, body in _bodies(kind, art, lines):
        if lines[head] != f"## {spec.title}":
            out.append(f"heading line {lines[head]!r}")
        if spec.content is not Content.PROSE:
            problem = _section_layout_problem(kind, spec, body, art.value(spec.title))
            if problem:
                out.append(f"## {spec.title}: {problem}")
    return out


def _prose_lines(slug: str) -> set[int]:
    """0-based indexes of the free-text lines of the valid instance."""
    art = _parsed(slug)
    lines = VALID[slug].decode().split("\n")
    out: set[int] = set()
    for spec, head, body in _bodies(art.kind, art, lines):
        if spec.content is Content.PROSE:
            out.update(range(head + 1, head + 1 + len(body)))
    return out


PROSE_LINES = {slug: _prose_lines(slug) for slug in SLUGS}


def _only_prose_changed(slug: str, mutated: bytes) -> bool:
    """Whether every line the mutation touched (by a line diff) is a free-text line of the original."""
    before = VALID[slug].split(b"\n")
    after = mutated.split(b"\n")
    prose = PROSE_LINES[slug]
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # a pure insertion between lines i1 - 1 and i1
            if i1 - 1 not in prose and i1 not in prose:
                return False
        elif not all(i in prose for i in range(i1, i2)):
            return False
    return True


def _structured(art: Artifact) -> dict[str, Any]:
    return {s.title: art.value(s.title) for s in art.kind.sections if s.content is not Content.PROSE}


def _assert_strictly_valid(slug: str, mutated: bytes, art: Artifact) -> None:
    """An accepted mutation is a valid artifact: canonical outside free text and documented layout."""
    text = mutated.decode("utf-8")
    assert not _layout_problems(art.kind, art, text), _layout_problems(art.kind, art, text)
    assert "\r" not in text
    assert not text.startswith("\ufeff")
    if _only_prose_changed(slug, mutated):
        assert _structured(art) == _structured(_parsed(slug))


@pytest.mark.parametrize("slug", SLUGS)
def test_valid_instances_parse_and_are_canonical(slug: str) -> None:
    art = _parsed(slug)
    text = VALID[slug].decode()
    assert art.kind.slug == slug
    # The oracle's reference rendering is exact on the writers' own output.
    assert _rerender(art.kind, art, text) == text
    assert _layout_problems(art.kind, art, text) == []
    assert PROSE_LINES[slug] or all(s.content is not Content.PROSE for s in art.kind.sections)


def test_the_layout_oracle_can_fail() -> None:
    """The Markdown oracle rejects what a lenient parser would let through."""
    art = _parsed("plan")
    text = VALID["plan"].decode()
    lenient = [
        text.replace("- `tests/`", "- `tests/`\u00a0"),  # a Unicode space after an item
        text.replace('```json\n{\n  "verification', '```json\x1f\n{\n  "verification'),  # control in the info
        text.replace("- `make docs`", "- `make\ndocs`"),  # a code span on two lines
        text.replace("[y/N]\n", "[y/N] \n"),  # the gate line with a trailing space
        text.replace('"timeout_seconds": 600', '"timeout_seconds": 600, "x": 1'),
        text.replace("## Objective", "## Objective "),
    ]
    for variant in lenient:
        assert variant != text
        assert _layout_problems(art.kind, art, variant), variant


@fuzz(250)
@given(st.binary(max_size=3000))
def test_artifact_arbitrary_bytes_never_raise(data: bytes) -> None:
    _parse("plan", data)


@fuzz(250)
@given(st.text(max_size=2000))
def test_artifact_arbitrary_text_never_raises(text: str) -> None:
    _parse("review", text.encode("utf-8", "surrogatepass"))


def _document_pieces() -> list[str]:
    pieces = [f"# {k}" for k in KINDS] + ["# Completion Report", "# plan", "#Plan", "# Plan #"]
    for slug in SLUGS:
        art = _parsed(slug)
        lines = VALID[slug].decode().split("\n")
        for _, head, body in _bodies(art.kind, art, lines):
            pieces.append("\n".join([lines[head], *body]).rstrip("\n"))
            pieces.append(lines[head])
            pieces.extend(line for line in body if line)
    pieces += [
        "",
        "```json",
        "```",
        "~~~json",
        "~~~",
        "````",
        "{}",
        "[]",
        "None",
        "none",
        "- `**`",
        "- `/etc/passwd`",
        "- `.git/x`",
        "- `harness/x`",
        "* `src/[z-a]`",
        "1. `x`",
        "  - nested",
        "> ## Objective",
        "<!-- c -->",
        "<!--",
        "-->",
        "    ## Scope",
        "[x]: https://example.com",
        "---",
        "===",
        "\t",
        " ",
        '{"outcome": "completed"}',
        '{"verdict": "PASS", "verdict": "PASS"}',
        '{"x": NaN}',
        '{"x": 1.5}',
        '{"x": "\\u001b"}',
        "[" * 40 + "]" * 40,
    ]
    return pieces


PIECES = _document_pieces()


@fuzz(400)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=40))
def test_artifact_structured_documents_never_raise(pieces: list[str]) -> None:
    data = ("\n".join(pieces) + "\n").encode()
    art, found = _parse("plan", data)
    n_lines = data.count(b"\n") + 1
    assert all(f.line is None or 1 <= f.line <= n_lines for f in found), found
    assert all(f.code in RULES for f in found)
    if art is not None:  # a document assembled from pieces may be valid: then it is strictly valid
        assert not _layout_problems(art.kind, art, data.decode())


@fuzz(2500)
@given(st.sampled_from(SLUGS), st.data())
def test_artifact_byte_mutations_are_reported_or_strictly_valid(slug: str, data: st.DataObject) -> None:
    kind, mutated = data.draw(byte_mutation(VALID[slug]), label="mutation")
    assume(mutated != VALID[slug])
    art, found = _parse(slug, mutated)
    if kind in ("crlf", "bom"):
        assert {f.code for f in found} == {"HG510"}
    if kind == "invisible" and not _only_prose_changed(slug, mutated):
        # Outside free text an invisible character is always a finding.
        assert art is None, mutated
    if art is not None:
        _assert_strictly_valid(slug, mutated, art)


_JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


@fuzz(800)
@given(st.sampled_from(SLUGS), st.data())
def test_artifact_json_reserialised_or_duplicated(slug: str, data: st.DataObject) -> None:
    text = VALID[slug].decode()
    blocks = list(_JSON_BLOCK.finditer(text))
    block = blocks[data.draw(st.integers(0, len(blocks) - 1), label="block")]
    value = json.loads(block.group(1))
    kind, new = data.draw(json_mutation(value), label="json")
    mutated = (text[: block.start(1)] + new + text[block.end(1) :]).encode()
    art, found = _parse(slug, mutated)
    if kind == "dup_key":
        # Even a duplicate with the same value: two readers could disagree on the object.
        assert {f.code for f in found} == {"HG508"}, found
        return
    if kind == "respell":
        # A number has one spelling: no sign on zero, no leading zero, fraction or exponent.
        assert art is None, new
        return
    # Spacing and key order are JSON, not structure: the same values, still strictly valid.
    assert art is not None, found
    assert _structured(art) == _structured(_parsed(slug))
    _assert_strictly_valid(slug, mutated, art)


# -- (c) the templates round trip ------------------------------------------------------

_WORD = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)
PROSE = st.lists(_WORD, min_size=1, max_size=6).map(" ".join)
IDS = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,12}", fullmatch=True)
FINDING_IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}", fullmatch=True)
SHA256 = st.from_regex(r"[0-9a-f]{64}", fullmatch=True)
TREES = st.one_of(st.from_regex(r"[0-9a-f]{40}", fullmatch=True), SHA256)
FILE_REFS = st.from_regex(r"[0-9]{3}-(review|repair|pause|resume|amendment|completion|repair-plan)\.md", fullmatch=True)
# Any text a JSON string may hold in an artifact: no control, bidi or zero-width character.
JSON_TEXT = st.text(min_size=1, max_size=30).filter(lambda s: not _UNSEEN.search(s))
COMMAND_TEXT = JSON_TEXT.filter(lambda s: bool(s.strip()))
PATTERNS = st.sampled_from(
    ["src/**", "src/app/", "tests/test_a.py", "docs/**/*.md", "*.toml", "a b/c", "é/x", "`tick`", "a]b", "[ab]?.c"]
)
PATHS = st.sampled_from(["src/a.py", "tests/test_a.py", "a b/c d", "é", "`tick`", "x`y"])
COMMANDS: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"id": IDS, "command": COMMAND_TEXT, "timeout_seconds": st.integers(1, 86400)},
    optional={"shell": st.booleans()},
)


def _command_id(command: dict[str, Any]) -> str:
    return str(command["id"])


REQUIRED_COMMANDS: st.SearchStrategy[list[dict[str, Any]]] = st.lists(
    COMMANDS, min_size=1, max_size=3, unique_by=_command_id
)
STRATEGIES = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["regression_first", "tdd", "characterization", "verification_first"]),
        "required_commands": REQUIRED_COMMANDS,
    }
)
# Unmodeled commands: non-blank, no control character; leading and trailing spaces allowed,
# backticks too (a code span must then be fenced and padded so that it reads back the same).
UNMODELED = st.lists(
    COMMAND_TEXT | st.sampled_from([" x ", " ` ", "`", "a  b", "` x `", " `x", "``", "  y"]), max_size=3
)


@st.composite
def _plan_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    objective, scope = draw(PROSE), draw(PROSE)
    acceptance = draw(st.lists(PROSE, min_size=1, max_size=3))
    risks = draw(st.lists(PROSE, max_size=2))
    boundary = draw(st.lists(PATTERNS, min_size=1, max_size=4, unique=True))
    unmodeled = draw(UNMODELED)
    strategy: dict[str, Any] = draw(STRATEGIES)
    mode = draw(st.sampled_from(["native", "guided"]))
    text = templates.plan(
        objective=objective,
        acceptance=acceptance,
        scope=scope,
        boundary=boundary,
        commands=strategy["required_commands"],
        kind=strategy["kind"],
        execution_mode=mode,
        unmodeled=unmodeled,
        risks=risks,
    )
    return text, {
        "Objective": objective,
        "Acceptance Criteria": "\n".join(acceptance),
        "Scope": scope,
        "Write Boundary": tuple(boundary),
        "Unmodeled Commands": tuple(unmodeled),
        "Verification Strategy": strategy,
        "Execution Strategy": {"execution_mode": mode},
        "Auto Repair": templates.AUTO_REPAIR["auto_repair"],
        "Risks": "\n".join(risks) if risks else "None identified.",
        "Approval": kinds.PLAN_GATE,
    }


@st.composite
def _amendment_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    binding: dict[str, Any] = {"plan_sha256": draw(SHA256), "amendment_sha256": draw(st.none() | SHA256)}
    deltas = {
        name: {"material": draw(st.booleans()), "summary": draw(JSON_TEXT)}
        for name in ("objective", "acceptance_criteria", "scope", "write_boundary", "verification", "risk")
    }
    objective, scope, risks = draw(PROSE), draw(PROSE), draw(PROSE)
    acceptance = draw(st.lists(PROSE, min_size=1, max_size=3))
    boundary = draw(st.lists(PATTERNS, max_size=3, unique=True))
    unmodeled = draw(UNMODELED)
    strategy: dict[str, Any] = draw(STRATEGIES)
    text = templates.amendment(
        plan_sha256=binding["plan_sha256"],
        amendment_sha256=binding["amendment_sha256"],
        deltas=deltas,
        objective=objective,
        acceptance=acceptance,
        scope=scope,
        boundary=boundary,
        verification=strategy,
        unmodeled=unmodeled,
        risks=risks,
    )
    return text, {
        "Binding": binding,
        "Deltas": deltas,
        "Objective": objective,
        "Acceptance Criteria": "\n".join(acceptance),
        "Scope": scope,
        "Write Boundary": tuple(boundary),
        "Unmodeled Commands": tuple(unmodeled),
        "Verification Strategy": strategy,
        "Risks": risks,
        "Approval": kinds.AMENDMENT_GATE,
    }


@st.composite
def _review_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    binding = {
        "plan_sha256": draw(SHA256),
        "amendment_sha256": draw(st.none() | SHA256),
        "tree": draw(TREES),
        "evidence": draw(st.lists(st.fixed_dictionaries({"command_id": IDS, "record_sha256": SHA256}), max_size=2)),
    }
    findings = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": FINDING_IDS,
                    "severity": st.sampled_from(["major", "minor", "note"]),
                    "path": st.none() | JSON_TEXT,
                    "summary": JSON_TEXT,
                }
            ),
            max_size=3,
            unique_by=lambda f: f["id"],
        )
    )
    verdict = draw(st.sampled_from(["PASS", "PASS_WITH_NOTES", "BLOCKED"] + (["REPAIR_REQUIRED"] if findings else [])))
    identity, scope = draw(JSON_TEXT), draw(PROSE)
    text = templates.review(binding=binding, identity=identity, scope=scope, findings=findings, verdict=verdict)
    return text, {
        "Binding": binding,
        "Reviewer": {"context": "clean", "access": "read-only", "identity": identity},
        "Scope Reviewed": scope,
        "Findings": findings,
        "Verdict": verdict,
    }


@st.composite
def _repair_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    binding = {
        "plan_sha256": draw(SHA256),
        "amendment_sha256": draw(st.none() | SHA256),
        "review": draw(FILE_REFS),
        "round": draw(st.integers(1, 99)),
    }
    finding_ids = draw(st.lists(FINDING_IDS, min_size=1, max_size=3))
    changed = draw(st.lists(PATHS, max_size=3, unique=True))
    boundary = draw(st.lists(PATTERNS, max_size=3, unique=True))
    strategy: dict[str, Any] = draw(STRATEGIES)
    progress = {
        "diff_before": draw(TREES),
        "diff_after": draw(TREES),
        "verification_before": draw(SHA256),
        "verification_after": draw(SHA256),
    }
    text = templates.repair(
        binding=binding,
        finding_ids=finding_ids,
        changed=changed,
        boundary=boundary,
        verification=strategy,
        progress=progress,
    )
    return text, {
        "Binding": binding,
        "Findings Addressed": finding_ids,
        "Changed Files": tuple(changed),
        "Write Boundary": tuple(boundary),
        "Verification Strategy": strategy,
        "Progress": progress,
    }


@st.composite
def _pause_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    binding = {"plan_sha256": draw(SHA256), "amendment_sha256": draw(st.none() | SHA256)}
    pause = {
        "state": draw(st.sampled_from(["paused_no_progress", "paused_blocked"])),
        "reason": draw(JSON_TEXT),
        "completed_rounds": draw(st.integers(0, 99)),
        "remaining_findings": draw(st.lists(FINDING_IDS, max_size=3)),
        "verification_trend": draw(st.sampled_from(["improving", "unchanged", "worse", "unavailable"])),
        "latest_diff": draw(TREES),
        "latest_verification": draw(SHA256),
    }
    return templates.pause(binding=binding, pause=pause), {"Binding": binding, "Pause": pause, "Choices": CHOICES}


@st.composite
def _resume_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    binding = {
        "plan_sha256": draw(SHA256),
        "amendment_sha256": draw(st.none() | SHA256),
        "pause": draw(FILE_REFS),
        "pause_sha256": draw(SHA256),
        "latest_diff": draw(TREES),
        "latest_verification": draw(SHA256),
    }
    rounds = draw(st.integers(1, 3))
    return templates.resume(binding=binding, rounds=rounds), {
        "Binding": binding,
        "Additional Budget": {"rounds": rounds},
        "Approval": kinds.RESUME_GATE,
    }


@st.composite
def _completion_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    outcome = draw(st.sampled_from(["completed", "cancelled"]))
    reviewed = outcome == "completed" or draw(st.booleans())
    binding = {
        "plan_sha256": draw(SHA256),
        "amendment_sha256": draw(st.none() | SHA256),
        "review": draw(FILE_REFS) if reviewed else None,
        "review_sha256": draw(SHA256) if reviewed else None,
        "tree": draw(TREES),
    }
    evidence_refs = draw(st.lists(st.fixed_dictionaries({"command_id": IDS, "record_sha256": SHA256}), max_size=2))
    summary = draw(PROSE)
    text = templates.completion(binding=binding, summary=summary, evidence=evidence_refs, outcome=outcome)
    return text, {"Binding": binding, "Summary": summary, "Evidence": evidence_refs, "Outcome": outcome}


@st.composite
def _repair_plan_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    context = {
        "plan_sha256": draw(SHA256),
        "finding_id": draw(FINDING_IDS),
        "classification": "IN_PLAN_REPAIR",
        "no_delta_evidence": draw(st.lists(JSON_TEXT, min_size=1, max_size=2)),
        "verification": draw(st.sampled_from(["unchanged", "strengthened"])),
        "topology": "root_only",
        "approach_retained": True,
    }
    scope = draw(st.lists(PATTERNS, max_size=3, unique=True))
    return templates.repair_plan(context=context, scope=scope), {
        "Repair Context": context,
        "Repair Scope": tuple(scope),
        "Approval": kinds.REPAIR_PLAN_GATE,
    }


CASES: dict[str, Callable[[], st.SearchStrategy[tuple[str, dict[str, Any]]]]] = {
    "plan": _plan_case,
    "amendment": _amendment_case,
    "review": _review_case,
    "repair": _repair_case,
    "pause": _pause_case,
    "resume": _resume_case,
    "completion": _completion_case,
    "repair-plan": _repair_plan_case,
}


@fuzz(300)
@given(st.sampled_from(SLUGS), st.data())
def test_templates_round_trip(slug: str, data: st.DataObject) -> None:
    text, expected = data.draw(CASES[slug](), label="case")
    art, found = _parse(slug, text.encode())
    assert art is not None, (found, text)
    assert dict(art.values) == expected
    assert _rerender(art.kind, art, text) == text


# =====================================================================================
# Approval records (approvals.jsonl)
# =====================================================================================


def _valid_approval_line(
    gate: str = "plan",
    artifact: str = "plan.md",
    sha256: str = SHA_A,
    approver: str = "Ada Author <ada@example.com>",
    now: dt.datetime = NOW,
    seq: int = 1,
) -> tuple[str, dict[str, Any]]:
    """THE one place these tests build approval records, through `approvals.record`.

    Returns the line and the field values `approvals.parse` must give back. (The
    record's signature is changing: only this function should need updating.)
    """
    line = approvals.record(gate, artifact, sha256, approver, plan="p1", seq=seq, repository=None, now=now)
    when = now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return line, {
        "seq": seq,
        "plan": "p1",
        "gate": gate,
        "artifact": artifact,
        "sha256": sha256,
        "approver": approver,
        "approved_at": when,
        "repository": None,
    }


APPROVAL_LINE, _ = _valid_approval_line()
APPROVAL_KEYS = list(jsonstrict.loads_object(APPROVAL_LINE))
_TIME_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")


def _real_utc_time(value: Any) -> bool:
    m = _TIME_RE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups())
    if not (year >= 1 and 1 <= month <= 12 and hour < 24 and minute < 60 and second < 60):
        return False
    return 1 <= day <= calendar.monthrange(year, month)[1]


def _text_ok(value: Any, *, lines: bool = False) -> bool:
    """A JSON string field: a str without control, invisible or surrogate characters."""
    return isinstance(value, str) and not (_UNSEEN_TEXT if lines else _UNSEEN).search(value)


def _approval_field_ok(key: str, value: Any) -> bool:
    """The documented rule of each approval field, written without the parser's schema."""
    if key == "schema":
        return bool(value == "harness-gate.approval/v2")
    if key == "seq":
        return type(value) is int and 1 <= value <= 1_000_000_000
    if key == "plan":
        return bool(isinstance(value, str) and re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", value))
    if key == "repository":
        return value is None or bool(isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value))
    if key == "gate":
        return value in ("plan", "amendment", "repair_resume")
    if key == "artifact":
        return bool(isinstance(value, str) and re.fullmatch(r"plan\.md|[0-9]{3}-(amendment|resume)\.md", value))
    if key == "sha256":
        return bool(isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value))
    if key == "answer":
        return bool(value == "y")
    if key == "approver":
        return _text_ok(value) and 1 <= len(value) <= 512
    if key == "approved_at":
        return _real_utc_time(value)
    raise AssertionError(key)


def _lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    return parts[:-1] if data.endswith(b"\n") else parts


def _is_canonical(raw: bytes, keys: list[str]) -> bool:
    obj = jsonstrict.loads_object(raw.decode("utf-8"), text_ok=True)
    return jsonstrict.dumps_canonical(obj) == raw.decode("utf-8") and list(obj) == keys


def _check_approval_log(data: bytes) -> list[approvals.Approval]:
    recs, found = approvals.parse("approvals.jsonl", data)
    assert {f.code for f in found} <= {"HG204", "HG215", "HG512"}
    lines = _lines(data) if data else []
    if any(f.code == "HG512" for f in found):
        return recs
    bad_lines = {f.line or 0 for f in found}
    # Every line is either a record or a finding, never both, never neither.
    assert sorted([r.line for r in recs] + sorted(bad_lines)) == list(range(1, len(lines) + 1))
    if data and not data.endswith(b"\n"):
        assert any("not terminated by a newline" in f.message for f in found)
    for rec in recs:
        raw = lines[rec.line - 1]
        assert _is_canonical(raw, APPROVAL_KEYS), raw
        obj = jsonstrict.loads_object(raw.decode())
        assert all(_approval_field_ok(k, obj[k]) for k in APPROVAL_KEYS if k in _APPROVAL_FIELDS), raw
        # Every field the parser hands out is the line's own value (whatever fields records gain).
        fields = {k: v for k, v in dataclasses.asdict(rec).items() if k in obj}
        assert fields and all(obj[k] == v for k, v in fields.items()), (fields, obj)
    return recs


_APPROVAL_FIELDS = (
    "schema",
    "seq",
    "plan",
    "gate",
    "artifact",
    "sha256",
    "answer",
    "approver",
    "approved_at",
    "repository",
)


def test_approval_oracle_can_fail() -> None:
    line = APPROVAL_LINE.encode()
    assert _is_canonical(line[:-1], APPROVAL_KEYS)
    assert not _is_canonical(line[:-1].replace(b'","', b'", "', 1), APPROVAL_KEYS)
    assert not _approval_field_ok("approved_at", "2026-02-30T00:00:00Z")
    assert not _approval_field_ok("sha256", SHA_A + "\n")
    assert not _approval_field_ok("approver", "a\u202eb")


@fuzz(200)
@given(st.binary(max_size=600))
def test_approval_arbitrary_bytes_never_raise(data: bytes) -> None:
    _check_approval_log(data)


@fuzz(400)
@given(st.integers(1, 3), st.data())
def test_approval_byte_mutations_are_reported_or_canonical(n: int, data: st.DataObject) -> None:
    log = "".join(_valid_approval_line(sha256=f"{i:064x}", seq=i + 1)[0] for i in range(n)).encode()
    kind, mutated = data.draw(byte_mutation(log), label="mutation")
    assume(mutated != log)
    recs = _check_approval_log(mutated)
    if kind in ("crlf", "bom", "invisible", "trailing_space"):
        assert len(recs) < len(_lines(mutated)), mutated


@fuzz(300)
@given(st.data())
def test_approval_json_reserialised_or_duplicated(data: st.DataObject) -> None:
    line, _ = _valid_approval_line(approver=data.draw(st.sampled_from(["Ada", "Zoë Ünal", "a/b", 'q"uote'])))
    kind, new = data.draw(json_mutation(jsonstrict.loads_object(line), compact=True), label="json")
    mutated = (new + "\n").encode()  # an indented form is a log of several (invalid) lines
    recs = _check_approval_log(mutated)
    if mutated != line.encode():
        assert recs == [], (kind, new)


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
        st.sampled_from(["plan", "y", "Y", "y\n", " y", "harness-gate.approval/v1", "PASS", "FAIL", "TIMEOUT"]),
    )
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner)
    )


def _near(valid: Any) -> st.SearchStrategy[Any]:
    """Values one small edit away from a valid one: where lenient validators slip."""
    if isinstance(valid, bool) or valid is None:
        return st.sampled_from([0, 1, "true", None, True, False, []])
    if isinstance(valid, int):
        return st.sampled_from([valid + 1, valid - 1, -valid, str(valid), float(valid), True, False, None, 2**63])
    assert isinstance(valid, str)
    return st.one_of(
        st.sampled_from(
            [valid + "\n", "\n" + valid, valid + " ", valid.upper(), valid[:-1], valid + valid[-1:], valid + "\u200b"]
        ),
        st.sampled_from(["\u0663" * len(valid), "", "\u061c" + valid, valid.replace("0", "\uff10")]),
        st.integers(0, max(0, len(valid) - 1)).flatmap(
            lambda i: st.sampled_from("0a9fz-_./: \t\x7f\u00e9").map(lambda c: valid[:i] + c + valid[i + 1 :])
        ),
    )


@fuzz(500)
@given(st.sampled_from(["schema", "sha256", "answer", "approver", "approved_at"]), st.data())
def test_approval_field_values_differential(key: str, data: st.DataObject) -> None:
    """A record whose one field takes another value is accepted exactly when that value is valid."""
    line, _ = _valid_approval_line()
    obj = jsonstrict.loads_object(line)
    value = data.draw(st.one_of(_near(obj[key]), _json_values()), label="value")
    obj[key] = value
    try:
        new = jsonstrict.dumps_canonical(obj) + "\n"
    except ValueError:
        return
    recs, found = approvals.parse("approvals.jsonl", new.encode("utf-8", "surrogatepass"))
    assert (len(recs) == 1) == _approval_field_ok(key, value), (key, value, found)


@fuzz(200)
@given(st.sampled_from(["gate", "artifact"]), st.data())
def test_approval_gate_and_artifact_values(key: str, data: st.DataObject) -> None:
    line, _ = _valid_approval_line()
    obj = jsonstrict.loads_object(line)
    value = data.draw(st.one_of(_near(obj[key]), _json_values(), st.sampled_from(["amendment", "001-resume.md"])))
    obj[key] = value
    recs, _ = approvals.parse("approvals.jsonl", (jsonstrict.dumps_canonical(obj) + "\n").encode("utf-8", "replace"))
    if recs:
        assert _approval_field_ok(key, value), value


@fuzz(300)
@given(
    gate=st.sampled_from(["plan", "amendment", "repair_resume"]),
    artifact=st.from_regex(r"plan\.md|[0-9]{3}-(amendment|resume)\.md", fullmatch=True),
    sha256=SHA256,
    approver=st.one_of(st.text(max_size=40), st.sampled_from(["Ada <a@x>", "é", "a\u202eb", "", "x" * 513])),
    now=st.datetimes(
        min_value=dt.datetime(2000, 1, 1),
        max_value=dt.datetime(2100, 1, 1),
        timezones=st.builds(dt.timezone, st.timedeltas(dt.timedelta(hours=-23), dt.timedelta(hours=23))),
    ),
)
def test_approval_record_round_trip(gate: str, artifact: str, sha256: str, approver: str, now: dt.datetime) -> None:
    ok = _approval_field_ok("approver", approver)
    assert approvals.valid_approver(approver) == ok
    if not ok:
        with pytest.raises(ValueError):
            _valid_approval_line(gate, artifact, sha256, approver, now)
        return
    line, expected = _valid_approval_line(gate, artifact, sha256, approver, now)
    assert line.endswith("\n")
    assert line.count("\n") == 1
    (rec,) = _check_approval_log(line.encode())
    assert {k: getattr(rec, k) for k in expected} == expected


# =====================================================================================
# Evidence records (evidence.jsonl)
# =====================================================================================


def _valid_evidence_line(**overrides: Any) -> str:
    fields: dict[str, Any] = {
        "command_id": "tests",
        "command": "pytest -q",
        "exit_code": 0,
        "status": "PASS",
        "key_output": "5 passed\n\tok",
        "duration_ms": 1234,
        "tree": helpers.TREE,
        "plan": "p1",
        "plan_sha256": SHA_A,
        "policy": SHA_B,
        "now": NOW,
    }
    fields.update(overrides)
    return evidence.record_line(**fields)


EVIDENCE_LINE = _valid_evidence_line()


def _evidence_problem(obj: dict[str, Any]) -> str | None:
    """The documented rules of an evidence record (docs/evidence.md), written without the parser's schema."""
    if list(obj) != evidence.KEY_ORDER:
        return "keys"
    rules: dict[str, Callable[[Any], bool]] = {
        "schema": lambda v: v == "harness-gate.evidence/v2",
        "command_id": lambda v: isinstance(v, str) and re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", v) is not None,
        "command": lambda v: _text_ok(v, lines=True) and "\n" not in v and not v.isspace() and 1 <= len(v) <= 4096,
        "exit_code": lambda v: v is None or (type(v) is int and -255 <= v <= 255),
        "status": lambda v: v in ("PASS", "FAIL", "TIMEOUT"),
        "key_output": lambda v: _text_ok(v, lines=True) and len(v) <= 8192,
        "timestamp": _real_utc_time,
        "duration_ms": lambda v: type(v) is int and v >= 0,
        "tree": lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", v) is not None,
        "plan": lambda v: isinstance(v, str) and re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", v) is not None,
        "plan_sha256": lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is not None,
        "policy": lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is not None,
    }
    for key, ok in rules.items():
        if not ok(obj[key]):
            return key
    status, code = obj["status"], obj["exit_code"]
    # PASS is exit code 0; FAIL any other exit code; TIMEOUT has none (docs/evidence.md).
    if (status == "PASS" and code != 0) or (status == "TIMEOUT" and code is not None):
        return "status"
    if status == "FAIL" and (code is None or code == 0):
        return "status"
    return None


def _check_evidence_log(data: bytes) -> None:
    found = evidence.validate("evidence.jsonl", data)
    assert {f.code for f in found} <= {"HG307"}
    lines = _lines(data) if data else []
    bad = {f.line for f in found if "(no final newline)" not in f.message}
    truncated = [f for f in found if "(no final newline)" in f.message]
    assert len(truncated) == (1 if data and not data.endswith(b"\n") else 0)
    for n, raw in enumerate(lines, start=1):
        rec, why = evidence.parse_line(raw, n)
        assert (rec is None) == bool(why)
        assert (rec is None) == (n in bad), (n, why, found)
        if rec is None:
            continue
        assert _is_canonical(raw, evidence.KEY_ORDER), raw
        obj = jsonstrict.loads_object(raw.decode(), text_ok=True)
        assert _evidence_problem(obj) is None, (raw, _evidence_problem(obj))
        assert {k: getattr(rec, k) for k in evidence.KEY_ORDER[1:]} == {k: obj[k] for k in evidence.KEY_ORDER[1:]}
    newest, problems = evidence.newest("evidence.jsonl", data, ["tests", "lint", "adhoc"])
    assert {f.code for f in problems} <= {"HG307"}
    canonical = {hashlib.sha256(raw).hexdigest() for raw in lines if evidence.parse_line(raw, 0)[0]}
    for command_id, rec in newest.items():
        assert rec.command_id == command_id
        assert rec.sha256 in canonical  # the newest records are lines the full validation accepts


_LOG_PIECES = st.sampled_from([b"\n", b"\n", b"x", b"{}", EVIDENCE_LINE.encode()[:-1], b"\r", b"\xff"])


@fuzz(300)
@given(st.lists(_LOG_PIECES, max_size=12).map(b"".join), st.integers(1, 9))
def test_evidence_readers_from_the_end_agree_with_the_full_reader(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, chunk: int
) -> None:
    """The log is read three ways: whole (`validate`), from its end in memory (`newest`) and
    from its end on disk in chunks (`newest_in_file`). Every line, an empty first one
    included, is met by all three, and a walk that found no wanted id met every bad line."""
    path = tmp_path_factory.mktemp("log") / "evidence.jsonl"
    path.write_bytes(data)
    assert list(evidence.lines_from_file_end(path, chunk)) == (list(reversed(_lines(data))) if data else [])
    everything = evidence.validate("e", data)
    assert evidence.validate_file("e", path) == everything
    for found, problems in (evidence.newest("e", data, ["none"]), evidence.newest_in_file("e", path, ["none"])):
        assert found == {}
        assert sorted(f.message for f in problems) == sorted(f.message for f in everything), (data, problems)


def test_evidence_oracle_can_fail() -> None:
    obj = jsonstrict.loads_object(EVIDENCE_LINE, text_ok=True)
    assert _evidence_problem(obj) is None
    assert _evidence_problem({**obj, "command_id": "tests\n"}) == "command_id"
    assert _evidence_problem({**obj, "status": "FAIL"}) == "status"
    assert _evidence_problem({**obj, "exit_code": True}) == "exit_code"
    assert _evidence_problem({**obj, "timestamp": "2026-13-01T00:00:00Z"}) == "timestamp"


@fuzz(200)
@given(st.binary(max_size=800))
def test_evidence_arbitrary_bytes_never_raise(data: bytes) -> None:
    _check_evidence_log(data)


@fuzz(400)
@given(st.integers(1, 3), st.data())
def test_evidence_byte_mutations_are_reported_or_canonical(n: int, data: st.DataObject) -> None:
    log = "".join(_valid_evidence_line(duration_ms=i) for i in range(n)).encode()
    kind, mutated = data.draw(byte_mutation(log), label="mutation")
    assume(mutated != log)
    _check_evidence_log(mutated)
    if kind in ("crlf", "bom", "trailing_space"):
        assert evidence.validate("evidence.jsonl", mutated), mutated


@fuzz(300)
@given(st.data())
def test_evidence_json_reserialised_or_duplicated(data: st.DataObject) -> None:
    line = _valid_evidence_line(key_output=data.draw(st.sampled_from(["", "é\tok\n", "a/b", '"q"'])))
    kind, new = data.draw(json_mutation(jsonstrict.loads_object(line, text_ok=True), compact=True), label="json")
    mutated = (new + "\n").encode()
    _check_evidence_log(mutated)
    if mutated != line.encode():
        assert evidence.validate("evidence.jsonl", mutated), (kind, new)


@fuzz(600)
@given(st.sampled_from(evidence.KEY_ORDER), st.data())
def test_evidence_field_values_differential(key: str, data: st.DataObject) -> None:
    """A record whose one field takes another value is accepted exactly when the record is valid."""
    obj = jsonstrict.loads_object(
        data.draw(
            st.sampled_from(
                [
                    EVIDENCE_LINE,
                    _valid_evidence_line(status="FAIL", exit_code=3),
                    _valid_evidence_line(status="TIMEOUT", exit_code=None),
                ]
            )
        ),
        text_ok=True,
    )
    extra = st.sampled_from([None, 0, 1, -1, 255, 256, -256, "PASS", "FAIL", "TIMEOUT", "x\ty"])
    obj[key] = data.draw(st.one_of(_near(obj[key]), _json_values(), extra), label="value")
    try:
        line = jsonstrict.dumps_canonical(obj)
    except ValueError:
        return
    rec, why = evidence.parse_line(line.encode("utf-8", "surrogatepass"), 1)
    assert (rec is not None) == (_evidence_problem(obj) is None), (key, obj[key], why)


@fuzz(300)
@given(
    command_id=st.one_of(IDS, st.text(max_size=8)),
    command=st.one_of(COMMAND_TEXT, st.text(max_size=20)),
    status_code=st.one_of(
        st.tuples(st.just("PASS"), st.just(0)),
        st.tuples(st.just("FAIL"), st.integers(-255, 255).filter(bool)),
        st.tuples(st.just("TIMEOUT"), st.none()),
        st.tuples(st.sampled_from(["PASS", "FAIL", "TIMEOUT"]), st.none() | st.integers(-300, 300)),
    ),
    key_output=st.text(max_size=300) | st.sampled_from(["\x1b[31mred\x1b[0m\r\n", "a\rb\x00c", "x" * 5000]),
    duration_ms=st.integers(0, 10**12),
    tree=TREES,
    now=st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1)),
)
def test_evidence_record_round_trip(
    command_id: str,
    command: str,
    status_code: tuple[str, int | None],
    key_output: str,
    duration_ms: int,
    tree: str,
    now: dt.datetime,
) -> None:
    status, exit_code = status_code
    now = now.replace(tzinfo=dt.timezone.utc)
    fields: dict[str, Any] = {
        "command_id": command_id,
        "command": command,
        "exit_code": exit_code,
        "status": status,
        "key_output": key_output,
        "duration_ms": duration_ms,
        "tree": tree,
        "plan": "p1",
        "plan_sha256": SHA_A,
        "policy": SHA_B,
    }
    obj = {
        "schema": evidence.SCHEMA_ID,
        **fields,
        "key_output": evidence.clean_output(key_output),
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    obj = {k: obj[k] for k in evidence.KEY_ORDER}
    # Captured output is always storable, whatever the command printed.
    assert _text_ok(obj["key_output"], lines=True)
    if _evidence_problem(obj) is not None:
        with pytest.raises(ValueError):
            _valid_evidence_line(**fields, now=now)
        return
    line = _valid_evidence_line(**fields, now=now)
    assert line == jsonstrict.dumps_canonical(obj) + "\n"
    rec, why = evidence.parse_line(line[:-1].encode(), 7)
    assert rec is not None, why
    assert {k: getattr(rec, k) for k in evidence.KEY_ORDER[1:]} == {k: obj[k] for k in evidence.KEY_ORDER[1:]}
    assert rec.line == 7


# =====================================================================================
# Configuration (.harness-gate.toml, [tool.harness-gate] in pyproject.toml)
# =====================================================================================

_STAGES = ("pre-commit", "pre-push", "ci")
_DIR_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*")


def _expected_config(own: bytes | None, pyproject: bytes | None) -> config.Config | None:
    """docs/config.md, written without the parser's schema; None when it is a configuration error.
    `.harness-gate.toml`, when present, is the configuration: pyproject.toml is not read."""
    tables = []
    try:
        if own is not None:
            tables.append((".harness-gate.toml", tomllib.loads(own.decode("utf-8"))))
        elif pyproject is not None:
            tool = tomllib.loads(pyproject.decode("utf-8")).get("tool", {})
            if isinstance(tool, dict) and "harness-gate" in tool:
                tables.append(("pyproject.toml", tool["harness-gate"]))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not tables:
        return config.Config()
    where, table = tables[0]
    if not isinstance(table, dict):
        return None
    types: dict[str, type] = {
        "artifacts_dir": str,
        "require_signed_approvals": bool,
        "require_signed_reviews": bool,
        "require_distinct_reviewer": bool,
        "max_artifact_bytes": int,
        "evidence_stages": list,
        "review_stages": list,
    }
    for key, value in table.items():
        if key not in types or type(value) is not types[key]:  # `type is`: a bool is no int here
            return None
    artifacts_dir = table.get("artifacts_dir", "harness")
    if not _DIR_RE.fullmatch(artifacts_dir):
        return None
    if not 1024 <= table.get("max_artifact_bytes", 1024) <= 16 * 1024 * 1024:
        return None
    for key in ("evidence_stages", "review_stages"):
        stages = table.get(key, [])
        if any(s not in _STAGES for s in stages) or len(set(stages)) != len(stages):
            return None
    return config.Config(
        artifacts_dir=artifacts_dir,
        require_signed_approvals=table.get("require_signed_approvals", False),
        require_signed_reviews=table.get("require_signed_reviews", False),
        require_distinct_reviewer=table.get("require_distinct_reviewer", False),
        max_artifact_bytes=table.get("max_artifact_bytes", config.DEFAULT_MAX_BYTES),
        evidence_stages=tuple(table.get("evidence_stages", config.Config.evidence_stages)),
        review_stages=tuple(table.get("review_stages", config.Config.review_stages)),
        source=where,
    )


def _check_config(own: bytes | None, pyproject: bytes | None) -> None:
    want = _expected_config(own, pyproject)
    try:
        got = config.parse(own, pyproject)
    except ConfigError as exc:
        assert want is None, (own, pyproject, exc.message)
        assert exc.code == "HG902"
        return
    assert got == want, (own, pyproject)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON escapes are TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


_TOML_VALUES = st.recursive(
    st.one_of(
        st.booleans(),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(allow_nan=False),
        st.text(max_size=12),
        st.sampled_from(["harness", "meta/harness", "harness\n", "harness/", ".git/h", "pre-push", "ci", "\u0661"]),
        st.sampled_from([1024, 1023, 16 * 1024 * 1024, 16 * 1024 * 1024 + 1]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=6,
)
_CONFIG_KEYS = st.sampled_from(
    [
        "artifacts_dir",
        "require_signed_approvals",
        "require_signed_reviews",
        "require_distinct_reviewer",
        "max_artifact_bytes",
        "evidence_stages",
        "review_stages",
    ]
)
_STAGE_LISTS = st.lists(st.sampled_from([*_STAGES, "CI", "push"]), max_size=4)
CONFIG_TABLES = st.dictionaries(
    st.one_of(_CONFIG_KEYS, st.text(max_size=6)),
    st.one_of(_TOML_VALUES, _STAGE_LISTS),
    max_size=5,
)


def _toml(table: dict[str, Any], header: str = "") -> bytes:
    lines = [header] if header else []
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


VALID_CONFIG = _toml(
    {
        "artifacts_dir": "meta/harness",
        "require_signed_approvals": True,
        "require_signed_reviews": True,
        "require_distinct_reviewer": False,
        "max_artifact_bytes": 4096,
        "evidence_stages": ["pre-push", "ci"],
        "review_stages": ["ci"],
    }
)


def test_config_oracle_agrees_on_valid_and_can_fail() -> None:
    assert _expected_config(VALID_CONFIG, None) == config.parse(VALID_CONFIG, None)
    assert _expected_config(b'artifacts_dir = "harness\\n"\n', None) is None
    assert _expected_config(b"max_artifact_bytes = true\n", None) is None


@fuzz(200)
@given(st.one_of(st.none(), st.binary(max_size=300)), st.one_of(st.none(), st.binary(max_size=300)))
def test_config_arbitrary_bytes_raise_only_config_errors(own: bytes | None, pyproject: bytes | None) -> None:
    _check_config(own, pyproject)


@fuzz(400)
@given(CONFIG_TABLES, st.sampled_from(["own", "pyproject", "both"]))
def test_config_tables_differential(table: dict[str, Any], where: str) -> None:
    own = _toml(table) if where in ("own", "both") else None
    pyproject = _toml(table, '[project]\nname = "x"\n\n[tool.harness-gate]') if where != "own" else None
    _check_config(own, pyproject)


@fuzz(400)
@given(st.data(), st.booleans())
def test_config_mutations_differential(data: st.DataObject, in_pyproject: bool) -> None:
    text = b"[tool.harness-gate]\n" + VALID_CONFIG if in_pyproject else VALID_CONFIG
    _, mutated = data.draw(byte_mutation(text), label="mutation")
    if in_pyproject:
        _check_config(None, mutated)
    else:
        _check_config(mutated, None)


@pytest.mark.parametrize("data", [b"a = " + b"[" * 5000 + b"]" * 5000, b"a = " + b"{b = " * 5000 + b"1" + b"}" * 5000])
def test_config_deep_nesting_is_a_config_error(data: bytes) -> None:
    with pytest.raises(ConfigError):
        config.parse(data, None)
