"""`suite run` of a v3.0 checkpoint to s3:// from the command line: the miniature layout (--miniature)
written and read back in one invocation against the real local server, then checked and reported. Four
ranks in the open division (the least one host may run; the closed 8 ranks on s3:// are docs/object-storage.md's
example)."""

import json


def test_v3_checkpoint_write_then_read_on_s3_from_the_cli(bucket, s3_server, tmp_path, run_cli):
    res = tmp_path / "R"
    code, out, err = run_cli("run", "--workload", "llama3-8b", "--accelerators", 4, "--division", "open",
                             "--ruleset", "v3.0", "--data-dir", f"s3://{bucket}/ck", "--results-dir", res, "--miniature")
    assert code == 1 and "MINIATURE" in out.strip().splitlines()[-1], out + err    # a miniature: never compliant
    leaves = sorted((res / "checkpointing" / "llama3-8b").iterdir())
    assert len(leaves) == 2, leaves
    docs = [json.loads((leaf / "run-1" / "results.json").read_text()) for leaf in leaves]
    assert [d["phase"] for d in docs] == ["write", "read"] and all(d["miniature"] for d in docs)
    assert [d["object_storage"]["bucket"] for d in docs] == [bucket, bucket]
    hand = docs[1]["handoff"]
    assert hand["within_window"] and hand["cache_clear"]["performed"]
    assert "objects" in hand["cache_clear"]["what"] and hand["cache_clear"]["resident_bytes_before"] == 0
    code, out, err = run_cli("check", res)
    assert code == 1 and "checkpoint-miniature" in out and "MINIATURE" in out.strip().splitlines()[-1], out + err
    code, out, err = run_cli("report", leaves[1], "--out", tmp_path / "rep")
    assert code in (0, 1) and (tmp_path / "rep" / "index.html").is_file(), err
    assert s3_server["env"]["AWS_SECRET_ACCESS_KEY"] not in "".join(
        p.read_text(errors="replace") for p in res.rglob("*") if p.is_file())
