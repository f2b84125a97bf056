"""The checkpointing kind's workload files (`benchmark: checkpointing`: llama3-*), found by the
catalogue of every workload file (suite.storage.workloads) and held to the kind's own schema
(suite/checkpointing/schemas/checkpoint-workload.schema.json); suite.checkpointing.model reads them."""

from suite.storage import workloads as catalogue

CHECKPOINTING = "checkpointing"      # a checkpointing workload file's `benchmark:`
SCHEMA = "checkpoint-workload"


def names() -> list[str]:
    """The checkpointing workloads."""
    return catalogue.names(CHECKPOINTING)


def load(name: str) -> dict:
    """The validated checkpointing workload file `name`."""
    return catalogue.load(name, SCHEMA, CHECKPOINTING)
