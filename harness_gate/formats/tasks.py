"""The `tasks` format: the long-running task harness (`harness-tasks.json`, `harness-progress.txt`).

What the format's specification forbids, checked in git (the specification is not part
of this repository; docs/formats/tasks.md quotes the passage of it for every rule): a
task file that breaks version 2's shape, dependency cycles and unknown dependencies, a
task `completed` without a validation command or `completed_at`, or before its
dependencies; a progress log whose lines are not the one-line grep-able entries, or that
was rewritten instead of appended to; `.bak`/`.tmp` leftovers
committed. In the gate, a task moved to `completed` needs fresh PASS evidence
(`harness-gate record`) for its validation command on exactly the judged tree.

Which file is which goes by name, so configured paths (`[formats.tasks] paths`) work
too: `*.bak`/`*.tmp` are leftovers, `*.json` is the task file, anything else the log.
"""

from __future__ import annotations

import bisect
import json
import re
import shlex
from collections.abc import Callable, Iterator
from typing import Any

from harness_gate import jsonstrict, schema
from harness_gate.findings import Finding, finding
from harness_gate.formats import Context, Format

SCHEMA = "tasks-file"
PROGRESS = "harness-progress.txt"
MAX_DEPTH = 6  # of the value paths _scan records
MAX_FINDINGS = 50  # per file: a log of a million bad lines needs one screen, not a million

# The original harness's lists ("標準化されたログ形式" and "エラー処理と復旧戦略").
TYPES = ("INIT", "Starting", "Completed", "ERROR", "CHECKPOINT", "ROLLBACK", "RECOVERY", "STATS", "LOCK", "WARN")
# Entries about one task (the original harness's format: `[task-id]` follows the type); INIT, LOCK
# and STATS are session entries, and WARN may be either.
TASK_TYPES = frozenset(("Starting", "Completed", "CHECKPOINT", "ROLLBACK", "RECOVERY"))
CATEGORIES = frozenset(("ENV_SETUP", "CONFIG", "TASK_EXEC", "TEST_FAIL", "TIMEOUT", "DEPENDENCY", "SESSION_TIMEOUT"))

TIMESTAMP = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?(?:Z|[+-][0-9]{2}:[0-9]{2})"
TASK_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"  # as in tasks-file.schema.json
ENTRY = re.compile(r"\[(?P<ts>[^\]]*)\] \[SESSION-(?P<n>[1-9][0-9]*)\] (?P<type>[^ ]+)(?: (?P<rest>.*))?")
TS = re.compile(TIMESTAMP)
TASK_REF = re.compile(rf"\[{TASK_ID}\](?: |$)")
ERROR_REST = re.compile(r"(?:\[(?P<first>[^\]\s]+)\])(?: \[(?P<second>[^\]\s]+)\])?(?: |$)")
N = "(?:0|[1-9][0-9]*)"
STATS = re.compile(
    rf"tasks_total={N} completed={N} failed={N} pending={N} blocked={N} attempts_total={N} checkpoints={N}"
)

# -- strict JSON with lines ------------------------------------------------------------

# The closing quote is optional: an unterminated string runs to the end of the text in
# one token. Required, every `\"` of such a string would start a new scan to the end
# (quadratic: a megabyte of them took forty minutes).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)|true|false|null")


