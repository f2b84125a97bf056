"""Terminal text for the commands' results. Pure functions: records in, str out."""

from suite.rules import rulesets
from suite.sizes import GIB


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def workloads_table(resolved) -> str:
    rows = [[w.name, w.accelerator, ",".join(w.rulesets), w.format, str(w.batch_size),
             f"{w.computation_time_s:g}", f"{w.au_threshold * 100:g}%"] for w in resolved]
    return table(rows, ["workload", "accelerator", "rulesets", "format", "batch", "compute_s/step", "AU min"])


def datasize(d, next_command: str) -> str:
    memory = f"{d.host_memory_bytes / GIB:.2f} GiB ({d.host_memory_bytes} B)"
    size = rulesets.get(d.ruleset).datasize
    if size.formula == "files":        # the ruleset's minimum steps, whatever the workload's own steps
        steps_rule = f"{size.min_steps} steps x batch x {d.num_accelerators} accelerators"
    else:
        steps_rule = f"{d.steps} steps x batch x {d.num_accelerators} accelerators"
    k = size.memory_multiple
    why = {
        "steps": f"the minimum-steps rule ({steps_rule} = {d.steps_rule_samples} samples; "
                 f"{k}x memory needs {d.memory_rule_samples})",
        "memory": f"the {k}x host-memory rule ({d.client_hosts} x {memory} x {k} = {d.memory_rule_samples} samples; "
                  f"minimum steps need {d.steps_rule_samples})",
    }[d.dictated_by]
    return "\n".join([
        f"workload      {d.workload} on {d.accelerator}, ruleset {d.ruleset}",
        f"accelerators  {d.num_accelerators} on {d.client_hosts} client host(s), host memory {memory} each",
        f"files         {d.num_files}",
        f"samples       {d.num_samples}",
        f"total size    {d.total_bytes / GIB:.2f} GiB",
        f"dictated by   {why}",
        f"epoch time    ~{d.epoch_time_at_full_au_s:.1f} s at 100% AU ({d.steps_per_epoch} steps per epoch)",
        f"next          {next_command}",
    ])
