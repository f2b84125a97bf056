"""Terminal text of `suite sizing` (what suite.training.sweep.sizing.sizing returns). Pure: a dict in, str out."""

from suite.report.text import table
from suite.sizes import GIB


def _n(x, places=1) -> str:
    return "–" if x is None else f"{x:,.{places}f}"


def sizing(s: dict, memory_defaulted: bool = False) -> str:
    n, ds = s["accelerators"], s["datasize"]
    def mb(x):
        return "–" if x is None else f"{x * 1024**2 / 1e6:,.1f} MB/s"
    rows = [
        ["per accelerator, 100% AU (batch x record / compute)", f"{_n(s['per_accelerator_mib_s'])} MiB/s",
         mb(s['per_accelerator_mib_s'])],
        [f"{n} accelerators, 100% AU", f"{_n(s['total_mib_s'])} MiB/s", mb(s['total_mib_s'])],
        [f"{n} accelerators at the {s['au_threshold_percentage']:g}% AU threshold",
         f"{_n(s['total_at_threshold_mib_s'])} MiB/s", mb(s['total_at_threshold_mib_s'])],
    ]
    if s["sweep"] is not None:
        sw = s["sweep"]
        rows += [
            ["per accelerator, measured page-cache ceiling", f"{_n(s['ceiling_per_accelerator_mib_s'])} MiB/s",
             "from the sweep" if s["ceiling_per_accelerator_mib_s"] is not None
             else s.get("ceiling_why_none") or "the sweep has no ceiling runs"],
            [f"{n} accelerators, measured ceiling", f"{_n(s['ceiling_total_mib_s'])} MiB/s", ""],
            ["the swept storage sustains", f"{_n(sw['storage_sustained_mib_s'])} MiB/s",
             f"{sw['largest_n_at_threshold'] if sw['largest_n_at_threshold'] is not None else '–'} accelerators at the threshold"],
        ]
    rows += [
        ["dataset (dataset-size rules)", f"{ds['num_files']:,} files", f"{ds['total_bytes'] / GIB:,.1f} GiB, "
         f"{ds['num_samples']:,} samples, dictated by {ds['dictated_by']} ({ds['ruleset']})"],
        ["host memory used for the dataset rule", f"{ds['host_memory_bytes'] / GIB:,.1f} GiB x {ds['client_hosts']} host(s)",
         "this host's MemTotal (--host-memory to change)" if memory_defaulted else "--host-memory"],
    ]
    from suite.report.escape import terminal
    from suite.terminal import wrap

    head = f"suite sizing: {s['workload']} on {s['accelerator']}, {n} accelerator(s)"
    if s.get("params"):
        head += f" (with the sweep's parameters: {', '.join(map(str, s['params']))})"
    return "\n".join(wrap(terminal(head), hang=4)) + "\n\n" + table(rows, ["what", "value", "note"])


def findings(found: list[dict], source) -> str:
    """The claims of sweep.json its runs do not support (suite.training.sweep.rederive): the table above
    used the runs' figures, and a claim without its runs was not used."""
    from suite.report.escape import terminal
    from suite.training.sweep import verify

    head = (f"INVALID: {source}: {len(found)} claim(s) of sweep.json differ from its runs or cannot be "
            "re-derived; the figures above are the runs' own")
    return "\n".join([head] + [terminal(f"  finding: sweep-claim-rederived: {verify.describe(c)}") for c in found])
