"""Ctrl-C and SIGTERM during a run (a real subprocess): the result is marked interrupted, nothing half-written."""

import json
import signal
import subprocess
import sys
import time

import pytest
import tpcx_toy

from suite.tpcx_ai import leaf as result


def toy_cli(tmp, *argv):
    return subprocess.Popen([sys.executable, str(tpcx_toy.HERE / "tpcx_toy.py"), str(tmp), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_marks_the_result_interrupted(tmp_path, sig):
    p = toy_cli(tmp_path, "--fault", "3=sleep", "--progress-every", "2", "--scale-factor", "0.01", "--use-cases", "2,3",
                "--results-dir", str(tmp_path / "r"), "--data-dir", str(tmp_path / "d"), "--processes", "1")
    seen = []
    deadline = time.monotonic() + 120
    for line in p.stdout:          # until uc03's training (which sleeps) is running and the live line says so
        seen.append(line)
        if "tpcx-ai: training " in line and "waiting for uc03 train (" in line or time.monotonic() > deadline:
            break
    p.send_signal(sig)
    progress = [ln for ln in seen if "waiting for" in ln]
    assert progress and all(len(ln) < 120 for ln in progress), seen       # not a TTY: plain lines, each short
    assert "; 1/2 use cases done" in progress[-1], progress
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (seen, out, err)
    doc = json.loads((tmp_path / "r" / result.RESULT_FILE).read_text())
    assert doc["status"] == "interrupted" and not doc["valid"] and doc["metric"] is None
    assert any("interrupted" in r for r in doc["reasons"])
    assert [ph["name"] for ph in doc["phases"]][-1] == "training" and not doc["phases"][-1]["complete"]
    assert not [q for q in tmp_path.rglob("*.tmp")]
    assert result.read(tmp_path / "r")["status"] == "interrupted"
