"""A result with substituted use cases is never called plain AIUCpm: `run`'s summary, `metrics`,
`check` and the report all show AIUCpm-sub@SF and the line naming the differing use cases."""

import json
import re
import shutil

from suite import cli
from suite.tpcx_ai import naming
from suite.tpcx_ai import usecase
from suite.tpcx_ai.registry import Registry

from tests import paths

TPCX = paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json"


def test_the_installed_substitutes_are_uc02_uc05_uc09():
    subs = naming.records(usecase.load_all(Registry(), range(1, 11)))
    assert [s["use_case"] for s in subs] == [2, 5, 9]
    assert naming.metric_name(1, subs) == "AIUCpm-sub@1" and naming.metric_name(1, []) == "AIUCpm@1"
    line = naming.substitutes_line(subs)
    assert "UC02" in line and "UC05" in line and "UC09" in line and "UC08" not in line
    assert naming.substitutes_of({"schema_version": 1}) == []          # an FDR data file: the kit's models


def test_metrics_check_and_report_carry_the_qualified_name(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    doc = json.loads(TPCX.read_text())
    doc["substitutes"] = [{"use_case": 5, "substitute": "TF-IDF + MLP", "here": "a", "kit": "b"}]
    (run / "tpcxai-result.json").write_text(json.dumps(doc))
    outputs = {}
    for argv in (["metrics", str(run)], ["check", str(run)], ["check", str(run), "--format", "json"],
                 ["report", str(run), "--out", str(tmp_path / "page")]):
        cli.main(argv)
        outputs[" ".join(argv[:1] + argv[2:3])] = capsys.readouterr().out
    page = (tmp_path / "page" / "index.html").read_text()
    before_the_use_cases = page[:page.index('id="use-cases"')]     # the use-case table names every UC
    for text in (outputs["metrics"], outputs["check"], before_the_use_cases):
        assert "AIUCpm-sub@0.01" in text and "UC05 TF-IDF + MLP" in text and "UC02" not in text
    assert "suite check: INVALID" in page                                   # check's verdict on the page
    jobs = page[page.index("Per-job times</h2>"):]
    jobs = jobs[:jobs.index("</table>")]
    head, body = jobs.split("</thead>")
    assert all(row.count("<td") == len(re.findall(r"<th[ >]", head)) == 4 for row in body.split("</tr>")[:-1])
    assert "Remark: UC09 scored perfectly" in page   # the fixture (before issue 29's leak fixes): UC09 accuracy 1.0
    as_json = json.loads(outputs["check --format"])
    assert as_json["metric_name"] == "AIUCpm-sub@0.01" and as_json["substitutes"][0]["use_case"] == 5
    for text in (outputs["metrics"], outputs["check"], page.replace("&#x27;", "'")):
        assert "load differs from the kit's" in text                       # the load disclosed everywhere
    assert as_json["disclosures"] and "copy" in as_json["disclosures"][0]
    doc["substitutes"] = []
    (run / "tpcxai-result.json").write_text(json.dumps(doc))
    cli.main(["metrics", str(run)])
    assert "AIUCpm@0.01" in capsys.readouterr().out


def test_an_imperfect_score_gets_no_remark():
    from suite.tpcx_ai import fdr
    from suite.tpcx_ai import page
    from suite.tpcx_ai import leaf as result

    doc = json.loads(TPCX.read_text())
    doc["quality"]["uc9"]["value"] = 0.97
    text = str(page._use_cases(fdr.from_doc(result.fdr_doc(doc), "x")).blocks)
    assert "perfect" not in text and "accuracy_score 0.97" in text
