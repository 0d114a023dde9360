"""A graded call as one JSON line: what calibration and the judge gate read.

``GradedCall`` is the record the runner appends to its results file (JSON Lines, one call
per line) and that labelled calibration sets use. Only ``key`` and ``task_id`` are
required; each tool reads the fields it needs:

- ``vamos grade calibrate`` compares ``verdict.requirements`` (the code verifier) with
  ``llm_checks`` (the LLM verifier on the same checks and windows);
- ``vamos judge gate`` scores ``transcript`` (with ``persona``) unless ``judge`` already
  holds scores;
- ``vamos judge calibrate`` compares the judge's pass/fail with ``human_label``.

Fields a runner adds beyond these are ignored, so richer records stay readable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from vamos_env.grading.judge import JudgeScores
from vamos_env.grading.llm import Usage
from vamos_env.grading.models import CheckResult, Verdict
from vamos_env.types import Transcript


class GradedCall(BaseModel):
    model_config = ConfigDict(extra="ignore")

    key: str  # unique per call, e.g. "stack/task_id/repeat"
    task_id: str
    stack: str = ""
    repeat: int = 0
    persona: str | None = None
    background: str | None = None
    transcript: Transcript | None = None
    verdict: Verdict | None = None
    llm_checks: list[CheckResult] | None = None
    llm_usage: Usage | None = None
    llm_fault: str | None = None
    judge: JudgeScores | None = None
    human_label: Literal["pass", "fail"] | None = None


class RecordFileError(ValueError):
    """A results file that cannot be read: names the line and what was wrong."""


def read_records(path: str | Path) -> Iterator[GradedCall]:
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read it: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield GradedCall.model_validate(json.loads(line))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[:3]
            raise RecordFileError(
                f"{path}:{number}: expected a graded call record: {' '.join(first)}"
            ) from None


def write_records(path: str | Path, records: list[GradedCall]) -> None:
    with Path(path).open("w") as out:
        for record in records:
            out.write(record.model_dump_json() + "\n")
