"""Helpers of the `cranfield serve` tests and benchmark: the server in a subprocess on a free port, and a
headless Chromium (Debian's chromium + chromium-driver, through selenium) that reads the desk's screen."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Captures textual-serve's xterm.js terminal object when the page makes it (set as a property named
# `terminal`), so the test can read the screen's rows as text (the terminal draws on a canvas).
TERMINAL_HOOK = """Object.defineProperty(Object.prototype, 'terminal', {configurable: true,
  set(v) { window.__term = v;
           Object.defineProperty(this, 'terminal', {value: v, writable: true, configurable: true, enumerable: true}); }});"""
SCREEN_JS = """const t = window.__term; if (!t) return null; const b = t.buffer.active; const out = [];
for (let i = 0; i < t.rows; i++) { const l = b.getLine(i); out.push(l ? l.translateToString(true) : ''); }
return out.join('\\n');"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium_missing() -> str | None:
    """Why a headless Chromium cannot be driven here, or None."""
    for exe in ("chromium", "chromedriver"):
        if shutil.which(exe) is None:
            return f"{exe} is not installed (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    return None


class Served:
    """`cranfield serve CAMP` in a subprocess on a free port (ended by its own pid)."""

    def __init__(self, camp: Path, *extra: str):
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.p = subprocess.Popen([sys.executable, "-m", "cranfield.cli", "serve", str(camp), "--port",
                                   str(self.port), *extra], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        end = time.time() + 30
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.p.poll() is not None:
                    raise AssertionError(self.p.stderr.read()) from None
                time.sleep(0.1)
        raise AssertionError("cranfield serve did not start listening")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> str:
        """End the server; its log (stderr)."""
        self.p.terminate()
        try:
            _, err = self.p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, err = self.p.communicate()
        return err


class Browser:
    """One headless Chromium signed in to the desk with `token`."""

    def __init__(self, url: str, token: str, size=(1000, 640)):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        o = Options()
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-extensions", f"--window-size={size[0]},{size[1]}"):
            o.add_argument(a)
        o.binary_location = shutil.which("chromium")
        self.d = webdriver.Chrome(options=o, service=Service(shutil.which("chromedriver")))
        self.d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TERMINAL_HOOK})
        self.url = url
        self.d.get(f"{url}/?token={token}")

    def screen(self) -> str:
        return self.d.execute_script(SCREEN_JS) or ""

    def wait_for(self, test, timeout: float = 20.0, what: str = "") -> str:
        """The screen once test(screen) holds; AssertionError with the last screen after `timeout`."""
        end = time.time() + timeout
        s = ""
        while time.time() < end:
            s = self.screen()
            if test(s):
                return s
            time.sleep(0.05)
        raise AssertionError(f"browser: {what} not seen in {timeout} s; screen:\n{s}")

    def press(self, keys: str) -> None:
        from selenium.webdriver.common.by import By
        self.d.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea").send_keys(keys)

    def reload(self) -> None:
        self.d.get(self.url + "/")

    def quit(self) -> None:
        self.d.quit()
