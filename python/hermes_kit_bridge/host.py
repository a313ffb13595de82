"""One plugin's process: import it, run its register(ctx), and serve the runtime's calls into it."""

import importlib.util
import io
import os
import sys
import threading
import types

from . import PROTOCOL
from .channel import Channel, RemoteError
from .codec import Refs, decode, encode, public_attrs
from .context import PluginContext


class JsFunction:
    """A runtime function (next_call, a provider callback) callable from Python."""

    def __init__(self, bridge, js_id, name):
        self._hermes_js_id = js_id
        self._bridge = bridge
        self.__name__ = name or "next_call"

    def __call__(self, *args):
        return self._bridge.call_js(self._hermes_js_id, list(args))


class _LogWriter(io.TextIOBase):
    """print() and stray writes of the plugin go to the runtime's log, a line at a time."""

    def __init__(self, bridge, level):
        self._bridge = bridge
        self._level = level
        self._buf = ""

    def writable(self):
        return True

    def write(self, text):
        self._buf += text
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            if line.strip():
                self._bridge.log(self._level, line)
        return len(text)


def _route_logging(bridge):
    """The plugin's `logging` records go to the runtime's log; set up only once a plugin has imported logging."""
    logging = sys.modules.get("logging")
    if logging is None or getattr(bridge, "_logging_routed", False):
        return
    bridge._logging_routed = True

    class Handler(logging.Handler):
        def emit(self, record):
            try:
                text = record.getMessage()
                if record.exc_info:
                    text += "\n" + logging.Formatter().formatException(record.exc_info)
                bridge.log(record.levelname.lower(), text, record.name)
            except Exception:  # noqa: BLE001 - a log line must never fail a callback
                pass

    root = logging.getLogger()
    root.handlers[:] = [Handler(logging.DEBUG)]
    root.setLevel(logging.INFO)


class Bridge:
    def __init__(self, fd, plugin):
        self.plugin = plugin
        self.refs = Refs()
        self.module = None
        self.ctx = None
        self._loop = None
        self._loop_lock = threading.Lock()
        self.channel = Channel(fd, self.handle)

    # ---- Python → runtime ----

    def ctx_call(self, method, args):
        return self._decode(self.channel.call("ctx", {"method": method, "args": encode(args, self.refs)}))

    def call_js(self, js_id, args):
        return self._decode(self.channel.call("invoke_js", {"fn": js_id, "args": encode(args, self.refs)}))

    def log(self, level, text, logger=None):
        self.channel.notify("log", {"level": level, "msg": text, "logger": logger})

    def _decode(self, value):
        return decode(value, self.refs, lambda js_id, name: JsFunction(self, js_id, name))

    # ---- runtime → Python ----

    def handle(self, method, params):
        if method == "invoke":
            fn = self.refs.get(params["fn"])
            args = self._decode(params.get("args") or [])
            kwargs = self._decode(params.get("kwargs") or {})
            return encode(self.settle(fn(*args, **kwargs)), self.refs)
        if method == "invoke_method":
            obj = self.refs.get(params["obj"])
            fn = getattr(obj, params["method"])
            args = self._decode(params.get("args") or [])
            result = encode(self.settle(call_with_options(fn, args)), self.refs)
            return {"r": result, "attrs": public_attrs(obj, self.refs)}
        if method == "check":
            return self.run_check(self.refs.get(params["fn"]))
        if method == "load":
            return self.load()
        if method == "register":
            return self.register(params)
        if method == "release":
            self.refs.drop(params.get("ids") or [])
            return None
        if method == "shutdown":
            self.channel.wait_idle(float(params.get("grace", 2)))
            sys.stdout.flush()
            os._exit(0)
        raise ValueError(f"unknown bridge method {method!r}")

    def settle(self, result):
        """An ``async def`` callback's coroutine runs on the bridge's event loop; the caller waits for it."""
        if not hasattr(result, "__await__"):
            return result
        loop = self._event_loop()
        self.channel.yield_reader()
        import asyncio

        return asyncio.run_coroutine_threadsafe(_await(result), loop).result()

    def _event_loop(self):
        with self._loop_lock:
            if self._loop is None:
                import asyncio  # only plugins with async def callbacks pay for it

                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True, name="hermes-bridge-loop").start()
            return self._loop

    def run_check(self, fn):
        try:
            return bool(self.settle(fn()))
        except Exception as exc:  # noqa: BLE001 - a failing check_fn hides the tool, as in the original
            self.log("debug", f"check_fn raised {type(exc).__name__}: {exc}")
            return False

    def load(self):
        p = self.plugin
        name = "hermes_plugins." + p["key"].replace("/", "__").replace("-", "_")
        if "hermes_plugins" not in sys.modules:
            pkg = types.ModuleType("hermes_plugins")
            pkg.__path__ = []
            sys.modules["hermes_plugins"] = pkg
        for stale in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[stale]
        init = os.path.join(p["path"], "__init__.py")
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[p["path"]])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        self.module = module
        _route_logging(self)
        return {"module": name, "has_register": callable(getattr(module, "register", None))}

    def register(self, info):
        register = getattr(self.module, "register", None)
        if not callable(register):
            raise AttributeError("no register() function")
        self.ctx = PluginContext(self, info)
        self.settle(register(self.ctx))
        _route_logging(self)
        return True


def call_with_options(fn, args):
    """The runtime passes options as a trailing object (``prefetch(query, {session_id})``); Python methods of the
    original take them as keywords (``prefetch(query, *, session_id="")``): spread it when the signature takes it."""
    if not args or not isinstance(args[-1], dict):
        return fn(*args)
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*args)
    *head, options = args
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    named = {p.name for p in sig.parameters.values() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if not (takes_any or (options and set(options) <= named)):
        return fn(*args)
    try:
        sig.bind(*head, **options)
    except TypeError:
        return fn(*args)
    return fn(*head, **options)


async def _await(awaitable):
    return await awaitable


def _add_site(path):
    """The plugin's environment before the interpreter's own site-packages (as in a venv), after the stdlib."""
    import site

    before = list(sys.path)
    site.addsitedir(path)
    added = [p for p in sys.path if p not in before]
    base = set(site.getsitepackages() + [site.getusersitepackages()])
    at = next((i for i, p in enumerate(before) if p in base), len(before))
    sys.path[:] = before[:at] + added + before[at:]


def serve(plugin):
    """The child's whole life: set up paths and logging, say ready, serve until the runtime closes the socket."""
    for path in plugin.get("site") or []:
        _add_site(path)
    bridge = Bridge(plugin["fd"], plugin)
    sys.stdout = _LogWriter(bridge, "info")
    sys.stderr = _LogWriter(bridge, "warn")
    _route_logging(bridge)
    version = ".".join(str(v) for v in sys.version_info[:3])
    ready = {"pid": os.getpid(), "python": sys.executable, "version": version, "protocol": PROTOCOL}
    bridge.channel.notify("ready", ready)
    bridge.channel.run()


__all__ = ["Bridge", "JsFunction", "RemoteError", "serve"]
