"""The report: files, embedded plots that are not blank, readable call pages, and the page as
headless Chromium renders it."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vamos_env.grading.models import Evidence
from vamos_env.report import write_report
from vamos_env.report.transcript import render_call
from vamos_env.runner import EvalConfig, evaluate, read_store

STACKS = Path(__file__).resolve().parents[1] / "runner" / "stacks.py"
FIGURES = ("completion", "background", "requests", "persona", "satisfied")


def _reference() -> str:
    from vamos_env.agents.base import stacks

    if "reference" in stacks():
        return "reference"
    return "reference=vamos_env.agents.reference:ReferenceAgent"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    evaluate(
        EvalConfig(
            stacks=[_reference(), f"peeks={STACKS}:PeeksFirst", f"crash={STACKS}:Crashes"],
            out=out,
            tasks="exam:6",
            repeats=2,
            executor="local",
            stream=io.StringIO(),
        )
    )
    write_report(out, title="Report under test")
    return out


def _figures(html: str) -> dict[str, bytes]:
    found = re.findall(r"data-figure='(\w+)' src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    return {name: base64.b64decode(data) for name, data in found}


def _pixels(source: bytes | Path) -> Any:
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int32).reshape(-1, 3)


def _colours(png: bytes) -> int:
    import numpy as np

    return len(np.unique(_pixels(png), axis=0))


def test_the_files_and_the_summary(run: Path) -> None:
    summary = (run / "summary.md").read_text()
    assert summary.startswith("# Report under test")
    assert "**Pooled completion:" in summary and "| completion [95% CI] |" in summary
    assert "## Completion by background" in summary and "## Exclusions" in summary
    assert len(list((run / "calls").glob("*.html"))) == len(read_store(run)) == 36


def test_every_plot_is_embedded_and_not_blank(run: Path) -> None:
    html = (run / "report.html").read_text()
    figures = _figures(html)
    assert set(figures) == set(FIGURES)
    for name, png in figures.items():
        assert png.startswith(b"\x89PNG"), name
        assert _colours(png) > 20, f"figure {name} looks blank"
    # Self-contained: nothing is fetched from anywhere.
    assert not re.search(r"(src|href)=['\"]https?:", html)


def test_the_task_table_links_to_every_call(run: Path) -> None:
    html = (run / "report.html").read_text()
    links = re.findall(r"href='(calls/[^']+)'", html)
    assert len(set(links)) == 36
    assert all((run / link).exists() for link in links)


def test_a_call_page_shows_who_said_what_tools_inline_and_failing_checks(run: Path) -> None:
    record = next(r for r in read_store(run) if r.stack == "crash")
    page = render_call(record)
    assert "agent raised RuntimeError" in page
    assert "<b>verify_caller</b>" in page and "class='turn caller" in page
    assert "class='checkfail'" in page and "Checks that did not pass" in page


def test_failing_checks_link_to_their_evidence_turns_which_are_marked(run: Path) -> None:
    record = next(r for r in read_store(run) if r.stack == "peeks")
    assert record.verdict is not None
    failing = next(c for c in record.verdict.requirements.checks if c.passed is False)
    evidence = failing.model_copy(update={"evidence": [Evidence(turn=2, quote="x")]})
    requirements = record.verdict.requirements.model_copy(
        update={
            "checks": [
                evidence if c.id == failing.id else c for c in record.verdict.requirements.checks
            ]
        }
    )
    page = render_call(
        record.model_copy(
            update={"verdict": record.verdict.model_copy(update={"requirements": requirements})}
        )
    )
    assert "<a href='#t2'>turn 2</a>" in page
    assert re.search(r"class='turn [a-z]+ evidence' id=\"t2\"", page)
    assert len(re.findall(r" evidence' id=", page)) == 1


def test_a_check_never_met_points_at_its_window(run: Path) -> None:
    pages = [render_call(r) for r in read_store(run) if r.stack == "peeks"]
    windows = [re.findall(r"href='#t(\d+)'>window from turn", p) for p in pages]
    assert any(windows)
    for page, turns in zip(pages, windows, strict=True):
        assert all(f'id="t{t}"' in page for t in turns)


def test_speech_is_escaped(run: Path) -> None:
    record = read_store(run)[0]
    assert record.transcript is not None
    turns = list(record.transcript.turns)
    turns[0] = turns[0].model_copy(update={"text": "<script>alert(1)</script> & more"})
    transcript = record.transcript.model_copy(update={"turns": turns})
    page = render_call(record.model_copy(update={"transcript": transcript}))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page


def _chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_headless_chromium_renders_the_page_and_its_plots(run: Path, tmp_path: Path) -> None:
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium here (CI installs Debian's chromium; or set CHROMIUM=path)")
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--hide-scrollbars",
            "--window-size=1280,1600",
            f"--screenshot={shot}",
            (run / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import numpy as np

    pixels = _pixels(shot)
    assert len(np.unique(pixels, axis=0)) > 200, "the screenshot looks blank"
    # The plots' bars are drawn in matplotlib's first colours: they must be on screen.
    r, g, b = pixels[:, 0], pixels[:, 1], pixels[:, 2]
    blue = int(np.sum((abs(r - 0x1F) < 12) & (abs(g - 0x77) < 12) & (b > 0xA0)))
    orange = int(np.sum((r > 0xF0) & (abs(g - 0x7F) < 14) & (b < 0x30)))
    assert blue > 500 and orange > 200, (blue, orange)


def test_page_names_stay_bounded_and_unique_for_long_task_ids() -> None:
    from vamos_env.report.transcript import page_name

    long_a, long_b = "t" * 250 + "a", "t" * 250 + "b"
    names = {page_name(f"reference/{long_a}/0"), page_name(f"reference/{long_b}/0")}
    assert len(names) == 2 and all(len(n.encode()) <= 160 for n in names)
    assert page_name("reference/c-a01/0") == "reference__c-a01__0.html"  # short keys unchanged
