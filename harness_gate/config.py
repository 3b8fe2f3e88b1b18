"""Configuration: `.harness-gate.toml`, or `[tool.harness-gate]` in pyproject.toml."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness_gate import boundary, schema
from harness_gate.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE = ".harness-gate.toml"
DEFAULT_MAX_BYTES = 1024 * 1024
# A configuration file is a few hundred bytes; one named with --config is read up to this.
CONFIG_CAP = 1024 * 1024


@dataclass(frozen=True)
class PreReceive:
    """`[pre_receive]`: what the server-side gate guards (docs/pre-receive.md)."""

    branches: tuple[str, ...] = ("refs/heads/**",)
    branch_stage: str = "pre-push"  # the default branch is judged at `ci`, as it lands
    tags: str = "on-branch"  # on-branch | allow | reject
    deletions: str = "allow"  # allow | reject (the default branch: never)
    other_refs: str = "reject"  # allow | reject


@dataclass(frozen=True)
class Approvers:
    """One `[[approvers]]` rule (docs/approvers.md)."""

    name: str
    paths: tuple[str, ...]
    principals: tuple[str, ...]
    count: int = 1
    exclude_author: bool = False
    # A CODEOWNERS file (read from the trusted side) that gives the paths and principals
    # instead, each owner mapped to principals by `aliases` (an email owner is its own).
    codeowners: str | None = None
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    shadowed_by: tuple[str, ...] = ()  # a CODEOWNERS line's: the patterns of the lines after it


@dataclass(frozen=True)
class Config:
    artifacts_dir: str = "harness"
    require_signed_approvals: bool = False
    require_signed_reviews: bool = False
    require_distinct_reviewer: bool = False
    max_artifact_bytes: int = DEFAULT_MAX_BYTES
    # Which stages require fresh evidence, a fresh passing review, and every plan the
    # change started or used to be completed or cancelled (docs/hooks.md has the table).
    # pre-push only warns about evidence unless it is listed here.
    evidence_stages: tuple[str, ...] = ("ci",)
    review_stages: tuple[str, ...] = ("ci",)
    completion_stages: tuple[str, ...] = ("ci",)
    # The branch work is merged into, for local commands (docs/workflows.md); None: the
    # remote's default branch, else main or master.
    base_branch: str | None = None
    # Files the verify commands write and git does not track (reports, caches): left out of
    # the work tree's fingerprint like ignored files. Boundary-dialect patterns.
    verify_outputs: tuple[str, ...] = ()
    # Other harness formats (docs/formats.md): the ones switched off, and own path patterns.
    formats_disabled: tuple[str, ...] = ()
    format_paths: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Roll-out: `check` reports what it would block and exits 0 (docs/config.md, "Report-only
    # mode"). Honoured only as the trusted side holds it, like every other key.
    report_only: bool = False
    pre_receive: PreReceive = PreReceive()
    approvers: tuple[Approvers, ...] = ()
    source: str | None = None  # where it was read from; None for defaults


def parse(own: bytes | None, pyproject: bytes | None) -> Config:
    """Build the config from the two candidate files' bytes (None = absent).

    `.harness-gate.toml`, when present, is the configuration and pyproject.toml is not
    read at all: a `[tool.harness-gate]` table added there later (or a pyproject.toml that
    no longer parses) can neither weaken the gate nor stop every later check.
    """
    tables: list[tuple[str, dict[str, Any]]] = []
    if own is not None:
        tables.append((CONFIG_FILE, _load(CONFIG_FILE, own)))
    elif pyproject is not None:
        tool = _load("pyproject.toml", pyproject).get("tool", {})
        if isinstance(tool, dict) and "harness-gate" in tool:
            table = tool["harness-gate"]
            if not isinstance(table, dict):
                raise ConfigError("pyproject.toml: [tool.harness-gate] must be a table")
            tables.append(("pyproject.toml", table))
    if not tables:
        return Config()
    where, table = tables[0]
    problems = schema.violations("config", table)
    if problems:
        text, under = (own, ()) if where == CONFIG_FILE else (pyproject, ("tool", "harness-gate"))
        raise ConfigError(
            _explain(where, text or b"", problems[0], under), "See docs/config.md for the keys and their types."
        )
    artifacts_dir = table.get("artifacts_dir", "harness")
    text, under = (own or b"", ()) if where == CONFIG_FILE else (pyproject or b"", ("tool", "harness-gate"))
    formats: dict[str, dict[str, Any]] = table.get("formats", {})
    for name, settings in formats.items():
        for pattern in settings.get("paths", ()):
            try:
                boundary.validate(pattern, artifacts_dir)
            except boundary.PatternError as exc:
                at = _line_of(text, ["formats", name, "paths"], under)
                raise ConfigError(f"{where}{at}: `formats.{name}.paths`: {pattern!r}: {exc}") from None
    for pattern in table.get("verify_outputs", ()):
        try:
            boundary.validate(pattern, artifacts_dir)
        except boundary.PatternError as exc:
            at = _line_of(text, ["verify_outputs"], under)
            raise ConfigError(f"{where}{at}: `verify_outputs`: {pattern!r}: {exc}") from None
    rules = _approvers(table.get("approvers", []), artifacts_dir, where + _line_of(text, ["approvers"], under))
    if artifacts_dir.split("/")[0].lower() == ".git":
        raise ConfigError(f"{where}{_line_of(text, ['artifacts_dir'], under)}: `artifacts_dir` cannot be inside .git")
    return Config(
        artifacts_dir=artifacts_dir,
        require_signed_approvals=table.get("require_signed_approvals", False),
        require_signed_reviews=table.get("require_signed_reviews", False),
        require_distinct_reviewer=table.get("require_distinct_reviewer", False),
        max_artifact_bytes=table.get("max_artifact_bytes", DEFAULT_MAX_BYTES),
        evidence_stages=tuple(table.get("evidence_stages", Config.evidence_stages)),
        review_stages=tuple(table.get("review_stages", Config.review_stages)),
        completion_stages=tuple(table.get("completion_stages", Config.completion_stages)),
        base_branch=table.get("base_branch"),
        verify_outputs=tuple(table.get("verify_outputs", ())),
        formats_disabled=tuple(sorted(n for n, t in formats.items() if t.get("enabled", True) is False)),
        format_paths=tuple(sorted((n, tuple(t["paths"])) for n, t in formats.items() if "paths" in t)),
        report_only=table.get("report_only", False),
        pre_receive=_pre_receive(table.get("pre_receive", {})),
        approvers=rules,
        source=where,
    )


def _approvers(tables: list[dict[str, Any]], artifacts_dir: str, where: str) -> tuple[Approvers, ...]:
    """The `[[approvers]]` rules, already validated against the schema: their patterns in
    the boundary dialect, and a count their principals can meet."""
    out = []
    for n, t in enumerate(tables, start=1):
        if "codeowners" in t:
            if "paths" in t or "principals" in t:
                raise ConfigError(
                    f"{where}: approvers rule {n}: `codeowners` gives the paths and principals; "
                    "name either it or `paths` and `principals`"
                )
            name = t.get("name") or t["codeowners"]
            aliases = tuple(sorted((k, tuple(v)) for k, v in t.get("aliases", {}).items()))
            out.append(
                Approvers(name, (), (), t.get("count", 1), t.get("exclude_author", False), t["codeowners"], aliases)
            )
            continue
        if "paths" not in t or "principals" not in t or "aliases" in t:
            raise ConfigError(
                f"{where}: approvers rule {n}: name `paths` and `principals` (or `codeowners`, with its `aliases`)"
            )
        name = t.get("name") or t["paths"][0]
        for pattern in t["paths"]:
            try:
                boundary.validate(pattern, artifacts_dir)
            except boundary.PatternError as exc:
                raise ConfigError(f"{where}: approvers rule {n} (`{name}`): {pattern!r}: {exc}") from None
        count = t.get("count", 1)
        if count > len(t["principals"]):
            raise ConfigError(
                f"{where}: approvers rule {n} (`{name}`): count {count} is more than its "
                f"{len(t['principals'])} principal(s): no plan could ever meet it"
            )
        out.append(Approvers(name, tuple(t["paths"]), tuple(t["principals"]), count, t.get("exclude_author", False)))
    names = [r.name for r in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: two approvers rules have the same name; name them apart (`name = ...`)")
    return tuple(out)


def _pre_receive(table: dict[str, Any]) -> PreReceive:
    """The `[pre_receive]` table, already validated against the schema."""
    default = PreReceive()
    return PreReceive(
        branches=tuple(table.get("branches", default.branches)),
        branch_stage=table.get("branch_stage", default.branch_stage),
        tags=table.get("tags", default.tags),
        deletions=table.get("deletions", default.deletions),
        other_refs=table.get("other_refs", default.other_refs),
    )


def parse_named(where: str, data: bytes, *, pyproject: bool) -> Config:
    """A configuration file named with `--config` (the Action's `config:` input): it must
    hold the gate's settings. An empty file, or a pyproject.toml without a
    `[tool.harness-gate]` table, names no configuration and is an error, never the
    defaults (a mistyped or redirected name would otherwise switch every requirement the
    real file sets back to the defaults)."""
    table = _load(where, data)
    if pyproject:
        tool = table.get("tool", {})
        if not (isinstance(tool, dict) and "harness-gate" in tool):
            raise ConfigError(f"{where} has no [tool.harness-gate] table: it is not a configuration")
        return parse(None, data)
    if not table:
        raise ConfigError(f"{where} sets nothing: it is not a configuration", "Name the file that sets its keys.")
    return parse(data, None)


def ignored_table(own: bytes | None, pyproject: bytes | None) -> bool:
    """Whether pyproject.toml holds a `[tool.harness-gate]` table that `.harness-gate.toml`
    overrides (said by `status`; a pyproject.toml that does not parse holds none)."""
    if own is None or pyproject is None:
        return False
    try:
        tool = tomllib.loads(pyproject.decode("utf-8")).get("tool", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return False
    return isinstance(tool, dict) and "harness-gate" in tool


def _load(where: str, data: bytes) -> dict[str, Any]:
    try:
        table: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib says where at the end of its message: "... (at line 1, column 25)".
        found = _AT.search(str(exc))
        what = _AT.sub("", str(exc)).strip()
        at = f", line {found.group(1)}, column {found.group(2)}" if found else ""
        raise ConfigError(f"{where}{at}: not valid TOML: {what[:1].lower()}{what[1:]}") from None
    except RecursionError:  # thousands of nested arrays: not a configuration
        raise ConfigError(f"{where}: nested too deeply") from None
    return table


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
_WHAT = {
    "artifacts_dir": "a relative path of plain segments inside the repository (like `harness` or `meta/harness`)",
    "base_branch": "a ref as git spells it (`origin/develop`, `develop`)",
}


def _explain(where: str, text: bytes, error: Any, table: Sequence[str] = ()) -> str:
    """One configuration problem, said for a person: the file, the line of the key when the
    file has it, the key, and a near name for a key that does not exist."""
    path = [str(p) for p in error.absolute_path if not isinstance(p, int)]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        name = ".".join([*path, unknown[0]]) if unknown else key
        near = difflib.get_close_matches(unknown[0], allowed, n=1) if unknown else []
        hint = f" (did you mean `{'.'.join([*path, near[0]])}`?)" if near else f" (the keys: {', '.join(allowed)})"
        return f"{where}{_line_of(text, [*path, unknown[0]] if unknown else path, table)}: unknown key `{name}`{hint}"
    at = _line_of(text, path, table)
    if error.validator == "pattern" and path and path[0] in _WHAT:
        return f"{where}{at}: `{key}` must be {_WHAT[path[0]]}, not {error.instance!r}"
    if error.validator == "enum":
        near = difflib.get_close_matches(str(error.instance), [str(v) for v in error.validator_value], n=1)
        choices = ", ".join(str(v) for v in error.validator_value)
        hint = f" (did you mean `{near[0]}`?)" if near else ""
        return f"{where}{at}: `{key}`: {error.instance!r} is not one of {choices}{hint}"
    if error.validator == "type":
        return f"{where}{at}: `{key}` must be {_TYPES.get(str(error.validator_value), error.validator_value)}"
    return f"{where}{at}: `{key or '(the table)'}`: {error.message}"


_TYPES = {
    "array": "a list",
    "string": "a string",
    "boolean": "true or false",
    "integer": "a whole number",
    "object": "a table",
}


_HEADER = re.compile(rb"^[ \t]*\[\[?([^\]]+)\]\]?[ \t]*(?:#.*)?$")
_ASSIGN = re.compile(rb"^[ \t]*([A-Za-z0-9_.\-\"' \t]+?)[ \t]*=")


def _dotted(raw: bytes) -> list[str]:
    return [part.strip().strip("\"'") for part in raw.decode("utf-8", "replace").split(".")]


def _line_of(text: bytes, key: Sequence[str], table: Sequence[str] = ()) -> str:
    """ ", line N" for the first line that sets `key` (a path of keys below `table`, as
    `[formats.tasks]` or `formats.tasks.enabled = ...` spell it), or nothing."""
    target = [*table, *key]
    if not key:
        return ""
    current: list[str] = []
    for number, line in enumerate(text.split(NEWLINE), 1):
        header = _HEADER.match(line)
        if header:
            current = _dotted(header.group(1))
            if current[: len(target)] == target:
                return f", line {number}"
            continue
        assign = _ASSIGN.match(line)
        if assign and [*current, *_dotted(assign.group(1))][: len(target)] == target:
            return f", line {number}"
    return ""


NEWLINE = b"\n"
