"""The one boundary dialect: git's `:(glob)` pathspec magic at the repository root.

Matching is on path bytes, exactly as git matches them:

* patterns are anchored at the root;
* `*`, `?` and `[...]` match within one path component (never `/`);
* a run of two or more `*` that starts the pattern, follows a `/`, or is the
  pattern's first wildcard, and is followed by `/` or the end, also crosses `/`
  (`**/` there may match no directory); any other run acts as a single `*`;
* a pattern matches a path whole, and also (like git) every path below a
  directory whose name equals the pattern literally, so `src/app` and
  `src/app/` cover `src/app/**`.

git's own `git ls-files ':(glob)PATTERN'` is the oracle the tests compare with. Patterns
come with a pull request: matching takes time linear in the path's length times the
pattern's for every one of them (`_source`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_gate.jsonstrict import UNSAFE_CHARS

WILDCARDS = frozenset(b"*?[")
# The trust anchor's name under the artifacts root: the one path there a plan may name.
SIGNERS = "allowed_signers"
# Paths no sane boundary covers all of at once: a boundary that matches them
# all matches everything, which is not a boundary.
_UNIVERSE_PROBES = (b"zq9x.k", b"zq9x/yw8v/ut7s.k", b".zq9x/r", b"zq9x/.yw8v/ut7s")


class PatternError(ValueError):
    """A pattern outside the dialect; the message says why."""


def has_wildcard(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def validate(pattern: str, artifacts_dir: str) -> None:
    """Raise PatternError when `pattern` is not a valid boundary pattern."""
    if pattern == "":
        raise PatternError("empty pattern")
    if len(pattern) > 4096:
        raise PatternError("pattern longer than 4096 characters")
    if UNSAFE_CHARS.search(pattern):
        raise PatternError("control or bidirectional-override characters are not allowed")
    if pattern != pattern.strip():
        raise PatternError("leading or trailing spaces are not allowed")
    if "\\" in pattern:
        raise PatternError("backslashes are not allowed (no escapes, no Windows paths)")
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:", pattern):
        raise PatternError("absolute paths are not allowed; patterns are relative to the repository root")
    if pattern.startswith("!"):
        raise PatternError("`!` negation is not supported; a boundary only grants")
    if pattern.startswith(":"):
        raise PatternError("pathspec magic (`:`) is not allowed; the dialect is fixed")
    # One trailing `/` is allowed (`src/app/`); stripping them all let `src//` through as
    # `src/`, a second spelling with an empty segment (docs: `a//b` is invalid).
    parts = pattern.removesuffix("/").split("/") if pattern != "/" else [""]
    if pattern == ".":
        raise PatternError("`.` is the whole repository, which is no boundary")
    if pattern.startswith("./"):
        raise PatternError("a leading `./` is not allowed; write the path from the root")
    for part in parts:
        if part == "":
            raise PatternError("empty path segment (`//`)")
        if part in (".", ".."):
            raise PatternError(f"`{part}` segments are not allowed")
        if part.lower() == ".git":
            raise PatternError("patterns into `.git/` are not allowed")
    if pattern.endswith("/") and has_wildcard(pattern):
        raise PatternError("a trailing `/` after a wildcard matches no file in git; end with `/**`")
    # The one path under the artifacts root a plan may name: the trust anchor, exactly
    # (a protected path; docs/threat-model.md).
    if _reaches(parts, artifacts_dir.strip("/").split("/")) and pattern != f"{artifacts_dir}/{SIGNERS}":
        raise PatternError(f"the artifacts root `{artifacts_dir}/` is outside every boundary")
    _check_brackets(pattern)
    _compile(pattern.encode("utf-8", "surrogateescape"))


def _reaches(parts: list[str], root: list[str]) -> bool:
    """Whether a pattern names the artifacts root: its leading segments match the root's
    (in any letter case) and at least one of them says something of the root's name.
    Generic patterns (`**/*.py`, `*/x`) stay valid: the root is outside every boundary
    anyway, so they never cover it."""
    specific = False
    for i, name in enumerate(root):
        if i >= len(parts):
            return False  # the pattern ends above the root
        part = parts[i]
        if part in ("*", "**") or set(part) == {"*"}:
            if "**" in part:
                return specific  # crosses from here: it names the root only if specific
            continue
        head = part.rstrip("*")
        if len(part) - len(head) >= 2 and not any(has_wildcard(p) for p in (*parts[:i], head)):
            # `harness**`, `h**`: a run of stars that ends the segment and is the pattern's
            # first wildcard crosses `/` (git's rule, see _tokens), so it may reach into
            # the root when its start matches. Any other run is a single `*` (`?**`, `**a`,
            # `h**s` cover single names only) and is compared below like any segment.
            return _names(head + "*", name)
        if not _names(part, name):
            return False
        specific = True
    # All root segments matched: it descends into the root, or (wildcard-free) is the
    # root itself and so covers everything below it.
    return specific and (len(parts) > len(root) or not has_wildcard(parts[len(root) - 1]))


def _names(part: str, name: str) -> bool:
    """Whether the segment pattern `part` matches the root's segment `name` in any letter case."""
    try:
        regex = _compile(part.casefold().encode())
    except PatternError:
        # Folding can reverse a valid range (`[Z-a]` becomes `[z-a]`): compare ASCII letters
        # case-insensitively instead. A range that is reversed as written still fails here.
        regex = re.compile(_source(part.encode())[0], re.DOTALL | re.IGNORECASE)
    return regex.fullmatch(name.casefold().encode()) is not None


