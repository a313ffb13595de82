"""hermes-kit's host for plugins written for the original Hermes (Python).

The Node runtime starts ``python3 -m hermes_kit_bridge SPEC``; the supervisor forks one process per
plugin, and each child imports its plugin and serves the framed JSON-RPC channel on the socket the
runtime gave it.  See docs/python-plugins.md in hermes-kit.
"""

PROTOCOL = 1
MIN_PYTHON = (3, 10)
