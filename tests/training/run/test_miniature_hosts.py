"""A miniature across hosts (`suite run --hosts a,b` without --data-dir) is sized from the memory its
ranks may cache on each host (its cgroup: --memory-limit, else the miniature's own), not from the hosts'
MemTotal: two 512 GiB hosts would otherwise ask 5 TiB of 'miniature' (docs/multi-host.md)."""

from suite.harness.hosts import Cluster, Host
from suite.sizes import GIB
from suite.training import workloads
from suite.training import datasize
from suite.training.run import prepare


def _cluster(mem_total_bytes: int) -> Cluster:
    return Cluster(None, [Host(name=f"h{k}", hostname=f"h{k}", ranks=[2 * k, 2 * k + 1], mem_total_bytes=mem_total_bytes,
                               cpu_count=64, cgroup_version="v2", cgroup_reason="", drop_caches_writable=True,
                               memory_bytes=mem_total_bytes) for k in (1, 2)])


def test_a_miniature_across_hosts_is_sized_from_its_cgroup_on_each_host_not_their_memtotal():
    cluster = _cluster(512 * GIB)
    assert cluster.total_memory_bytes == 1024 * GIB                # what a dataset of the rules is sized from
    memory = prepare.miniature_memory(cluster, prepare.MINIATURE_MEMORY_BYTES)
    assert memory == 2 * GIB and [h.memory_bytes for h in cluster.hosts] == [GIB, GIB]
    unet = workloads.find("unet3d", "h100")
    required = datasize.compute(unet, 4, 1, memory, "v1.0")
    files = prepare.miniature_files(unet, 4, required, None)
    few_steps = prepare.MINIATURE_MIN_STEPS * unet.batch_size * 4                # 4 steps of 4 ranks: 112 files
    assert files == max(required.memory_rule_samples, few_steps), files         # 5x 2 GiB or a few steps, not 5 TiB
    big = datasize.compute(unet, 4, 1, _cluster(512 * GIB).total_memory_bytes, "v1.0")
    assert prepare.miniature_files(unet, 4, big, None) > 20 * files
