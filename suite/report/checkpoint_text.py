"""Checkpointing (llama3-*) for humans: `suite datasize` and `suite metrics` text."""

from __future__ import annotations

from suite.report.escape import terminal


def datasize(d: dict) -> str:
    """The text of `suite datasize --workload llama3-*` (d: suite.storage.checkpoint.command.sizing)."""
    p = d["parallelism"]
    lines = [
        f"{d['workload']}: {d['parameters'] / 1e9:.2f} B parameters, TP {p['tensor']} x PP {p['pipeline']} x DP "
        f"{p['data']}, ZeRO {p['zero_stage']}, {d['processes']} processes ({d['mode']} mode; closed: "
        f"{d['closed_processes']})",
        f"one checkpoint: {d['checkpoint_bytes']:,} bytes ({d['checkpoint_gib']:.2f} GiB; published "
        f"{d['published_checkpoint_size']}) in {d['files_per_checkpoint']} files; per rank "
        f"{d['rank_bytes_min']:,}..{d['rank_bytes_max']:,} bytes",
        f"checkpoint folder: {d['folder_bytes']:,} bytes for the {d['checkpoints']} checkpoints a write phase leaves",
    ]
    if d.get("checkpoint_per_host_over_memory") is not None:
        lines.append(f"per host: {d['bytes_per_host']:,} bytes of each checkpoint = "
                     f"{d['checkpoint_per_host_over_memory']:.2f} x host memory (the read is measured after a cache "
                     f"drop either way)")
    lines.append(f"next: suite run --workload {d['workload']} --accelerators {d['processes']} --mode {d['mode']} "
                 f"--checkpoints-read 0 --data-dir CHECKPOINT_DIR")
    return "\n".join(terminal(line) for line in lines)
