"""The checkpoint of a Llama 3 model as Megatron-DeepSpeed lays it out: which files each rank
writes, and how many bytes (the reference's DLIO checkpointing, MLPerf Storage v2.0 §2.2).

Parameters (per transformer layer: two norms, Q + K + V with grouped KV heads, the output
projection, a gated MLP of three matrices; plus the embedding, the LM head and a final norm).
Model state is `model_datatype` (fp16); the optimizer keeps three fp32 copies (master weights,
momentum, variance) of each rank's 1/(TP·PP·DP) of the parameters, each with a 5·hidden tail.

Ranks: tp = r % TP, pp = (r // TP) % PP, dp = r // (TP·PP), mp = r % (TP·PP). Layers 1..L are
split over the pipeline stages (the first `L % PP` stages one more); stage 0 also holds layer 0
(the embedding), the last stage L+1 (LM head) and L+2 (final norm). Matrices are split over TP.
ZeRO 3 shards the model state over DP too, each rank writing one model file; ZeRO 1 keeps the
model state whole per DP replica and only DP rank 0 writes it (one file per layer when PP > 1).
`subset` mode (node-local storage): the first N ranks of the full TP·PP·DP layout, so N of the
files; defined for the 8B model only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from suite.errors import WorkloadError

DTYPE_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}
MODES = ("default", "subset")


@dataclass(frozen=True)
class Transformer:
    num_layers: int
    hidden_size: int
    ffn_hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    vocab_size: int
    model_datatype: str = "fp16"
    optimizer_datatype: str = "fp32"

    @property
    def kv_dim(self) -> int:
        """Columns of K (and of V): head size x KV heads, the head size rounded down as the reference
        does (1T: 25872 / 192 = 134.75 -> 134)."""
        return self.hidden_size // self.num_attention_heads * self.num_kv_heads

    def layer_parameters(self) -> int:
        h = self.hidden_size
        return 2 * h + h * (h + 2 * self.kv_dim) + h * h + 3 * h * self.ffn_hidden_size

    def parameters(self) -> int:
        h = self.hidden_size
        return 2 * self.vocab_size * h + self.num_layers * self.layer_parameters() + h


@dataclass(frozen=True)
class Parallelism:
    tensor: int
    pipeline: int
    data: int
    zero_stage: int

    @property
    def model_parallel(self) -> int:
        return self.tensor * self.pipeline

    @property
    def world(self) -> int:
        return self.tensor * self.pipeline * self.data


@dataclass(frozen=True)
class Shard:
    """One file of one checkpoint: its name inside global_epoch1_step<k>/ and its bytes."""

    name: str
    nbytes: int


@dataclass(frozen=True)
class Checkpoint:
    """A workload's checkpoint for `processes` ranks in `mode` (the miniature when miniature)."""

    workload: str
    model: Transformer
    parallelism: Parallelism       # data = the DP degree the layout uses
    processes: int                 # ranks that write (subset: fewer than the layout's world)
    mode: str
    miniature: bool

    def rank_shards(self, rank: int) -> list[Shard]:
        """The files rank `rank` writes (and later reads) for one checkpoint."""
        p, m = self.parallelism, self.model
        tp, pp = p.tensor, p.pipeline
        pp_rank, dp_rank, mp_rank = (rank // tp) % pp, rank // p.model_parallel, rank % p.model_parallel
        mbytes = DTYPE_BYTES[m.model_datatype]
        out = []
        layers = self._layer_sizes(pp_rank)
        if p.zero_stage == 3:
            out.append(Shard(f"zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_model_states.pt",
                             sum(n for _, n in layers) * mbytes))
        elif dp_rank == 0 and layers:
            if pp > 1:
                out += [Shard(f"layer_{i}-model_{mp_rank}_model_states.pt", n * mbytes) for i, n in layers]
            else:
                out.append(Shard(f"model_{mp_rank}_model_states.pt", sum(n for _, n in layers) * mbytes))
        per_rank = m.parameters() // p.world
        opt = (3 * per_rank + 3 * 5 * m.hidden_size) * DTYPE_BYTES[m.optimizer_datatype]
        out.append(Shard(f"zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_optim_states.pt", opt))
        return out

    def _layer_sizes(self, pp_rank: int) -> list[tuple[int, int]]:
        """[(layer index, parameters this rank holds of it)] for a rank of pipeline stage pp_rank."""
        p, m = self.parallelism, self.model
        h, tp = m.hidden_size, p.tensor
        shard = p.data if p.zero_stage == 3 else 1
        lo, hi = self._stage_layers(pp_rank)
        out = []
        for i in range(lo, hi + 1):
            if i in (0, m.num_layers + 1):
                parts = [h * m.vocab_size // tp // shard]
            elif i == m.num_layers + 2:
                parts = [h // shard]
            else:
                parts = [h // shard, h * (h + 2 * m.kv_dim) // tp // shard, h * h // tp // shard, h // shard,
                         h * 2 * m.ffn_hidden_size // tp // shard, h * m.ffn_hidden_size // tp // shard]
            out.append((i, sum(parts)))
        return out

    def _stage_layers(self, pp_rank: int) -> tuple[int, int]:
        pp, n = self.parallelism.pipeline, self.model.num_layers
        per, extra = divmod(n, pp)
        if pp_rank < extra:
            lo = pp_rank * (per + 1) + 1
            hi = lo + per
        else:
            lo = extra * (per + 1) + (pp_rank - extra) * per + 1
            hi = lo + per - 1
        if pp_rank == pp - 1:
            hi = n + 2
        if pp_rank == 0:
            lo = 0
        return lo, hi

    @cached_property
    def rank_bytes(self) -> tuple[int, ...]:
        return tuple(sum(s.nbytes for s in self.rank_shards(r)) for r in range(self.processes))

    @property
    def total_bytes(self) -> int:
        """Bytes of one checkpoint as these `processes` ranks write it."""
        return sum(self.rank_bytes)

    @property
    def files_per_checkpoint(self) -> int:
        return sum(len(self.rank_shards(r)) for r in range(self.processes))


def from_workload(doc: dict, processes: int, mode: str = "default", miniature: bool = False) -> Checkpoint:
    """The checkpoint of workload file `doc` (workloads.load) for `processes` ranks.

    default: the layout's world is `processes` (closed: exactly TP·PP·DP; open: a multiple of TP·PP,
    DP = processes / (TP·PP)). subset: the table's TP·PP·DP layout, of which `processes` ranks write."""
    name = doc["name"]
    if mode not in MODES:
        raise WorkloadError(f"--mode: expected one of {', '.join(MODES)}, got {mode!r}")
    model = Transformer(**doc["model"])
    if miniature:
        model = replace(model, **(doc.get("miniature") or {}).get("model", {}))
    par = Parallelism(**doc["parallelism"])
    if mode == "subset":
        if not doc.get("subset_mode"):
            raise WorkloadError(f"--mode subset: expected a model whose subset mode is defined (llama3-8b only, "
                                f"guidelines 2.2.2), got {name}")
        if processes > par.world:
            raise WorkloadError(f"--accelerators: expected at most {par.world} in subset mode (a fraction of the "
                                f"{par.world}-rank checkpoint), got {processes}")
        return Checkpoint(name, model, par, processes, mode, miniature)
    if processes % par.model_parallel:
        raise WorkloadError(f"--accelerators: expected a multiple of TP x PP = {par.model_parallel} for {name}, "
                            f"got {processes}")
    return Checkpoint(name, model, replace(par, data=processes // par.model_parallel), processes, mode, miniature)
