"""suite.report.progress.Live and Ticker: the live line of a long step (issue 38: no silence on long steps).
On a TTY one line rewritten in place with \\r, cleared before an ordinary line; off a TTY a plain line
at most every `every_s`, so a log gets a heartbeat and not a flood."""

import io
import time

from suite.report import progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_on_a_tty_the_live_line_is_rewritten_in_place_and_cleared_before_a_line():
    out = Tty()
    live = progress.Live(out, tty_every_s=0)
    live.show("training 3 s: waiting for uc08 train (3 s)")
    live.show("training 4 s: waiting for uc08 train (4 s)")
    live.say("training: uc08 ok in 4.100 s")
    text = out.getvalue()
    assert "\n" not in text.split("training: uc08 ok")[0]          # the live text never made a new line
    assert text.count("\r") >= 4 and text.endswith("training: uc08 ok in 4.100 s\n")
    last_live = text.split("training: uc08 ok")[0].rsplit("\r", 1)[0]
    assert last_live.endswith(" " * len("training 4 s: waiting for uc08 train (4 s)"))   # cleared
    live.show("x" * 500)
    assert max(len(part) for part in out.getvalue().split("\r")) <= 500     # cut to the terminal's width


def test_off_a_tty_a_plain_line_at_most_every_period_and_only_after_silence():
    lines = []
    live = progress.Live(io.StringIO(), every_s=0.3, tty=False, plain=lines.append)
    live.show("first")                      # right after the start: no line yet (nothing was silent)
    assert lines == []
    time.sleep(0.35)
    live.show("a")
    live.show("b")                          # within the period: dropped
    assert lines == ["a"]
    live.say("an ordinary line")
    time.sleep(0.35)
    live.show("c")
    assert lines == ["a", "an ordinary line", "c"]


def test_the_ticker_asks_for_the_status_and_stops():
    lines, asked = [], []
    live = progress.Live(io.StringIO(), every_s=0, tty=False, plain=lines.append)

    def status():
        asked.append(1)
        return f"waiting ({len(asked)})"

    with progress.Ticker(live, status, period_s=0.05):
        time.sleep(0.4)
    n = len(lines)
    time.sleep(0.2)
    assert n >= 2 and len(lines) == n and lines[0] == "waiting (1)"


def test_elapsed_reads_as_a_person_says_it():
    assert [progress.elapsed(s) for s in (0, 42.7, 185, 3725)] == ["0 s", "42 s", "3 min 05 s", "1 h 02 min"]
