"""``python3 -m hermes_kit_bridge SPEC``: start one process per plugin from one interpreter start (fork)."""

import json
import os
import sys

from . import MIN_PYTHON


def main():
    if sys.version_info < MIN_PYTHON:
        have = ".".join(str(v) for v in sys.version_info[:3])
        need = ".".join(str(v) for v in MIN_PYTHON)
        sys.stderr.write(f"hermes_kit_bridge: Python {need} or newer is needed; {sys.executable} is {have}\n")
        sys.exit(3)
    spec = json.loads(sys.argv[1])
    plugins = spec["plugins"]
    # Imported before fork, so every child starts with them loaded (one interpreter start for all plugins).
    from . import host
    from .context import add_provider_methods
    import gc

    add_provider_methods(spec["provider_methods"])

    # Objects made so far are never collected in the children: fewer copy-on-write pages after fork.
    gc.freeze()

    children = {}
    for plugin in plugins:
        pid = os.fork()
        if pid == 0:
            for other in plugins:
                if other["fd"] != plugin["fd"]:
                    os.close(other["fd"])
            try:
                host.serve(plugin)
            finally:
                os._exit(70)
        children[pid] = plugin
    for plugin in plugins:
        os.close(plugin["fd"])
    while children:
        try:
            pid, _status = os.wait()
        except ChildProcessError:
            break
        children.pop(pid, None)


if __name__ == "__main__":
    main()
