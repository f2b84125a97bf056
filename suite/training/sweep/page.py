"""The report of a `suite sweep` dir: the maximum N, throughput and AU against N (storage and the
page-cache ceiling, the threshold, the knee), the first epoch against the later ones, the sizing
table, the probes. Same content model as content.py (rendered by html.py and markdown.py).

Reads the sweep only through suite.training.sweep.result.load (sweep.json, schema-checked): report -> sweep.
"""

from suite.report.content import Figures, Image, Page, Section, Table, Text, fmt
from suite.rules.verdict import MINIATURE, NOT_PUBLISHABLE, headline
from suite.training.sweep.result import FEW_STEPS


def _pct(x) -> str:
    return "–" if x is None else f"{x:.2f}\u00a0%"      # a no-break space: the number and its unit stay together


def _frac(x) -> str:
    return "–" if x is None else f"{100 * x:.0f}\u00a0%"


def _ratio(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def build(doc: dict, path, storage_nodes: int = 1) -> Page:
    from suite.training.sweep import rederive, sizing
    from suite.training.sweep import verify

    labels = [MINIATURE] * bool(doc.get("miniature")) + ["OPEN"] * (doc["division"] == "open")
    labels += [NOT_PUBLISHABLE] if doc.get("miniature") else []      # a sweep measures; it is never a submission
    title = headline(f"{doc['workload']} {doc['accelerator']} sweep: accelerators vs storage", labels)
    found = verify.contradictions(doc)                 # sweep.json against its own points
    doc, from_runs = rederive.review(doc, path)        # every figure shown: its runs', never the claim
    found += [c for c in from_runs if c["field"] not in {f["field"] for f in found}]
    table = sizing.sweep_table(doc, storage_nodes)
    sections = [_headline(doc, table, found), _curves(doc), _sizing(doc, table), _epochs(doc)]
    if found:
        sections.insert(0, _contradictions(found))
    if doc["probes"] or doc["confirmations"]:
        sections.append(_probes(doc))
    page = Page(title=title, subtitle=str(path), sections=sections, labels=tuple(labels))
    page.tables["sweep_points"] = _export(doc)
    return page


def _image(section: Section, name: str, draw, doc: dict, alt: str) -> None:
    """An Image, or a line saying why not (numbers near the float limit have no axis to draw on)."""
    try:
        section.blocks.append(Image(name, draw(doc), alt))
    except (OverflowError, ValueError) as exc:
        section.blocks.append(Text(f"Not plotted ({alt}): the values are beyond what a plot can show "
                                   f"({type(exc).__name__})."))


def _contradictions(found: list[dict]) -> Section:
    """The claims of sweep.json its own points contradict (suite.training.sweep.verify), before anything else."""
    from suite.training.sweep import verify

    s = Section("sweep-findings", f"INVALID: sweep.json contradicts its own points or its runs ({len(found)} "
                                  "finding(s))")
    s.blocks.append(Text("Each figure below was re-derived from the runs' results.json (a point whose runs the "
                         "sweep dir does not hold is claimed, not re-derivable, and not used) and the points' "
                         "per-run AU; the page shows the re-derived maximum. " + "; ".join(verify.describe(c) for c in found[:3])
                         + (" ..." if len(found) > 3 else "") + "."))
    s.blocks.append(Table(["field", "claimed", "re-derived", "from"],
                          [[c["field"], str(c["claimed"]), str(c["derived"]), c["why"]] for c in found]))
    return s


def _headline(doc: dict, table: dict, found: list | None = None) -> Section:
    s = Section("sweep-headline", "How many accelerators does this storage keep busy?")
    threshold = doc["au_threshold_percentage"]
    ans = doc["max_accelerators"]
    if found:
        n = table["largest_n_at_threshold"]
        best = (fmt(n), f"re-derived from the points; sweep.json claims "
                        f"{(ans or {}).get('accelerators', n)}: CONTRADICTED by its points (see the findings)")
    elif ans:
        au = ", ".join(f"{a:.2f}" for a in ans["au_per_run"] if a is not None)
        best = (f"{ans['accelerators']}", f"confirmed by {ans['confirm_runs']} runs (AU {au} %)" if ans["confirmed"]
                else f"NOT confirmed by {ans['confirm_runs']} runs; the probes said {ans['found_by_probes']}")
    else:
        n = table["largest_n_at_threshold"]
        best = (fmt(n), "largest N of the list whose storage runs met the threshold")
    knee = doc["knee"]
    per = _per_accelerator(table)
    s.blocks.append(Figures([
        (f"Maximum N at AU ≥ {threshold:g} %", *best),
        ("Storage departs at", f"N = {knee['accelerators']}" if knee else "no departure", knee["reason"] if knee
         else "storage within 5 % of the ceiling and above the threshold at every N"),
        ("Demand per accelerator", f"{fmt(per)} MiB/s",
         f"from the {table['per_accelerator_from']}; analytic {fmt(table['analytic_mib_s_per_accelerator'])} MiB/s"),
        ("Storage sustained", f"{fmt(table['storage_sustained_mib_s'])} MiB/s", "most MiB/s at any N"),
    ]))
    host = doc["host"]
    s.blocks.append(Text(f"{doc['mode']} sweep, {doc['division']} division, {doc['runs_per_point']} run(s) per N, "
                         f"{len(doc['points'])} point(s) in {doc['duration_s']:,.0f} s on {host['hostname']} "
                         f"({host['cpu_count']} CPUs; load average {host['load_average_start'][0]:.2f} at the start, "
                         f"{host['load_average_end'][0]:.2f} at the end)"
                         + (f"; params {', '.join(doc['params'])}" if doc["params"] else "") + "."))
    if doc["ceiling"]:
        s.blocks.append(Text(f"Open-division measurement: {doc['ceiling_note']}."))
        cached = [(p["accelerators"], p["ceiling"]["preread"]) for p in doc["points"]
                  if p["ceiling"] and p["ceiling"].get("preread")]
        if cached:
            s.blocks.append(Text("Dataset in the page cache for the ceiling runs (after the pre-read → after the run; "
                                 "below 95 %, something dropped it and the ceiling read from storage too): " + "; ".join(
                                     f"N={n} {_frac(c.get('resident_fraction'))} → {_frac(c.get('resident_fraction_after'))}"
                                     for n, c in cached) + "."))
    return s


def _curves(doc: dict) -> Section:
    from suite.training.sweep import plots as sweep_plots

    s = Section("sweep-curves", "Throughput and utilisation vs accelerators")
    if doc["points"]:
        _image(s, "sweep-vs-n", sweep_plots.versus_n, doc,
               "MiB/s and AU vs accelerators: storage, page-cache ceiling, threshold")
    knee = (doc["knee"] or {}).get("accelerators")
    ceiling = any(p["ceiling"] for p in doc["points"])      # no ceiling runs: no empty ceiling columns
    rows = []
    for p in doc["points"]:
        st, ce = p["storage"] or {}, p["ceiling"] or {}
        mark = "\u00a0◀" if p["accelerators"] == knee else ""
        rows.append([f"{p['accelerators']}{mark}", _pct(st.get("au_percentage")), fmt(st.get("samples_per_second")),
                     fmt(st.get("mib_per_second")), _ratio(st.get("throughput_to_demand")), fmt(st.get("steps_per_epoch"))]
                    + ([_pct(ce.get("au_percentage")), fmt(ce.get("samples_per_second")), fmt(ce.get("mib_per_second")),
                        _pct(None if p["storage_to_ceiling"] is None else 100 * p["storage_to_ceiling"])] * ceiling)
                    + [fmt(st.get("meets_threshold")), st.get("error") or ce.get("error") or ""])
    s.blocks.append(Table(["N", "storage AU", "storage samples/s", "storage MiB/s", "throughput / demand",
                           "steps / epoch"]
                          + ["ceiling AU", "ceiling samples/s", "ceiling MiB/s", "storage / ceiling"] * ceiling
                          + ["meets threshold", "error"], rows,
                          f"Means over each point's runs. ◀ the knee: the first N where storage falls more than 5 % "
                          f"below the ceiling or below the {doc['au_threshold_percentage']:g} % threshold. "
                          f"Demand line: N × batch × record length / computation time; throughput / demand: "
                          f"samples/s over N × batch / computation time (every step counted, where AU leaves out "
                          f"each epoch's first: with fewer than {FEW_STEPS} steps per epoch AU hides the wait "
                          f"for data)."))
    return s


def _epochs(doc: dict) -> Section:
    from suite.training.sweep import plots as sweep_plots

    s = Section("sweep-epochs", "First epoch vs later epochs")
    if doc["points"]:
        _image(s, "sweep-epochs", sweep_plots.epochs, doc, "first-epoch vs later-epoch samples/s per N")
    rows = []
    for p in doc["points"]:
        for kind in ("storage", "ceiling"):
            pt = p[kind]
            if pt:
                rows.append([str(p["accelerators"]), kind, fmt(pt["first_epoch_samples_per_second"]),
                             fmt(pt["later_epochs_samples_per_second"]), _ratio(pt["first_to_later_ratio"]),
                             fmt(pt["first_epoch_mib_per_second"]), fmt(pt["later_epochs_mib_per_second"])])
    s.blocks.append(Table(["N", "run", "first epoch samples/s", "later epochs samples/s", "first / later",
                           "first epoch MiB/s", "later epochs MiB/s"], rows,
                          "A ratio below 1: the first pass over the data is slower than the later ones."))
    return s


def _per_accelerator(t: dict):
    """The per-accelerator demand the sizing uses: the ceiling's when measured, else the analytic one."""
    c = t["ceiling_mib_s_per_accelerator"]
    return c if c is not None else t["analytic_mib_s_per_accelerator"]


def _sizing(doc: dict, t: dict) -> Section:
    s = Section("sweep-sizing", "Sizing")
    k = t["storage_nodes"]
    rows = [
        ["MiB/s demanded per accelerator (page-cache ceiling)", fmt(t["ceiling_mib_s_per_accelerator"])],
        ["MiB/s per accelerator, analytic (batch × record / compute)", fmt(t["analytic_mib_s_per_accelerator"])],
        [f"MiB/s per accelerator at the {doc['au_threshold_percentage']:g} % threshold, analytic",
         fmt(t["analytic_at_threshold_mib_s_per_accelerator"])],
        ["MB/s per accelerator (10^6 bytes, as vendors quote)",
         fmt(None if _per_accelerator(t) is None else _per_accelerator(t) * 1024**2 / 1e6)],
        ["storage sustained MiB/s (most at any N)", fmt(t["storage_sustained_mib_s"])],
        [f"largest N at AU ≥ {doc['au_threshold_percentage']:g} %", fmt(t["largest_n_at_threshold"])],
        ["storage nodes (--storage-nodes)", str(k)],
        ["sustained MiB/s per storage node", fmt(t["storage_mib_s_per_node"])],
        ["accelerators per storage node", fmt(t["accelerators_per_storage_node"])],
    ]
    s.blocks.append(Table(["sizing", "value"], rows,
                          f"Accelerators per storage node = sustained MiB/s / {k} node(s) / MiB/s per accelerator "
                          f"(from the {t['per_accelerator_from']}, at full demand: conservative)."))
    return s


def _probes(doc: dict) -> Section:
    s = Section("sweep-probes", "Find-max probes and confirmation")
    rows = [[str(i + 1), p["phase"], str(p["accelerators"]), _pct(p["au_percentage"]), fmt(p["meets_threshold"]),
             p["results_dir"] + (f" ({p['error']})" if p["error"] else "")] for i, p in enumerate(doc["probes"])]
    rows += [["–", "confirm", str(c["accelerators"]), _pct(c.get("au_percentage")), fmt(c.get("meets_threshold")),
              str(c.get("results_dir"))] for c in doc["confirmations"]]
    s.blocks.append(Table(["#", "phase", "N", "AU", "meets threshold", "results"], rows,
                          "The bracket (the largest N whose epochs keep a step after the first) and galloping "
                          "from it, or doubling (--full-probes), then bisection; the answer is run "
                          "again with the round's runs.count runs (what the rules need) and stepped down "
                          "while those miss."))
    return s


def _export(doc: dict) -> tuple[list, list]:
    cols = ["accelerators", "kind", "au_percentage", "samples_per_second", "mib_per_second", "meets_threshold",
            "first_epoch_samples_per_second", "later_epochs_samples_per_second", "first_to_later_ratio",
            "storage_to_ceiling", "results_dir"]
    rows = []
    for p in doc["points"]:
        for kind in ("storage", "ceiling"):
            if p[kind]:
                rows.append({**{k: p[kind].get(k) for k in cols}, "accelerators": p["accelerators"], "kind": kind,
                             "storage_to_ceiling": p["storage_to_ceiling"]})
    return cols, rows
