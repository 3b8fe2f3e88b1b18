"""Where symlinks lead: every link of a state followed through the others, by name alone.

A checkout turns a symlink into a door, so the gate judges a link by where it ends. The
targets are bytes a change controls: resolution must stay linear in the links and their
target bytes however they are built (chains that double, targets of hundreds of KB).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping

# C0 controls and DEL, and the C1 controls U+0080-U+009F as UTF-8 (CSI `\xc2\x9b` starts a
# terminal escape, NEL `\xc2\x85` breaks lines): all are control characters (HG103).
CONTROL = re.compile(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]")


def show(path: bytes) -> str:
    return path.decode("utf-8", "backslashreplace")


# git refuses to check out a path longer than PATH_MAX, and symlink(2) a target longer
# than it: no checkout writes such a link, nor reaches a place whose path is longer.
_LINK_MAX = 4096
# How many links one resolution may nest (the kernel's ELOOP limit): deeper is a loop.
_LINK_DEPTH = 40
# Path steps (the names of all targets) one state's links may take in all: far above any
# real repository's, and what keeps a state of many long targets from costing gigabytes.
_LINK_WORK = 1 << 22
_DRIVE = re.compile(rb"^[A-Za-z]:")
_SHOWN_TARGET = 200  # a target of 400 KB is named by its start, not pasted whole


class At:
    """A place a walk reached: a name on top of its directory. Shared, never copied, so
    going up, down or to where another link ends is one step, however long the path."""

    __slots__ = ("name", "node", "size", "up")

    def __init__(self, up: At | None, name: bytes, node: int, size: int) -> None:
        self.up = up
        self.name = name
        self.node = node  # the directory or link among the links' paths, or -1: no link below
        self.size = size  # the path's length in bytes

    def path(self) -> bytes:
        names = []
        at: At | None = self
        while at is not None and at.up is not None:
            names.append(at.name)
            at = at.up
        return b"/".join(reversed(names))


class Ends:
    """Where a link leads, and how many links its resolution nests."""

    __slots__ = ("at", "depth")

    def __init__(self, at: At, depth: int) -> None:
        self.at = at
        self.depth = depth


class Stop:
    """A link that cannot be followed: `link` is the one whose own target is at fault (the
    judged link, or one it leads through)."""

    __slots__ = ("link", "why")

    def __init__(self, link: bytes, why: str) -> None:
        self.link = link
        self.why = why


Resolution = Ends | Stop


def _brief(target: bytes) -> str:
    shown = show(target[:_SHOWN_TARGET])
    return repr(shown) if len(target) <= _SHOWN_TARGET else f"{shown!r}... ({len(target)} bytes)"


def stop_message(path: bytes, target: bytes, stop: Stop) -> str:
    if stop.link == path:
        return f"the link target {_brief(target)} {stop.why}"
    return f"the link target {_brief(target)} leads through `{show(stop.link)}`, whose target {stop.why}"


def _target_fault(target: bytes) -> str | None:
    """Why a target is refused before it is followed at all."""
    if b"\0" in target:
        # git stores the bytes; a checkout hands them to symlink(2), which stops at the NUL.
        written = target.partition(b"\0")[0]
        return f"holds a NUL byte: a checkout writes only {_brief(written)}"
    if CONTROL.search(target):
        return "holds control characters (the same a path may not hold, HG103)"
    if len(target) > _LINK_MAX:
        return f"is longer than any path a checkout can write ({len(target)} bytes, over {_LINK_MAX})"
    if not target or target.startswith(b"/") or b"\\" in target or _DRIVE.match(target):
        return "is absolute or empty"
    return None


def resolve(targets: Mapping[bytes, bytes]) -> dict[bytes, Resolution]:
    """Where each link leads, followed through the others lexically.

    Each link is walked once and its end remembered, and every step of a walk is O(1)
    (places are shared, links found by node, not by joining the path so far): the whole
    resolution is linear in the links' paths and targets. Re-walking a link each time
    another went through it was exponential (`l0 -> l1/l1`, `l1 -> l2/l2`, ...), and
    joining the path at every step quadratic in a long target. The walks run from an
    explicit stack, so a long chain of links needs no deep recursion."""
    children: dict[tuple[int, bytes], int] = {}
    node_of: dict[bytes, int] = {}
    for path in targets:
        node = 0  # the repository root
        for name in path.split(b"/"):
            node = children.setdefault((node, name), len(children) + 1)
        node_of[path] = node
    link_at = {node: path for path, node in node_of.items()}

    def start(path: bytes) -> At:
        at = At(None, b"", 0, -1)
        for name in path.split(b"/")[:-1]:
            at = At(at, name, children[(at.node, name)], at.size + 1 + len(name))
        return at

    work = 0

    def walker(link: bytes) -> Generator[int, Resolution, Resolution]:
        nonlocal work
        work += targets[link].count(b"/", 0, _LINK_MAX + 1) + 1  # longer ones stop unwalked
        if work > _LINK_WORK:
            return _given_up(link)
        return _walk(link, targets[link], start(link), children, link_at)

    done: dict[bytes, Resolution] = {}
    for first in targets:
        if first in done:
            continue
        stack = [(first, walker(first))]
        walking = {first}
        reply: Resolution | None = None
        while stack:
            link, walk = stack[-1]
            try:
                node = next(walk) if reply is None else walk.send(reply)
            except StopIteration as end:
                done[link] = end.value
                walking.discard(link)
                stack.pop()
                reply = end.value
                continue
            other = link_at[node]
            if other in done:
                reply = done[other]
            elif other in walking:
                reply = Stop(other, "is part of a symlink loop")
            else:
                stack.append((other, walker(other)))
                walking.add(other)
                reply = None
    return done


def _given_up(link: bytes) -> Generator[int, Resolution, Resolution]:
    yield from ()
    return Stop(link, f"is not resolved: this state's symlinks take more than {_LINK_WORK} path steps in all")


def _walk(  # noqa: PLR0911  (one return per case, in the order they are judged)
    link: bytes, target: bytes, at: At, children: Mapping[tuple[int, bytes], int], link_at: Mapping[int, bytes]
) -> Generator[int, Resolution, Resolution]:
    """Follow `target` from the link's directory `at`. Yields the node of each link it
    goes through and is sent where that link leads."""
    why = _target_fault(target)
    if why is not None:
        return Stop(link, why)
    depth = 0
    for name in target.split(b"/"):
        if name in (b"", b"."):
            continue
        if name == b"..":
            if at.up is None:
                return Stop(link, "leaves the repository")
            at = at.up
            continue
        if name.lower() == b".git":
            return Stop(link, "points into .git")
        node = children.get((at.node, name), -1) if at.node >= 0 else -1
        at = At(at, name, node, at.size + 1 + len(name))
        if at.size > _LINK_MAX:
            return Stop(link, f"leads to a path longer than any a checkout can write (over {_LINK_MAX} bytes)")
        if node in link_at:
            followed = yield node
            if isinstance(followed, Stop):
                return followed
            at = followed.at
            depth = max(depth, followed.depth + 1)
    if depth > _LINK_DEPTH:
        return Stop(link, f"goes through more than {_LINK_DEPTH} nested symlinks, a loop to a checkout")
    return Ends(at, depth)
