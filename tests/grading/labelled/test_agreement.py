"""The code verifier against the hand labels: at least 99% of assertion labels agree.

Every labelled call is regraded (its tool calls replayed on a fresh clone for the ledger)
and each of its three assertions, and each requirement check, is compared with the label
a human grader gave from the transcript. The report (per assertion, per check, every
disagreement with both reasons) is printed; run ``benchmarks/hacking.py --labelled`` for
the same report outside pytest.
"""

from __future__ import annotations

import sys
from collections import Counter

agreement = sys.modules["labelled_agreement"]


def test_the_set_is_large_and_covers_pass_and_fail() -> None:
    calls = agreement.load()
    assert len(calls) >= 200
    for name in agreement.ASSERTIONS:
        verdicts = Counter(c.assertions[name].verdict for c in calls)
        assert verdicts["pass"] and verdicts["fail"], (name, verdicts)
    for call in calls:
        assert set(call.checks) == {c.id for c in call.task.checks} | set(agreement.GRADER_CHECKS)
        for label in [*call.assertions.values(), *call.checks.values()]:
            assert label.verdict in ("pass", "fail") and label.reason.strip(), call.id
        # an assertion label must follow from its own checks where the set labels them
        checks_ok = all(label.verdict == "pass" for label in call.checks.values())
        assert (call.assertions["requirements"].verdict == "pass") == checks_ok, call.id


def test_code_verifier_agrees_with_the_labels() -> None:
    report = agreement.regrade_all()
    print(report.text())
    assert not report.stale, "calls no longer replay on the seeded world"
    assert report.assertion_agreement >= agreement.TARGET, (
        f"assertion agreement {report.assertion_agreement:.1%} < {agreement.TARGET:.0%}; "
        f"{len(report.disagreements)} disagreements (printed above)"
    )
