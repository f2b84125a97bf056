"""The fork launcher from several stream threads at once: every child's own exit status comes back.

multiprocessing's forkserver reads a child's exit status from a pipe; two threads reading it
(one joining, one starting the next child, which polls the earlier ones) left one with EOF and
exit 255 -- a use case "failed" with no message, about one run in ten on a loaded CI machine.
"""

import threading

from suite.tpcx_ai.launch import Launcher


def test_fork_children_started_and_reaped_from_three_threads_keep_their_exit_status(tmp_path):
    launcher = Launcher("fork")
    codes: list[int] = []

    def stream(n: int) -> None:
        for i in range(25):      # a job with no arguments: argparse's usage error, exit 2
            codes.append(launcher.run([], tmp_path / f"{n}-{i}.err", f"uc0{n} train").returncode)

    threads = [threading.Thread(target=stream, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(codes)) == [2] and len(codes) == 75
