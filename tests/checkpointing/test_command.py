"""`suite datasize` and `suite list` for the checkpointing workloads (cli.main in-process)."""

import json


def test_datasize_text_names_bytes_files_and_the_closed_count(run_cli):
    code, out, err = run_cli("datasize", "--workload", "llama3-405b", "--accelerators", 512, "--client-hosts", 64,
                             "--host-memory", "512GiB")
    assert code == 0 and max(map(len, out.splitlines())) <= 100, err     # wrapped within 100 columns
    out = " ".join(out.split())
    assert "5,682,508,791,808 bytes (5292.25 GiB; published 5.29 TB) in 1544 files" in out
    assert "TP 8 x PP 32 x DP 2, ZeRO 1" in out and "closed: 512" in out


def test_datasize_names_table_2s_1t_erratum_beside_the_computed_size(run_cli):
    code, out, err = run_cli("datasize", "--workload", "llama3-1t", "--accelerators", 1024, "--client-hosts", 128,
                             "--host-memory", "512GiB")
    assert code == 0, err
    out = " ".join(out.split())          # wrapped within 100 columns: the words in order
    assert "(15426.59 GiB; Table 2 prints 18 TB, an erratum: the reference's own total is 15,426 GiB" in out
    code, out, _ = run_cli("datasize", "--workload", "llama3-1t", "--accelerators", 1024, "--host-memory", "512GiB",
                           "--format", "json")
    assert code == 0 and json.loads(out)["published_corrected_gib"] == 15426


def test_datasize_json_and_subset(run_cli):
    code, out, err = run_cli("datasize", "--workload", "llama3-8b", "--accelerators", 4, "--mode", "subset",
                             "--host-memory", "64GiB", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["files_per_checkpoint"] == 8 and d["parallelism"]["data"] == 8
    assert d["checkpoint_bytes"] * 2 == 112_425_623_552 and d["checkpoint_per_host_over_memory"] > 0.8
    code, out, err = run_cli("datasize", "--workload", "llama3-1t", "--accelerators", 1024, "--mode", "subset",
                             "--host-memory", "64GiB")
    assert code == 2 and "llama3-8b only" in err and out == ""


def test_list_and_run_choices_include_the_checkpoint_workloads(run_cli):
    code, out, _ = run_cli("list")
    assert code == 0 and "llama3-1t, llama3-405b, llama3-70b, llama3-8b" in out
    code, _, err = run_cli("datagen", "--workload", "llama3-8b", "--data-dir", "/nonexistent-x", "--files", 1)
    assert code == 2 and "invalid choice: 'llama3-8b'" in err      # suite run writes its data: no Kind.datagen


def test_the_dlio_engine_is_refused_for_checkpointing_not_silently_replaced(run_cli, tmp_path):
    code, out, err = run_cli("run", "--engine", "dlio", "--workload", "llama3-8b", "--accelerators", 8,
                             "--checkpoints-read", 0, "--results-dir", tmp_path / "r")
    assert code == 2 and "--engine dlio: expected suite for llama3-8b" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_options_the_checkpoint_runner_does_not_use_are_refused(run_cli, tmp_path):
    for extra, needle in ((["--ruleset", "v1.0"], "--ruleset: expected v2.0 or v3.0 for llama3-8b"),
                          (["--param", "a.b=1"], "--param: expected only with a training workload"),
                          # --launcher takes the ranks across hosts: a launcher that reaches no host agent is refused
                          (["--launcher", "/bin/true"], "expected the host agent's answer through /bin/true, got exit 0 "
                                                        "(refused before anything started)")):
        code, out, err = run_cli("run", "--workload", "llama3-8b", "--accelerators", 8, "--checkpoints-read", 0,
                                 "--results-dir", tmp_path / "r", *extra)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()


def test_checkpointing_options_with_a_training_workload_are_refused(run_cli, tmp_path):
    for extra, needle in ((["--mode", "subset"], "--mode: expected only with a checkpointing workload"),
                          (["--checkpoints-read", 0], "--checkpoints-read: expected only with a checkpointing"),
                          (["--checkpoints-write", 3], "--checkpoints-write: expected only with a checkpointing workload (llama3-*), got 3 with unet3d")):
        code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--results-dir", tmp_path / "r",
                                 *extra)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()


def test_datasize_refuses_what_the_workload_kind_cannot_use(run_cli):
    for argv, needle in ((["llama3-8b", "--accelerators", 8, "--ruleset", "v1.0"], "--ruleset: expected v2.0"),
                         (["unet3d", "--accelerators", 8, "--mode", "subset"], "--mode: expected only with a checkp")):
        code, out, err = run_cli("datasize", "--workload", *argv, "--host-memory", "64GiB")
        assert code == 2 and needle in err and out == "" and len(err.strip().splitlines()) == 1
