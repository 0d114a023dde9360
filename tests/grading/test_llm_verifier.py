"""The LLM verifier against a local server that speaks OpenAI's chat-completions protocol."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from vamos_env.grading import FallbackVerifier, grade
from vamos_env.grading.llm import ModelEndpoint, Price, load_prices, price_of, strict_schema
from vamos_env.grading.llm_verifier import LLMVerifier, _Reply, evidence_slice
from vamos_env.grading.timeline import Timeline

CHECK_HEADER = re.compile(r"^check (\S+) \((\w+)\):", re.MULTILINE)
TURN = re.compile(r"^\s+\[(\d+)\] ", re.MULTILINE)
PRICES = {"fake-model": Price(input_per_million=2.0, output_per_million=8.0)}


def user_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def oracle(verdicts: dict[str, str] | None = None) -> Any:
    """A fake model: every check passes (or as ``verdicts`` says), citing its first turn."""

    def reply(request: dict[str, Any]) -> str:
        text = user_text(request)
        checks = []
        blocks = CHECK_HEADER.split(text)[1:]
        for check_id, _kind, body in zip(blocks[::3], blocks[1::3], blocks[2::3], strict=True):
            turns = [int(t) for t in TURN.findall(body)][:1]
            checks.append(
                {
                    "id": check_id,
                    "verdict": (verdicts or {}).get(check_id, "pass"),
                    "evidence_turns": turns,
                    "quote": "as said",
                    "reason": "read from the window",
                }
            )
        return json.dumps({"checks": checks})

    return reply


def verifier(server: Any, **kw: Any) -> LLMVerifier:
    endpoint = ModelEndpoint(model="fake-model", base_url=server.base_url, api_key="sk-test")
    return LLMVerifier(endpoint, prices=PRICES, **kw)


def test_the_verifier_sends_explicit_checks_and_reads_verdicts(fake_chat: Any, built: Any) -> None:
    call = built("pay_all_in_words")
    server = fake_chat(oracle({"card_read_back": "fail"}))
    llm = verifier(server)
    verdict = grade(call.task, call.transcript, call.ledger, verifier=llm)

    assert verdict.grading_fault is None
    assert verdict.verifier == "llm:fake-model"
    assert verdict.requirements.check("card_read_back").passed is False
    assert verdict.requirements.check("amount_read_back").passed is True
    assert verdict.requirements.check("amount_read_back").evidence[0].turn is not None
    assert verdict.passed is False

    [request] = server.requests
    assert request["model"] == "fake-model"
    assert request["temperature"] == 0
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == strict_schema(_Reply)
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    text = user_text(request)
    assert "$219.86 (21986 cents)" in text  # the value, as money and in cents
    assert "evidence window: turns 0-5 (after the start of the call, before a successful " in text
    assert "count only turns after the evidence of check card_read_back" in text
    # The slice of the payment-report check starts after the payment.
    assert re.search(r"check payment_reported .*?turns:\n\s+\[7\] agent:", text, re.DOTALL)

    # Tokens and cost: 1000 prompt tokens and the reply's words at the test prices.
    assert llm.usage.requests == 1
    assert llm.usage.prompt_tokens == 1000
    assert llm.usage.completion_tokens > 0
    expected_cost = (1000 * 2.0 + llm.usage.completion_tokens * 8.0) / 1_000_000
    assert llm.usage.cost_usd == pytest.approx(expected_cost)


def test_windows_and_slices_match_the_code_verifier(built: Any) -> None:
    call = built("decline_reported_then_second_card")
    timeline = Timeline.of(call.transcript)
    check = next(c for c in call.task.checks if c.id == "decline_reported")
    span, lines = evidence_slice(check, timeline)
    declined = timeline.first("make_payment", "failure")
    paid = timeline.first("make_payment", "success")
    assert declined is not None and paid is not None
    assert (span.start, span.end) == (declined.turn + 1, paid.turn)
    assert lines[0].startswith(f"[{declined.turn + 1}] agent: I'm sorry")


def test_background_speech_is_labelled(fake_chat: Any, built: Any) -> None:
    call = built("pay_consent_from_television")
    server = fake_chat(oracle())
    grade(call.task, call.transcript, call.ledger, verifier=verifier(server))
    assert "background speech (NOT the caller): Yes, absolutely" in user_text(server.requests[0])


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (lambda req: "The call looks fine to me.", "the model's reply is not JSON"),
        (lambda req: json.dumps({"checks": []}), "missing checks"),
        (
            lambda req: json.dumps({"verdicts": "all good"}),
            "does not follow the check_verdicts schema",
        ),
        (
            lambda req: oracle()(req).replace('"pass"', '"probably"'),
            "does not follow the check_verdicts schema",
        ),
        (
            lambda req: oracle()(req).replace('"evidence_turns": [', '"evidence_turns": [999, '),
            "cites turns [999]",
        ),
        (lambda req: "", "the model's reply is empty"),
        (
            lambda req: (500, {"error": {"message": "upstream exploded", "type": "server_error"}}),
            "the model server at",
        ),
    ],
)
def test_a_malformed_reply_is_a_grading_fault(
    fake_chat: Any, built: Any, reply: Any, message: str
) -> None:
    call = built("pay_all_in_words")
    server = fake_chat(reply)
    llm = LLMVerifier(
        ModelEndpoint(model="fake-model", base_url=server.base_url, api_key="k", max_retries=0)
    )
    verdict = grade(call.task, call.transcript, call.ledger, verifier=llm)
    assert verdict.outcome == "fault"
    assert verdict.reward == 0.0
    assert verdict.grading_fault is not None and message in verdict.grading_fault


def test_duplicate_check_ids_are_malformed(fake_chat: Any, built: Any) -> None:
    call = built("pay_all_in_words")

    def twice(request: dict[str, Any]) -> str:
        data = json.loads(oracle()(request))
        data["checks"].append(data["checks"][0])
        return json.dumps(data)

    server = fake_chat(twice)
    verdict = grade(call.task, call.transcript, call.ledger, verifier=verifier(server))
    assert verdict.grading_fault is not None and "repeated checks" in verdict.grading_fault


def test_endpoint_reads_the_openai_environment(
    fake_chat: Any, built: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = built("paperless_reference")
    server = fake_chat(oracle())
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    llm = LLMVerifier(ModelEndpoint(model="gpt-4o-mini"))
    verdict = grade(call.task, call.transcript, call.ledger, verifier=llm)
    assert verdict.passed is True
    assert server.headers[0]["authorization"] == "Bearer sk-from-env"
    # The shipped price table knows gpt-4o-mini.
    assert llm.usage.cost_usd is not None and llm.usage.cost_usd > 0


def test_prices() -> None:
    shipped = load_prices()
    assert price_of("gpt-4o-2024-08-06") == shipped["gpt-4o"]
    assert price_of("unheard-of-model") is None
    assert price_of("fake-model", PRICES) == PRICES["fake-model"]
    schema = strict_schema(_Reply)
    item = schema["properties"]["checks"]["items"]
    assert item["additionalProperties"] is False
    assert set(item["required"]) == {"id", "verdict", "evidence_turns", "quote", "reason"}


def test_speech_models_price_their_audio_tokens_apart() -> None:
    realtime = price_of("gpt-realtime-2025-08-28")
    assert realtime is not None and realtime.audio_input_per_million == 32.0
    # 1,000 prompt tokens of which 800 audio, 500 completion tokens of which 400 audio.
    cost = realtime.cost(1_000, 500, audio_prompt_tokens=800, audio_completion_tokens=400)
    assert cost == pytest.approx((200 * 4 + 800 * 32 + 100 * 16 + 400 * 64) / 1e6)
    assert realtime.cost(1_000, 500) == pytest.approx((1_000 * 4 + 500 * 16) / 1e6)
    # The native-audio Live model is not priced as text-only Gemini 2.5 Flash.
    live = price_of("gemini-2.5-flash-native-audio-preview-12-2025")
    assert live is not None and live != price_of("gemini-2.5-flash")
    assert live.cost(100, 10, 100, 10) == pytest.approx((100 * 3 + 10 * 12) / 1e6)
    text_only = Price(1.0, 2.0)  # no audio rates: audio tokens at the text rates
    assert text_only.cost(10, 10, 5, 5) == text_only.cost(10, 10)
    with pytest.raises(ValueError, match="0 or more"):
        Price.from_entry(
            {"input_per_million": 1, "output_per_million": 1, "audio_input_per_million": -1}
        )
    with pytest.raises(ValueError, match="expected input_per_million"):
        Price.from_entry({"input_per_million": 1})


def test_fallback_sends_only_undecided_calls_to_the_model(fake_chat: Any, built: Any) -> None:
    server = fake_chat(oracle())
    fallback = FallbackVerifier(verifier(server))
    decided = built("pay_all_in_words")
    verdict = grade(decided.task, decided.transcript, decided.ledger, verifier=fallback)
    assert verdict.passed and server.requests == []  # the code verifier decided everything

    relative = built("arrangement_first_due_relative")
    verdict = grade(relative.task, relative.transcript, relative.ledger, verifier=fallback)
    assert len(server.requests) == 1
    assert verdict.verifier == "code+llm:fake-model"
    result = verdict.requirements.check("first_due_stated")
    assert result.passed is True and result.reason.startswith("llm:fake-model (the code")
    # Every other check keeps the code verifier's answer.
    assert verdict.requirements.check("consent_to_terms").reason.startswith("the caller agreed")
