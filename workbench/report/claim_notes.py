"""A verdict as a short head and its reasons, and a block of verdicts that says each reason once.

Readers of the tutorials rated them 3 of 5 because a list of verdicts printed sentences of 100-1300 words, each
repeating the same caveat ("too few of its rounds were left at speed to pair ... rerun it with more rounds ...") on
every line (issue 39). A :class:`Claim` keeps a verdict's head (who was faster and by how much, with the phrase
:func:`~workbench.report.claims.check_claim` looks for) apart from its reasons (why it is not settled, what varied,
the rerun advice); :class:`NoteBlock` prints each head with note markers and then each distinct reason once.

How to use it (a tutorial's verdict list)::

    from workbench.report.claim_notes import NoteBlock
    from workbench.report.claims import check_claim, verdict_claim

    block = NoteBlock()
    for _, v in table.iterrows():
        claim = verdict_claim(v, base, other, disturbance_text(at))   # the arguments verdict_sentence takes
        check_claim(v, claim.text())    # the whole sentence, as verdict_sentence prints it
        check_claim(v, claim.head)      # and the head the block prints: it carries the verdict's phrase
        block.add(v["size_label"], claim)
    print(block)                        # heads with markers, then "[1] reason" once per distinct reason

A reason that names a figure differing from line to line (how many rounds were left at speed, how far a cell's
rounds lay apart) is said once in the notes without that figure, and each line keeps its own figure in a short
parenthesis beside its marker; where every line has the same figure the note says it. An "up to" figure (the load,
the speed probe, how far a cell's rounds lay apart) is said once as the block's largest, which bounds every line's.
``block.add(label, text)`` also takes a plain sentence (a line with no notes), and ``block.footnote(text)`` adds a
line said once after the notes (what holds for the whole block).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Claim:
    """A verdict in words: ``head`` (the verdict with its number or bound, which carries the phrase check_claim
    looks for), ``reasons`` (each clause of why it is not settled, what varied, and the rerun advice, in the order the
    whole sentence says them) and ``full``, the whole sentence as :func:`~workbench.report.claims.verdict_sentence`
    has always printed it (report pages and checks read that one)."""

    head: str
    reasons: tuple[str, ...] = ()
    full: str = ""

    def text(self) -> str:
        """The whole sentence: head and reasons in one line, as report pages print it."""
        return self.full or self.head


@dataclass(frozen=True)
class Reason:
    """One clause of a claim as a note: ``said`` (the clause alone), ``note`` (the clause without this line's own
    figure, "" where it has none), ``detail`` (that figure, printed beside the line's marker where lines differ) and
    ``bounds`` (an "up to" clause's figures, (value, as printed) each: where lines differ the note says the largest,
    through ``note``'s "{}" fields, and no line needs its own)."""

    said: str
    note: str = ""
    detail: str = ""
    bounds: tuple[tuple[float, str], ...] = ()

    @property
    def key(self) -> str:
        return self.note or self.said


def clauses(*texts: str) -> tuple[str, ...]:
    """``texts`` cut into their clauses: at each "; " outside parentheses, and before a "machine that was not busy"
    context (:func:`~workbench.report.claims_cause.disturbance_text` joins it with a comma); empty ones and repeats
    dropped, order kept."""
    out: list[str] = []
    for text in texts:
        depth, start = 0, 0
        parts = []
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and text.startswith("; ", i):
                parts.append(text[start:i])
                start = i + 2
        parts.append(text[start:])
        for part in parts:
            for piece in re.split(r", (?=on a machine that was not busy)", part):
                piece = piece.strip()
                if piece and piece not in out:
                    out.append(piece)
    return tuple(out)


def _one_way(m: re.Match[str]) -> Reason:
    return Reason(m.group(0), note=f"its rounds all pointed one way, but {m.group(3)} rounds all one way happen by "
                  f"chance {m.group(4)} of the time with no difference, and its interval spans no change",
                  detail=f"{m.group(1)} faster in all {m.group(2)} rounds, {m.group(5)}")


#: Clauses whose figures differ from line to line, and how each is said as a note: (pattern, maker).
PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Reason]], ...] = (
    (re.compile(r"too few of its rounds were left at speed to pair \((\d+) shared, (\d+) set aside as taken while "
                r"the host ran slow\) (and .*)", re.S),
     lambda m: Reason(f"too few of its rounds were left at speed to pair ({m.group(1)} shared, {m.group(2)} set aside "
                      f"as taken while the host ran slow) {_sentences(m.group(3))}",
                      note="too few of its rounds were left at speed to pair (the others set aside as taken while the "
                      f"host ran slow) {_sentences(m.group(3))}",
                      detail=f"{m.group(1)} shared round{'' if m.group(1) == '1' else 's'} at speed, "
                             f"{m.group(2)} set aside")),
    (re.compile(r"its interval rests on its (\d+) paired rounds at speed \((\d+) more set aside as taken while the "
                r"host ran slow\), (.*)", re.S),
     lambda m: Reason(m.group(0), note="its interval rests on its paired rounds at speed (the others set aside as "
                      f"taken while the host ran slow), {m.group(3)}",
                      detail=f"{m.group(1)} paired rounds at speed, {m.group(2)} set aside")),
    # the block's largest with its cell: the bound's printed form carries the cell's name (03's "[4] a cell's own
    # rounds differed by up to 1.06x" said not whose)
    (re.compile(r"(.+)'s own rounds differed by up to ([\d.]+×) \(its slowest round over its fastest\)"),
     lambda m: Reason(m.group(0), note="{} (its slowest round over its fastest, at the size where they differed most)",
                      bounds=((float(m.group(2)[:-1]), f"{m.group(1)}'s own rounds differed by up to {m.group(2)}"),))),
    (re.compile(r"the sweep's between-rounds speed probe moved by up to (\d+)%"),
     lambda m: Reason(m.group(0), note="the sweep's between-rounds speed probe moved by up to {}%",
                      bounds=((float(m.group(1)), m.group(1)),))),
    (re.compile(r"the workers' host probe, read around each cell's rounds, set (\d+) rounds? aside as taken while the "
                r"host ran slow"),
     lambda m: Reason(m.group(0), note="the workers' host probe, read around each cell's rounds, set up to {} rounds "
                      "at a size aside as taken while the host ran slow",
                      bounds=((float(m.group(1)), m.group(1)),))),
    (re.compile(r"on a machine that was not busy, with load up to ([\d.]+), other processes up to (\d+)% of the CPU"),
     lambda m: Reason(f"the machine was not busy (load up to {m.group(1)}, other processes up to {m.group(2)}% of the "
                      "CPU)", note="the machine was not busy (load up to {}, other processes up to {}% of the CPU)",
                      bounds=((float(m.group(1)), m.group(1)), (float(m.group(2)), m.group(2))))),
    # the same context where the rows show a busy machine (disturbance_text gives the load alone there)
    (re.compile(r"load up to ([\d.]+), other processes up to (\d+)% of the CPU"),
     lambda m: Reason(f"the machine was busy (load up to {m.group(1)}, other processes up to {m.group(2)}% of the CPU)",
                      note="the machine was busy (load up to {}, other processes up to {}% of the CPU)",
                      bounds=((float(m.group(1)), m.group(1)), (float(m.group(2)), m.group(2))))),
    (re.compile(r"(both its cells are|all \d+ of its cells are|its cell is) marked noisy \(other processes used up to "
                r"(\d+)% of the CPU while they ran\)"),
     lambda m: Reason(m.group(0), note=f"{m.group(1)} marked noisy (other processes used up to {{}}% of the CPU while "
                      "they ran)", bounds=((float(m.group(2)), m.group(2)),))),
    (re.compile(r"(.+) was faster in every one of its (\d+) rounds \(([^;()]*)\), but (\d+) rounds all one way happen "
                r"by chance (\d+%) of the time with no difference, and its interval spans no change"), _one_way),
)


