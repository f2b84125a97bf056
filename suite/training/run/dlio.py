"""`suite run --engine dlio`: DLIO itself, under the same enforcement as our own ranks.

Same preparation (launch.refuse, prepare: sizing, dataset scan, closed-division refusals), the same
enforced loop (suite.harness.enforced: the cache drop before each run), the same memory cgroup
around `mpiexec -n N dlio_benchmark workload=<W>_<accel> ++workload....` from the engine's own venv (suite.engines.registry). DLIO
writes its summary.json, per_epoch_stats.json, <rank>_output.json, dlio.log and configs/ into
run-<k>/ (hydra.run.dir, hydra.output_subdir=configs); results.json is ours, beside them, with the
evidence, the engine's version and the framework path.

DLIO 2.0.0 behaviours handled here (not copied into our own runner):
- throughput window: per block, from start_block (before the first batch is loaded) to the end
  of the last step, so the first step's load time counts in throughput but not in AU;
- MB/s = samples/s x the configured record_length / 1024^2 (MiB, from configuration, not bytes
  read): results.json's bytes_read is estimated the same way from the bytes on disk and says so;
- config keys are 2.0.0's (dataset.record_length, record_length_stdev; later versions renamed them
  record_length_bytes, record_length_bytes_stdev), passed as `++workload.<section>.<key>`;
- the TensorFlow-CPU path: ++workload.framework=tensorflow ++workload.reader.data_loader=tensorflow.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from suite.errors import RunError, SuiteError
from suite.harness import enforced, mpi

QUIET = ("step", "processed", "Profiling", "Reading workload", "core available")


def runner(opts):
    """The run_once for --engine dlio, refusing first what no DLIO run can do (engine missing)."""
    from suite.engines import registry
    from suite.training.engines import DLIO

    eng, venv = registry.require(DLIO)
    config = venv_configs(venv) / f"{_dlio_name(opts)}.yaml"
    if not config.is_file():
        have = sorted(p.stem for p in venv_configs(venv).glob("*.yaml") if p.stem != "default")
        raise SuiteError(f"--engine dlio: workload: expected one of DLIO {eng.version}'s workload configs "
                         f"({', '.join(have)}), got {_dlio_name(opts)}")

    def run_once(prep, k, runs, drop):
        return _run_once(prep, k, runs, drop, eng, venv)
    return run_once


def _dlio_name(opts) -> str:
    from suite.training import workloads

    return workloads.resolve(opts.workload, opts.accelerator_type).dlio_name


def venv_configs(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages/dlio_benchmark/configs/workload"))
    return found[0] if found else venv / "missing-dlio-configs"


def hydra_value(value) -> str:
    from suite.training.run.dlio_output import hydra_value as hv

    return hv(value)


def overrides(prep, run_dir: Path) -> list[str]:
    """What DLIO is told: its own workload config, our dataset, the user's --param, the TF-CPU path."""
    wl = prep.workload
    subfolders = len({Path(p).parent for p, _s in prep.files} - {(Path(prep.data_dir) / "train").resolve()})
    out = [f"workload={wl.dlio_name}",
           "++workload.framework=tensorflow", "++workload.reader.data_loader=tensorflow",
           "++workload.workflow.generate_data=False", "++workload.workflow.train=True",
           f"++workload.dataset.data_folder={Path(prep.data_dir).resolve()}",
           f"++workload.dataset.num_files_train={len(prep.files)}"]
    # dataset.keep_files: DLIO 2.0.0 deletes the dataset at the end when False; its default, True, is
    # kept (an override would be a parameter outside the allow-lists for `suite check`)
    if subfolders:
        out.append(f"++workload.dataset.num_subfolders_train={subfolders}")
    if wl.checkpoint_model_size_bytes:
        folder = Path(wl.config.get("checkpoint", {}).get("checkpoint_folder", "checkpoints"))
        out.append(f"++workload.checkpoint.checkpoint_folder={(prep.results_dir / folder).resolve()}")
    skip = {"dataset.data_folder", "dataset.num_files_train", "checkpoint.checkpoint_folder"}
    out += [f"++workload.{key}={hydra_value(v)}" for key, v in sorted(prep.params.items()) if key not in skip]
    from suite.training import leaf

    return out + [f"hydra.run.dir={run_dir}", f"hydra.output_subdir={leaf.config_dir_name(prep)}"]


def environment(venv: Path) -> dict:
    """A clean environment for DLIO: its venv's bin first (mpiexec, hydra_pmi_proxy, tfrecord2idx),
    none of our PYTHONPATH, TensorFlow's C++ chatter off."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "/usr/bin:/bin")])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # DLIO's ranks wait in blocking MPI calls (its barriers, the start-up while another rank still imports
    # TensorFlow): MPICH busy-polls there, and on a host with fewer cores than ranks and reader threads the
    # spinning rank takes the others' CPU (suite.harness.ranks.barrier avoids it for our own ranks). The
    # throttle naps (usleep) between polls that found nothing; a user's own setting wins.
    env.setdefault("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "1")
    env["VIRTUAL_ENV"] = str(venv)
    return env


def mpiexec_argv(prep, venv: Path, eng) -> list[str]:
    """The engine venv's mpiexec -n N (the user's --hostfile/--hosts) and DLIO's executable."""
    return mpi.mpiexec_argv(prep.opts.accelerators, hostfile=prep.opts.hostfile,
                            hosts=prep.hosts if prep.opts.hosts else None,
                            exe=venv / "bin" / "mpiexec") + [str(venv / "bin" / eng.executable)]


