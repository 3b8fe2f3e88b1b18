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
pattern's for every one of them (`globs.source`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_gate import artifacts_root, globs
from harness_gate.globs import WILDCARDS, PatternError
from harness_gate.jsonstrict import UNSAFE_CHARS

# What the package reads of the dialect; the glob compiler is globs.py's.
__all__ = [
    "WILDCARDS",
    "Boundary",
    "PatternError",
    "has_wildcard",
    "holding",
    "inside",
    "overlaps",
    "validate",
    "validate_all",
]
# Paths no sane boundary covers all of at once: a boundary that matches them
# all matches everything, which is not a boundary.
_UNIVERSE_PROBES = (b"zq9x.k", b"zq9x/yw8v/ut7s.k", b".zq9x/r", b"zq9x/.yw8v/ut7s")


def has_wildcard(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def validate(pattern: str, artifacts_dir: str) -> None:  # noqa: PLR0912  (one step per case, in the order they are judged)
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
    if _reaches(parts, artifacts_dir.strip("/").split("/")) and pattern != artifacts_root.signers_file(artifacts_dir):
        raise PatternError(f"the artifacts root `{artifacts_dir}/` is outside every boundary")
    _check_brackets(pattern)
    globs.compile_pattern(pattern.encode("utf-8", "surrogateescape"))


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
            # first wildcard crosses `/` (git's rule, see globs.tokens), so it may reach into
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
        regex = globs.compile_pattern(part.casefold().encode())
    except PatternError:
        # Folding can reverse a valid range (`[Z-a]` becomes `[z-a]`): compare ASCII letters
        # case-insensitively instead. A range that is reversed as written still fails here.
        regex = re.compile(globs.source(part.encode())[0], re.DOTALL | re.IGNORECASE)
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
            chunks = globs.star_chunks(last) if not any(c in WILDCARDS for c in head) else None
            if chunks is not None:
                star_last.setdefault(head, []).append(chunks)
                continue
            lead, name = globs.buckets(raw)
            if lead:
                by_dir.setdefault(lead, []).append(raw)
            elif name:
                by_name.setdefault(name, []).append(raw)
            else:
                rest.append(raw)

        def freeze(d: dict[bytes, list[Any]]) -> dict[bytes, tuple[Any, ...]]:
            return {k: tuple(v) for k, v in d.items()}

        return cls(
            tuple(patterns),
            frozenset(literal),
            frozenset(dirs),
            freeze(star_last),
            freeze(by_dir),
            freeze(by_name),
            tuple(rest),
        )

    def _fullmatch(self, kind: str, key: bytes, raws: tuple[bytes, ...], path: bytes) -> bool:
        regexes = self._compiled.get((kind, key))
        if regexes is None:
            regexes = self._compiled[(kind, key)] = globs.combined(raws)
        for regex in regexes:  # noqa: SIM110  (any() makes a generator per path: slower)
            if regex.fullmatch(path) is not None:
                return True
        return False

    def matches(self, path: bytes) -> bool:  # noqa: PLR0911  (one return per case, in the order they are judged)
        if path in self._literal:
            return True
        head, _, name = path.rpartition(b"/")
        if head and self._dir_covered(head):
            return True
        if self._star_last:
            for chunks in self._star_last.get(head, ()):
                if globs.star_match(chunks, name):
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
        return globs.combined(self._rest) if self._rest else ()

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
            globs.compile_pattern(pattern.encode("utf-8", "surrogateescape")).fullmatch(
                name.encode("utf-8", "surrogateescape")
            )
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
