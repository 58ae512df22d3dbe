"""Open a page in headless Chromium and read back what a reader would see, over the
DevTools protocol (Chrome DevTools Protocol, CDP; the `websocket-client` package speaks
its WebSocket): console errors, uncaught exceptions and dialogs (an `alert` that ran),
every image's natural width, the page's visible text and the text on its first screen,
how many elements of each tag it has, and a screenshot of the first screen.

Chromium is the Debian package `chromium` (found on PATH as chromium, chromium-browser or
google-chrome); it starts with its own throw-away profile and an OS-chosen debugging port,
which it writes to DevToolsActivePort in the profile.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Markdown that a renderer should have turned into markup; found in the visible text it
# means the page shows Markdown source.
RAW_MARKDOWN = {
    "bold markers **": re.compile(r"\*\*"),
    "backtick": re.compile(r"`"),
    "table rule |---|": re.compile(r"\|\s*:?-{3,}"),
    "heading marker # at a line start": re.compile(r"^ *#{1,6} +\S", re.MULTILINE),  # not a table cell "#"
}


def find_browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


@dataclass
class PageReport:
    console_errors: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)   # {"alt", "src" (first 60 chars), "naturalWidth", "complete"}
    text: str = ""
    first_screen: str = ""                              # text of the blocks wholly inside the first screen
    tags: dict[str, int] = field(default_factory=dict)  # element count per tag name
    screenshot: bytes = b""

    @property
    def broken_images(self) -> list[dict]:
        return [i for i in self.images if not i["complete"] or i["naturalWidth"] == 0]

    def raw_markdown(self) -> dict[str, list[str]]:
        """{marker: visible lines that carry it}."""
        lines = self.text.splitlines()
        return {name: [ln for ln in lines if rx.search(ln + "\n")] for name, rx in RAW_MARKDOWN.items()
                if rx.search(self.text)}


class _Session:
    """One CDP WebSocket to one page target: send commands, collect the events on the way."""

    def __init__(self, ws_url: str, timeout: float):
        import websocket  # websocket-client

        self.ws = websocket.create_connection(ws_url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        call_id = self.next_id
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == call_id:
                if "error" in msg:
                    raise RuntimeError(f"CDP {method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def wait_for(self, method: str, timeout: float) -> None:
        end = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > end:
                raise TimeoutError(f"no {method} within {timeout:g} s")
            self._event(json.loads(self.ws.recv()))

    def _event(self, msg: dict) -> None:
        """Keep an event; dismiss a dialog at once (it would block the page, and this
        session with it), so that it is reported rather than waited on."""
        self.events.append(msg)
        if msg.get("method") == "Page.javascriptDialogOpening":
            self.next_id += 1  # its answer arrives as one more message, kept with the events
            self.ws.send(json.dumps({"id": self.next_id, "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": True}}))

    def close(self) -> None:
        self.ws.close()


def _console_errors(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                               for a in p.get("args", [])))
        elif e.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif e.get("method") == "Page.javascriptDialogOpening":  # alert(), confirm(): script ran
            out.append(f"dialog ({p.get('type')}): {p.get('message')}")
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"log ({p['entry'].get('source')}): {p['entry'].get('text')} {p['entry'].get('url', '')}")
    return out


_READ_PAGE = """JSON.stringify({
  text: document.body ? document.body.innerText : "",
  first_screen: Array.from(document.querySelectorAll("h1, h2, h3, p, li"))
    .filter(e => e.getBoundingClientRect().bottom <= window.innerHeight).map(e => e.innerText).join("\\n"),
  tags: Array.from(document.querySelectorAll("*")).reduce((n, e) => {
    const t = e.tagName.toLowerCase(); n[t] = (n[t] || 0) + 1; return n; }, {}),
  images: Array.from(document.images).map(i => ({alt: i.alt, src: i.src.slice(0, 60),
                                                 naturalWidth: i.naturalWidth, complete: i.complete}))
})"""


def inspect_page(path: Path, profile_dir: Path, browser: str | None = None, width: int = 1280, height: int = 900,
                 timeout: float = 60.0) -> PageReport:
    """Load `path` (a local HTML file) in headless Chromium and report on it."""
    browser = browser or find_browser()
    if browser is None:
        raise FileNotFoundError(f"no browser on PATH ({', '.join(BROWSERS)})")
    profile_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--remote-debugging-port=0", f"--user-data-dir={profile_dir}", f"--window-size={width},{height}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile_dir / "DevToolsActivePort"
        end = time.monotonic() + timeout
        while not (port_file.is_file() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{browser} did not start a DevTools endpoint (exit status {proc.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as r:
            page = next(t for t in json.load(r) if t.get("type") == "page")
        session = _Session(page["webSocketDebuggerUrl"], timeout)
        try:
            for domain in ("Page", "Runtime", "Log"):
                session.call(f"{domain}.enable")
            session.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                         mobile=False)
            session.call("Page.navigate", url=Path(path).resolve().as_uri())
            session.wait_for("Page.loadEventFired", timeout)
            state = json.loads(session.call("Runtime.evaluate", expression=_READ_PAGE,
                                            returnByValue=True)["result"]["value"])
            shot = session.call("Page.captureScreenshot", format="png")["data"]
            return PageReport(console_errors=_console_errors(session.events), images=state["images"],
                              text=state["text"], first_screen=state["first_screen"], tags=state["tags"],
                              screenshot=base64.b64decode(shot))
        finally:
            session.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
