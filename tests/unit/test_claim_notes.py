"""A list of verdicts says each verdict short and each reason once (issue 39: tutorial lines of 100-1300 words that
repeated one caveat on every line): workbench.report.claim_notes, and verdict_claim's heads."""

import pytest

from workbench.judge.few_rounds import too_few_basis_text
from workbench.report.claim_notes import Claim, NoteBlock, clauses, reason_of
from workbench.report.claims import check_claim, verdict_claim, verdict_sentence

TOO_FEW = ("too few of its rounds were left at speed to pair ({} shared, {} set aside as taken while the host ran "
           "slow) and no typical paired scatter stood in (none of its group, its kernel or the run had one), so its "
           "interval rests on an assumed drift of ±16% (one sigma)")
ROUNDS = "a cell's own rounds differed by up to {}× (its slowest round over its fastest)"
LOAD = "on a machine that was not busy, with load up to {}, other processes up to {}% of the CPU"
HINT = "rerun it with more rounds (--rounds 10 on the command line, rounds=10 in workbench.benchmark)"


def _claim(head, *reasons):
    return Claim(head, tuple(reasons), f"{head}: {'; '.join(reasons)}")


def test_a_reason_shared_by_every_line_is_said_once_and_marked_on_each():
    block = NoteBlock()
    for n in ("n=1", "n=2", "n=3"):
        block.add(n, _claim(f"could not tell a from b at {n}", TOO_FEW.format(1, 2), HINT))
    lines = block.render()
    assert lines[:3] == [f"n={k}: could not tell a from b at n={k} [1][2]" for k in (1, 2, 3)]
    # the note in two sentences (one of 53 words read as one breath)
    said = TOO_FEW.format(1, 2).replace(", so its interval rests on", ". Its interval therefore rests on")
    assert lines[3:] == [f"[1] {said}", f"[2] {HINT}"]
    assert sum(HINT in x for x in lines) == 1


def test_a_figure_that_differs_per_line_stays_on_its_line_and_the_note_is_said_once():
    block = NoteBlock()
    block.add("n=1", _claim("x ran at least 1.1× faster than y", TOO_FEW.format(1, 2), ROUNDS.format("1.62"), HINT))
    block.add("n=2", _claim("y was faster", TOO_FEW.format(0, 3), ROUNDS.format("1.36"), HINT))
    first, second, *notes = block.render()
    assert first == "n=1: x ran at least 1.1× faster than y (1 shared round at speed, 2 set aside [1]) [2][3]"
    assert second == "n=2: y was faster (0 shared rounds at speed, 3 set aside [1]) [2][3]"
    assert len(notes) == 3 and notes[0].startswith("[1] too few of its rounds were left at speed to pair (the "
                                                   "others set aside")
    assert "assumed drift of ±16%" in notes[0] and "1 shared" not in notes[0]
    # an "up to" figure: the block's largest bounds every line's
    assert notes[1].startswith("[2] a cell's own rounds differed by up to 1.62× (")
    assert notes[2] == f"[3] {HINT}"


def test_an_up_to_figure_is_said_once_as_the_blocks_largest():
    block = NoteBlock()
    block.add("a", _claim("h1", LOAD.format("0.9", 1), "load up to 4.2, other processes up to 32% of the CPU"))
    block.add("b", _claim("h2", LOAD.format("1.1", 0), "load up to 5.1, other processes up to 30% of the CPU"))
    assert block.render() == ["a: h1 [1][2]", "b: h2 [1][2]",
                              "[1] the machine was not busy (load up to 1.1, other processes up to 1% of the CPU)",
                              "[2] the machine was busy (load up to 5.1, other processes up to 32% of the CPU)"]


def test_a_reason_of_one_line_is_marked_on_that_line_only():
    block = NoteBlock()
    block.add("n=1", _claim("h1", "the paired rounds point both ways", HINT))
    block.add("n=2", _claim("h2", HINT))
    block.add("n=3", "numpy ran 2.0× faster than numba")   # a settled line: no notes
    assert block.render() == ["n=1: h1 [1][2]", "n=2: h2 [2]", "n=3: numpy ran 2.0× faster than numba",
                              "[1] the paired rounds point both ways", f"[2] {HINT}"]


def test_an_empty_block_prints_nothing():
    assert NoteBlock().render() == [] and str(NoteBlock()) == ""
    block = NoteBlock()
    block.footnote("the working sets fit in the 32 MiB last-level cache")
    assert block.render() == ["the working sets fit in the 32 MiB last-level cache"]


