"""The engine training drives besides its own runner: DLIO, the MLPerf Storage reference code
(`suite run --engine dlio`, `suite datagen --engine dlio`; suite/training/run/dlio.py).

DLIO's entry lives here, in the one kind that runs it: checkpointing refuses `--engine dlio` (the
release `suite engine install dlio` builds has no LLM checkpointing: suite/checkpointing/command.py),
and no kind may import another, so an engine two kinds drove would sit in a layer below instead.
suite.kinds.registry hands ENGINES to suite.engines.registry when it registers the kind, so
`suite engine install dlio` and `suite engine list` know it without naming training.
"""

from suite.engines.registry import Engine

TFRECORD2IDX = '''#!{python}
"""tfrecord2idx, as DALI's (which the TensorFlow-CPU path lacks; DLIO 2.0.0 calls it after writing
each TFRecord file): one line "<offset> <record bytes>" per record. Written by suite engine install."""
import struct
import sys

with open(sys.argv[1], "rb") as f, open(sys.argv[2], "w") as out:
    offset = 0
    while True:
        head = f.read(12)
        if len(head) < 12:
            break
        (length,) = struct.unpack("<Q", head[:8])
        f.seek(length + 4, 1)
        out.write(f"{{offset}} {{length + 16}}\\n")
        offset += length + 16
'''

# Pins: what `pip install` resolved on 2026-11-22 for CPython 3.11 (x86_64 manylinux wheels).
DLIO = Engine(
    name="dlio", version="2.0.0",
    description="DLIO, the MLPerf Storage reference benchmark (dlio_benchmark on PyPI), TensorFlow-CPU path",
    first=("dlio_benchmark==2.0.0",),
    packages=("mpich==5.0.2", "mpi4py==4.1.2", "hydra-core==1.3.8", "omegaconf==2.3.1", "pandas==3.1.1",
              "psutil==7.2.2", "h5py==3.14.0", "Pillow==13.0.0", "PyYAML==6.0.3", "numpy==2.4.6",
              "pydftracer==1.0.2", "tensorflow-cpu==2.21.0"),
    executable="dlio_benchmark",
    framework="tensorflow (tensorflow-cpu), reader.data_loader=tensorflow",
    download="about 1.7 GB",
    shims=(("tfrecord2idx", TFRECORD2IDX),),   # DLIO's TFRecord generator calls it; DALI is not installed
)

ENGINES = (DLIO,)