class _Lines:
    """Offsets to 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self._breaks = [m.start() for m in re.finditer("\n", text)]

    def at(self, pos: int) -> int:
        return bisect.bisect_left(self._breaks, pos) + 1


def _scan(text: str) -> tuple[dict[str, int], int | None]:
    """The line of every value by its path (`tasks/0/status`, as schema.errors names it),
    and the line of the first thing strict JSON refuses where json's own message names
    none (a duplicate key, NaN, 1.5, -0, an unsafe character). Lenient and iterative: it
    runs on any text without raising or recursing."""
    lines = _Lines(text)
    where: dict[str, int] = {}
    offence: int | None = None
    # A frame: [key or index, expecting a key (objects only), keys seen (objects only)]
    stack: list[list[Any]] = []

    def value(pos: int) -> None:
        # Findings name paths at most five deep (tasks/0/checkpoints/0/timestamp); deeper
        # ones are not recorded, or `[[[[...` would cost time and memory quadratic in depth.
        if len(stack) <= MAX_DEPTH:
            where.setdefault("/".join(str(f[0]) for f in stack), lines.at(pos))

    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        top = stack[-1] if stack else None
        if tok in ("{", "["):
            value(pos)
            stack.append(["", True, set()] if tok == "{" else [0, None, None])
        elif tok in ("}", "]"):
            if stack:
                stack.pop()
        elif tok == ",":
            if top is not None and top[1] is None:
                top[0] += 1
            elif top is not None:
                top[1] = True
        elif tok == ":":
            if top is not None and top[1] is not None:
                top[1] = False
        elif tok.startswith('"'):
            try:
                s = json.loads(tok)
            except ValueError:
                s = None
            bad = not isinstance(s, str) or jsonstrict.UNSAFE_TEXT_CHARS.search(s) is not None
            if top is not None and top[1] is True:
                bad = bad or s in top[2]
                top[2].add(s)
                top[0] = s
            else:
                value(pos)
            if bad and offence is None:
                offence = lines.at(pos)
        else:
            value(pos)
            if (not _SCALAR.fullmatch(tok) or tok == "-0") and offence is None:
                offence = lines.at(pos)
    return where, offence


def _load(path: str, data: bytes) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The task file as strict JSON (HG601 when it is not)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, [finding("HG601", path, f"not UTF-8 (byte {exc.start})", line=line)]
    try:
        return jsonstrict.loads_object(text, text_ok=True), []
    except jsonstrict.StrictJSONError as exc:
        named = re.search(r"at line ([0-9]+) column", str(exc))
        at = int(named.group(1)) if named else _scan(text)[1]
        if at is None and "expected a JSON object" in str(exc):
            at = 1
        return None, [finding("HG601", path, f"not strict JSON: {exc}", line=at)]


# -- the task file ---------------------------------------------------------------------


def _tasks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    tasks = doc.get("tasks")
    return [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []


def _command(task: dict[str, Any]) -> str | None:
    validation = task.get("validation")
    command = validation.get("command") if isinstance(validation, dict) else None
    return command if isinstance(command, str) else None


def _lint_tasks(path: str, data: bytes) -> list[Finding]:
    doc, problems = _load(path, data)
    if doc is None:
        return problems
    text = data.decode("utf-8")
    where: dict[str, int] | None = None

    def line(at: str) -> int | None:
        nonlocal where
        if where is None:  # positions cost a scan; most files have no finding to place
            where = _scan(text)[0]
        return where.get("" if at == "(root)" else at)

    broken = schema.errors(SCHEMA, doc)
    if broken:
        # The semantic rules below read the fields the schema guarantees.
        return [finding("HG602", path, e, line=line(e.split(": ")[1])) for e in broken]
    return list(_semantics(path, doc, line))


def _semantics(path: str, doc: dict[str, Any], line: Callable[[str], int | None]) -> Iterator[Finding]:
    tasks = _tasks(doc)
    first: dict[str, int] = {}
    for i, t in enumerate(tasks):
        if t["id"] in first:
            yield finding("HG603", path, f"`{t['id']}` is also task {first[t['id']]}", line=line(f"tasks/{i}/id"))
        first.setdefault(t["id"], i)
    status = {t["id"]: t["status"] for t in reversed(tasks)}  # the first task of an id wins
    for i, t in enumerate(tasks):
        for j, dep in enumerate(t["depends_on"]):
            if dep not in status:
                yield finding(
                    "HG604",
                    path,
                    f"`{t['id']}` depends on `{dep}`, no such task",
                    line=line(f"tasks/{i}/depends_on/{j}"),
                )
    yield from _cycles(path, tasks, first, line)
    concurrent = doc.get("session_config", {}).get("concurrency_mode") == "concurrent"
    for i, t in enumerate(tasks):
        yield from _task_rules(path, i, t=t, status=status, concurrent=concurrent, line=line)


def _task_rules(
    path: str,
    i: int,
    *,
    t: dict[str, Any],
    status: dict[str, str],
    concurrent: bool,
    line: Callable[[str], int | None],
) -> Iterator[Finding]:
    at, tid = f"tasks/{i}", t["id"]
    if t["status"] == "completed":
        if not (_command(t) or "").strip():
            yield finding(
                "HG606", path, f"`{tid}` is completed but has no validation.command", line=line(f"{at}/status")
            )
        if not t.get("completed_at"):
            yield finding("HG607", path, f"`{tid}` is completed but completed_at is not set", line=line(f"{at}/status"))
        for j, dep in enumerate(t["depends_on"]):
            if dep in status and status[dep] != "completed":
                yield finding(
                    "HG608",
                    path,
                    f"`{tid}` is completed but its dependency `{dep}` is {status[dep]}",
                    line=line(f"{at}/depends_on/{j}"),
                )
    if t["attempts"] > t["max_attempts"]:
        yield finding(
            "HG609",
            path,
            f"`{tid}`: attempts {t['attempts']} > max_attempts {t['max_attempts']}",
            line=line(f"{at}/attempts"),
        )
    if concurrent and t["status"] == "in_progress" and not (t.get("claimed_by") and t.get("lease_expires_at")):
        yield finding(
            "HG610",
            path,
            f"`{tid}` is in_progress in concurrent mode without claimed_by and lease_expires_at",
            line=line(f"{at}/status"),
        )


def _cycles(
    path: str, tasks: list[dict[str, Any]], first: dict[str, int], line: Callable[[str], int | None]
) -> Iterator[Finding]:
    """Every dependency edge that closes a cycle (a self-reference included), found by an
    iterative depth-first walk: a file of 100 000 chained tasks must not hit Python's
    recursion limit."""
    deps = {tid: tasks[i]["depends_on"] for tid, i in first.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in first:
        if root in state:
            continue
        path_ids: list[str] = [root]
        state[root] = 1
        todo: list[Iterator[tuple[int, str]]] = [iter(enumerate(deps[root]))]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                state[path_ids.pop()] = 2
                todo.pop()
                continue
            j, dep = step
            if dep not in deps or state.get(dep) == 2:
                continue
            if state.get(dep) == 1:
                loop = [*path_ids[path_ids.index(dep) :], dep]
                at = f"tasks/{first[path_ids[-1]]}/depends_on/{j}"
                yield finding("HG605", path, f"circular dependency: {' -> '.join(loop)}", line=line(at))
                continue
            state[dep] = 1
            path_ids.append(dep)
            todo.append(iter(enumerate(deps[dep])))


# -- the progress log ------------------------------------------------------------------


def _log_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


def _entry_problem(raw: bytes) -> tuple[str, str] | None:
    """(code, why) for one log line that is not a well-formed entry, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "HG611", "not UTF-8"
    if jsonstrict.UNSAFE_TEXT_CHARS.search(text):
        return "HG611", "a control character (a carriage return, an escape sequence) or a bidirectional override"
    m = ENTRY.fullmatch(text)
    if m is None:
        return "HG611", "not `[ISO-timestamp] [SESSION-N] TYPE ...`" + (" (an empty line)" if not text else "")
    if not TS.fullmatch(m["ts"]):
        return "HG611", f"`{m['ts'][:40]}` is not an ISO timestamp"
    kind, rest = m["type"], m["rest"] or ""
    if kind not in TYPES:
        return "HG612", f"`{kind[:40]}` is not an entry type"
    if kind == "ERROR":
        e = ERROR_REST.match(rest)
        if e is None or not (e["first"] in CATEGORIES or e["second"] in CATEGORIES):
            known = ", ".join(sorted(CATEGORIES))
            return "HG613", f"ERROR needs `[CATEGORY]` (after `[task-id]` for a task's error), one of {known}"
    if kind in TASK_TYPES and not TASK_REF.match(rest):
        return "HG614", f"{kind} needs `[task-id]` right after the type"
    if kind == "STATS" and not STATS.fullmatch(rest):
        return "HG615", "not the original harness's seven counters in order"
    return None


