"""The enforced-run harness every storage kind runs under: the results dir claimed atomically
(resultsdir), the loop of runs with the cache clear, the memory cgroup and signal handling
(enforced), mpiexec's argv and the launch of its ranks (mpi). It sits below suite.training.run and
suite.checkpointing and imports neither."""
