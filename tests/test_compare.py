"""`vibe compare`: two runs of one spec, their answers paired per model slot on shared prompts, judged by one
panel, each vibe's shift tested and gated. Real runs of recorded answers through the CLI; the statistics by
hand and in seeded simulations through the same functions."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_report import open_pages

from engine.drift.shift import gate, shift_of

SPEC = """\
name: drift
models: {terse: {provider: recorded}, chatty: {provider: recorded}}
judges: {metrics: {kind: metric}}
datasets: {d: {source: {path: DATA}, fields: {id: id, prompt: q, outputs: {terse: terse, chatty: chatty}}}}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
  - {name: enthusiasm, low: calm, high: excited, metric: exclamations}
gates: GATES
analyses: {vibecheck: {dataset: d, models: [terse, chatty], judges: [metrics]}}
"""


def _run(folder: Path, name: str, chatty_words: int, gates: str = "{verbosity: {max_shift: 0.1}}",
         prompts: range = range(40), spec_text: str = SPEC) -> Path:
    """A run of the spec whose chatty answers have `chatty_words` words (terse ones: 3), in its own folder."""
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Short answer here.",
             "chatty": " ".join(["word"] * chatty_words) + ("!" if i % 2 else ".")} for i in prompts]
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = folder / f"{name}.yaml"
    spec.write_text(spec_text.replace("DATA", f"{name}.jsonl").replace("GATES", gates), encoding="utf-8")
    done = _vibe(folder, "run", str(spec), "--out", str(folder / "runs" / name), "--no-report", "--quiet")
    assert done.returncode == 0, done.stderr
    return folder / "runs" / name


def _vibe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_a_planted_shift_fails_the_gate_and_a_rerun_passes_it(tmp_path: Path) -> None:
    """Head's chatty answers have 10 words instead of 40 on every prompt: the metric judge calls the base longer on
    all 40 pairs (ν = +1), so verbosity's shift is −1 exactly, far beyond ±0.1: the gate fails (exit 1). Enthusiasm
    (exclamation marks per word) is not gated: the 20 answers with a '!' have it in 10 words instead of 40, so the
    head sits higher on those 20 and ties on the rest, a shift of +0.5; but each still holds one '!', so the rate
    moved with the length alone, and the comparison says so rather than naming it as moved. A re-run of the base
    (the same answers in another folder) moved nothing: every verdict is a tie, and the gate passes with an exact
    TOST p no lower than 0.9⁴⁰ = 0.0148 (the chance of 40 ties at a true shift of +0.1 made by one-way moves alone).
    A head whose answers are one word longer (41 against 40, inside the metric judge's 5% tolerance) ties on every
    prompt too: its pass says that every prompt tied, and the metric's own difference shows the +1 word."""
    base, head, again = _run(tmp_path, "base", 40), _run(tmp_path, "head", 10), _run(tmp_path, "again", 40)
    out = tmp_path / "cmp"
    priced = _vibe(tmp_path, "compare", str(base), str(head), "--model", "chatty", "--out", str(out), "--plan",
                   "--cache", str(tmp_path / "c.sqlite"))
    assert priced.returncode == 0, priced.stderr
    assert "plan for compare-chatty" in priced.stdout and not (out / "compare.json").exists()  # priced, not run
    moved = _vibe(tmp_path, "compare", str(base), str(head), "--model", "chatty", "--out", str(out), "--gate",
                  "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert moved.returncode == 1, moved.stderr
    assert "gate: chatty · verbosity: FAIL: shift -1.000 is beyond ±0.1" in moved.stderr
    body = json.loads((out / "compare.json").read_text())
    (chatty,) = body["comparisons"]
    assert body["gates"] == {"verbosity": {"margin": 0.1, "source": "base's and head's"}} and "gates" not in chatty
    shifts = {s["vibe"]: s for s in chatty["shifts"]}
    assert chatty["shared"] == 40 and shifts["verbosity"]["shift"] == -1.0
    assert shifts["verbosity"]["verdict"] == "fail"
    assert shifts["enthusiasm"]["shift"] == 0.5 and shifts["enthusiasm"]["margin"] is None
    comment = (out / "compare.md").read_text()
    link = "chatty/run/explore/drift.html#vibe=verbosity&dir=1"  # the base (the explorer's model A) sits higher
    assert f"| [**verbosity**]({link}) | -1.000 | [-1.000, -0.803]" in comment
    assert "[**enthusiasm**]" not in comment and "exclamations +3.75 [+2.54, +4.96]; moved with length only: what " \
        "it counts changed by +0 a prompt (sign test p 1), so the rate moved because the answers' length did" in comment
    assert _pairs_behind(out / link.split("#")[0], ["#" + link.split("#")[1]]) == [40]
    # the verdict leads, before the tables and the method paragraph
    assert comment.splitlines()[3] == "**1 of 1 gates fail**: chatty · verbosity. Moved: chatty · verbosity.", comment
    assert comment.index("| vibe | shift") < comment.index("Judged by the panel")
    page = (out / "index.html").read_text()
    assert "<strong>1 of 1 gates fail</strong>" in page and "`" not in page.split("<footer")[0]
    assert f'<td><a href="{link.replace("&", "&amp;")}"><strong>verbosity</strong></a></td><td class="num">-1.000' \
           '</td><td class="num">[-1.000, -0.803]' in page
    assert "<td>length_words -30 [-30, -30]</td>" in page
    assert (out / "assets" / "style.css").is_file() and (out / "assets" / "kinds.css").is_file()
    # in a browser: every asset there, nothing wider than the window, a p-value on one line, at 1280 and 390 px
    assert open_pages([out / "index.html"], tmp_path, widths=(1280, 390)) == []
    same = _vibe(tmp_path, "compare", str(base), str(again), "--out", str(tmp_path / "same"), "--gate",
                 "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert same.returncode == 0, same.stderr
    for comparison in json.loads((tmp_path / "same" / "compare.json").read_text())["comparisons"]:
        verbosity = next(s for s in comparison["shifts"] if s["vibe"] == "verbosity")
        assert verbosity["shift"] == 0.0 and verbosity["verdict"] == "pass"
        assert 0.9**40 <= verbosity["p_equivalent"] < 0.05
    alike = (tmp_path / "same" / "compare.md").read_text()  # the same answers: a line per model, no table of zeros
    assert "**All 2 gates pass.** No vibe moved." in alike and "| vibe | shift" not in alike
    assert "### chatty: no vibe differs: every one of its 2 vibes tied on all 40 shared prompts; its gates pass" \
        in alike
    longer = _run(tmp_path, "longer", 41)
    done = _vibe(tmp_path, "compare", str(base), str(longer), "--model", "chatty", "--out",
                 str(tmp_path / "longer-cmp"), "--gate", "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "longer-cmp" / "compare.md").read_text()
    assert "| length_words +1 [+1, +1] | pass: within ±0.1 as this panel sees it: 100% of prompts tied (TOST p = " \
           "0.02; no prompt moved, so no shift size can be said to be detectable) |" in table, table


def _pairs_behind(page: Path, fragments: list[str]) -> list[int]:
    """In headless Chromium, how many pairs the explorer page lists at each of the links' fragments."""
    from test_report import BROWSER_ARGS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        counts = []
        for fragment in fragments:
            tab = browser.new_page()
            tab.goto(page.resolve().as_uri() + fragment)
            tab.wait_for_selector("body[data-ready]", timeout=15000)
            counts.append(int(tab.get_attribute("#pairs", "data-count") or -1))
        browser.close()
    return counts


@pytest.mark.slow
def test_compare_export_and_report_work_from_run_folders_alone(tmp_path: Path) -> None:
    """The spec, its data and the cache deleted and the runs moved to an empty folder: the three commands still
    run, on the copies the run folders keep."""
    work = tmp_path / "work"
    work.mkdir()
    base, head = _run(work, "base", 40), _run(work, "head", 12)
    alone = tmp_path / "alone"
    shutil.copytree(base, alone / "base")
    shutil.copytree(head, alone / "head")
    shutil.rmtree(work)
    done = _vibe(alone, "compare", "base", "head", "--model", "chatty", "--out", "cmp", "--cache", "c.sqlite",
                 "--quiet")
    assert done.returncode == 0, done.stderr
    assert (alone / "cmp" / "compare.json").is_file()
    exported = subprocess.run([sys.executable, "-m", "engine", "export", "base", "--to", "llm-comparator", "--out",
                               "exported"], cwd=alone, capture_output=True, text=True, timeout=600)
    assert exported.returncode == 0, exported.stderr
    examples = json.loads((alone / "exported" / "vibecheck-terse-vs-chatty.json").read_text())["examples"]
    assert {e["input_text"] for e in examples} == {f"Question {i}?" for i in range(40)}
    reported = _vibe(alone, "report", "head")
    assert reported.returncode == 0, reported.stderr
    assert "verbosity" in (alone / "head" / "index.html").read_text()


def test_people_check_the_panel_that_measures_the_drift(tmp_path: Path) -> None:
    """The base run's spec gives people's labels that call terse the more excited on every prompt, where the
    panel says chatty is on the odd ones: κ 0 with one labeller, in every bootstrap round of its 56 test labels
    (70 prompts, a fifth for dev; κ's interval is given from 50), wholly below 0.4, so the comparison flags
    enthusiasm.
    Head's chatty answers have 12 words instead of 40, and a person labelled 20 of the 40 compared pairs:
    verbosity a (the base's answer longer) on 18, neither on 2; enthusiasm b on the odd ones, neither on the
    even. By hand: the panel agrees on 18/20 and 20/20. Verbosity's panel verdicts never vary (the base is
    longer on all 40), so PPI++ takes none of them (λ = 0) and people's shift is the labels' own mean, −18/20.
    Enthusiasm's people mean is +0.5 over the labelled half and the panel's mean is the same on both halves,
    so the estimate stays +0.5, with λ = (1/4 · 20/19) / (2 · 1/4 · 40/39) = 39/76."""
    from engine.drift.compare import compare_runs
    from engine.drift.summary import write
    from engine.pipeline import run_spec

    (tmp_path / "people.csv").write_text("id,label_enthusiasm\n" + "".join(f"p{i},a\n" for i in range(70)))
    runs = {}
    for name, words, prompts in (("base", 40, 70), ("head", 12, 40)):  # the comparison reads the 40 they share
        rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Short answer here.",
                 "chatty": " ".join(["word"] * words) + ("!" if i % 2 else ".")} for i in range(prompts)]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        spec = SPEC.replace("DATA", f"{name}.jsonl").replace("GATES", "{}")
        if name == "base":
            spec = spec.replace("judges: [metrics]}", "judges: [metrics], validation: {files: [people.csv], "
                                                          "dev: 0.2}}")  # 56 test labels: κ has an interval
        (tmp_path / f"{name}.yaml").write_text(spec, encoding="utf-8")
        runs[name] = tmp_path / name
        run_spec(tmp_path / f"{name}.yaml", runs[name], tmp_path / "c.sqlite", quiet=True, report=False)
    labels = tmp_path / "drift-labels.csv"
    labels.write_text("id,label_verbosity,label_enthusiasm\n" + "".join(
        f"p{i},{'neither' if i < 2 else 'a'},{'b' if i % 2 else 'neither'}\n" for i in range(20)))
    (slot,), _, panel = compare_runs(runs["base"], runs["head"], tmp_path / "cmp", tmp_path / "c.sqlite",
                                  models=["chatty"], labels=[labels])
    people = {p.vibe: p for p in slot.people}
    assert people["verbosity"].agreement.agreement == pytest.approx(18 / 20)
    assert people["enthusiasm"].agreement.agreement == 1.0
    verbosity, enthusiasm = people["verbosity"].corrected, people["enthusiasm"].corrected
    assert verbosity.weight == 0 and verbosity.estimate == pytest.approx(-0.9) and verbosity.panel == -1
    assert enthusiasm.weight == pytest.approx(39 / 76) and enthusiasm.estimate == pytest.approx(0.5)
    write([slot], {}, runs["base"], runs["head"], panel, tmp_path / "cmp")
    comment = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| verbosity | 20 | 90% [" in comment and "| -0.900 [" in comment
    assert "People flagged the panel's reading of enthusiasm: the panel's κ with people is" in comment
    assert "people's shift, PPI++" in (tmp_path / "cmp" / "index.html").read_text()


@pytest.mark.slow
def test_report_of_a_finished_run_reads_the_run_not_the_changed_data(tmp_path: Path) -> None:
    """`vibe report RUN` after the data file changed renders the run as it was made: its results files are
    byte for byte the run's, and it is not shown as interrupted."""
    run = _run(tmp_path, "base", 40)
    made = {p.relative_to(run): p.read_bytes() for p in (run / "vibecheck").rglob("*") if p.is_file()}
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Changed.", "chatty": "Changed too."} for i in range(25)]
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = _vibe(tmp_path, "report", str(run))
    assert done.returncode == 0, done.stderr
    assert {p.relative_to(run): p.read_bytes() for p in (run / "vibecheck").rglob("*") if p.is_file()
            and p.suffix != ".html"} == {k: v for k, v in made.items() if k.suffix != ".html"}
    assert "interrupted" not in (run / "index.html").read_text(encoding="utf-8").lower()
    assert json.loads((run / "manifest.json").read_text())["status"] != "interrupted"


@pytest.mark.slow
def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    base = _run(tmp_path, "base", 40)
    elsewhere = _run(tmp_path, "elsewhere", 40, prompts=range(100, 120))  # other prompt ids
    done = _vibe(tmp_path, "compare", str(base), str(elsewhere), "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert done.returncode == 2 and "the runs share no prompt (same id and text)" in done.stderr
    done = _vibe(tmp_path, "compare", str(base), str(base), "--model", "nobody", "--quiet")
    assert done.returncode == 2 and "no model slot nobody answered in both runs; shared: terse, chatty" in done.stderr
    done = _vibe(tmp_path, "compare", str(tmp_path), str(base), "--quiet")
    assert done.returncode == 2 and "not a run folder (no manifest.json)" in done.stderr
    (tmp_path / "labels.csv").write_text("id,label_verbosity\np0,a\n")
    done = _vibe(tmp_path, "compare", str(base), str(base), "--labels", "labels.csv", "--quiet")
    assert done.returncode == 2 and "--labels: people's labels are of one model slot's pairs, and 2 are compared " \
        "(terse, chatty): name the one labelled with --model" in done.stderr
    asks = "  - {name: questions, low: states, high: asks, metric: questions_to_user}\n"
    more = SPEC.replace("vibes:\n", "vibes:\n" + asks)
    other = _run(tmp_path, "other", 40, spec_text=more)
    by_default = _vibe(tmp_path, "compare", str(base), str(other), "--out", str(tmp_path / "default"),
                       "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert by_default.returncode == 0, by_default.stderr
    assert "The two runs' panels differ (vibes); the base's panel judged both runs (by default; `--panel head` for " \
        "the head's)." in by_default.stdout
    chosen = _vibe(tmp_path, "compare", str(base), str(other), "--panel", "head", "--out", str(tmp_path / "cmp"),
                   "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert chosen.returncode == 0, chosen.stderr
    measured = json.loads((tmp_path / "cmp" / "compare.json").read_text())["comparisons"][0]["shifts"]
    assert [s["vibe"] for s in measured] == ["questions", "verbosity", "enthusiasm"]  # the head panel's vibes
    measured = json.loads((tmp_path / "default" / "compare.json").read_text())["comparisons"][0]["shifts"]
    assert [s["vibe"] for s in measured] == ["verbosity", "enthusiasm"]  # the base panel's vibes only
    # a gate on a name nobody declared is a misspelling, with discovery on as well as off
    found = SPEC.replace("vibes:\n", "vibes:\n  - {discover: {method: statistical, max_vibes: 2}}\n")
    (tmp_path / "found.yaml").write_text(found.replace("DATA", "base.jsonl").replace(
        "GATES", "{verbosty: {max_shift: 0.1}}"), encoding="utf-8")
    done = _vibe(tmp_path, "validate", "found.yaml")
    assert done.returncode == 2 and "found.yaml:9:19: gates.verbosty: gate names no declared " \
        "vibe 'verbosty' (did you mean 'verbosity'?)" in done.stderr, done.stderr
    outside = tmp_path / "no-repo"
    outside.mkdir()
    (outside / "s.yaml").write_text("name: s\n", encoding="utf-8")
    done = _vibe(outside, "compare", "--git", "HEAD~1", "s.yaml", "--quiet")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("is not inside a git repository; compare two run folders instead "
                                        "(vibe compare BASE_RUN HEAD_RUN)"), done.stderr
    (tmp_path / "typo.yaml").write_text(SPEC.replace("DATA", "base.jsonl").replace(
        "GATES", "{verbosty: {max_shift: 0.1}}"), encoding="utf-8")
    done = _vibe(tmp_path, "validate", "typo.yaml")
    assert done.returncode == 2 and "typo.yaml:8:19: gates.verbosty: gate names no declared " \
        "vibe 'verbosty' (did you mean 'verbosity'?)" in done.stderr


def test_the_shift_and_its_tests_by_hand() -> None:
    """Head higher on both of two prompts (ν = −1, −1): shift +1. Moved: the exact sign test, 2 of 2 one way,
    two-sided p = 2 × ½² = 0.5 (never 0, which the t-test printed for a sample without spread). Beyond +0.1:
    the largest statistic is the observed one, so p = sup over the nuisance q = P(−1) of P(n₊ = 2) = (q + 0.1)²,
    at q = 0.45 (no ties): 0.55² = 0.3025; both sides are tested, so the smaller one-sided p is doubled: 0.605.
    Tango's interval, continuity-corrected: with n₊ = n = 2, q̃ = (1 − δ₀)/2, the variance is 2(1 − δ₀²) and the
    numerator 2 − 2δ₀ shrunk by ½ is 1.5 − 2δ₀; Z = 1.96 where (4 + 2·1.96²)δ₀² − 6δ₀ + 2.25 − 2·1.96² = 0, at
    δ₀ = −0.4719, and no δ₀ up to 1 is rejected above. Inconclusive: Tango's null variance at +0.1 is
    2 × 0.45 + 0.1 × 0.9 = 0.99, none observed, and one side of the beyond test faces α/2, so
    (1.96 × √0.99 / 0.9)² = 4.70 → 5 prompts."""
    s = shift_of("v", np.array([-1, -1]), margin=0.1)
    assert (s.n, s.shift, s.higher, s.lower) == (2, 1.0, 2, 0)
    assert s.p_moved == pytest.approx(0.5)
    assert s.p_beyond == pytest.approx(2 * 0.3025)
    a = 4 + 2 * 1.96**2
    assert s.low == pytest.approx((6 - np.sqrt(36 - 4 * a * (2.25 - 2 * 1.96**2))) / (2 * a), abs=2e-4)
    assert s.high == 1.0
    ((gated,),) = gate([[s]])
    assert gated.verdict == "inconclusive" and gated.prompts_needed == 5
    assert shift_of("v", np.array([np.nan, 1.0])).n == 1  # a prompt without a verdict is left out


def test_tied_prompts_never_pass_with_p_zero_and_say_what_would_decide() -> None:
    """Five tied prompts: the t-test passed them at TOST p = 0. Exactly, a true shift of +0.1 with no prompt
    moving the other way ties all five with probability 0.9⁵ = 0.59049, so TOST p = 0.59049 and the gate is
    inconclusive; with q̃ = 0 the null variance at the margin is 0.1 × 0.9 = 0.09, so about
    (1.6449 × 0.3 / 0.1)² = 24.4 → 25 prompts would decide it. The line says that every prompt tied."""
    from engine.drift.summary import _verdict

    s = shift_of("v", np.zeros(5), margin=0.1)
    assert s.p_moved == 1.0 and s.p_equivalent == pytest.approx(0.9**5)
    ((gated,),) = gate([[s]])
    assert gated.verdict == "inconclusive" and gated.prompts_needed == 25 and gated.tied == 1.0
    assert "100% tied; no prompt moved" in _verdict(gated)
    one = gate([[shift_of("v", np.zeros(1), margin=0.1)]])[0][0]
    assert one.prompts_needed is None and one.undecidable == "1 prompt: too few for any test"


def test_one_holm_family_for_every_slot_and_the_stricter_margin_governs() -> None:
    """Two slots, each with a gated vibe at beyond-margin p = 0.03 and 0.04: one family of two, so Holm gives
    0.06 and 0.06 and neither fails (one family per slot would have failed both). A margin both specs declare is
    the stricter one, and the page says whose."""
    from dataclasses import replace

    from engine.drift.compare import governing_gates

    base = shift_of("v", np.zeros(50), margin=0.1)
    slots = gate([[replace(base, p_beyond=0.03)], [replace(base, p_beyond=0.04)]])
    assert [s.p_beyond_adjusted for (s,) in slots] == pytest.approx([0.06, 0.06])
    assert all(s.verdict != "fail" for (s,) in slots)
    governing = governing_gates({"verbosity": 0.1, "tone": 0.2}, {"verbosity": 0.3, "warmth": 0.05})
    assert {k: (g.margin, g.source) for k, g in governing.items()} == {
        "verbosity": (0.1, "base's (head's ±0.3 is wider)"), "tone": (0.2, "base's"), "warmth": (0.05, "head's")}


def test_a_shift_of_the_margin_made_by_few_prompts_is_not_passed() -> None:
    """The drift the t-test certified most often: the head adds a habit on a tenth of the prompts (P(+1) = 0.1,
    P(−1) = 0, a true shift of the margin). At 30 prompts the t-test gate passed 19% of such comparisons; the
    exact score test passes at most 5% (300 seeded comparisons: a true rate of 10% fails this check 99 times in
    100). The same shift at 700 prompts is caught as moved in at least 80%."""
    rng = np.random.default_rng(20261126)
    runs = 300
    passed = sum(gate([[shift_of("v", -rng.choice([1.0, 0.0], size=30, p=[0.1, 0.9]), 0.1)]])[0][0].verdict
                 == "pass" for _ in range(runs))
    from scipy.stats import binomtest
    assert binomtest(passed, runs, 0.05, alternative="greater").pvalue > 0.01, passed
    caught = sum((s := gate([[shift_of("v", -rng.choice([1.0, 0.0], size=700, p=[0.1, 0.9]), 0.1)]])[0][0])
                 .p_moved_adjusted < 0.05 and s.verdict != "pass" for _ in range(50))
    assert caught >= 40, caught


def test_a_slot_is_compared_on_its_original_prompt_and_first_sample(tmp_path: Path) -> None:
    """Persona variants and K samples share the item id: the answers compared are the VibeCheck binding's
    original-variant, first-sample tasks, whatever order the generation records come in."""
    import gzip

    from engine.drift.compare import _answers
    from engine.spec.load import load_spec

    records = [("persona", "rewritten prompt's answer"), ("sample1", "second sample"), ("original", "the answer")]
    with gzip.open(tmp_path / "generation.jsonl.gz", "wt", encoding="utf-8") as fh:
        for task, text in records:
            fh.write(json.dumps({"task_id": task, "stage": "generation", "endpoint": "chatty", "provider": "openai",
                                 "item_id": "p1", "output": text}) + "\n")
    bindings = {"personas": [{"item": "p1", "variant": "persona-0", "outputs": {"chatty": ["persona"]}}],
                "vibecheck": [{"item": "p1", "variant": "rewritten", "outputs": {"chatty": ["persona"]}},
                              {"item": "p1", "variant": "original", "outputs": {"chatty": ["original", "sample1"]}}]}
    with gzip.open(tmp_path / "plan.json.gz", "wt", encoding="utf-8") as fh:
        json.dump({"bindings": bindings}, fh)
    (tmp_path / "d.jsonl").write_text('{"id": "p1", "q": "?", "terse": "a", "chatty": "b"}\n', encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SPEC.replace("DATA", "d.jsonl").replace("GATES", "{}"), encoding="utf-8")
    spec = load_spec(tmp_path / "s.yaml")
    assert _answers(tmp_path, spec) == {"chatty": {"p1": "the answer"}}


def test_an_opener_and_a_closer_move_verbosity_and_no_rate(tmp_path: Path, shared_data: Path) -> None:
    """80 real Arena answers, then the same answers with a sentence before and after (no list, bold, hedge or
    exclamation in either): verbosity moves, and the rates that fell only because the answers grew (lists per
    line, bold and hedges per 100 words) are said to have moved with length, not reported as moved; the other
    slot, unchanged, moves nowhere."""
    import csv

    from engine.drift.compare import compare_runs
    from engine.drift.summary import moved, moved_with_length

    arena = shared_data / "arena" / "vibecheck_llama3-70b_vs_not_llama_general_knowledge.csv"
    with arena.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if "**" in r["llama-3-70b-instruct"]][:80]
    spec = """\
name: drift
models: {x: {provider: recorded}, y: {provider: recorded}}
judges: {metrics: {kind: metric}}
datasets: {d: {source: {path: DATA}, fields: {id: id, prompt: q, outputs: {x: x, y: y}}}}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
  - {name: formatting, low: prose, high: lists, metric: list_density}
  - {name: emphasis, low: plain, high: bold, metric: bold_density}
  - {name: hedging, low: certain, high: hedged, metric: hedging}
  - {name: enthusiasm, low: calm, high: excited, metric: exclamations}
analyses: {vibecheck: {dataset: d, models: [x, y], judges: [metrics]}}
"""
    runs = {}
    for name, wrap in (("base", lambda t: t), ("head", lambda t: f"Here is the answer to that.\\n\\n{t}\\n\\nThat "
                                                                  "covers the question.")):
        lines = [{"id": f"p{i}", "q": r["question"], "x": wrap(r["llama-3-70b-instruct"]), "y": r["not_llama"]}
                 for i, r in enumerate(rows)]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        (tmp_path / f"{name}.yaml").write_text(spec.replace("DATA", f"{name}.jsonl"), encoding="utf-8")
        done = _vibe(tmp_path, "run", f"{name}.yaml", "--out", f"runs/{name}", "--no-report", "--quiet")
        assert done.returncode == 0, done.stderr
        runs[name] = tmp_path / "runs" / name
    slots, _, _ = compare_runs(runs["base"], runs["head"], tmp_path / "cmp", tmp_path / "c.sqlite", quiet=True)
    shifts = {slot.model: {s.vibe: s for s in slot.shifts} for slot in slots}
    assert [v for v, s in shifts["x"].items() if moved(s)] == ["verbosity"]
    assert {v for v, s in shifts["x"].items() if moved_with_length(s)} >= {"formatting", "emphasis"}
    assert all(s.count_difference == 0 for v, s in shifts["x"].items() if v != "verbosity")
    assert not any(moved(s) or moved_with_length(s) for s in shifts["y"].values())
