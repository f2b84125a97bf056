"""suite/rules/verdict.py: the exit-code rule, the labels and the one verdict line, read back."""

import pytest

from suite.rules.verdict import MINIATURE, NOT_PUBLISHABLE, Voice, headline, parse, worst

CASES = [   # (voice, exit code, line)
    (Voice("closed"), 0, "verdict: CLOSED (compliant)"),
    (Voice("closed", miniature=True), 1, "verdict: CLOSED MINIATURE NOT PUBLISHABLE (not compliant)"),
    (Voice("open"), 1, "verdict: OPEN (not compliant)"),                      # a closed run that came out open
    (Voice("open", division="open"), 0, "verdict: OPEN (compliant)"),        # open, as asked
    (Voice("open", division="open", open_division=False), 0, "verdict: OPEN NOT PUBLISHABLE (compliant)"),
    (Voice("invalid", division="open"), 1, "verdict: INVALID NOT PUBLISHABLE (not compliant)"),
    (Voice("closed", fix_required=True), 1, "verdict: CLOSED, fix required (not compliant)"),
    (Voice("closed", failed=True), 1, "verdict: CLOSED (not compliant)"),
]


@pytest.mark.parametrize("voice,code,line", CASES, ids=[c[2] for c in CASES])
def test_the_exit_code_rule_and_the_line(voice, code, line):
    assert voice.code == code and voice.line() == line
    verdict, labels, compliant = parse(line)
    assert verdict == voice.verdict and compliant == (code == 0)
    assert (MINIATURE in labels) == voice.miniature and (NOT_PUBLISHABLE in labels) == (not voice.publishable)


def test_labels_and_headline():
    v = Voice("open", miniature=True)
    assert v.labels() == ("MINIATURE", "OPEN", "NOT PUBLISHABLE")
    assert headline("unet3d h100", v.labels()) == "unet3d h100 — MINIATURE · OPEN · NOT PUBLISHABLE"
    assert headline("unet3d h100", Voice("closed").labels()) == "unet3d h100"


def test_worst_is_compliant_exactly_when_every_part_is():
    assert worst([Voice("closed"), Voice("open", division="open")]).compliant
    assert not worst([Voice("closed"), Voice("open")]).compliant
    assert not worst([Voice("closed"), Voice("closed", miniature=True)]).compliant
    assert worst([]).line() == "verdict: CLOSED (compliant)"


def test_what_is_not_a_verdict_line():
    for line in ("verdict: CLOSED", "verdict: VALID (compliant)", "suite check verdict: OPEN (compliant)", ""):
        assert parse(line) is None
    with pytest.raises(ValueError):
        Voice("valid")
