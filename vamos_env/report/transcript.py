"""One call's page: who said what, tool calls inline, and the failing checks highlighted.

The page opens with the call's facts (stack, task, persona, background, what the caller
believed, how the call ended, any fault or exclusion) and the checks that did not pass,
each linking to the turns its evidence points at; those turns are marked in the
conversation below. Speech shows what was said and, where the channel changed it, what
the other side heard. Everything is escaped; the page needs no script and no network.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import escape

from vamos_env.grading.models import CheckResult
from vamos_env.runner.records import CallRecord
from vamos_env.types import Turn

PAGE_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:980px;color:#1d2430;padding:0 16px}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d5dae1;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f1f3f6}
.pass{color:#137333;font-weight:600} .fail{color:#b3261e;font-weight:600}
.excluded{color:#8a6d00;font-weight:600}
.turn{border-radius:8px;padding:6px 10px;margin:6px 0;max-width:80%}
.caller{background:#eef3fb} .agent{background:#edf7ee;margin-left:auto}
.tool{background:#f6f6f6;font-family:ui-monospace,monospace;font-size:12px;max-width:100%}
.who{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:#5b6675}
.heard{font-size:12px;color:#6b5b00} .flag{font-size:11px;color:#8a6d00}
.evidence{outline:3px solid #d93025} .checkfail{background:#fdecea}
.row{display:flex} pre{white-space:pre-wrap;margin:4px 0}
"""


_TURNS = re.compile(r"\bturns? (\d+)(?:\s*-\s*(\d+))?")


MAX_PAGE_STEM = 120  # characters; file systems refuse names over 255 bytes


def page_name(key: str) -> str:
    """The file name of a call's page: the key with ``/`` as ``__``. A key too long for a
    file name (a valid 250-character task id), or with characters a file name should not
    hold, is cut and given a hash suffix, so names stay unique and bounded."""
    stem = key.replace("/", "__")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", stem)
    if safe != stem or len(safe) > MAX_PAGE_STEM:
        digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]
        safe = f"{safe[:MAX_PAGE_STEM]}-{digest}"
    return safe + ".html"


def _failing(record: CallRecord) -> list[tuple[str, CheckResult]]:
    if record.verdict is None:
        return []
    out: list[tuple[str, CheckResult]] = []
    for assertion in (record.verdict.gate, record.verdict.actions, record.verdict.requirements):
        out += [(assertion.name, c) for c in assertion.checks if c.passed is not True]
    return out


def _turn(turn: Turn, marked: set[int]) -> str:
    anchor = f'id="t{turn.index}"'
    mark = " evidence" if turn.index in marked else ""
    if turn.tool_call is not None:
        result = turn.tool_result
        status = "ok" if result is not None and result.ok else "error"
        args = json.dumps(turn.tool_call.arguments, ensure_ascii=False)
        body = json.dumps(result.result if result else {}, indent=1, ensure_ascii=False)
        writes = ""
        if result is not None and result.writes:
            writes = f"<div class='flag'>writes: {escape(json.dumps(result.writes))}</div>"
        return (
            f"<div class='turn tool{mark}' {anchor}><span class='who'>#{turn.index} tool</span> "
            f"<b>{escape(turn.tool_call.name)}</b>({escape(args)}) &rarr; "
            f"<span class='{'pass' if status == 'ok' else 'fail'}'>{status}</span>{writes}"
            f"<details><summary>result</summary><pre>{escape(body)}</pre></details></div>"
        )
    flags = []
    if turn.spurious:
        flags.append("background speech, received as the caller's")
    if turn.cut:
        flags.append("cut short")
    heard = ""
    if turn.heard is not None:
        heard = f"<div class='heard'>heard as: {escape(turn.heard)}</div>"
    flag = f"<div class='flag'>{escape('; '.join(flags))}</div>" if flags else ""
    side = "agent" if turn.speaker == "agent" else "caller"
    return (
        f"<div class='row'><div class='turn {side}{mark}' {anchor}>"
        f"<span class='who'>#{turn.index} {escape(turn.speaker)}</span>"
        f"<div>{escape(turn.text)}</div>{heard}{flag}</div></div>"
    )


def render_call(record: CallRecord, *, back_link: str = "../report.html") -> str:
    """The HTML page of one call."""
    failing = _failing(record)
    marked = {e.turn for _, c in failing for e in c.evidence if e.turn is not None}
    facts = [
        ("status", f"<span class='{record.status}'>{record.status}</span>"),
        ("stack", escape(record.stack)),
        ("task", escape(record.task_id)),
        ("repeat", str(record.repeat)),
        ("persona / background", escape(f"{record.persona} / {record.background}")),
        ("requests", str(record.request_count)),
        ("caller satisfied", escape(str(record.caller_satisfied))),
        ("ended by", escape(str(record.end_reason))),
        ("agent turns", str(record.agent_turns)),
    ]
    if record.agent_fault:
        facts.append(
            ("agent fault (a miss)", f"<span class='fail'>{escape(record.agent_fault)}</span>")
        )
    for exclusion in record.exclusions:
        facts.append(
            ("excluded", f"<span class='excluded'>{escape(exclusion.kind)}</span>: "
             f"{escape(exclusion.detail)}")
        )  # fmt: skip
    if record.verdict is not None:
        for assertion in (record.verdict.gate, record.verdict.actions, record.verdict.requirements):
            state = {True: "pass", False: "fail", None: "undecided"}[assertion.passed]
            facts.append((f"assertion: {assertion.name}", f"<span class='{state}'>{state}</span>"))
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    checks = ""
    if failing:
        items = []
        for name, check in failing:
            links = ", ".join(
                f"<a href='#t{e.turn}'>turn {e.turn}</a>"
                for e in check.evidence
                if e.turn is not None
            )
            if not links:
                # No evidence (a thing never said): point at the window the reason names.
                links = ", ".join(
                    f"<a href='#t{m[1]}'>window from turn {m[1]}</a>"
                    for m in _TURNS.finditer(check.reason)
                )
            state = "undecided" if check.passed is None else "failed"
            items.append(
                f"<tr class='checkfail'><td>{escape(name)}</td><td>{escape(check.id)}</td>"
                f"<td>{state}</td><td>{escape(check.reason)}</td><td>{links}</td></tr>"
            )
        checks = (
            "<h2>Checks that did not pass</h2><table><tr><th>assertion</th><th>check</th>"
            "<th>result</th><th>reason</th><th>evidence</th></tr>" + "".join(items) + "</table>"
        )
    turns = ""
    if record.transcript is not None:
        turns = "".join(_turn(t, marked) for t in record.transcript.turns)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(record.key)}</title><style>{PAGE_STYLE}</style></head><body>"
        f"<p><a href='{escape(back_link)}'>&larr; report</a></p><h1>{escape(record.key)}</h1>"
        f"<table>{rows}</table>{checks}<h2>Conversation</h2>{turns or '<p>no transcript</p>'}"
        "</body></html>"
    )
