"""The artifacts root's layout, named once (docs/artifacts.md): the signers file at its top,
the plan folders under `plans/`, and in each folder the plan and its two logs. Every path
is repository-relative, `/`-separated, below the configured `artifacts_dir`."""

from __future__ import annotations

SIGNERS = "allowed_signers"  # the SSH keys whose signatures count (docs/threat-model.md)
PLANS = "plans"
PLAN = "plan.md"
APPROVALS = "approvals.jsonl"
EVIDENCE = "evidence.jsonl"
LOGS = (APPROVALS, EVIDENCE)  # a plan folder's logs: records are appended, never changed


def prefix(artifacts_dir: str) -> str:
    """What every path below the root starts with."""
    return artifacts_dir + "/"


def encoded(path: str) -> bytes:
    """`path` as git's listings spell it (bytes; a path git gave that is not UTF-8 decoded
    with surrogateescape comes back unchanged)."""
    return path.encode("utf-8", "surrogateescape")


def inside(artifacts_dir: str, path: str) -> bool:
    """Whether `path` is the root or lies below it."""
    return path == artifacts_dir or path.startswith(prefix(artifacts_dir))


def signers_file(artifacts_dir: str) -> str:
    return f"{artifacts_dir}/{SIGNERS}"


def plans_dir(artifacts_dir: str) -> str:
    return f"{artifacts_dir}/{PLANS}"


def plans_prefix(artifacts_dir: str) -> str:
    """What every path of a plan folder starts with."""
    return f"{artifacts_dir}/{PLANS}/"


def plan_folder(artifacts_dir: str, plan_id: str) -> str:
    return f"{artifacts_dir}/{PLANS}/{plan_id}"


def plan_file(artifacts_dir: str, plan_id: str) -> str:
    return plan_md(plan_folder(artifacts_dir, plan_id))


def plan_md(folder: str) -> str:
    """The plan of the plan folder `folder`."""
    return f"{folder}/{PLAN}"


def approvals_log(folder: str) -> str:
    return f"{folder}/{APPROVALS}"


def evidence_log(folder: str) -> str:
    return f"{folder}/{EVIDENCE}"
