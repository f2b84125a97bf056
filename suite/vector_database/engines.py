"""The vector_database engines: DiskANN (embedded, the default) and Milvus (embedded standalone, or a
running server with --uri). suite/vector_database/worker.py runs in their venv; suite.kinds.registry
hands ENGINES to suite.engines.registry when it registers the kind (`suite engine install diskann`,
`suite engine list`).

Pins: what `pip install` resolved on 2026-11-25 for CPython 3.11; diskannpy 0.7.0 pins numpy < 2, pymilvus
2.3.x needs setuptools < 70 and marshmallow < 4 (environs 9), so neither can share our environment.
"""

from suite.engines.registry import Engine

DISKANN = Engine(
    name="diskann", version="0.7.0",
    description="DiskANN (diskannpy on PyPI): the embedded disk-resident index, no server",
    first=("diskannpy==0.7.0",), packages=("numpy==1.25.0",),
    executable="python", framework="diskannpy StaticDiskIndex (libaio reads of the index file)",
    download="about 400 MB")
MILVUS = Engine(
    name="milvus", version="2.3.5",
    description="Milvus 2.3.5 standalone, embedded (the milvus PyPI package), and its client pymilvus 2.3.8",
    first=("milvus==2.3.5", "pymilvus==2.3.8"),
    packages=("setuptools==69.5.1", "marshmallow==3.26.2", "environs==9.5.0", "grpcio==1.60.0",
              "protobuf==7.36.2", "numpy==2.4.6", "pandas==3.1.1", "ujson==6.1.0", "minio==7.2.20",
              "requests==2.34.2", "azure-storage-blob==12.31.1", "python-dotenv==1.2.4", "pyarrow==26.0.1"),
    executable="milvus-server", framework="pymilvus Collection.search against the milvus server",
    download="about 500 MB")

ENGINES = (DISKANN, MILVUS)


def named(name: str) -> Engine:
    """The engine `--engine NAME` names (one of ENGINES; the command line offers no other)."""
    return next(e for e in ENGINES if e.name == name)