def _lint_progress(path: str, data: bytes) -> list[Finding]:
    out: list[Finding] = []
    for n, raw in enumerate(_log_lines(data), start=1):
        problem = _entry_problem(raw)
        if problem is not None:
            out.append(finding(problem[0], path, problem[1], line=n))
            if len(out) >= MAX_FINDINGS:
                break
    return out


def _rewritten_at(old: bytes, new: bytes) -> int | None:
    """The first line of `new` where it stops being `old` plus appended lines, or None."""
    grown = new[len(old) :]
    if new.startswith(old) and (not old or old.endswith(b"\n") or not grown or grown.startswith(b"\n")):
        return None
    olines, nlines = old.split(b"\n"), new.split(b"\n")
    for n, (a, b) in enumerate(zip(olines, nlines, strict=False), start=1):
        if a != b:
            return n
    return len(nlines)


# -- lint, gate, status ------------------------------------------------------------------


def _kind(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".bak", ".tmp")):
        return "leftover"
    return "tasks" if name.endswith(".json") else "progress"


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    kind = _kind(path)
    if kind == "leftover":
        # Its specification writes these beside the task file on every change (backup, then
        # an atomic rename); a committed copy is a stale task state anyone may "restore".
        return [finding("HG617", path, "a backup or half-written copy of the task file is committed")]
    found = _lint_tasks(path, data) if kind == "tasks" else _lint_progress(path, data)
    return found[:MAX_FINDINGS]


