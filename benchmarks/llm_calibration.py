"""The LLM verifier and the LLM judge against the code verifier and the human labels.

Verifier: each labelled call of ``tests/grading/labelled/`` (277 calls) is regraded twice
on the replayed ledger, once by the code verifier and once by ``LLMVerifier``; the two are
compared check by check and call by call (``compare_verifiers``, as ``vamos grade
calibrate`` reports it), and each is compared with the human check labels. Judge:
``LLMJudge`` on the 26 hand-labelled transcripts of ``tests/grading/judge_labels.yaml``
(``judge_agreement``, as ``vamos judge calibrate`` reports it).

By default the model is the local one (``vamos llm serve``'s shipped Qwen2.5-Coder-1.5B),
started in this process unless a server already answers. A verification request carries
each check's window of the transcript (about 9,000 tokens for the median call, some 2.4
million for the whole set), minutes per call on two cores, so the default is a seeded
sample (``--calls 20 --seed 0``) and ``--smallest`` takes the shortest requests instead;
``--calls 0`` runs the whole set. Any OpenAI-compatible model works:
``--model gpt-4o-mini --base-url https://api.openai.com/v1`` (key from OPENAI_API_KEY).

Graded records go to ``OUT/verifier.jsonl`` and the judge's scores to ``OUT/judge.jsonl``
as they are made (a rerun resumes; a request the server failed is asked again), the reports
to ``OUT/verifier.txt`` and ``OUT/judge.txt``; the judge's report lists every transcript's
scores and the model's reasons for each dimension under its floor, to read the disagreements.

Run: .venv/bin/python benchmarks/llm_calibration.py [--calls N] [--seed S | --smallest] [--model M]
     [--base-url URL] [--judge-cases N] [--skip-verifier] [--skip-judge] [--report-only]
     [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import sys
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER_FAILED = "the model server at"  # how StructuredChat words a failed request


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def endpoint(model: str, base_url: str | None) -> Any:
    from vamos_env.grading.llm import ModelEndpoint

    if model == "local" and base_url is None:
        from vamos_env.llm.server import ensure_local_server

        base_url = ensure_local_server()
    key = os.environ.get("OPENAI_API_KEY") or ("local" if model == "local" else None)
    # A small model on two cores can take minutes over one long verification request.
    return ModelEndpoint(model=model, base_url=base_url, api_key=key, timeout_s=900.0)


def sample(calls: list[Any], n: int, seed: int) -> list[Any]:
    if n <= 0 or n >= len(calls):
        return calls
    chosen = set(random.Random(seed).sample(range(len(calls)), n))
    return [c for i, c in enumerate(calls) if i in chosen]


def verifier_run(args: argparse.Namespace, out: Path) -> str:
    from vamos_env.grading import grade
    from vamos_env.grading.calibration import compare_verifiers
    from vamos_env.grading.llm_verifier import LLMVerifier
    from vamos_env.grading.records import GradedCall, read_records

    _load("hacking_tricks", ROOT / "tests/grading/hacking/tricks.py")
    agreement = _load("labelled_agreement", ROOT / "tests/grading/labelled/agreement.py")
    everything = agreement.load()
    if args.smallest:
        from vamos_env.grading.llm_verifier import verification_request
        from vamos_env.grading.timeline import Timeline

        def size(call: Any) -> int:
            return len(verification_request(call.task, Timeline.of(call.transcript)))

        chosen = sorted(everything, key=lambda c: (size(c), c.id))[: args.calls or None]
    else:
        chosen = sample(everything, args.calls, args.seed)
    store = out / "verifier.jsonl"
    done = {r.key: r for r in read_records(store)} if store.exists() else {}
    # A call the server failed (not one whose reply was unusable) is graded again.
    done = {k: r for k, r in done.items() if not (r.llm_fault or "").startswith(SERVER_FAILED)}
    target: Any = (
        SimpleNamespace(base_url=args.base_url or "(not asked)")
        if args.report_only
        else endpoint(args.model, args.base_url)
    )
    labels = {c.id: c for c in chosen}
    records: list[GradedCall] = []
    for i, call in enumerate(chosen, 1):
        if call.id in done:
            records.append(done[call.id])
            continue
        if args.report_only:
            continue
        ledger = agreement.replay(call)
        code = grade(call.task, call.transcript, ledger)
        verifier = LLMVerifier(target)
        started = time.perf_counter()
        model = grade(call.task, call.transcript, ledger, verifier=verifier)
        took = time.perf_counter() - started
        record = GradedCall(
            key=call.id,
            task_id=call.task.task_id,
            stack=call.id.split("/", 1)[0],
            transcript=call.transcript,
            verdict=code,
            llm_checks=None if model.grading_fault else model.requirements.checks,
            llm_usage=verifier.usage,
            llm_fault=model.grading_fault,
        )
        with store.open("a") as handle:
            handle.write(record.model_dump_json() + "\n")
        records.append(record)
        usage = verifier.usage
        print(
            f"[{i}/{len(chosen)}] {call.id}: {took:.0f} s, {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion tokens"
            + (f"; FAULT {model.grading_fault}" if model.grading_fault else ""),
            flush=True,
        )
    report = compare_verifiers(records)
    sampled = ""
    if len(chosen) < len(everything):
        sampled = (
            " (the smallest verification requests: a sample biased to short calls)"
            if args.smallest
            else f" (seeded sample, seed {args.seed})"
        )
    lines = [
        f"model {args.model} at {target.base_url}; {len(records)} graded of {len(chosen)} "
        f"chosen of {len(everything)} labelled calls{sampled}",
        "",
        f"code vs LLM verifier: {report.agreed}/{report.compared} checks agree "
        f"({report.rate:.1%}); "
        f"{sum(a.agreed == a.compared for a in report.by_call)}/{len(report.by_call)} calls "
        "agree on every check",
        *label_lines(records, labels),
        *usage_lines(records),
        "",
        report.report(),
    ]
    return "\n".join(lines)


def label_lines(records: list[Any], labels: dict[str, Any]) -> list[str]:
    """Each verifier against the human check labels (a check it could not judge disagrees)."""
    tallies = {"code": [0, 0, 0, 0], "llm": [0, 0, 0, 0]}  # checks agree, of; calls agree, of
    for record in records:
        call = labels[record.key]
        sides = {"code": {c.id: c.passed for c in record.verdict.requirements.checks}}
        if record.llm_checks is not None:
            sides["llm"] = {c.id: c.passed for c in record.llm_checks}
        for side, verdicts in sides.items():
            tally = tallies[side]
            every = True
            for check_id, label in call.checks.items():
                if check_id not in verdicts:
                    continue
                same = verdicts[check_id] is (label.verdict == "pass")
                tally[0] += same
                tally[1] += 1
                every = every and same
            tally[2] += every
            tally[3] += 1
    return [
        f"{side} verifier vs labels: {t[0]}/{t[1]} checks ({t[0] / max(t[1], 1):.1%}), "
        f"{t[2]}/{t[3]} calls on every check ({t[2] / max(t[3], 1):.1%})"
        for side, t in tallies.items()
    ]


def usage_lines(records: list[Any]) -> list[str]:
    used = [r.llm_usage for r in records if r.llm_usage is not None]
    faults = [r for r in records if r.llm_fault]
    prompt = sum(u.prompt_tokens for u in used)
    completion = sum(u.completion_tokens for u in used)
    return [
        f"tokens: {prompt} prompt, {completion} completion over {len(used)} calls; "
        f"{len(faults)} grading fault(s) (the model's reply unusable)"
    ]


def judge_run(args: argparse.Namespace, out: Path) -> str:
    from vamos_env.grading.calibration import judge_agreement
    from vamos_env.grading.judge import JudgeScores, LLMJudge, load_rubric
    from vamos_env.grading.models import GradingFault

    judged = _load("judge_label_cases", ROOT / "tests/grading/test_judge.py")
    cases = sample(judged.labelled(), args.judge_cases, args.seed)
    rubric = load_rubric()
    store = out / "judge.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if store.exists():
        for line in store.read_text().splitlines():
            row = json.loads(line)
            # A request the server failed is asked again; an unusable reply is kept.
            if not (row.get("fault") or "").startswith(SERVER_FAILED):
                done[row["key"]] = row
    target: Any = (
        SimpleNamespace(base_url=args.base_url or "(not asked)")
        if args.report_only
        else endpoint(args.model, args.base_url)
    )
    judge = LLMJudge(target, rubric) if not args.report_only else None
    faults: list[str] = []
    rows: dict[str, dict[str, Any]] = {}
    for i, case in enumerate(cases, 1):
        row = done.get(case.key)
        if row is None and judge is not None:
            before = judge.usage.model_copy()
            started = time.perf_counter()
            row = {"key": case.key, "human": case.human_label}
            try:
                row["scores"] = judge.score(case.transcript, case.persona).model_dump()
            except GradingFault as exc:
                row["fault"] = str(exc)
            row["seconds"] = round(time.perf_counter() - started, 1)
            row["prompt_tokens"] = judge.usage.prompt_tokens - before.prompt_tokens
            row["completion_tokens"] = judge.usage.completion_tokens - before.completion_tokens
            with store.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            print(
                f"[{i}/{len(cases)}] {case.key}: {row['seconds']:.0f} s, "
                f"{row['prompt_tokens']} prompt + {row['completion_tokens']} completion tokens"
                + (f"; FAULT {row['fault']}" if "fault" in row else ""),
                flush=True,
            )
        if row is None:
            continue
        rows[case.key] = row
        if "fault" in row:
            faults.append(f"{case.key}: {row['fault']}")
        else:
            case.judge = JudgeScores.model_validate(row["scores"])
    scored = [c for c in cases if c.judge is not None]
    name = f"llm:{args.model}"
    report = judge_agreement(scored, rubric, _Stored(name), use_stored=True)
    report.faults.extend(faults)
    seconds = sum(r["seconds"] for r in rows.values())
    prompt = sum(r["prompt_tokens"] for r in rows.values())
    completion = sum(r["completion_tokens"] for r in rows.values())
    sampled = "" if len(cases) == len(judged.labelled()) else f" (seeded sample, seed {args.seed})"
    lines = [
        f"model {args.model} at {target.base_url}; {len(rows)} judged of {len(cases)} chosen "
        f"of {len(judged.labelled())} labelled transcripts{sampled}",
        f"{seconds:.0f} s of requests; {prompt} prompt + {completion} completion tokens",
        "",
        report.report(),
        "",
        "each transcript (dimension scores; reasons of the dimensions under their floor):",
    ]
    floors = {d.name: d.floor for d in rubric.dimensions}
    for case in scored:
        assert case.judge is not None
        decision = rubric.decide(case.judge.scores)
        shown = ", ".join(f"{k} {v:g}" for k, v in case.judge.scores.items())
        verdict = "pass" if decision.passed else "fail"
        mark = "" if verdict == case.human_label else "  <- disagrees"
        lines.append(f"- {case.key} (human {case.human_label}, judge {verdict}): {shown}{mark}")
        for dim, score in case.judge.scores.items():
            if score < floors.get(dim, 0.0):
                lines.append(f"    {dim}: {case.judge.reasons.get(dim, '')}")
    return "\n".join(lines)


class _Stored:
    """The judge ``judge_agreement`` is given when every record carries its scores."""

    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, transcript: Any, persona: str | None = None) -> Any:
        raise AssertionError("every record carries its scores")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="labelled calls (0: all 277)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument(
        "--smallest", action="store_true", help="the --calls calls with the shortest requests"
    )
    parser.add_argument("--judge-cases", type=int, default=0, help="judge transcripts (0: all)")
    parser.add_argument("--model", default="local", help="model name (default: the local one)")
    parser.add_argument("--base-url", help="OpenAI-compatible server (default: the local one)")
    parser.add_argument("--skip-verifier", action="store_true")
    parser.add_argument("--skip-judge", action="store_true")
    parser.add_argument(
        "--report-only", action="store_true", help="report on the calls already graded in OUT"
    )
    parser.add_argument("--out", default="runs/llm-calibration", help="output folder")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.skip_verifier:
        text = verifier_run(args, out)
        (out / "verifier.txt").write_text(text + "\n")
        print(text, flush=True)
    if not args.skip_judge:
        text = judge_run(args, out)
        (out / "judge.txt").write_text(text + "\n")
        print(text, flush=True)
    meta = {"model": args.model, "base_url": args.base_url, "calls": args.calls, "seed": args.seed}
    (out / "settings.json").write_text(json.dumps(meta) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
