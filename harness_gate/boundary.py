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

git's own `git ls-files ':(glob)PATTERN'` is the oracle the tests compare with.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_gate.jsonstrict import UNSAFE_CHARS

WILDCARDS = frozenset(b"*?[")
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
    if _reaches(parts, artifacts_dir.strip("/").split("/")):
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
            # first wildcard crosses `/` (git's rule, see _translate), so it may reach into
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
        regex = re.compile(_translate(part.encode()), re.DOTALL | re.IGNORECASE)
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


def _translate(pattern: bytes) -> bytes:
    """Translate one pattern into a regular expression over path bytes."""
    out: list[bytes] = []
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
            if run >= 2 and at_start and follows in (b"", b"/"):
                if at_start and follows == b"/":
                    out.append(b"(?:.*/)?")  # `**/`: zero or more directories
                    j += 1
                else:
                    out.append(b".*")
            else:
                out.append(b"[^/]*")
            i = j
        elif c == b"?":
            out.append(b"[^/]")
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
            out.append(b"[^/" + inner + b"]" if negate else b"(?:(?!/)[" + inner + b"])")
            i = close + 1
        else:
            out.append(re.escape(c))
            i += 1
    return b"".join(out)


@functools.lru_cache(maxsize=4096)
def _compile(pattern: bytes) -> re.Pattern[bytes]:
    try:
        return re.compile(_translate(pattern), re.DOTALL)
    except re.error as exc:  # pragma: no cover - _translate escapes everything it emits
        raise PatternError(f"cannot compile: {exc}") from None


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
    _compiled: dict[tuple[str, bytes], re.Pattern[bytes]] = field(repr=False, default_factory=dict)
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

    def _regex(self, kind: str, key: bytes, raws: tuple[bytes, ...]) -> re.Pattern[bytes]:
        regex = self._compiled.get((kind, key))
        if regex is None:
            regex = re.compile(b"|".join(b"(?:" + _compile(r).pattern + b")" for r in raws), re.DOTALL)
            self._compiled[(kind, key)] = regex
        return regex

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
                if raws and self._regex("dir", lead, raws).fullmatch(path):
                    return True
                pos = path.find(b"/", pos + 1)
        raws = self._by_name.get(name) if self._by_name else None
        if raws and self._regex("name", name, raws).fullmatch(path):
            return True
        return bool(self._rest) and self._regex("rest", b"", self._rest).fullmatch(path) is not None

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


def holding(paths: Sequence[bytes], words: Iterable[bytes], *, lower: bool = False) -> set[bytes]:
    """The paths in which one of `words` occurs (in the path with its ASCII letters
    lower-cased, with `lower`). A change may touch 100k paths: this is one C-level search
    per word over all of them joined by NUL, which no path holds, not a search per path."""
    joined = b"\0".join(paths)
    text = joined.lower() if lower else joined  # the same length: offsets carry over
    out = set()
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
