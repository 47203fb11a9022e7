"""Children that die with the test that started them (child_process.h)."""

import threading


def die_with_parent(argv):
    """argv run under setpriv (util-linux) --pdeathsig KILL: the kernel kills
    the child when the thread that started it ends, however the test ends
    (ctest kills a test on a timeout with SIGKILL). Only the main thread,
    which lives as long as the test, asks for it: a child started from a
    helper thread would die with that thread. kq-test-reaper, which every
    test runs under, ends the others."""
    if threading.current_thread() is not threading.main_thread():
        return list(argv)
    return ["setpriv", "--pdeathsig", "KILL", "--", *argv]