def one_way_parts(one_way: str) -> tuple[str, ...]:
    """A "faster in every one of its rounds ..., and its interval spans no change: it rests ..." clause
    (:func:`~workbench.report.claims_cause.one_way_text`) as two reasons: the rounds all one way, and what the
    interval rests on (01 printed one note of 70 words)."""
    rounds, apart, makeup = one_way.partition(" spans no change: it rests ")
    return (f"{rounds} spans no change", f"that interval rests {makeup}") if apart else (one_way,)


def _sentences(text: str) -> str:
    """"and no typical paired scatter stood in (...), so its interval rests on ...": the clause after "too few ..."
    as two sentences where it has that "so" (a note of 53 words read as one breath)."""
    head, sep, tail = text.partition(", so its interval rests on ")
    return f"{head}. Its interval therefore rests on {tail}" if sep else text


def reason_of(text: str) -> Reason:
    """``text`` (one clause) as a :class:`Reason`: split into note and detail where it matches :data:`PATTERNS`
    whole, else a note said as it is."""
    for pattern, make in PATTERNS:
        m = pattern.fullmatch(text)
        if m:
            return make(m)
    return Reason(text)


@dataclass
class NoteBlock:
    """Lines of claims, each reason said once in numbered notes under them (see the module's docstring)."""

    lines: list[tuple[str, str, tuple[Reason, ...]]] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)

    def add(self, label: str, claim: Claim | str) -> None:
        """A line ``label: head`` (no label: the head alone) whose reasons go to the notes."""
        if isinstance(claim, str):
            claim = Claim(claim)
        self.lines.append((label, claim.head, tuple(reason_of(c) for c in clauses(*claim.reasons))))

    def footnote(self, text: str) -> None:
        """A note said once after the reasons' notes, unnumbered (what holds for the whole block)."""
        if text and text not in self.footnotes:
            self.footnotes.append(text)

    def _notes(self) -> tuple[dict[str, int], dict[str, str], set[str]]:
        """(each reason's number by key, each note's text by key, the keys whose lines keep their own detail)."""
        number: dict[str, int] = {}
        seen: dict[str, list[Reason]] = {}
        for _, _, reasons in self.lines:
            for r in reasons:
                number.setdefault(r.key, len(number) + 1)
                seen.setdefault(r.key, []).append(r)
        text, detailed = {}, set()
        for key, rs in seen.items():
            if len({r.said for r in rs}) == 1:
                text[key] = rs[0].said
            elif rs[0].bounds:
                most = [max((r.bounds[i] for r in rs), key=lambda b: b[0])[1] for i in range(len(rs[0].bounds))]
                text[key] = rs[0].note.format(*most)
            else:
                text[key], _ = rs[0].note, detailed.add(key)
        return number, text, detailed

    def render(self) -> list[str]:
        """The block's printed lines: each claim's line with its markers, then the notes, then the footnotes."""
        number, text, detailed = self._notes()
        out = []
        for label, head, reasons in self.lines:
            own = [f"{r.detail} [{number[r.key]}]" for r in reasons if r.key in detailed]
            marks = "".join(f"[{number[r.key]}]" for r in reasons if r.key not in detailed)
            line = f"{label}: {head}" if label else head
            line += f" ({'; '.join(own)})" if own else ""
            out.append(f"{line} {marks}" if marks else line)
        out += [f"[{n}] {text[key]}" for key, n in number.items()]
        return out + self.footnotes

    def __str__(self) -> str:
        return "\n".join(self.render())