def evidence_commands(command: str) -> list[str]:
    """The `harness-gate record` spellings that prove a validation command.

    `record` runs its argv without a shell and stores `shlex.join(argv)`. The
    specification's command is shell text, so `sh -c COMMAND` always proves it. The command
    itself also does when it is exactly `shlex.join` of its own words: shlex.join quotes every shell
    metacharacter, so such a string has no pipes, variables or globs and means the same
    run by a shell or not. (A leading `NAME=value` word is a shell assignment, which an
    argv run would not make: only `sh -c` proves that.)"""
    forms = [shlex.join(["sh", "-c", command])]
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote: only a shell can say what it means
        return forms
    if words and shlex.join(words) == command and "=" not in words[0]:
        forms.insert(0, command)
    return forms


def _old_tasks(old: bytes | None) -> dict[str, dict[str, Any]]:
    """The previous state's tasks by id; none when it was absent or unreadable (then
    every completed task of the new state counts as newly completed)."""
    if old is None:
        return {}
    try:
        doc = jsonstrict.loads_object(old.decode("utf-8"), text_ok=True)
    except (UnicodeDecodeError, jsonstrict.StrictJSONError):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for t in _tasks(doc):
        if isinstance(t.get("id"), str):
            out.setdefault(t["id"], t)
    return out


def gate(path: str, old: bytes | None, new: bytes | None, ctx: Context) -> list[Finding]:
    kind = _kind(path)
    if kind == "progress" and old is not None and new is not None:
        n = _rewritten_at(old, new)
        return [] if n is None else [finding("HG616", path, "the log lost or changed lines; it only grows", line=n)]
    if kind != "tasks" or new is None or ctx.evidence is None or _lint_tasks(path, new):
        return []  # lint reports an invalid file; only a valid one is judged as a move
    return _completions(path, _old_tasks(old), new, ctx.evidence)


