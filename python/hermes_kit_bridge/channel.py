"""Newline-framed JSON-RPC over one socket, both directions, with calls nested in either direction.

A request is ``{"id", "m", "p"}``, a notification has no ``id``, a reply is ``{"id", "r"}`` or
``{"id", "e"}``.  Requests from Node run inline on the thread that reads the socket.  When that thread
must wait for Node (a ctx call, next_call) it goes on reading until its answer comes: answers are
delivered, and a request from Node arriving meanwhile is served on a new thread, so the common case
needs no thread at all.  An ``async def`` callback hands reading to a new thread while it runs, and so
does a request served inline for longer than ``SLOW_SECONDS`` (a slow tool must not hold up the
plugin's hooks): a watcher thread looks ten times a second.
"""

SLOW_SECONDS = 0.1

import itertools
import json
import os
import threading
import time


class RemoteError(Exception):
    """An error the runtime returned for a call made from Python."""

    def __init__(self, type_name, message, code=None, js=None):
        super().__init__(message)
        self.type_name = type_name
        self.code = code
        # The runtime's own error object for this failure, re-thrown unchanged if Python lets it propagate.
        self.js = js

    def __str__(self):
        text = super().__str__()
        return f"{self.code}: {text}" if self.code else text


_ERROR_CLASSES = {}


def remote_error(type_name, message, code=None, js=None):
    """A RemoteError that is also the builtin exception it names (PermissionError, ValueError, …), so a plugin's
    ``except PermissionError`` catches what the runtime raised as one."""
    import builtins

    base = getattr(builtins, type_name or "", None)
    if not (isinstance(base, type) and issubclass(base, Exception)) or base is Exception:
        return RemoteError(type_name, message, code, js)
    cls = _ERROR_CLASSES.get(type_name)
    if cls is None:
        try:
            cls = type(type_name, (RemoteError, base), {})
        except TypeError:
            cls = RemoteError
        _ERROR_CLASSES[type_name] = cls
    return cls(type_name, message, code, js)


def describe_error(exc):
    """The wire form of a Python exception (type, message, traceback)."""
    import traceback  # only on the error path: a plain start never pays for it

    out = {
        "type": type(exc).__name__,
        "message": str(exc) if not isinstance(exc, SystemExit) else f"SystemExit({exc.code}) raised",
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }
    if isinstance(exc, RemoteError):
        if exc.js is not None:
            out["js"] = exc.js
        if exc.code:
            out["code"] = exc.code
    return out


class Channel:
    def __init__(self, fd, handler):
        self._fd = fd
        self._rfile = open(fd, "rb", buffering=1 << 16, closefd=False)  # noqa: SIM115 - lives as long as the process
        self._wlock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiting = {}
        self._handler = handler
        self._reader = None
        # Who reads, and what it serves inline since when: changed only under _role.
        self._role = threading.Lock()
        self._serving = None
        self._active = 0
        self._idle = threading.Condition()

    # ---- sending ----

    def send(self, msg):
        data = (json.dumps(msg, separators=(",", ":"), ensure_ascii=False, default=str) + "\n").encode()
        with self._wlock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    def notify(self, method, params):
        self.send({"m": method, "p": params})

    def call(self, method, params):
        """Ask Node and wait for the answer; Node's calls made meanwhile are still served."""
        rid = next(self._ids)
        slot = [threading.Event(), None]
        self._waiting[rid] = slot
        self.send({"id": rid, "m": method, "p": params})
        me = threading.get_ident()
        serving = None
        with self._role:
            reading = self._reader == me
            if reading:
                serving, self._serving = self._serving, None
        if reading:
            # Reading for the answer is not serving: the watcher must not hand reading away meanwhile.
            while slot[1] is None:
                self._read_one(nested=True)
            with self._role:
                self._serving = serving and (me, time.monotonic())
        else:
            slot[0].wait()
        msg = slot[1]
        if "e" in msg:
            e = msg["e"] or {}
            raise remote_error(e.get("type", "Error"), e.get("message", ""), e.get("code"), e.get("js"))
        return msg.get("r")

    # ---- reading ----

    def run(self):
        """Serve on the calling thread; returns never (the process exits when Node closes the socket)."""
        self._reader = threading.get_ident()
        threading.Thread(target=self._watch, daemon=True, name="hermes-bridge-watch").start()
        self._read_loop()
        threading.Event().wait()

    def yield_reader(self):
        """Before the reading thread blocks, another thread takes over reading."""
        with self._role:
            if self._reader == threading.get_ident():
                self._hand_off()

    def _hand_off(self):
        # Called under _role: the new thread owns reading from now on; the old one stops after its request.
        self._serving = None
        thread = threading.Thread(target=self._read_loop, daemon=True)
        self._reader = "handing-off"
        thread.start()

    def _watch(self):
        while True:
            time.sleep(SLOW_SECONDS)
            with self._role:
                if self._serving and time.monotonic() - self._serving[1] > SLOW_SECONDS:
                    self._hand_off()

    def _read_loop(self):
        me = threading.get_ident()
        with self._role:
            if self._reader == "handing-off":
                self._reader = me
        while True:
            with self._role:
                if self._reader != me:
                    return
            self._read_one(nested=False)

    def _read_one(self, nested):
        line = self._rfile.readline()
        if not line:
            os._exit(0)
        msg = json.loads(line)
        if "m" not in msg:
            slot = self._waiting.pop(msg.get("id"), None)
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        elif nested:
            # This thread waits for its own answer: a new request must not wait behind it.
            threading.Thread(target=self._serve, args=(msg,), daemon=True).start()
        else:
            me = threading.get_ident()
            with self._role:
                self._serving = (me, time.monotonic())
            try:
                self._serve(msg)
            finally:
                with self._role:
                    if self._serving and self._serving[0] == me:
                        self._serving = None

    def _serve(self, msg):
        rid = msg.get("id")
        with self._idle:
            self._active += 1
        try:
            result = self._handler(msg["m"], msg.get("p") or {})
            if rid is not None:
                self.send({"id": rid, "r": result})
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a plugin is a plugin failure too
            if rid is not None:
                self.send({"id": rid, "e": describe_error(exc)})
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def wait_idle(self, seconds):
        """Let calls in flight finish (on_unload callbacks) before the process exits."""
        with self._idle:
            self._idle.wait_for(lambda: self._active <= 1, timeout=seconds)