def _run_once(prep, k: int, runs: int, drop, eng, venv: Path) -> dict:
    from suite.training import leaf

    run_dir = leaf.run_dir(prep, k)
    argv = mpiexec_argv(prep, venv, eng) + overrides(prep, run_dir)
    enforced.say(f"[run {k}/{runs}] DLIO {eng.version}: {prep.opts.accelerators} rank(s) -> {run_dir}")
    cgroup = enforced.memory_cgroup(prep.memory_limit, k)
    start = time.time()
    status, error, evidence = enforced.enforced(cgroup, lambda start_child: launch(argv, run_dir, venv, start_child),
                                                lambda rc: failure(run_dir, rc))
    from suite.training.run.dlio_results import collect

    return collect(prep, k, run_dir, (start, time.time()), status, error, drop, evidence,
                   {"name": eng.name, "version": eng.version, "framework": eng.framework, "venv": str(venv),
                    "argv": argv})


def launch(argv, run_dir: Path, venv: Path, start_in_cgroup) -> int:
    """mpiexec in the cgroup (when given), DLIO's stdout to run-<k>/dlio_stdout.log with the epoch
    and [METRIC] lines relayed to ours; on SIGINT/SIGTERM the ranks are stopped."""
    return mpi.launch(argv, run_dir, start_in_cgroup, log_name="dlio_stdout.log", relay=_relay,
                      env=environment(venv), cwd=run_dir, merge_stderr=True)


def _relay(stream, log) -> None:
    for raw in iter(stream.readline, b""):
        log.write(raw)
        line = raw.decode("utf-8", "replace")
        if ("[METRIC]" in line or "epoch" in line.lower() or "ERROR" in line or "Error" in line) \
                and not any(q in line for q in QUIET):
            sys.stdout.write("  dlio: " + line.split(" [/")[0].rstrip() + "\n")
            sys.stdout.flush()
    log.flush()
    stream.close()


def failure(run_dir: Path, rc: int) -> str:
    """One line: DLIO's last error line (a Python exception), else the exit code."""
    text = (run_dir / "dlio_stdout.log").read_text(errors="replace") if (run_dir / "dlio_stdout.log").exists() else ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errs = [ln for ln in lines if "Error" in ln or "Exception" in ln or ln.startswith("[ERROR]")]
    what = (errs[-1] if errs else (lines[-1] if lines else "no output"))[:300]
    return f"DLIO exited with code {rc}: {what}; see {run_dir / 'dlio_stdout.log'}"


def datagen(args, workload, num_files: int) -> int:
    """`suite datagen --engine dlio`: DLIO's own generator (generate_data=True, train=False) with N ranks
    (--processes); its dlio.log and configs/ go to DATA_DIR/datagen/, which `suite check` takes as the
    generation log."""
    from suite.engines import registry
    from suite.errors import ExitCode
    from suite.training.engines import DLIO

    eng, venv = registry.require(DLIO)
    data_dir = Path(args.data_dir).resolve()
    out_dir = data_dir / "datagen"
    ranks = args.processes or 1
    argv = [*mpi.mpiexec_argv(ranks, exe=venv / "bin" / "mpiexec"), str(venv / "bin" / eng.executable),
            f"workload={workload.dlio_name}", "++workload.framework=tensorflow",
            "++workload.reader.data_loader=tensorflow", "++workload.workflow.generate_data=True",
            "++workload.workflow.train=False", "++workload.workflow.checkpoint=False",
            f"++workload.dataset.data_folder={data_dir}", f"++workload.dataset.num_files_train={num_files}"]
    argv += [f"++workload.{key}={hydra_value(v)}" for key, v in sorted(workloads_params(args).items())
             if key not in ("dataset.data_folder", "dataset.num_files_train")]
    argv += [f"hydra.run.dir={out_dir}", "hydra.output_subdir=configs"]
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"suite datagen --engine dlio: {' '.join(argv[3:])}", flush=True)
    t0 = time.time()
    with open(out_dir / "dlio_stdout.log", "wb") as log:
        rc = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=environment(venv), cwd=str(out_dir))
    if rc != 0:
        raise RunError(failure(out_dir, rc).replace("dlio_stdout.log", "datagen/dlio_stdout.log"))
    note = {"engine": eng.name, "version": eng.version, "argv": argv, "duration_s": round(time.time() - t0, 3)}
    from suite.files import write_atomic
    write_atomic(out_dir / "suite_engine.json", json.dumps(note, indent=2, sort_keys=True))
    print(f"datagen: DLIO {eng.version} wrote {num_files} {workload.format} files into {data_dir}/train in "
          f"{time.time() - t0:.1f} s; its log: {out_dir}", flush=True)
    return ExitCode.OK


def workloads_params(args) -> dict:
    from suite.training import workloads

    return workloads.parse_params(args.param)