def _check_brackets(pattern: str) -> None:
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] in "!^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            close = pattern.find("]", j)
            if close < 0:
                raise PatternError("unclosed `[`")
            body = pattern[j:close]
            if "[:" in body or "[=" in body or "[." in body:
                raise PatternError("character classes (`[[:alpha:]]`) are not supported")
            if "/" in body:
                raise PatternError("`/` inside `[...]` never matches")
            i = close + 1
        else:
            i += 1


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
def _tokens(pattern: bytes) -> tuple[_Token, ...]:
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


def _translate(pattern: bytes) -> bytes:
    """The pattern's plain regular expression over path bytes. A backtracking engine may
    take exponential time on it (`*a*a*a*b`, `**/**/**/x`): `_source` is what matches."""
    return b"".join(t.regex for t in _tokens(pattern))


@functools.lru_cache(maxsize=4096)
def _source(pattern: bytes, group: int = 0) -> tuple[bytes, int]:
    """The regular expression that matches `pattern` in time linear in the path's length
    times the pattern's, and how many groups it numbers from `group` on (atomic groups
    are named, each name once in a combined expression).

    The plain expression (`_translate`) can backtrack exponentially: `re` tries every
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
    every = _tokens(pattern)
    # `**/**/` is `**/`, and `**/**` at the end is `**`: the first of the two only adds choices.
    tokens = [
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

    dirs = [k for k, t in enumerate(tokens) if t.kind == _DIRS]
    bounds = [*dirs, len(tokens)]
    out = [piece(tokens[: bounds[0]])]
    for k, at in enumerate(dirs):
        body = piece(tokens[at + 1 : bounds[k + 1]])
        last = k == len(dirs) - 1
        out.append(tokens[at].regex + body if last else atomic(b"(?:.*?/)??" + body))
    return b"".join(out), len(named)


@functools.lru_cache(maxsize=4096)
def _compile(pattern: bytes) -> re.Pattern[bytes]:
    try:
        return re.compile(_source(pattern)[0], re.DOTALL)
    except re.error as exc:  # pragma: no cover - _tokens escapes everything it emits
        raise PatternError(f"cannot compile: {exc}") from None


# Atomic groups per expression. At each step that may backtrack, `re` saves the marks of
# every group numbered up to the highest one set: in one expression of thousands of
# atomic patterns a late alternative pays for all the earlier groups (measured: 1000
# patterns, 0.8 s on one 1.4 kB path against 16 ms for the same expressions apart).
_GROUPS = 32


def _combined(raws: Sequence[bytes]) -> tuple[re.Pattern[bytes], ...]:
    """One alternation of the patterns, or several when their atomic groups are many."""
    alternations: list[list[bytes]] = [[]]
    groups = 0
    for raw in raws:
        source, made = _source(raw, groups)
        if made and groups + made > _GROUPS and alternations[-1]:
            alternations.append([])
            source, made = _source(raw, 0)
            groups = 0
        alternations[-1].append(b"(?:" + source + b")")
        groups += made
    return tuple(re.compile(b"|".join(a), re.DOTALL) for a in alternations)


def _star_chunks(segment: bytes) -> tuple[bytes, ...] | None:
    """The literal chunks between single `*`s, when `*` is the segment's only wildcard."""
    if b"?" in segment or b"[" in segment or b"**" in segment:
        return None
    return tuple(segment.split(b"*"))


