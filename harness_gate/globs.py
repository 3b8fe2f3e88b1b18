"""The boundary dialect's glob compiler: a pattern read as tokens once, and the regular
expression over path bytes that matches it in time linear in the path's length times the
pattern's (`source`), alone or many in one alternation (`combined`); and the pieces the
Boundary's indexes use to test only the patterns that can match (`buckets`, `star_chunks`).
boundary.py says which patterns are valid and matches sets of them."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

WILDCARDS = frozenset(b"*?[")


class PatternError(ValueError):
    """A pattern outside the dialect; the message says why."""


# Token kinds: which pieces of a pattern's regular expression are fixed-width and where
# the unbounded ones are, which is all that decides how matching can backtrack.
_BYTE = 0  # one byte of one component: a literal, `?` or `[...]`
_SLASH = 1  # a literal `/`
_STAR = 2  # `*` (or a run acting as one): `[^/]*`
_DIRS = 3  # `**/` at the start: zero or more directories, `(?:.*/)?`
_ALL = 4  # `**` at the start and at the pattern's end: anything, `.*` (always the last token)


@dataclass(frozen=True)
class _Token:
    kind: int
    regex: bytes
    # For one byte of one component: a run of the other bytes, which stops where this
    # token can match first (`[^/a]*` for `a`; nothing for `?`).
    others: bytes | None = None


@functools.lru_cache(maxsize=4096)
def tokens(pattern: bytes) -> tuple[_Token, ...]:  # noqa: PLR0912, PLR0915  (one step per case, in the order they are judged)
    """The pattern as tokens: the one reading of the dialect that every matcher uses."""
    out: list[_Token] = []
    i, n = 0, len(pattern)
    # git compares the literal prefix before the first wildcard on its own, then runs
    # wildmatch on the rest: a `**` right at that point counts as "at the start".
    first_wild = next((k for k in range(n) if pattern[k] in WILDCARDS), n)
    while i < n:
        c = pattern[i : i + 1]
        if c == b"*":
            j = i
            while j < n and pattern[j : j + 1] == b"*":
                j += 1
            run = j - i
            follows = pattern[j : j + 1]
            at_start = i == first_wild or pattern[i - 1 : i] == b"/"
            if run >= 2 and at_start and follows == b"/":
                out.append(_Token(_DIRS, b"(?:.*/)?"))
                j += 1
            elif run >= 2 and at_start and follows == b"":
                out.append(_Token(_ALL, b".*"))
            else:
                out.append(_Token(_STAR, b"[^/]*"))
            i = j
        elif c == b"?":
            out.append(_Token(_BYTE, b"[^/]", b""))
            i += 1
        elif c == b"[":
            j = i + 1
            negate = False
            if j < n and pattern[j : j + 1] in (b"!", b"^"):
                negate = True
                j += 1
            start = j
            if j < n and pattern[j : j + 1] == b"]":
                j += 1
            close = pattern.find(b"]", j)
            if close < 0:
                raise PatternError("unclosed `[`")
            body = pattern[start:close]
            items = []
            k = 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1 : k + 2] == b"-":
                    lo, hi = body[k : k + 1], body[k + 2 : k + 3]
                    if lo > hi:
                        raise PatternError(f"reversed range `{lo.decode('latin-1')}-{hi.decode('latin-1')}`")
                    items.append(re.escape(lo) + b"-" + re.escape(hi))
                    k += 3
                else:
                    items.append(re.escape(body[k : k + 1]))
                    k += 1
            inner = b"".join(items)
            listed, unlisted = b"(?:(?!/)[" + inner + b"])", b"[^/" + inner + b"]"
            if negate:
                out.append(_Token(_BYTE, unlisted, listed + b"*"))
            else:
                out.append(_Token(_BYTE, listed, unlisted + b"*"))
            i = close + 1
        elif c == b"/":
            out.append(_Token(_SLASH, b"/"))
            i += 1
        else:
            out.append(_Token(_BYTE, re.escape(c), b"[^/" + re.escape(c) + b"]*"))
            i += 1
    return tuple(out)


def translate(pattern: bytes) -> bytes:
    """The pattern's plain regular expression over path bytes. A backtracking engine may
    take exponential time on it (`*a*a*a*b`, `**/**/**/x`): `source` is what matches."""
    return b"".join(t.regex for t in tokens(pattern))


@functools.lru_cache(maxsize=4096)
def source(pattern: bytes, group: int = 0) -> tuple[bytes, int]:
    """The regular expression that matches `pattern` in time linear in the path's length
    times the pattern's, and how many groups it numbers from `group` on (atomic groups
    are named, each name once in a combined expression).

    The plain expression (`translate`) can backtrack exponentially: `re` tries every
    way to share a name among several `*` of one component, or a path among several
    `**/`. Here those choices are cut where taking the first one loses no match:

    * a component with several `*`, `C0*C1*...*Ck` (each Ci fixed-width, without `/`):
      the leftmost Ci after C(i-1) is as good as any later one, since the next `*`
      absorbs the gap (the classic glob argument). So every `*` but the last, with the
      Ci after it, becomes an atomic `[^/]*?Ci`, or, when Ci is one byte, the run of the
      bytes Ci does not match followed by Ci (`[^/a]*a`), which can stop nowhere else.
      The last `*` is followed by the component's end, which fixes where it stops.
    * several `**/`: each piece between two of them ends with `/`, so from wherever it
      starts it spans a fixed number of whole components, and it ends the earlier the
      earlier it starts; the next `**/` may skip any directories. So every `**/` but the
      last, with the piece after it, becomes an atomic `(?:.*?/)??PIECE`: the leftmost
      start. (`**/**/` is `**/` first.)

    An atomic group is `(?=(?P<n>X))(?P=n)`: a lookahead is never re-entered, and Python
    3.10 has no `(?>X)`. With them each component is matched at most once per start of
    its piece and each piece tries each start once: no pattern costs more than about
    len(path) x len(pattern) steps. A pattern with at most one `*` per component and at
    most one `**/` needs none of it (its only choices, where a single `*` or `**/` stops,
    are each decided by what must follow) and keeps its plain expression: the fast path
    of every ordinary pattern.
    """
    every = tokens(pattern)
    # `**/**/` is `**/`, and `**/**` at the end is `**`: the first of the two only adds choices.
    kept = [
        t
        for k, t in enumerate(every)
        if not (t.kind == _DIRS and k + 1 < len(every) and every[k + 1].kind in (_DIRS, _ALL))
    ]
    named: list[bytes] = []

    def atomic(regex: bytes) -> bytes:
        name = b"g%d" % (group + len(named))
        named.append(name)
        return b"(?=(?P<" + name + b">" + regex + b"))(?P=" + name + b")"

    def piece(part: Sequence[_Token]) -> bytes:
        out: list[bytes] = []
        component: list[_Token] = []
        for token in (*part, None):
            if token is not None and token.kind != _SLASH:
                component.append(token)
                continue
            stars = [k for k, t in enumerate(component) if t.kind == _STAR]
            if len(stars) < 2:
                out.extend(t.regex for t in component)
            else:
                out.extend(t.regex for t in component[: stars[0]])
                for here, after in itertools.pairwise(stars):
                    chunk = component[here + 1 : after]
                    if len(chunk) == 1 and chunk[0].others is not None:
                        # One byte: the run of other bytes reaches its leftmost place and
                        # can stop nowhere else, so no atomic group is needed (and the
                        # commonest shape, `*a*a*b`, stays as fast as a plain expression).
                        out.append(chunk[0].others + chunk[0].regex)
                    else:
                        out.append(atomic(b"[^/]*?" + b"".join(t.regex for t in chunk)))
                out.extend(t.regex for t in component[stars[-1] :])
            if token is not None:
                out.append(token.regex)
            component = []
        return b"".join(out)

    dirs = [k for k, t in enumerate(kept) if t.kind == _DIRS]
    bounds = [*dirs, len(kept)]
    out = [piece(kept[: bounds[0]])]
    for k, at in enumerate(dirs):
        body = piece(kept[at + 1 : bounds[k + 1]])
        last = k == len(dirs) - 1
        out.append(kept[at].regex + body if last else atomic(b"(?:.*?/)??" + body))
    return b"".join(out), len(named)


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: bytes) -> re.Pattern[bytes]:
    try:
        return re.compile(source(pattern)[0], re.DOTALL)
    except re.error as exc:  # pragma: no cover - `tokens` escapes everything it emits
        raise PatternError(f"cannot compile: {exc}") from None


# Atomic groups per expression. At each step that may backtrack, `re` saves the marks of
# every group numbered up to the highest one set: in one expression of thousands of
# atomic patterns a late alternative pays for all the earlier groups (measured: 1000
# patterns, 0.8 s on one 1.4 kB path against 16 ms for the same expressions apart).
_GROUPS = 32


def combined(raws: Sequence[bytes]) -> tuple[re.Pattern[bytes], ...]:
    """One alternation of the patterns, or several when their atomic groups are many."""
    alternations: list[list[bytes]] = [[]]
    groups = 0
    for raw in raws:
        text, made = source(raw, groups)
        if made and groups + made > _GROUPS and alternations[-1]:
            alternations.append([])
            text, made = source(raw, 0)
            groups = 0
        alternations[-1].append(b"(?:" + text + b")")
        groups += made
    return tuple(re.compile(b"|".join(a), re.DOTALL) for a in alternations)


def star_chunks(segment: bytes) -> tuple[bytes, ...] | None:
    """The literal chunks between single `*`s, when `*` is the segment's only wildcard."""
    if b"?" in segment or b"[" in segment or b"**" in segment:
        return None
    return tuple(segment.split(b"*"))


def star_match(chunks: tuple[bytes, ...], name: bytes) -> bool:
    first, last = chunks[0], chunks[-1]
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    pos, end = len(first), len(name) - len(last)
    for chunk in chunks[1:-1]:
        found = name.find(chunk, pos, end)
        if found < 0:
            return False
        pos = found + len(chunk)
    return True


def buckets(raw: bytes) -> tuple[bytes, bytes]:
    """(literal leading directory, literal last segment) a path must have to match `raw`;
    empty when the pattern does not pin one. Used to test only the patterns that can match."""
    parts = raw.split(b"/")
    lead = []
    for part in parts[:-1]:
        if any(c in WILDCARDS for c in part):
            break
        lead.append(part)
    last = parts[-1]
    name = b""
    if len(parts) > 1 and not any(c in WILDCARDS for c in last):
        before = parts[-2]
        # `a**/x` may match `ax` (git's `**/` after the literal prefix matches no
        # directory): only a whole `**` segment, or none at all, pins the last name.
        if b"**" not in before or before == b"**" or set(before) == {ord("*")}:
            name = last
    return b"/".join(lead), name
