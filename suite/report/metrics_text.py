"""Terminal text for `suite metrics`. Pure functions: results in, str out."""

from suite.report.text import table


def money(value: float, currency: str | None) -> str:
    return f"{value:,.2f} {currency or ''}".rstrip()


def tpcxai(fdr, result) -> str:
    """The TPCx-AI figures: phase times, AIUCpm@SF, $/AIUCpm@SF, and the published figures beside them."""
    sf = f"{result.scale_factor:g}"
    head = [f"TPCx-AI  {fdr.doc.get('sponsor', '')}  SF {sf}  streams {result.streams}  "
            f"kit {fdr.doc.get('kit_version')}  ({fdr.path})".replace("    ", "  ")]
    n_train = 10 - len(result.missing.get("training_s", []))
    rows = [
        ["TLD", f"{result.tld_s:.3f} s", "load time"],
        ["TPTT", f"{result.tptt_s:.3f} s", f"geomean of {n_train} training times"],
        ["TPST1", f"{result.tpst1_s:.3f} s", "geomean of serving run 1"],
        ["TPST2", f"{result.tpst2_s:.3f} s", "geomean of serving run 2"],
        ["TPST", f"{result.tpst_s:.3f} s", "max(TPST1, TPST2)"],
        ["TTT", f"{result.ttt_s:.3f} s",
         f"{result.throughput_elapsed_s:.3f} s / ({result.streams} streams x 10)"],
    ]
    if result.complete:
        rows.append([f"AIUCpm@{sf}", f"{result.aiucpm_published:.2f}", f"published to 2 decimals from the kit value {result.aiucpm:.3f}"])
        if result.price_per_aiucpm is not None:
            rows.append([f"$/AIUCpm@{sf}", money(result.price_per_aiucpm, result.currency),
                         f"{money(result.total_price, result.currency)} / {result.aiucpm_published:.2f}"])
    else:
        rows.append([f"AIUCpm@{sf}", "none", "needs all 10 use cases in every power phase"])
    published = fdr.published
    if published and result.complete:
        if "aiucpm" in published:
            diff = result.aiucpm_published - published["aiucpm"]
            rows.append(["published", f"{published['aiucpm']:.2f}", f"AIUCpm; computed - published = {diff:+.2f}"])
        if "price_per_aiucpm" in published and result.price_per_aiucpm is not None:
            diff = result.price_per_aiucpm - published["price_per_aiucpm"]
            rows.append(["published", money(published["price_per_aiucpm"], result.currency),
                         f"per AIUCpm; computed - published = {diff:+.2f}"])
    return "\n".join(head + [table(rows, ["figure", "value", "how"])])