def _star_match(chunks: tuple[bytes, ...], name: bytes) -> bool:
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


def _buckets(raw: bytes) -> tuple[bytes, bytes]:
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


@dataclass(frozen=True)
class Boundary:
    """A compiled write boundary, fast for thousands of patterns and paths.

    Exact paths and directories are set lookups, `DIR/**` is a directory lookup,
    `DIR/*.py`-style patterns (single `*`s in the last segment only) are indexed by
    their directory and matched without regular expressions. Every other pattern is
    filed under the literal directory or file name it pins (if any) and tested only
    against paths that have it, in one regular expression per bucket.
    """

    patterns: tuple[str, ...]
    _literal: frozenset[bytes] = field(repr=False)  # the path, or a leading directory of it
    _literal_dirs: frozenset[bytes] = field(repr=False)  # strictly below these
    _star_last: dict[bytes, tuple[tuple[bytes, ...], ...]] = field(repr=False)
    _by_dir: dict[bytes, tuple[bytes, ...]] = field(repr=False)
    _by_name: dict[bytes, tuple[bytes, ...]] = field(repr=False)
    _rest: tuple[bytes, ...] = field(repr=False)
    _compiled: dict[tuple[str, bytes], tuple[re.Pattern[bytes], ...]] = field(repr=False, default_factory=dict)
    # Directory -> whether every path below it matches: paths come many to a directory.
    _covered: dict[bytes, bool] = field(repr=False, default_factory=dict)

    @classmethod
    def cached(cls, patterns: Sequence[str]) -> Boundary:
        """The compiled boundary, shared by every caller with the same pattern list: a
        range judges many commits under one plan, and the regular expressions built on
        demand are kept with it."""
        last = _last_cached[0]
        if last is not None and last[0] is patterns:
            return last[1]  # the very same tuple again (a replayed plan's policy): no hashing
        found = _compiled_boundary(tuple(patterns))
        if isinstance(patterns, tuple):
            _last_cached[0] = (patterns, found)
        return found

    @functools.cached_property
    def exact(self) -> frozenset[str]:
        """The wildcard-free patterns, without a trailing `/`: the paths named exactly
        (only these may allow a protected path or a new submodule)."""
        return frozenset(p.rstrip("/") for p in self.patterns if not has_wildcard(p))

    @classmethod
    def compile(cls, patterns: Sequence[str]) -> Boundary:
        literal: set[bytes] = set()
        dirs: set[bytes] = set()
        star_last: dict[bytes, list[tuple[bytes, ...]]] = {}
        by_dir: dict[bytes, list[bytes]] = {}
        by_name: dict[bytes, list[bytes]] = {}
        rest: list[bytes] = []
        for p in patterns:
            raw = p.encode("utf-8", "surrogateescape")
            if raw.endswith(b"/"):
                dirs.add(raw.rstrip(b"/"))
                continue
            literal.add(raw)  # like git: a path named exactly like the pattern, wildcards and all
            if not has_wildcard(p):
                continue
            head, _, last = raw.rpartition(b"/")
            if raw.endswith(b"/**") and raw[:-3] and not has_wildcard(p[:-3]) and not raw[:-3].endswith(b"/"):
                dirs.add(raw[:-3])
                continue
            chunks = _star_chunks(last) if not any(c in WILDCARDS for c in head) else None
            if chunks is not None:
                star_last.setdefault(head, []).append(chunks)
                continue
            lead, name = _buckets(raw)
            if lead:
                by_dir.setdefault(lead, []).append(raw)
            elif name:
                by_name.setdefault(name, []).append(raw)
            else:
                rest.append(raw)

        def freeze(d: dict[bytes, list[Any]]) -> dict[bytes, tuple[Any, ...]]:
            return {k: tuple(v) for k, v in d.items()}

        return cls(
            tuple(patterns), frozenset(literal), frozenset(dirs), freeze(star_last), freeze(by_dir), freeze(by_name),
            tuple(rest),
        )  # fmt: skip

    def _fullmatch(self, kind: str, key: bytes, raws: tuple[bytes, ...], path: bytes) -> bool:
        regexes = self._compiled.get((kind, key))
        if regexes is None:
            regexes = self._compiled[(kind, key)] = _combined(raws)
        for regex in regexes:  # noqa: SIM110  (any() makes a generator per path: slower)
            if regex.fullmatch(path) is not None:
                return True
        return False

    def matches(self, path: bytes) -> bool:
        if path in self._literal:
            return True
        head, _, name = path.rpartition(b"/")
        if head and self._dir_covered(head):
            return True
        if self._star_last:
            for chunks in self._star_last.get(head, ()):
                if _star_match(chunks, name):
                    return True
        if self._by_dir:
            pos = path.find(b"/")
            while pos >= 0:
                lead = path[:pos]
                raws = self._by_dir.get(lead)
                if raws and self._fullmatch("dir", lead, raws, path):
                    return True
                pos = path.find(b"/", pos + 1)
        raws = self._by_name.get(name) if self._by_name else None
        if raws and self._fullmatch("name", name, raws, path):
            return True
        for regex in self._rest_regexes:  # noqa: SIM110  (as in _fullmatch)
            if regex.fullmatch(path) is not None:
                return True
        return False

    @functools.cached_property
    def _rest_regexes(self) -> tuple[re.Pattern[bytes], ...]:
        # Looked up once: every path that is not covered sooner comes here.
        return _combined(self._rest) if self._rest else ()

    def which(self, path: bytes) -> str | None:
        """The first pattern (in plan order) that covers `path`, for `explain`."""
        for p in self.patterns:
            if Boundary.compile([p]).matches(path):
                return p
        return None

    def _dir_covered(self, head: bytes) -> bool:
        """Whether `head` or a directory above it is a literal pattern or `DIR/`/`DIR/**`."""
        hit = self._covered.get(head)
        if hit is None:
            hit = self._covered[head] = head in self._literal_dirs or self._literal_hit(head) is not None
        return hit

    def _literal_hit(self, path: bytes) -> bytes | None:
        # The path itself, then every leading directory of it.
        if path in self._literal:
            return path
        pos = path.find(b"/")
        while pos >= 0:
            head = path[:pos]
            if head in self._literal or head in self._literal_dirs:
                return head
            pos = path.find(b"/", pos + 1)
        return None

    def covers_everything(self) -> bool:
        return all(self.matches(p) for p in _UNIVERSE_PROBES)


