"""Configuration: `.harness-gate.toml`, or `[tool.harness-gate]` in pyproject.toml."""

from __future__ import annotations

import sys
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
    source: str | None = None  # where it was read from; None for defaults


def parse(own: bytes | None, pyproject: bytes | None) -> Config:
    """Build the config from the two candidate files' bytes (None = absent).

    Both present with settings is ambiguous and an error, not a silent choice.
    """
    tables: list[tuple[str, dict[str, Any]]] = []
    if own is not None:
        tables.append((CONFIG_FILE, _load(CONFIG_FILE, own)))
    if pyproject is not None:
        tool = _load("pyproject.toml", pyproject).get("tool", {})
        if isinstance(tool, dict) and "harness-gate" in tool:
            table = tool["harness-gate"]
            if not isinstance(table, dict):
                raise ConfigError("pyproject.toml: [tool.harness-gate] must be a table")
            tables.append(("pyproject.toml", table))
    if len(tables) > 1:
        raise ConfigError(
            f"configuration found in both {CONFIG_FILE} and pyproject.toml",
            "Keep one of them.",
        )
    if not tables:
        return Config()
    where, table = tables[0]
    problems = schema.errors("config", table)
    if problems:
        raise ConfigError(f"{where}: {problems[0]}", "See docs/config.md for the keys and their types.")
    artifacts_dir = table.get("artifacts_dir", "harness")
    formats: dict[str, dict[str, Any]] = table.get("formats", {})
    for name, settings in formats.items():
        for pattern in settings.get("paths", ()):
            try:
                boundary.validate(pattern, artifacts_dir)
            except boundary.PatternError as exc:
                raise ConfigError(f"{where}: formats.{name}.paths: {pattern!r}: {exc}") from None
    for pattern in table.get("verify_outputs", ()):
        try:
            boundary.validate(pattern, artifacts_dir)
        except boundary.PatternError as exc:
            raise ConfigError(f"{where}: verify_outputs: {pattern!r}: {exc}") from None
    if artifacts_dir.split("/")[0].lower() == ".git":
        raise ConfigError(f"{where}: artifacts_dir cannot be inside .git")
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
        source=where,
    )


def _load(where: str, data: bytes) -> dict[str, Any]:
    try:
        table: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except RecursionError:  # thousands of nested arrays: not a configuration
        raise ConfigError(f"{where}: nested too deeply") from None
    return table
