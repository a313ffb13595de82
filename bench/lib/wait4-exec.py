"""Run a command and append its CPU time (user + system, its waited-for children included) to a file.

Used as HERMES_PYTHON's wrapper by bench/python-bridge.bench.mjs: the command keeps the file descriptors
it was given (the bridge's sockets), and this wrapper's own CPU is not counted.
"""

import os
import sys

out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
with open(out, "a") as f:
    f.write(f"{(ru.ru_utime + ru.ru_stime) * 1000:.3f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