def test_clauses_split_outside_parentheses_and_before_the_machines_state():
    text = (f"{ROUNDS.format('1.5')}; the sweep's between-rounds speed probe moved by up to 2%, "
            f"{LOAD.format('0.9', 0)}")
    assert clauses(text, "a (b; c)", ROUNDS.format("1.5")) == (
        ROUNDS.format("1.5"), "the sweep's between-rounds speed probe moved by up to 2%", LOAD.format("0.9", 0),
        "a (b; c)")
    assert reason_of("anything else").said == "anything else" and not reason_of("anything else").detail


def _few(v):
    return {**v, "basis": too_few_basis_text(1, 2)}


#: One verdict of each kind a verdict list prints (the tutorials' too-few-rounds case among them).
KINDS = [
    {"verdict": "faster", "speedup": 2.0, "ci_low": 1.8, "ci_high": 2.2, "floor": 0.05},
    {"verdict": "slower", "speedup": 0.5, "ci_low": 0.45, "ci_high": 0.55, "floor": 0.05},
    {"verdict": "same", "speedup": 1.01, "ci_low": 0.98, "ci_high": 1.03, "floor": 0.04},
    {"verdict": "inconclusive", "speedup": 1.1, "ci_low": 0.85, "ci_high": 1.4, "floor": 0.25,
     "round_ratios": [1.1, 1.2, 1.05]},
    {"verdict": "inconclusive", "speedup": 1.04, "ci_low": 1.02, "ci_high": 1.07, "floor": 0.05},   # at the band
    _few({"verdict": "faster", "speedup": 2.0, "ci_low": 1.1, "ci_high": 3.6, "floor": 0.8, "noise": 0.15,
          "n_a": 1}),
    _few({"verdict": "slower", "speedup": 0.05, "ci_low": 0.01, "ci_high": 0.25, "floor": 0.8, "noise": 0.15,
          "n_a": 1}),
    _few({"verdict": "inconclusive", "speedup": 1.04, "ci_low": 0.5, "ci_high": 2.1, "floor": 0.7, "noise": 0.15,
          "n_a": 1}),
    {"verdict": "inconclusive", "speedup": 1.2, "ci_low": 0.4, "ci_high": 3.0, "floor": 0.9},     # disturbed
    {"verdict": "inconclusive", "speedup": 1.3, "ci_low": 0.4, "ci_high": 3.0, "floor": 0.9,      # on a disturbed cell
     "cells_disturbed": 1, "disturbed_cells": "b", "quartiles_apart": "faster"},
]


@pytest.mark.parametrize("v", KINDS, ids=lambda v: f"{v['verdict']}-{v.get('basis', '')[:12]}-{v['floor']}")
@pytest.mark.parametrize("busy", [False, True, None])
def test_each_head_says_its_verdict_short_and_the_whole_text_is_verdict_sentence(v, busy):
    """The head a block prints carries the verdict's phrase, as check_claim reads it, in 30 words or fewer; its text is
    verdict_sentence's, and every clause of that sentence past the head is one of its reasons."""
    by = f"{ROUNDS.format('1.62')}, {LOAD.format('0.9', 1)}"
    claim = verdict_claim(v, "a", "b", by, busy=busy)
    assert claim.text() == verdict_sentence(v, "a", "b", by, busy=busy)
    check_claim(v, claim.text())
    check_claim(v, claim.head)
    assert len(claim.head.split()) <= 30, claim.head
    rest = claim.text()
    for part in clauses(*claim.reasons):   # nothing a reader needs is lost: each reason is said in the sentence
        assert part.replace("that interval rests", "it rests") in rest, (part, rest)


def test_the_notes_read_the_clauses_the_sentence_writers_print():
    """The patterns that move a per-line figure out of a note follow the texts noise_cause and disturbance_text write:
    were those reworded, each line's note would differ and the block would say one caveat once per line again."""
    import json

    import pandas as pd

    from workbench.report.claims_cause import disturbance_text, noise_cause

    few = reason_of(noise_cause(next(v for v in KINDS if v.get("basis"))))
    assert few.detail == "1 shared round at speed, 2 set aside" and "assumed drift of ±16%" in few.note
    rows = pd.DataFrame([{"round_medians_s": json.dumps([1.0, 1.3, 1.1]), "load_avg_1m": 0.9, "other_cpu_share": 0.01},
                         {"round_medians_s": json.dumps([2.0, 2.1, 2.2]), "load_avg_1m": 0.5, "other_cpu_share": 0.0}])
    said = clauses(disturbance_text(rows))
    assert [bool(reason_of(c).bounds) for c in said] == [True, True], said   # rounds apart; the machine's state
    busy = rows.assign(other_cpu_share=[0.6, 0.4])
    assert reason_of(disturbance_text(busy)).said.startswith("the machine was busy (load up to 0.9")
