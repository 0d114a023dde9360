"""One evaluated call as one JSON line of the results store.

``CallRecord`` is a superset of the grading CLI's ``GradedCall`` (same names where they
overlap: ``key``, ``task_id``, ``stack``, ``repeat``, ``persona``, ``background``,
``transcript``, ``verdict``), so ``vamos judge gate runs/NAME/results.jsonl`` and
``vamos grade calibrate`` read the store as it is.

``status`` is what the metrics count:

- ``pass`` / ``fail``: a counted call. An agent fault is a ``fail`` with ``agent_fault``
  saying why: the agent raised, timed out, or its model failed (an HTTP error after the
  SDK's retries, a reply that is not a completion: the stack's own platform is part of
  the stack). The call is still graded on what happened before it, so assertion rates
  stay meaningful.
- ``excluded``: a benchmark fault (``exclusions`` says which: the caller deviated from
  its brief, the grader could not give a trustworthy verdict, the session was lost to
  an error of the environment or of the caller's model, or the call's record could not
  be stored whole). Excluded whether it passed or failed; the verdict, when there is
  one, is kept so the report can show the effect of the exclusions, and
  ``vamos eval --retry-faults`` reruns them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vamos_env.grading.models import Verdict
from vamos_env.types import Transcript

Status = Literal["pass", "fail", "excluded"]
ExclusionKind = Literal["caller_deviation", "grading_fault", "lost_session", "store_fault"]


def call_key(stack: str, task_id: str, repeat: int) -> str:
    """The store's key of one call: ``stack/task_id/repeat`` (stack names hold no ``/``)."""
    return f"{stack}/{task_id}/{repeat}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Exclusion(_Strict):
    """Why a call is a benchmark fault rather than the agent's result."""

    kind: ExclusionKind
    detail: str


class CallUsage(_Strict):
    """What an LLM-bound agent spent on the call; zeros for offline agents."""

    model: str | None = None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # A speech-to-speech model's audio tokens, as its vendor reports them: part of the
    # counts above, priced at the model's audio rates.
    audio_prompt_tokens: int = 0
    audio_completion_tokens: int = 0


class TraceEntry(_Strict):
    """One tool call as the agent made it (the transcript has the full results)."""

    turn: int
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    error: str | None = None
    writes: list[dict[str, Any]] = Field(default_factory=list)


class CallRecord(_Strict):
    key: str
    task_id: str
    stack: str
    repeat: int
    trial_id: str
    seed: int
    persona: str
    background: str
    request_count: int
    status: Status
    exclusions: list[Exclusion] = Field(default_factory=list)
    agent_fault: str | None = None
    end_reason: str | None = None
    caller_satisfied: bool | None = None  # the caller's own belief that its goal was met
    transferred: bool = False
    agent_turns: int = 0
    malformed_actions: int = 0
    # Code points the environment replaced to make the call's text storable (lone surrogates).
    replaced_code_points: int = 0
    transcript: Transcript | None = None
    trace: list[TraceEntry] = Field(default_factory=list)
    verdict: Verdict | None = None
    deviations: list[dict[str, Any]] = Field(default_factory=list)
    # Wall time of each agent response (act/aact), as the caller would wait for it.
    response_latencies_s: list[float] = Field(default_factory=list)
    usage: CallUsage = Field(default_factory=CallUsage)
    cost_usd: float | None = 0.0  # from the tokens and the run's price table; None: unpriced
    wall_s: float = 0.0
    worker: str = ""
    # Duplex calls only: the line, turn-taking and latency metrics, events and timeline on
    # the call's clock, and the stack's compute (see docs/duplex.md).
    duplex: dict[str, Any] | None = None

    @property
    def counted(self) -> bool:
        return self.status != "excluded"

    @property
    def passed(self) -> bool:
        return self.status == "pass"
