# Process meter for bench/lib/process-pairs.mjs: reads one JSON request per line on stdin
# ({"argv", "env", "cwd", "out", "err"}), runs it with posix_spawn, reaps it with wait4 and prints
# one JSON line: exit status, the child's user and system CPU time in microseconds (all threads and
# the children it waited for, from the kernel's rusage), its peak RSS in KiB and the wall time.
# Python only starts and stops the child: its own CPU is never in the numbers.
import json
import os
import shutil
import sys
import time

for line in sys.stdin:
    req = json.loads(line)
    argv = req["argv"]
    path = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=req["env"].get("PATH"))
    if path is None:
        print(json.dumps({"error": "not found: " + argv[0]}), flush=True)
        continue
    os.chdir(req["cwd"])
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, req["out"], flags, 0o600),
        (os.POSIX_SPAWN_OPEN, 2, req["err"], flags, 0o600),
    ]
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(path, argv, req["env"], file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter_ns() - t0
    code = os.waitstatus_to_exitcode(status)
    print(
        json.dumps(
            {
                "status": code,
                "user_us": round(ru.ru_utime * 1e6),
                "sys_us": round(ru.ru_stime * 1e6),
                "maxrss_kib": ru.ru_maxrss,
                "wall_ns": wall,
            }
        ),
        flush=True,
    )
