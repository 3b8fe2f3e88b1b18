"""The `loop` format: the planner -> generator -> evaluator loop and its `.harness/` state.

The original harness's orchestrator is "a file shuffler with a strict state machine"; its files are
the whole contract between the three subagents. This module checks the shapes its
specification writes (`state.json`, the spec's frontmatter, `verdict.json`, iteration
directories, `run.log`, `brief.md`) and the moves it forbids: a run marked `passed` without a passing
verdict in its latest iteration, a finished run reopened, the frozen spec edited.
Every rule cites the passage of its specification in docs/formats/loop.md. The
specification is not part of this repository: a "Phase N step M" cited here is that step
of it, quoted in docs/formats/loop.md.

A `.harness/` directory may sit anywhere (its specification creates it in the
orchestrator's cwd); the files of one run are found relative to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness_gate import jsonstrict, schema
from harness_gate.findings import Finding, finding
from harness_gate.formats import Context, Format

# `<root>.harness/<rest>`: `root` ends with `/` or is empty. The prefix is lazy so that a
# `.harness/` nested in an iteration directory is still split at a real file name.
_PATH = re.compile(
    r"^(?P<root>(?:.*/)?\.harness/)"
    r"(?P<rest>state\.json|spec\.md|brief\.md|run\.log|iterations/(?P<dir>[^/]+)/(?:verdict\.json|feedback\.md))$"
)
# Phase 3: "Iteration directory names are zero-padded to width 2: 01, 02, ..., 10, 11"
# and the cap is 99 ("it sorts correctly up to 99").
_ITERATION_DIR = re.compile(r"^(?:0[1-9]|[1-9][0-9])$")
# Phase 0 step 4: `date -u +%Y-%m-%dT%H:%M:%SZ`, used for every run.log line too.
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
_LOG_LINE = re.compile(rb"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z) ")
_MAX_LOG_FINDINGS = 20  # a corrupt multi-megabyte log is one problem, not a million findings
_MODES = ("frontend", "backend", "fullstack")
_FINISHED = ("passed", "aborted")  # Resume mode step 3: "Run is already <status>"
_FRONT_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(.*)$")
_BLOCKER = re.compile(r"^##[ \t]+Blocker[ \t]*#*[ \t]*$")


@dataclass(frozen=True)
class Where:
    root: str  # ".../.harness/"
    rest: str  # "state.json", "iterations/01/verdict.json", ...
    directory: str | None  # the iteration directory's name, for files inside one


def where(path: str) -> Where | None:
    m = _PATH.match(path)
    if m is None:
        return None  # a file a custom `paths` pattern found, but not one its specification names
    return Where(m["root"], m["rest"], m["dir"])


# --- reading -------------------------------------------------------------------------


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _text(path: str, data: bytes, code: str) -> tuple[str | None, list[Finding]]:
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        return None, [finding(code, path, f"not UTF-8 (byte {exc.start})", line=line)]


def _json(path: str, data: bytes, code: str) -> tuple[dict[str, Any] | None, str, list[Finding]]:
    """The strict JSON object in `data`, its text, and why not."""
    text, bad = _text(path, data, code)
    if text is None:
        return None, "", bad
    try:
        return jsonstrict.loads_object(text), text, []
    except jsonstrict.StrictJSONError as exc:
        m = re.search(r"at line ([0-9]+) column", str(exc))
        line = int(m.group(1)) if m else _first_line(text)
        if exc.duplicate:  # the second spelling of the key is the culprit
            line = _duplicate_line(text, str(exc)) or line
        # A truncated file fails "at" the line after its last newline: name the last line.
        line = min(line, text.count("\n") + (not text.endswith("\n")) or 1)
        return None, text, [finding(code, path, f"not a strict JSON object: {exc}", line=line)]


def _duplicate_line(text: str, message: str) -> int | None:
    m = re.fullmatch(r"duplicate key '(.*)'", message)
    if m is None:
        return None
    hits = list(re.finditer(r'"' + re.escape(m.group(1)) + r'"\s*:', text))
    return text.count("\n", 0, hits[1].start()) + 1 if len(hits) >= 2 else None


def _first_line(text: str) -> int:
    """The line where the document starts (the object's `{`)."""
    stripped = text.lstrip()
    return text.count("\n", 0, len(text) - len(stripped)) + 1


def _key_line(text: str, key: str) -> int:
    """The line of a top-level key (these files are flat objects); else the object's first line."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, m.start()) + 1 if m else _first_line(text)


def _schema_findings(code: str, path: str, name: str, obj: dict[str, Any], text: str) -> list[Finding]:
    out = []
    for problem in schema.errors(name, obj):
        # "loop-state: status: 'x' is not one of ..." -> the top-level key names the line.
        where_ = problem.split(": ", 2)[1] if problem.count(": ") >= 2 else "(root)"
        key = where_.split("/")[0]
        line = _first_line(text) if where_ == "(root)" else _key_line(text, key)
        out.append(finding(code, path, problem, line=line))
    return out


def read_state(ctx: Context, root: str) -> dict[str, Any] | None:
    """The run's state.json in the judged state, when it is a strict JSON object."""
    data = ctx.files.read(root + "state.json")
    if data is None:
        return None
    obj, _, bad = _json(root + "state.json", data, "HG640")
    return None if bad else obj


def iteration_dirs(ctx: Context, root: str) -> list[str]:
    """The well-named iteration directories that hold a file (git tracks no empty ones)."""
    prefix = root + "iterations/"
    names = {p[len(prefix) :].split("/")[0] for p in ctx.files.paths(prefix) if "/" in p[len(prefix) :]}
    return sorted(n for n in names if _ITERATION_DIR.match(n))


def latest_verdict_problem(ctx: Context, root: str) -> str | None:
    """None when the latest iteration's verdict is `pass`, else why the run has not passed.

    Resume mode step 4: "Glob .harness/iterations/* and take the one with the highest
    zero-padded numeric name"; Phase 3 step 13: `jq -r .result` compared to "pass"."""
    dirs = iteration_dirs(ctx, root)
    if not dirs:
        return f"no iteration directory under {root}iterations/ holds a verdict"
    latest = f"{root}iterations/{dirs[-1]}/verdict.json"
    data = ctx.files.read(latest)
    if data is None:
        return f"the latest iteration has no verdict: {latest} is missing"
    obj, _, bad = _json(latest, data, "HG650")
    if obj is None or bad:
        return f"{latest} is malformed, which counts as fail"
    result = obj.get("result")
    if result != "pass":
        shown = result if isinstance(result, str) and len(result) <= 40 else "not pass"
        return f'{latest} has "result": {shown!r}'
    return None


# --- the files ------------------------------------------------------------------------


def lint_state(path: str, data: bytes, ctx: Context, root: str) -> list[Finding]:
    obj, text, bad = _json(path, data, "HG640")
    if obj is None:
        return bad
    out = _schema_findings("HG641", path, "loop-state", obj, text)
    started = obj.get("started_at")
    if isinstance(started, str) and _LOG_LINE.match(started.encode() + b" "):  # the shape is right
        try:
            datetime.strptime(started, _STAMP)  # the literal Z is the zone
        except ValueError:
            line = _key_line(text, "started_at")
            out.append(finding("HG641", path, f"started_at {started[:40]!r} is not a real UTC time", line=line))
    iteration, cap = _int(obj.get("iteration")), _int(obj.get("max_iterations"))
    if iteration is not None and cap is not None and iteration > cap:
        # "Continue past max_iterations" is a hard prohibition; the loop runs while
        # state.iteration < state.max_iterations and increments once per pass.
        msg = f"iteration {iteration} is past max_iterations {cap}"
        out.append(finding("HG642", path, msg, line=_key_line(text, "iteration")))
    if obj.get("status") == "passed":
        out.extend(_premature_pass(path, text, ctx, root))
    return out


def _int(value: Any) -> int | None:
    """A JSON integer (true and false are not numbers here), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _premature_pass(path: str, text: str, ctx: Context, root: str) -> list[Finding]:
    # Phase 3 step 15: "If result == "pass": set state.status = "passed"" - and only then.
    why = latest_verdict_problem(ctx, root)
    if why is None:
        return []
    return [finding("HG643", path, f'status is "passed" but {why}', line=_key_line(text, "status"))]


@dataclass(frozen=True)
class Frontmatter:
    fields: dict[str, tuple[str, int]]  # key -> (plain value, 1-based line)
    end: int  # the 0-based index of the closing line


def _scalar(raw: str) -> str:
    """A YAML plain or quoted scalar on one line, without a trailing comment."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return re.split(r"[ \t]#", value, maxsplit=1)[0].strip()


def _frontmatter(path: str, lines: list[str]) -> tuple[Frontmatter | None, list[Finding]]:
    if not lines or lines[0].rstrip() != "---":
        return None, [finding("HG645", path, "spec.md does not start with a `---` frontmatter line", line=1)]
    fields: dict[str, tuple[str, int]] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return Frontmatter(fields, i), []
        m = _FRONT_KEY.match(line)
        if m is None:
            continue  # nested values, comments, blank lines: not the fields its specification reads
        if m[1] in fields:
            # A line editor and a YAML reader would disagree on which one counts.
            msg = f"frontmatter key `{m[1]}` repeats line {fields[m[1]][1]}"
            return None, [finding("HG645", path, msg, line=i + 1)]
        fields[m[1]] = (_scalar(m[2]), i + 1)
    return None, [finding("HG645", path, "the frontmatter opened on line 1 is never closed with `---`", line=1)]


def lint_spec(path: str, data: bytes) -> list[Finding]:
    # Phase 1 step 4: "Verify .harness/spec.md exists and is non-empty."
    if not data.strip():
        return [finding("HG645", path, "spec.md is empty")]
    text, bad = _text(path, data, "HG645")
    if text is None:
        return bad
    lines = text.split("\n")
    front, bad = _frontmatter(path, lines)
    if front is None:
        return bad
    out = []
    # Phase 1 step 5: "a YAML frontmatter evaluation: field with value frontend, backend, or fullstack".
    evaluation = front.fields.get("evaluation")
    if evaluation is None:
        out.append(finding("HG646", path, "the frontmatter has no `evaluation:` field", line=1))
    elif evaluation[0] not in _MODES:
        msg = f"evaluation {evaluation[0][:40]!r} is not frontend, backend or fullstack"
        out.append(finding("HG646", path, msg, line=evaluation[1]))
    # Phase 1 step 7: "If it's blocked, print the ## Blocker section of the spec".
    status = front.fields.get("status")
    if status is not None and status[0] == "blocked":
        body = lines[front.end + 1 :]
        if not any(_BLOCKER.match(line.rstrip("\r")) for line in body):
            out.append(finding("HG647", path, "status is blocked but no `## Blocker` section says why", line=status[1]))
    return out


def lint_iteration_file(path: str, data: bytes, at: Where) -> list[Finding]:
    if at.directory is None:
        return []
    if not _ITERATION_DIR.match(at.directory):
        shown = at.directory[:40]
        msg = f"iteration directory `{shown}` is not two digits 01-99 (Phase 3: zero-padded to width 2)"
        return [finding("HG649", path, msg)]
    if not at.rest.endswith("/verdict.json"):
        return []  # feedback.md is for the generator; its specification gives it no format
    obj, text, bad = _json(path, data, "HG650")
    if obj is None:
        return bad
    out = _schema_findings("HG651", path, "loop-verdict", obj, text)
    number = _int(obj.get("iteration"))
    if number is not None and number != int(at.directory):
        # Phase 3 step 12: the synthesized verdict carries `"iteration": N` of its directory.
        msg = f"iteration {number} in the directory of iteration {at.directory}"
        out.append(finding("HG652", path, msg, line=_key_line(text, "iteration")))
    return out


def lint_brief(path: str, data: bytes) -> list[Finding]:
    # Parsing rule 3: "If the brief is empty after flag parsing ... abort with: No brief provided."
    return [] if data.strip() else [finding("HG653", path, "brief.md is empty")]


def lint_log(path: str, data: bytes) -> list[Finding]:
    # Every run.log entry its specification appends is "<timestamp> ...", the timestamp from
    # `date -u +%Y-%m-%dT%H:%M:%SZ`.
    out: list[Finding] = []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    for n, line in enumerate(lines, start=1):
        if _log_line_ok(line):
            continue
        if len(out) == _MAX_LOG_FINDINGS:
            out.append(finding("HG654", path, "more lines without a timestamp follow (not listed)", line=n))
            break
        out.append(finding("HG654", path, "the line does not start with a UTC timestamp and a space", line=n))
    return out


def _log_line_ok(line: bytes) -> bool:
    m = _LOG_LINE.match(line)
    if m is None:
        return False
    try:
        datetime.strptime(m.group(1).decode("ascii"), _STAMP)  # the literal Z is the zone
    except ValueError:
        return False
    return True


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    at = where(path)
    if at is None:
        return []
    if at.rest == "state.json":
        return lint_state(path, data, ctx, at.root)
    if at.rest == "spec.md":
        return lint_spec(path, data)
    if at.rest == "brief.md":
        return lint_brief(path, data)
    if at.rest == "run.log":
        return lint_log(path, data)
    return lint_iteration_file(path, data, at)


# --- the moves -----------------------------------------------------------------------


# Any other file of an iteration (notes, screenshots): it adds or changes an iteration,
# so a `passed` state is judged again against the latest verdict.
_ANY_ITERATION_FILE = re.compile(r"^(?P<root>(?:.*/)?\.harness/)iterations/[^/]+/")


def gate(path: str, old: bytes | None, new: bytes | None, ctx: Context) -> list[Finding]:
    at = where(path)
    if at is None:
        other = _ANY_ITERATION_FILE.match(path)
        return _gate_iteration(ctx, other["root"]) if other is not None else []
    if at.rest == "state.json":
        return _gate_state(path, old, new)
    if at.rest == "spec.md":
        return _gate_spec(path, old, new, ctx, at.root)
    if at.directory is not None:
        return _gate_iteration(ctx, at.root)
    return []


def _status(data: bytes | None) -> tuple[str | None, str]:
    if data is None:
        return None, ""
    obj, text, bad = _json("state.json", data, "HG640")
    status = obj.get("status") if obj is not None and not bad else None
    return (status if isinstance(status, str) else None), text


def _gate_state(path: str, old: bytes | None, new: bytes | None) -> list[Finding]:
    # Resume mode step 3: "If state.status is "passed", "aborted" ... stop and tell the
    # user: Run is already <status>. Delete .harness/ to start over." Phase 3: "Do not
    # overwrite a passed status." Deleting state.json (starting over) stays allowed.
    before, _ = _status(old)
    after, text = _status(new)
    if before not in _FINISHED or new is None or after == before:
        return []
    shown = after if after is not None else "unreadable"
    msg = f"the run is already {before}; status moved to {shown[:40]!r}"
    return [finding("HG644", path, msg, line=_key_line(text, "status") if text else None)]


def _gate_spec(path: str, old: bytes | None, new: bytes | None, ctx: Context, root: str) -> list[Finding]:
    # Hard prohibitions: "Edit .harness/spec.md (except the evaluation: field when --eval is
    # set, which the setup phase handles exactly once)" - Phase 1, before any iteration.
    # Resume mode: "Do not re-run the planner, ever. The spec is frozen."
    if old is None or old == new:
        return []
    state = read_state(ctx, root)
    iteration = _int(state.get("iteration")) if state is not None else None
    if (iteration is None or iteration < 1) and not iteration_dirs(ctx, root):
        return []  # still planning (or the whole run is being deleted)
    if new is None:
        return [finding("HG648", path, "spec.md deleted while the run's iterations remain")]
    return [finding("HG648", path, "spec.md changed after the loop started", line=_first_change(old, new))]


def _first_change(old: bytes, new: bytes) -> int:
    a, b = old.split(b"\n"), new.split(b"\n")
    for n, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return n
    return min(len(b), len(a) + 1)  # one is a prefix of the other


def _gate_iteration(ctx: Context, root: str) -> list[Finding]:
    """A change inside an iteration directory can take a passed run's passing verdict
    away (a rewritten verdict, a new iteration): judge state.json again. The same
    finding from state.json's own lint is folded into one by the framework."""
    data = ctx.files.read(root + "state.json")
    if data is None:
        return []
    obj, text, bad = _json(root + "state.json", data, "HG640")
    if obj is None or bad or obj.get("status") != "passed":
        return []
    return _premature_pass(root + "state.json", text, ctx, root)


# --- formats status ------------------------------------------------------------------


def status(path: str, data: bytes, ctx: Context) -> list[str]:
    at = where(path)
    if at is None or at.rest != "state.json":
        return []
    obj, _, bad = _json(path, data, "HG640")
    if obj is None or bad:
        return []
    dirs = iteration_dirs(ctx, at.root)
    return [
        f"status {obj.get('status')}, iteration {obj.get('iteration')} of {obj.get('max_iterations')}",
        f"iteration directories: {len(dirs)}" + (f" (latest {dirs[-1]})" if dirs else ""),
    ]


FORMAT = Format("loop", "planner/generator/evaluator loop", lint, gate, status)
