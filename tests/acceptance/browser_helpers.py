"""Start JupyterLab / Voila on a free local port and drive them with headless Debian Chromium.

Every server gets its own temporary root, workspaces, settings, config and
runtime folders, so nothing from a previous run (open tabs, the "Jupyter news"
pop-up, user config) changes what the browser sees, and the committed
notebooks are never written to: the notebook under test is copied into the
temporary root first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]
BIN = Path(sys.executable).parent


def browser_skip_reason() -> str | None:
    """Why the browser tier cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is absent (apt-get install --no-install-recommends chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; never `playwright install`)"
    for tool in ("jupyter-lab", "voila"):
        if not (BIN / tool).exists() and shutil.which(tool) is None:
            return f"{tool} is not installed (pip install -e '.[notebook]')"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A child server process in its own session (so its kernels die with it)."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str], log: Path, url: str):
        self.url, self.log = url, log
        self._log_file = open(log, "wb")
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_http(self, path: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + path, timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"server not ready after {timeout:.0f} s:\n{self.tail()}")

    def wait_port(self, port: int, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.tail()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.3)
        raise TimeoutError(f"port {port} not open after {timeout:.0f} s:\n{self.tail()}")

    def tail(self, n: int = 4000) -> str:
        self._log_file.flush()
        return self.log.read_bytes()[-n:].decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            pgid = os.getpgid(self.proc.pid)
            os.killpg(pgid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(pgid, signal.SIGKILL)
                self.proc.wait(5)
            try:  # kernels started by the server share its process group
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._log_file.close()


def _isolated_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for key, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[key] = str(home / sub)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return env


def stage_notebook(name: str, root: Path) -> Path:
    """Copy ``notebooks/<name>`` into ``root`` (the server's root), outputs and all stripped."""
    root.mkdir(parents=True, exist_ok=True)
    dst = root / name
    shutil.copy(REPO / "notebooks" / name, dst)
    return dst


@contextmanager
def jupyterlab(tmp: Path) -> Iterator[tuple[Server, str]]:
    """A fresh JupyterLab serving ``tmp/root``; yields (server, token)."""
    port, token = free_port(), os.urandom(12).hex()
    settings = tmp / "lab-settings"
    notif = settings / "@jupyterlab" / "apputils-extension"
    notif.mkdir(parents=True)
    (notif / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    cmd = [str(BIN / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp / 'root'}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}", f"--LabApp.user_settings_dir={settings}",
           "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    server = Server(cmd, tmp / "root", _isolated_env(tmp / "home"), tmp / "jupyterlab.log",
                    f"http://127.0.0.1:{port}")
    try:
        server.wait_http(f"/api/status?token={token}")
        yield server, token
    finally:
        server.stop()


@contextmanager
def voila(notebook: Path, tmp: Path) -> Iterator[tuple[Server, str]]:
    """A fresh Voila serving one notebook at ``/``; yields (server, token)."""
    port, token = free_port(), os.urandom(12).hex()
    cmd = [str(BIN / "voila"), str(notebook), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
           "--Voila.port_retries=0", "--show_tracebacks=True", f"--Voila.token={token}"]
    server = Server(cmd, notebook.parent, _isolated_env(tmp / "home"), tmp / "voila.log",
                    f"http://127.0.0.1:{port}")
    try:
        server.wait_port(port)
        yield server, token
    finally:
        server.stop()


@contextmanager
def chromium_page(tmp: Path, width: int = 1600, height: int = 1800):
    """A playwright page in a fresh headless Chromium profile."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp / "chromium-profile"), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": height})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            ctx.close()


def save_screenshot(page, tmp: Path, name: str) -> Path:
    """Full-page screenshot in the test's folder and a copy under $WORKBENCH_TEST_OUTPUT (tests/conftest.py)."""
    path = tmp / name
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("WORKBENCH_TEST_OUTPUT"):  # a temporary folder unless set (tests/conftest.py)
        out = Path(os.environ["WORKBENCH_TEST_OUTPUT"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, out / name)
    return path