def _completions(
    path: str, before: dict[str, dict[str, Any]], new: bytes, evidence: Callable[[str], str | None]
) -> list[Finding]:
    text = new.decode("utf-8")
    doc = jsonstrict.loads_object(text, text_ok=True)
    out: list[Finding] = []
    where: dict[str, int] = {}

    def line(at: str) -> int | None:
        if not where:  # positions cost a scan; most changes complete nothing
            where.update(_scan(text)[0])
        return where.get(at)

    for i, t in enumerate(_tasks(doc)):
        prev = before.get(t["id"])
        command = _command(t) or ""
        changed = prev is not None and (_command(prev) or "") != command
        was_completed = prev is not None and prev.get("status") == "completed"
        # A task that stays completed was proven before, unless its validation.command
        # changed: then the old proof is for another command (a completed task repurposed),
        # judged like a completion in the change that set its command.
        if t["status"] != "completed" or (was_completed and not changed):
            continue
        if changed:
            what = "stays completed in the change that changed"
            if not was_completed:
                what = "is completed in the change that set"
            out.append(
                finding(
                    "HG619",
                    path,
                    f"`{t['id']}` {what} its validation.command",
                    line=line(f"tasks/{i}/validation/command"),
                )
            )
        if not command.strip():
            continue  # HG606 already
        forms = evidence_commands(command)
        reasons = [evidence(c) for c in forms]
        if None not in reasons:
            # The most telling reason: a record that failed beats one that is missing.
            why = next((r for r in reasons if r is not None and not r.startswith("missing")), reasons[0])
            rid = t["id"].lower() if re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", t["id"].lower()) else "task"
            how = f"harness-gate record --id {rid} -- {forms[0] if len(forms) == 1 else command}"
            out.append(
                finding(
                    "HG618",
                    path,
                    f"`{t['id']}` moved to completed: {why}; record it with `{how}`",
                    line=line(f"tasks/{i}/status"),
                )
            )
    return out


def _permanently_failed(t: dict[str, Any]) -> bool:
    # The original harness's "再試行されることがない failed": out of attempts, or failed by a dependency.
    log = t.get("error_log", [])
    return t["status"] == "failed" and (t["attempts"] >= t["max_attempts"] or any("[DEPENDENCY]" in e for e in log))


def _blocked(tasks: list[dict[str, Any]]) -> set[str]:
    """Pending tasks that depend on a task failed for good, propagated until nothing
    changes (the original harness's step 2 repeats "伝播するタスクがなくなるまで")."""
    dead = {t["id"] for t in tasks if _permanently_failed(t)}
    blocked: set[str] = set()
    changed = True
    while changed:
        changed = False
        for t in tasks:
            stuck = any(d in dead or d in blocked for d in t["depends_on"])
            if t["status"] == "pending" and t["id"] not in blocked and stuck:
                blocked.add(t["id"])
                changed = True
    return blocked


def _tail(ctx: Context, log: str) -> list[str]:
    data = ctx.files.read(log)
    if data is None:
        return []
    lines = [raw.decode("utf-8", "replace") for raw in _log_lines(data)[-5:]]
    return [f"{log} (last {len(lines)} lines):", *(f"  {jsonstrict.UNSAFE_CHARS.sub('?', s)}" for s in lines)]


def status(path: str, data: bytes, ctx: Context) -> list[str]:
    """The original harness's `/harness status`: counts by status (blocked computed), one line per
    task, the session count and last session, and the log's last five lines."""
    if _kind(path) != "tasks":
        return [f"entries: {len(_log_lines(data))}"]
    doc = jsonstrict.loads_object(data.decode("utf-8"), text_ok=True)
    tasks = _tasks(doc)
    count = {s: sum(t["status"] == s for t in tasks) for s in ("completed", "failed", "pending", "in_progress")}
    attempts = sum(t["attempts"] for t in tasks)
    checkpoints = sum(len(t.get("checkpoints", [])) for t in tasks)
    clean = jsonstrict.UNSAFE_CHARS
    lines = [
        f"tasks_total={len(tasks)} completed={count['completed']} failed={count['failed']} "
        f"pending={count['pending']} blocked={len(_blocked(tasks))} in_progress={count['in_progress']} "
        f"attempts_total={attempts} checkpoints={checkpoints}",
        *(
            f"[{t['status']}] {t['id']}: {clean.sub('?', t['title'])} ({t['attempts']}/{t['max_attempts']})"
            for t in tasks
        ),
        f"sessions: {doc.get('session_count', 0)}, last session: {doc.get('last_session') or '-'}",
    ]
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    return lines + _tail(ctx, folder + PROGRESS)


FORMAT = Format("tasks", "long-running task harness", lint, gate, status)
