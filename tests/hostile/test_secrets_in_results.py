"""A password given on the command line (a PostgreSQL history URL's user-info or query password, a secret
--param) never lands in a result's files (issue 46, class 4): the leaves record the command line through
suite.redact. A real `suite run --ruleset v3.0` (retinanet, one accelerator, a 24-file miniature)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from suite.training.data import datagen
from suite.training import workloads
from tests.ours3_builders import FAST

SECRET = "Sup3rSecretPw"


def test_a_password_on_the_command_line_is_in_no_result_file(tmp_path):
    data = tmp_path / "data"
    datagen.generate(workloads.resolve("retinanet", "b200"), data, 24, processes=1)
    store = tmp_path / "h.sqlite"
    argv = [sys.executable, "-m", "suite", "run", "--workload", "retinanet", "--accelerator-type", "b200",
            "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(data), "--results-dir", str(tmp_path / "R"),
            "--division", "open", "--runs", "1", *FAST,
            "--history", f"postgresql://alice:{SECRET}@127.0.0.1:9/db?password={SECRET}"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "SUITE_HISTORY": str(store)})
    assert SECRET not in done.stdout + done.stderr
    written = [p for p in (tmp_path / "R").rglob("*") if p.is_file()]
    assert any(p.name.endswith("_metadata.json") for p in written), done.stderr[-2000:]
    leaked = [str(p) for p in written if SECRET.encode() in p.read_bytes()]
    assert leaked == []