def prefix_index(compiled: Boundary) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """The paths `compiled` allows by name, and the directories it allows every path below
    (`DIR/**`, `DIR/`, and a literal pattern, like git): what `matches` answers first, with
    no wildcard matched. A sound part of the boundary, never more of it."""
    return compiled._literal, compiled._literal_dirs | compiled._literal


# Paths joined at a time by `holding`: joining holds a buffer descriptor of ~80 bytes per
# item besides the joined bytes, 8 MB for 100k paths at once.
_HOLDING_BATCH = 4096


def holding(paths: Sequence[bytes], words: Iterable[bytes], *, lower: bool = False) -> set[bytes]:
    """The paths in which one of `words` occurs (in the path with its ASCII letters
    lower-cased, with `lower`). A change may touch 100k paths: this is one C-level search
    per word over thousands of them joined by NUL, which no path holds, not a search per path."""
    words = tuple(words)
    out: set[bytes] = set()
    for first in range(0, len(paths), _HOLDING_BATCH):
        joined = b"\0".join(paths[first : first + _HOLDING_BATCH])
        text = joined.lower() if lower else joined  # the same length: offsets carry over
        for word in words:
            at = text.find(word)
            while at >= 0:
                start = joined.rfind(b"\0", 0, at) + 1
                end = joined.find(b"\0", at)
                end = len(joined) if end < 0 else end
                out.add(joined[start:end])
                at = text.find(word, end)
    return out


