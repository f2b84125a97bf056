"""Helpers of the `suite submission` tests (imported by name: tests/submission is on sys.path)."""

import json
import shutil

import yaml


def spoiled_copy(results, dest, run: int | None = None, **fields):
    """A copy of a results dir; with `run`, that run's results.json gets `fields`."""
    shutil.copytree(results, dest)
    if run is not None:
        path = dest / f"run-{run}" / "results.json"
        doc = json.loads(path.read_text())
        doc.update(fields)
        path.write_text(json.dumps(doc))
    return dest


def fill_todos(path):
    """What a vendor does after init: every TODO of the JSON description given a value."""
    doc = json.loads(path.read_text())

    def fill(node):
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        return "Example value" if isinstance(node, str) and node.startswith("TODO") else node

    doc = fill(doc)
    doc["todo"] = []
    path.write_text(json.dumps(doc, indent=2))


def snapshot(root):
    """{relative path: bytes} of every file under root: to show nothing was changed."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fill_v3(sub, system: str = "box1", division: str = "closed") -> None:
    """fill_v3_yaml on the system description of `system` in a v3.0 tree made by submission init."""
    fill_v3_yaml(sub / division / "ACME/systems" / f"{system}.yaml")


def fill_v3_yaml(p, availability: str = "preview") -> None:
    """What a submitter gives in a v3.0 system description: the solution, on premises, two storage
    nodes of 2 x 750 W and 1 RU each."""
    d = yaml.safe_load(p.read_text())
    d.pop("todo", None)
    sut = d["system_under_test"]
    sut["solution"].update(friendly_description="a test NAS", usable_capacity_tib=2.5, availability=availability)
    sut["deployment"] = "onprem"
    psu = {"min_psus_active": 1, "psus_configured": [{"unit_count": 2, "inlet_voltage": 230,
                                                      "nameplate_power_watts": 750, "efficiency": "Platinum"}]}
    sut["clients"][0]["chassis"].update(model_name="VM", rack_units=1, power=psu)
    sut["product_nodes"] = [{"friendly_description": "NAS head", "quantity": 2,
                             "chassis": {"model_name": "R640", "rack_units": 1, "cpu_model": "Xeon", "cpu_qty": 2,
                                         "cpu_cores": 16, "memory_capacity": 128, "power": psu},
                             "networking": [{"type": "ethernet", "unit_count": 2, "speed": 100, "traffic": ["data"]}],
                             "operating_system": {"name": "Debian", "version": "12"}}]
    sut["total_rack_units"] = 2
    p.write_text(yaml.safe_dump(d, sort_keys=False))
