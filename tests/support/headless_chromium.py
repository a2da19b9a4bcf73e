"""Headless Chromium driven over the DevTools protocol, with the standard library only.

The dashboard's browser tests (tests/python/test_dashboard_browser.py) and bench/web's page-load
figure use it: start the distribution's Chromium, open a page, wait for its load event, and
collect what the console saw (console.error calls, uncaught exceptions, Content-Security-Policy
violations, failed loads), then read the page through Runtime.evaluate (which the DevTools
protocol runs whatever the page's CSP says; the pages themselves carry no script).

The WebSocket client is the minimum RFC 6455 asks of a client: the upgrade handshake, masked
frames out, unmasked (possibly fragmented) frames in.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request


def find_chromium() -> str | None:
    """The Chromium to use: $KBENCH_CHROMIUM, else the distribution's."""
    wanted = os.environ.get("KBENCH_CHROMIUM")
    if wanted:
        return wanted if shutil.which(wanted) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _WebSocket:
    def __init__(self, url: str, timeout_s: float):
        match = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        if not match:
            raise ValueError(f"not a ws:// URL: {url}")
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise ConnectionError(f"DevTools refused the WebSocket upgrade: {status!r}")
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, text: str) -> None:
        payload = text.encode()
        header = bytearray([0x81])
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        elif len(payload) < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", len(payload))
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + mask + masked)

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack(">H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack(">Q", self._read(8))
            payload = self._read(length)
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            if opcode in (0x9, 0xA):  # ping, pong: nothing to answer for this protocol
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, executable: str | None = None, timeout_s: float = 30.0, width: int = 1300,
                 height: int = 900):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise FileNotFoundError("no Chromium found (install the distribution's chromium package, "
                                    "or set KBENCH_CHROMIUM)")
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="kbench-chromium-")
        self.process = subprocess.Popen(
            [self.executable, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
             f"--window-size={width},{height}", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = self._devtools_port()
        self.socket = _WebSocket(self._page_socket_url(), timeout_s)
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def _devtools_port(self) -> int:
        # Chromium writes the port it chose to DevToolsActivePort in its profile.
        marker = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.executable} exited with {self.process.returncode} at start")
            try:
                with open(marker) as f:
                    first = f.readline().strip()
                if first:
                    return int(first)
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.05)
        raise TimeoutError(f"{self.executable} did not open its DevTools port in {self.timeout_s} s")

    def _page_socket_url(self) -> str:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=5) as answer:
                for target in json.load(answer):
                    if target.get("type") == "page" and target.get("webSocketDebuggerUrl"):
                        return target["webSocketDebuggerUrl"]
            time.sleep(0.05)
        raise TimeoutError("Chromium showed no page target")

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, **params) -> dict:
        """Sends one command and answers its result; events that arrive meanwhile are kept."""
        self.next_id += 1
        wanted = self.next_id
        self.socket.send(json.dumps({"id": wanted, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.receive())
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str, timeout_s: float | None = None) -> dict:
        """Waits for an event named `event` not yet seen, and answers it."""
        for i, seen in enumerate(self.events):
            if seen["method"] == event:
                return self.events.pop(i)
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while time.monotonic() < deadline:
            message = json.loads(self.socket.receive())
            if message.get("method") == event:
                return message
            if "method" in message:
                self.events.append(message)
        raise TimeoutError(f"no {event} within {timeout_s or self.timeout_s} s")

    def open(self, url: str) -> float:
        """Opens `url` and waits for its load event; answers the seconds that took."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        start = time.monotonic()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise RuntimeError(f"{url}: {result['errorText']}")
        self.wait_for("Page.loadEventFired")
        return time.monotonic() - start

    def follow(self, expression: str) -> float:
        """Evaluates `expression` (a click, a form's submit) and waits for the page it loads."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        start = time.monotonic()
        self.evaluate(expression)
        self.wait_for("Page.loadEventFired")
        return time.monotonic() - start

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        """Everything the console reported as an error or warning since the last call: console
        calls, uncaught exceptions, and the browser's own log (CSP violations, failed loads)."""
        self.call("Runtime.evaluate", expression="0")  # drains events that arrived meanwhile
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                errors.append(params.get("exceptionDetails", {}).get("text", "exception"))
            elif method == "Page.javascriptDialogOpening":
                errors.append(f"a dialog opened: {params.get('message')}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                entry = params["entry"]
                errors.append(f"{entry.get('source')}: {entry.get('text')} ({entry.get('url', '')})")
        self.events = [e for e in self.events if e["method"] not in
                       ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded",
                        "Page.javascriptDialogOpening")]
        return errors

    def screenshot(self, path: str, full_page: bool = True) -> None:
        params = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
