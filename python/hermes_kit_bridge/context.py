"""The ``ctx`` a Python plugin's ``register(ctx)`` receives: the original's API, run by hermes-kit's runtime."""

import types

from .codec import Callback


class Handle:
    """What a registration returns: ``dispose()`` undoes it, as in the original."""

    def __init__(self, bridge, wire):
        self._bridge = bridge
        self._id = wire.get("$reg")
        self.kind = wire.get("kind")
        self.key = wire.get("key")
        self.plugin_key = wire.get("plugin_key")

    def dispose(self):
        self._bridge.ctx_call("dispose", [self._id])

    def __repr__(self):
        return f"<hermes-kit registration {self.kind} {self.key!r}>"


def _namespace(value):
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: _namespace(v) for k, v in value.items() if k.isidentifier()})
    return value


class _Remote:
    """``ctx.llm``, ``ctx.state``, ``ctx.platform_actions``: attribute calls forwarded under a path."""

    def __init__(self, bridge, path, kwargs_as_options=False):
        self._bridge = bridge
        self._path = path
        self._options = kwargs_as_options

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            if self._options:
                return self._bridge.ctx_call(f"{self._path}.{name}", [*args, kwargs] if kwargs else list(args))
            if kwargs:
                return self._bridge.ctx_call(f"{self._path}.{name}", [*args, kwargs])
            return self._bridge.ctx_call(f"{self._path}.{name}", list(args))

        return call


class _Llm:
    def __init__(self, bridge):
        self._bridge = bridge

    def complete(self, messages, **overrides):
        return self._bridge.ctx_call("llm.complete", [messages, overrides])

    def complete_structured(self, messages=None, **kwargs):
        return self._bridge.ctx_call("llm.complete_structured", [{"messages": messages, **kwargs}])

    async def acomplete(self, messages, **overrides):
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(None, lambda: self.complete(messages, **overrides))

    async def acomplete_structured(self, messages=None, **kwargs):
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: self.complete_structured(messages, **kwargs))


class PluginContext:
    def __init__(self, bridge, info):
        self._bridge = bridge
        self.plugin_id = info["key"]
        self.key = info["key"]
        self.name = info["name"]
        self.profile_name = info.get("profile_name", "default")
        self.home = info.get("home")
        self._manifest = info.get("manifest") or {}
        self.manifest = _namespace(self._manifest)
        self.llm = _Llm(bridge)
        self.state = _Remote(bridge, "state")
        self.platform_actions = _Remote(bridge, "platform_actions")

    # ---- probes ----

    def has_plugin(self, plugin_id):
        return bool(self._bridge.ctx_call("has_plugin", [plugin_id]))

    def has_capability(self, capability):
        return bool(self._bridge.ctx_call("has_capability", [capability]))

    # ---- tools ----

    def register_tool(
        self,
        name,
        toolset,
        schema,
        handler,
        check_fn=None,
        requires_env=None,
        is_async=False,
        description="",
        emoji="",
        override=False,
    ):
        spec = {
            "name": name,
            "toolset": toolset,
            "schema": schema,
            "handler": Callback(handler, "tool"),
            "requires_env": list(requires_env or []),
            "description": description or None,
            "emoji": emoji or None,
            "override": bool(override),
        }
        if check_fn is not None:
            spec["check_fn"] = {"$check": Callback(check_fn, "args"), "value": self._bridge.run_check(check_fn)}
        return self._reg("register_tool", [spec])

    def dispatch_tool(self, name, args=None, **kwargs):
        return self._bridge.ctx_call("dispatch_tool", [name, args or {}, kwargs])

    # ---- hooks, middleware, events ----

    def register_hook(self, name, callback):
        return self._reg("register_hook", [name, Callback(callback, "kwargs")])

    def register_middleware(self, kind, callback):
        return self._reg("register_middleware", [kind, Callback(callback, "kwargs")])

    def emit(self, event, payload=None):
        return self._bridge.ctx_call("emit", [event, payload])

    def subscribe(self, event, callback):
        self._bridge.ctx_call("subscribe", [event, Callback(callback, "kwargs")])

    def on_unload(self, callback):
        return self._reg("on_unload", [Callback(callback, "args")])

    # ---- commands and skills ----

    def register_command(self, name, handler, description="", args_hint="", argument_mode=None):
        return self._reg("register_command", [name, Callback(handler, "args"), description, args_hint, argument_mode])

    def register_cli_command(self, name, help="", setup_fn=None, handler_fn=None, description=""):  # noqa: A002
        def run(argv):
            import argparse

            parser = argparse.ArgumentParser(prog=f"hermes {name}", description=description or help)
            if setup_fn is not None:
                setup_fn(parser)
            try:
                ns = parser.parse_args(list(argv))
            except SystemExit as exc:
                why = f"hermes {name}: invalid arguments (exit {exc.code}); see hermes {name} --help"
                raise ValueError(why) from None
            fn = handler_fn or getattr(ns, "func", None)
            return None if fn is None else fn(ns)

        return self._reg("register_cli_command", [name, help, None, Callback(run, "cli"), description])

    def register_skill(self, name, path, description="", frontmatter=None):
        return self._reg("register_skill", [name, str(path), description, frontmatter or {}])

    def skill_view(self, qualified_name):
        return self._bridge.ctx_call("skill_view", [qualified_name])

    # ---- config and messages ----

    def get_config(self, key, default=None):
        return self._bridge.ctx_call("get_config", [key, default])

    def set_config(self, key, value):
        self._bridge.ctx_call("set_config", [key, value])

    def inject_message(self, content, role="user", *, session_key=None):
        return bool(self._bridge.ctx_call("inject_message", [content, role, {"session_key": session_key}]))

    def call_mcp(self, server, tool, args=None, timeout=30):
        return self._bridge.ctx_call("call_mcp", [server, tool, args if args is not None else {}, timeout])

    # ---- approvals, providers, prompt sections ----

    def register_approval_transport(self, name, present):
        self._bridge.ctx_call("register_approval_transport", [name, Callback(present, "args")])

    def register_platform(self, name, label, adapter_factory, check_fn=None, **extra):
        factory = Callback(adapter_factory, "args")
        check = Callback(check_fn, "args") if check_fn is not None else None
        return self._reg("register_platform", [name, label, factory, check, extra])

    def register_system_prompt_section(self, section_id, content, position="after_memory", max_chars=4000):
        value = Callback(content, "args") if callable(content) else content
        options = {"position": position, "max_chars": max_chars}
        return self._reg("register_system_prompt_section", [section_id, value, options])

    def _reg(self, method, args):
        wire = self._bridge.ctx_call(method, args)
        return Handle(self._bridge, wire) if isinstance(wire, dict) and "$reg" in wire else wire


def _provider_method(method):
    def register(self, provider):
        return self._reg(method, [provider])

    register.__name__ = method
    return register


def add_provider_methods(names):
    """ctx.register_*_provider for each provider kind the runtime has (the runtime sends the names)."""
    for name in names:
        setattr(PluginContext, name, _provider_method(name))