_last_cached: list[tuple[tuple[str, ...], Boundary] | None] = [None]


@functools.lru_cache(maxsize=64)
def _compiled_boundary(patterns: tuple[str, ...]) -> Boundary:
    return Boundary.compile(patterns)


def inside(pattern: str, patterns: Sequence[str]) -> bool:
    """True when everything `pattern` can cover is covered by `patterns` (soundly, not
    completely: a pattern is inside when it is one of them, or is a wildcard-free path
    whose whole subtree a wildcard-free pattern or a `DIR/**` pattern covers)."""
    if pattern in patterns:
        return True
    if has_wildcard(pattern):
        return False
    path = pattern.rstrip("/")
    below_only = pattern.endswith("/")
    for other in patterns:
        if has_wildcard(other):
            head = other[:-3]
            if other.endswith("/**") and not has_wildcard(head) and path.startswith(head + "/"):
                return True
            continue
        base = other.rstrip("/")
        if path.startswith(base + "/") or (path == base and (below_only or not other.endswith("/"))):
            return True
    return False


def overlaps(a: str, b: str) -> bool:
    """Whether some path may be covered by both patterns: soundly, never False when one
    is (tests/test_approvers.py holds it to the matcher), not completely. Segment by
    segment from the root: False only where two segments cannot name the same thing (two
    different names, or a name the other's wildcards do not match), before either pattern
    has a run of stars, which may cross `/`, or ends (a wildcard-free pattern covers what
    is below it)."""
    left, right = a.rstrip("/").split("/"), b.rstrip("/").split("/")
    for x, y in zip(left, right, strict=False):  # the shorter one ends: see above
        if "**" in x or "**" in y:
            return True
        if x == y:
            continue
        wild_x, wild_y = has_wildcard(x), has_wildcard(y)
        if wild_x and wild_y:
            return True  # two wildcard segments: assumed to meet
        if not wild_x and not wild_y:
            return False
        pattern, name = (x, y) if wild_x else (y, x)
        if (
            _compile(pattern.encode("utf-8", "surrogateescape")).fullmatch(name.encode("utf-8", "surrogateescape"))
            is None
        ):
            return False
    return True


def validate_all(patterns: Iterable[str], artifacts_dir: str) -> list[tuple[str, str]]:
    """(pattern, reason) for each invalid pattern, then for the set as a whole."""
    bad = []
    good = []
    for p in patterns:
        try:
            validate(p, artifacts_dir)
        except PatternError as exc:
            bad.append((p, str(exc)))
        else:
            good.append(p)
    if good and Boundary.compile(good).covers_everything():
        bad.append((", ".join(good), "the boundary matches every path; list what the plan may write"))
    return bad
