"""Values across the bridge: JSON, plus references to functions and objects that stay on their side.

``{"$py": id}`` is a Python callable Node may invoke; ``{"$pyobj": id, "attrs", "methods"}`` is a
Python object (a provider) whose methods Node may invoke; ``{"$js": id}`` is a runtime function
(``next_call``, a provider callback) Python may call.
"""

import itertools
import os
import sys


class Callback:
    """A Python callable handed to the runtime, with how the runtime calls it (args, kwargs, tool, cli)."""

    __slots__ = ("fn", "conv")

    def __init__(self, fn, conv):
        self.fn = fn
        self.conv = conv


class Refs:
    """The Python callables and objects Node holds references to, by id."""

    def __init__(self):
        self._ids = itertools.count(1)
        self._by_id = {}

    def add(self, obj):
        rid = next(self._ids)
        self._by_id[rid] = obj
        return rid

    def get(self, rid):
        return self._by_id[rid]

    def drop(self, ids):
        for rid in ids:
            self._by_id.pop(rid, None)


def _public_methods(obj):
    names = []
    for name in dir(type(obj)):
        if name.startswith("_"):
            continue
        if callable(getattr(type(obj), name, None)):
            names.append(name)
    return names


def encode(value, refs, depth=0):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if depth > 64:
        return None
    if isinstance(value, dict):
        return {str(k): encode(v, refs, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [encode(v, refs, depth + 1) for v in value]
    if isinstance(value, Callback):
        return {"$py": refs.add(value.fn), "conv": value.conv, "name": _name_of(value.fn)}
    js_id = getattr(value, "_hermes_js_id", None)
    if js_id is not None:
        return {"$js": js_id}
    enum = sys.modules.get("enum")
    if enum is not None and isinstance(value, enum.Enum):
        return encode(value.value, refs, depth + 1)
    if isinstance(value, (bytes, bytearray)):
        import base64

        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(type(value), "__dataclass_fields__") and not isinstance(value, type) and not _public_methods(value):
        import dataclasses

        return encode(dataclasses.asdict(value), refs, depth + 1)
    if isinstance(value, type) or _is_function(value) or (callable(value) and not _public_methods(value)):
        return {"$py": refs.add(value), "name": _name_of(value)}
    methods = _public_methods(value)
    if methods:
        attrs = public_attrs(value, refs, depth)
        return {"$pyobj": refs.add(value), "attrs": attrs, "methods": methods, "name": _name_of(value)}
    if hasattr(value, "__dict__"):
        return encode({k: v for k, v in vars(value).items() if not k.startswith("_")}, refs, depth + 1)
    return str(value)


def public_attrs(obj, refs, depth=0):
    """An object's public data attributes and properties (a provider's name, an adapter's connected)."""
    attrs = {}
    for k, v in (vars(obj).items() if hasattr(obj, "__dict__") else ()):
        if not k.startswith("_") and not callable(v):
            attrs[k] = encode(v, refs, depth + 1)
    for k in dir(type(obj)):
        cls_attr = getattr(type(obj), k, None)
        if k.startswith("_") or k in attrs:
            continue
        if isinstance(cls_attr, property) or isinstance(cls_attr, (str, int, float, bool)):
            try:
                attrs[k] = encode(getattr(obj, k), refs, depth + 1)
            except Exception:  # noqa: BLE001 - a failing property is left out
                pass
    return attrs


def _is_function(value):
    return callable(value) and (
        hasattr(value, "__code__")
        or hasattr(value, "__func__")
        or type(value).__name__ in ("partial", "builtin_function_or_method")
    )


def _name_of(value):
    mod = getattr(value, "__module__", None) or type(value).__module__
    qual = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"{mod}.{qual}"


def decode(value, refs, make_js):
    if isinstance(value, dict):
        if "$js" in value and len(value) <= 2:
            return make_js(value["$js"], value.get("name"))
        if "$py" in value and len(value) <= 3:
            return refs.get(value["$py"])
        if "$bytes" in value and len(value) == 1:
            import base64

            return base64.b64decode(value["$bytes"])
        return {k: decode(v, refs, make_js) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v, refs, make_js) for v in value]
    return value
