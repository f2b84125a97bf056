"""Terminal text for the commands' results. Pure functions: records in, str out."""

import textwrap

from suite.rules import rulesets
from suite.sizes import GIB
from suite.terminal import WIDTH, wrap


GAP = 2
MIN_COLUMN = 8


def table(rows: list[list[str]], header: list[str], width: int = WIDTH) -> str:
    """Columns two spaces apart, at most `width` columns wide: while wider, the widest column but the
    first (the rows' names stay whole) gives up a column, down to its longest word (or MIN_COLUMN), its
    cells wrapping inside it, no word cut. A table that cannot fit so is a list: each row's name on a
    line, then its `header value` pairs wrapped beneath it. The terminal's own wrap never breaks a
    table's line."""
    cells = [[str(c) for c in r] for r in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    floor = [widths[0]] + [max(MIN_COLUMN, *(len(w) for r in cells for w in r[i].split()))
                           for i in range(1, len(header))]
    gaps = GAP * (len(widths) - 1)
    if sum(min(f, w) for f, w in zip(floor, widths)) + gaps > width:
        return _as_list(cells[1:], cells[0], width)
    while sum(widths) + gaps > width:
        widest = max((k for k in range(1, len(widths)) if widths[k] > floor[k]), key=lambda k: widths[k])
        widths[widest] -= 1
    lines = _row(cells[0], widths) + ["  ".join("-" * w for w in widths)]
    for r in cells[1:]:
        lines += _row(r, widths)
    return "\n".join(lines)


def _row(cells: list[str], widths: list[int]) -> list[str]:
    """One row as one line, or as several where a cell wraps inside its column."""
    parts = [textwrap.wrap(c, w, break_on_hyphens=False) or [""] if len(c) > w else [c] for c, w in zip(cells, widths)]
    return ["  ".join((p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, widths)).rstrip()
            for k in range(max(len(p) for p in parts))]


def _as_list(rows: list[list[str]], header: list[str], width: int) -> str:
    out = []
    for r in rows:
        pairs = "; ".join(f"{h} {v}" for h, v in zip(header[1:], r[1:]) if v not in ("", "-"))
        out += [r[0]] + textwrap.wrap(pairs, width, initial_indent="    ", subsequent_indent="    ",
                                      break_on_hyphens=False)
    return "\n".join(out)


def workloads_table(resolved) -> str:
    rows = [[w.name, w.accelerator, ",".join(w.rulesets), w.format, str(w.batch_size),
             f"{w.computation_time_s:g}", f"{w.au_threshold * 100:g}%"] for w in resolved]
    return table(rows, ["workload", "accelerator", "rulesets", "format", "batch", "compute_s/step", "AU min"])


def fit(text: str, hang: int) -> str:
    return "\n".join(out for line in text.split("\n") for out in wrap(line, hang=hang))


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
    return fit("\n".join([        # each line within WIDTH columns, continued under its value
        f"workload      {d.workload} on {d.accelerator}, ruleset {d.ruleset}",
        f"accelerators  {d.num_accelerators} on {d.client_hosts} client host(s), host memory {memory} each",
        f"files         {d.num_files}",
        f"samples       {d.num_samples}",
        f"total size    {d.total_bytes / GIB:.2f} GiB",
        f"dictated by   {why}",
        f"epoch time    ~{d.epoch_time_at_full_au_s:.1f} s at 100% AU ({d.steps_per_epoch} steps per epoch)",
        f"next          {next_command}",
    ]), hang=14)
