"""Worker processes, one per backend, kept warm: a kernel that crashes, hangs or runs away takes only its worker.

The parent sends a cell and waits on the socket, watching three things: the worker's exit (a signal, an
abort, an exit code: the cell becomes ``crashed``), the cell's deadline (the build limit until the worker
says the run started, then the run limit: past it the worker is killed and the cell is ``timeout``), and
the worker's resident memory (past the cell's cap it is killed and the cell is ``oom``). A dead worker is
replaced at the next cell of its backend.

Why a fresh interpreter (``python -m workbench.measure.worker_main``) rather than ``fork``: after torch,
numba or OpenBLAS start their thread pools, or CUDA its context, a forked child can deadlock or fail, and
a notebook has usually started all of them. Why not ``multiprocessing``'s spawn: it re-runs the parent's
``__main__`` (a script without a ``__main__`` guard would start its sweep again in every worker). Kernels
from catalog folders are loaded again by the worker; inline ones travel by value
(:mod:`workbench.catalog.shipping`).

The worker's output goes to a file; the parent copies it to its own stderr after each cell (so warnings
still reach the terminal or notebook), and quotes its end when the worker dies.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import psutil

from workbench.backends import registry
from workbench.catalog.shipping import CannotShip, Shipment, Shipper
from workbench.core import allocator, threads
from workbench.core.processes import pid_alive
from workbench.core.regular_files import read_new_part
from workbench.core.status import Status
from workbench.measure.audit import judge_reported
from workbench.measure.cell import measure
from workbench.measure.descendants import ENV_TOKEN, children_of, end_descendants, new_token
from workbench.measure.executor import LocalExecutor, ShouldStop
from workbench.measure.failures import failed_result, timeout_message
from workbench.measure.memory_cap import describe
from workbench.measure.messages import CellDone, Prepare, Prepared, RunCell, Start, Stop
from workbench.measure.phase_clock import PhaseClock
from workbench.measure.request import NO_VARIANT, CellRequest
from workbench.measure.result import CellResult
from workbench.measure.timer import Cancelled

log = logging.getLogger(__name__)

#: How long a new worker may take to import the workbench and report ready.
STARTUP_TIMEOUT_S = 120.0
#: How often the parent looks at the worker's exit and memory while it waits (messages wake it at once). Every
#: 20 ms, its wake-ups (a process poll, a /proc read) took the core from a 2-thread kernel's straggler on a
#: 2-core machine: a quick suite's cells ran 6% longer in workers than at 100 ms. A runaway allocation is
#: stopped by the address-space cap on CPU backends at once; the resident-memory watchdog looks 10 times a second.
POLL_S = 0.1
#: Extra time past a limit before the worker is killed, so a cell that stops by itself keeps its samples.
MAX_GRACE_S = 2.0
#: The resident-memory watchdog fires at this multiple of the cap, so that on CPU backends the worker's own
#: address-space limit (a clean MemoryError, the worker lives on) normally acts first.
WATCHDOG_SLACK = 1.125
#: Set in a worker's environment: kernels and tests can tell they run in one.
ENV_IN_WORKER = "WORKBENCH_IN_WORKER"
#: Input cache of each worker (a sweep has one worker per backend), beyond the group in use (always kept). Small:
#: a sweep visits a group once per round with each backend in turn, so a worker comes back to a group only after
#: every other group, and an LRU cache smaller than all of them (1.2 GB of inputs and references in the quick
#: suite) loses each large group before its next visit; 512 MiB of them per worker were most of a quick suite's
#: memory. Small groups (the LLM operators') still stay; large ones come back from the sweep's shared folder.
WORKER_INPUT_CACHE_BYTES = 1 << 27


def _backend_env(name: str) -> dict[str, str]:
    """The environment a backend asks its worker to start with (:attr:`Backend.worker_env`)."""
    try:
        return {str(k): str(v) for k, v in dict(getattr(registry.get(name), "worker_env", {}) or {}).items()}
    except Exception:  # noqa: BLE001 - an unknown backend's cells say so themselves
        return {}


#: Name prefix of the shared input folders, followed by the owning process's pid.
SHARED_PREFIX = "workbench-inputs-"


def remove_orphaned_input_dirs(root: str | None) -> list[str]:
    """Remove shared input folders whose owning process is gone (a sweep killed with SIGKILL cannot clean
    up, and ``/dev/shm`` is memory). Returns the folders removed."""
    base = Path(root or tempfile.gettempdir())
    removed = []
    for d in base.glob(f"{SHARED_PREFIX}*"):
        pid_text = d.name[len(SHARED_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue  # the owner lives (or an older folder without a pid, which may belong to a live sweep)
        shutil.rmtree(d, ignore_errors=True)
        removed.append(str(d))
    return removed


def _shared_memory_dir() -> str | None:
    """``/dev/shm`` (memory-backed: sharing costs no disk writes) where it exists and is writable."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _failure_message(request: CellRequest, out: Outcome) -> str:
    """What happened to the worker process in a cell, in words (``out.failure`` is its status)."""
    what = f"{request.cell.kernel}/{request.cell.variant} on {request.cell.backend}"
    if out.failure is Status.CRASHED:
        where = "while building it" if out.phase == "build" else "while running it"
        return f"{what} crashed its worker process {where}: {out.message}; the worker process was restarted"
    if out.failure is Status.TIMEOUT:
        return f"{timeout_message(request, out.phase)}; its worker process was killed and restarted"
    return f"{what}: {out.message}"


class WorkerStartError(Exception):
    """A worker process did not start (its output says why)."""


@dataclass
class Outcome:
    """How waiting for a cell ended: its result, or what happened to the worker process instead."""

    result: CellResult | None = None
    #: crashed, timeout or oom when the worker process died or was killed in the cell.
    failure: Status | None = None
    #: "build", "first call" or "run": where the cell was when it failed.
    phase: str = "build"
    message: str = ""


def signal_text(returncode: int) -> str:
    """``returncode`` of a dead process in words: "signal SIGSEGV (Segmentation fault)" or "exit code 3"."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
            desc = signal.strsignal(sig) or ""
            return f"signal {sig.name}" + (f" ({desc})" if desc else "")
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def summarize_output(text: str) -> str:
    """A dead worker's output in one line: what it printed last before Python's fault handler, and the
    innermost Python frame the handler names ("Fatal Python error: Segmentation fault at k.py:12 in run");
    without a fault report, its last lines."""
    fatal = re.search(r"Fatal Python error: ([^\n]+)", text)
    if fatal is None:
        return " | ".join(ln.strip() for ln in text.strip().splitlines()[-8:] if ln.strip())
    before = [ln.strip() for ln in text[:fatal.start()].splitlines() if ln.strip()][-3:]
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', text[fatal.end():].split("\n\n\n")[0])
    where = ""
    if frames:
        where = " at {}:{} in {}".format(*frames[0])
        # the kernel author's own frame, when the fault struck inside a library it called
        own = next((f for f in frames if not re.search(r"[/\\](lib[/\\]python3|site-packages|workbench[/\\])", f[0])),
                   None)
        if own is not None and own != frames[0]:
            where += " called from {}:{} in {}".format(*own)
    return " | ".join([*before, f"Fatal Python error: {fatal[1].strip()}{where}"])


class WorkerProcess:
    """One warm worker process and the socket to it."""

    def __init__(self, backend: str, *, memory_cap: int | None, boundscheck: bool = False,
                 shared_dir: str | None = None) -> None:
        self.backend = backend
        self.memory_cap = memory_cap
        self.boundscheck = boundscheck
        self.shared_dir = shared_dir
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self._out: Any = None
        self._out_pos = 0
        self._job = 0
        self._ps: Any = None
        self.started_s = 0.0
        #: In the worker's environment and so in all it starts: what :meth:`kill` ends with it.
        self.token = new_token()

    # -- life --------------------------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the interpreter (it imports the workbench while the caller goes on: see :meth:`wait_ready`)."""
        self._t0 = time.perf_counter()
        parent, child = socket.socketpair()
        self._out = tempfile.TemporaryFile(prefix="workbench-worker-")
        self._out_pos = 0
        env = dict(os.environ)
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pkg_root, env.get("PYTHONPATH")]))
        env[ENV_IN_WORKER] = "1"
        env[ENV_TOKEN] = self.token
        env.update(_backend_env(self.backend))
        env.update(allocator.worker_env(env))  # the allocator's state fixed from the start (core/allocator.py)
        env.update(threads.worker_env())  # the cores this process was given, not the one its binding left it
        env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "workbench.measure.worker_main", str(child.fileno())],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._out,
                env=env, cwd=os.getcwd())
        finally:
            child.close()
        self.conn = Connection(parent.detach())
        self._ps = psutil.Process(self.proc.pid)
        self.conn.send(Start(backend=self.backend, memory_cap=self.memory_cap, boundscheck=self.boundscheck,
                             parent_pid=os.getpid(), sys_path=tuple(p for p in sys.path if p),
                             input_cache_bytes=WORKER_INPUT_CACHE_BYTES, shared_dir=self.shared_dir))

    def wait_ready(self) -> None:
        assert self.conn is not None and self.proc is not None
        deadline = time.perf_counter() + STARTUP_TIMEOUT_S
        while not self.conn.poll(POLL_S):
            if self.proc.poll() is not None or time.perf_counter() > deadline:
                code = self.proc.poll()
                self.kill()
                why = f"did not start within {STARTUP_TIMEOUT_S:g} s" if code is None else signal_text(code)
                raise WorkerStartError(f"the worker process for {self.backend} {why}: {self.output_tail()}")
        try:
            self.conn.recv()  # Ready
        except (EOFError, OSError) as exc:
            self.kill()
            raise WorkerStartError(f"the worker process for {self.backend} died at start: "
                                   f"{self.output_tail()}") from exc
        self.started_s = time.perf_counter() - self._t0

    def kill(self, known: Sequence[psutil.Process] = ()) -> None:
        """Kill the worker, then whatever its kernels started (``known``: its children seen before it ended)."""
        known = [*known, *children_of(self._ps)]
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                log.warning("worker process %s did not exit after SIGKILL", self.proc.pid)
        if self.proc is not None:
            end_descendants(self.token, known)
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def stop(self) -> None:
        """Ask the worker to exit; kill it if it does not within a few seconds."""
        known = children_of(self._ps)  # before they are re-parented away when the worker exits
        if self.alive and self.conn is not None:
            try:
                self.conn.send(Stop())
                self.proc.wait(5)  # type: ignore[union-attr]
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill(known)
        self.forward_output()
        if self._out is not None:
            self._out.close()
            self._out = None

    # -- output ------------------------------------------------------------------------------------------------
    def _new_output(self) -> str:
        if self._out is None:
            return ""
        data, self._out_pos = read_new_part(self._out.fileno(), self._out_pos)  # bounded: a kernel may print GBs
        return data.decode("utf-8", "replace")

    def _echo(self, text: str) -> None:
        if text:
            prefix = f"[worker {self.backend}] "
            sys.stderr.write("".join(prefix + line for line in text.splitlines(keepends=True)))
            if not text.endswith("\n"):
                sys.stderr.write("\n")
            sys.stderr.flush()

    def forward_output(self) -> None:
        """Copy what the worker printed since last time to this process's stderr, each line marked."""
        self._echo(self._new_output())

    def output_tail(self, chars: int = 600) -> str:
        """The end of the worker's output (printed here too), for the message of a cell that killed it."""
        text = self._new_output()
        self._echo(text)
        tail = summarize_output(text)[-chars:]
        return f"its last output: {tail}" if tail else "it printed nothing"

    # -- one request -------------------------------------------------------------------------------------------
    def prepare(self, backend: str) -> str | None:
        self.send_prepare(backend)
        return self.wait_prepared(backend)

    def send_prepare(self, backend: str) -> None:
        assert self.conn is not None
        self.conn.send(Prepare(backend))

    def wait_prepared(self, backend: str) -> str | None:
        assert self.conn is not None
        while not self.conn.poll(POLL_S):
            if not self.alive:
                return f"the worker process died while preparing {backend}: {self.output_tail()}"
        try:
            answer = self.conn.recv()
            return answer.problem if isinstance(answer, Prepared) else None
        except (EOFError, OSError):
            return f"the worker process died while preparing {backend}: {self.output_tail()}"

    def rss(self) -> int | None:
        try:
            return int(self._ps.memory_info().rss)
        except Exception:  # noqa: BLE001 - a dead or unreadable process: the exit check handles it
            return None

    def run(self, request: CellRequest, shipment: Shipment, should_stop: ShouldStop | None = None,
            on_suspect: Callable[[], None] | None = None) -> Outcome:
        """Send one cell and wait for its result, or for the worker's death, a deadline or the memory cap.
        ``on_suspect`` is called once when the first call has run past :data:`.phase_clock.SPARE_AT` of its limit."""
        assert self.conn is not None and self.proc is not None
        self._job += 1
        grace = min(MAX_GRACE_S, 0.1 * request.timeout_s + 0.2)
        base_rss = self.rss() or 0
        self.conn.send(RunCell(self._job, request, shipment))
        clock = PhaseClock.building(request, self._job, grace, POLL_S)
        try:
            while True:
                if self.conn.poll(POLL_S):
                    try:
                        msg = self.conn.recv()
                    except (EOFError, OSError):
                        return self._died(clock.phase)
                    if isinstance(msg, CellDone) and msg.job_id == clock.job_id:
                        self.forward_output()
                        return Outcome(result=msg.result, phase=clock.phase)
                    clock.hear(msg, self._ps)
                    continue
                if self.proc.poll() is not None:
                    return self._died(clock.phase)
                if on_suspect is not None and clock.suspect():
                    on_suspect()
                    on_suspect = None
                if clock.expired():
                    self.kill()
                    return Outcome(failure=Status.TIMEOUT, phase=clock.phase)
                too_big = self._past_memory_cap(base_rss)
                if too_big:
                    self.kill()
                    return Outcome(failure=Status.OOM, phase=clock.phase, message=too_big)
                if should_stop is not None and should_stop():
                    self.kill()
                    raise Cancelled("cancelled while a cell was running; its worker process was stopped")
        except KeyboardInterrupt:
            self.kill()
            raise

    def _past_memory_cap(self, base_rss: int) -> str | None:
        """Why the worker is to be killed when it grew past the cell's memory cap since ``base_rss``, else None."""
        if self.memory_cap is None:
            return None
        rss = self.rss()
        if rss is None or rss - base_rss <= self.memory_cap * WATCHDOG_SLACK:
            return None
        return (f"the worker process grew to {rss / 2**30:.2f} GiB resident, "
                f"{(rss - base_rss) / 2**30:.2f} GiB more than at the cell's start, past the "
                f"{describe(self.memory_cap)} (--memory-cap); it was killed")

    def _died(self, phase: str) -> Outcome:
        assert self.proc is not None
        try:
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode if self.proc.returncode is not None else -signal.SIGKILL
        hint = " (often the system's out-of-memory killer)" if code == -signal.SIGKILL else ""
        tail = self.output_tail()
        self.kill()
        return Outcome(failure=Status.CRASHED, phase=phase,
                       message=f"the worker process died from {signal_text(code)}{hint}; {tail}")


class ProcessExecutor(LocalExecutor):
    """Cells in worker processes, one per backend, started on first use and restarted after a death."""

    isolation = "process"

    def __init__(self, *, memory_cap: int | None, boundscheck: bool = False,
                 fallback: Callable[[], LocalExecutor] | None = None) -> None:
        self.memory_cap = memory_cap
        self.boundscheck = boundscheck
        self._workers: dict[str, WorkerProcess] = {}
        self._prepared: dict[str, str | None] = {}
        #: Backends whose worker was sent "prepare" by :meth:`warm` and has not been heard back from yet.
        self._pending: set[str] = set()
        self._shipper = Shipper()
        #: Inputs and references every worker of this executor shares (made once per group, not per backend).
        root = _shared_memory_dir()
        remove_orphaned_input_dirs(root)
        self.shared_dir = tempfile.mkdtemp(prefix=f"{SHARED_PREFIX}{os.getpid()}-", dir=root)
        #: Makes the in-process executor for cells whose inline kernel cannot travel.
        self._make_fallback = fallback
        self._fallback: LocalExecutor | None = None
        #: Worker starts (first and after deaths) and their seconds, for the cost of isolation.
        self.starts: list[tuple[str, float]] = []
        #: A worker started per backend while one of its cells looked hung, taken at that backend's next start.
        self._spares: dict[str, WorkerProcess] = {}

    def _new_worker(self, backend: str) -> WorkerProcess:
        old = self._workers.get(backend)
        if old is not None:
            old.stop()
        w = WorkerProcess(backend, memory_cap=self.memory_cap, boundscheck=self.boundscheck,
                          shared_dir=self.shared_dir)
        self._workers[backend] = w
        return w

    def _worker(self, backend: str) -> WorkerProcess:
        w = self._workers.get(backend)
        if w is None or not w.alive:
            restart = w is not None and backend in self._prepared
            spare = self._spares.pop(backend, None)
            if spare is not None and spare.alive:
                if w is not None:
                    w.stop()
                self._workers[backend] = w = spare
                t0 = time.perf_counter()
                w.wait_ready()
                self.starts.append((backend, time.perf_counter() - t0))  # what the spare left to wait for
                self._prepared[backend] = w.prepare(backend)
            else:
                if spare is not None:
                    spare.stop()
                w = self._new_worker(backend)
                w.start()
                self.starts.append((backend, w.started_s))
                if restart:  # the one-time costs stay out of the next cell's limits, as at the first start
                    self._prepared[backend] = w.prepare(backend)
        return w

    def _start_spare(self, backend: str) -> None:
        """Start a worker for ``backend`` beside the one whose cell looks hung (see
        :data:`.phase_clock.SPARE_AT`). It only imports the workbench meanwhile: preparing the backend (its
        runtime, the timer's calibration) waits until it takes over, so that a cell that was only slow is not
        timed beside a runtime import."""
        if backend in self._spares:
            return
        spare = WorkerProcess(backend, memory_cap=self.memory_cap, boundscheck=self.boundscheck,
                              shared_dir=self.shared_dir)
        try:
            spare.launch()
        except OSError as exc:
            log.warning("could not start a spare worker process for %s: %s", backend, exc)
            return
        self._spares[backend] = spare

    def _stop_spare(self, backend: str) -> None:
        """Stop ``backend``'s spare worker, if one was started: an idle interpreter held to the sweep's end
        (or the backend's release) for a kill that did not come."""
        spare = self._spares.pop(backend, None)
        if spare is not None:
            spare.kill()  # it holds nothing yet: no need to wait for it to finish importing and hear Stop
            spare.stop()  # its output forwarded, its file closed

    def warm(self, backends: Sequence[str]) -> None:
        """Start the workers of ``backends`` side by side, each told to prepare (imports, device query, timer
        calibration) as soon as it is up, and return at once: the workers' start-up overlaps each other's, the
        caller's own set-up (its environment record, the ceilings of backends already prepared) and the first
        cells; :meth:`prepare` (before a backend's first cell) waits for that backend's worker."""
        for b in backends:
            w = self._workers.get(b)
            if w is None or not w.alive:
                w = self._new_worker(b)
                try:
                    w.launch()
                    w.send_prepare(b)  # queued on the socket: the worker reads it once it is ready
                except OSError as exc:
                    self._prepared[b] = f"the worker process for {b} did not start: {exc}"
                    continue
                self._pending.add(b)

    def release(self, backends: Iterable[str]) -> None:
        """Stop the workers of ``backends``, which have no cells left for now: a finished backend's runtime,
        inputs and device memory are freed, not held to the end of the sweep. A later cell starts a new one."""
        for b in backends:
            self._collect(b)  # a prepare still in flight is answered before the worker is told to stop
            w = self._workers.pop(b, None)
            self._prepared.pop(b, None)
            for idle in (w, self._spares.pop(b, None)):
                if idle is not None:
                    idle.stop()

    def _collect(self, backend: str) -> None:
        """Wait for the worker that :meth:`warm` started to be ready and answer its prepare (before anything
        else is sent to it)."""
        if backend in self._pending:
            self._pending.discard(backend)
            w = self._workers.get(backend)
            if w is None:
                return
            try:
                w.wait_ready()
            except WorkerStartError as exc:
                self._prepared[backend] = str(exc)
                return
            self.starts.append((backend, w.started_s))
            self._prepared[backend] = w.wait_prepared(backend)

    def prepare(self, backend: str) -> str | None:
        self._collect(backend)
        if backend in self._prepared and self._workers.get(backend) is not None and self._workers[backend].alive:
            return self._prepared[backend]
        try:
            self._prepared[backend] = self._worker(backend).prepare(backend)
        except WorkerStartError as exc:
            self._prepared[backend] = str(exc)
        return self._prepared[backend]

    def run_one(self, request: CellRequest, should_stop: ShouldStop | None = None) -> CellResult:
        """The cell in its backend's worker process; a worker that dies, hangs or runs away ends the cell
        ``crashed``, ``timeout`` or ``oom`` and is replaced. ``should_stop`` is polled while the cell runs."""
        cell, t0 = request.cell, time.perf_counter()
        if cell.unsupported:  # known before running: no kernel code runs, so no worker is needed
            return measure(request)
        try:
            shipment = self._shipper.shipment(cell.kernel, None if cell.variant == NO_VARIANT else cell.variant)
        except CannotShip as exc:
            return self._in_process(request, str(exc))
        except ValueError:
            shipment = Shipment()  # an unknown kernel or variant: the worker's result says so
        self._collect(cell.backend)
        try:
            worker = self._worker(cell.backend)
        except WorkerStartError as exc:
            return failed_result(cell, Status.ERROR, str(exc), seed=request.seed, started=t0)
        out = worker.run(request, shipment, should_stop, on_suspect=lambda: self._start_spare(cell.backend))
        if out.result is not None:
            self._stop_spare(cell.backend)  # a first call that only looked hung returned: its worker lives on
            return judge_reported(out.result, time.perf_counter() - t0)
        return failed_result(cell, out.failure or Status.CRASHED, _failure_message(request, out),
                             seed=request.seed, started=t0)

    def _in_process(self, request: CellRequest, why: str) -> CellResult:
        """A cell whose inline kernel cannot travel runs here, on a thread, and its result says so."""
        if self._make_fallback is None:
            return failed_result(request.cell, Status.ERROR,
                                 f"{why}; define it in a module or a catalog folder, or run in-process",
                                 seed=request.seed, started=time.perf_counter())
        if self._fallback is None:
            self._fallback = self._make_fallback()
        res = self._fallback.run_one(request)
        res.note(f"ran in-process, without crash isolation: {why}")
        return res

    def close(self) -> None:
        for w in [*self._workers.values(), *self._spares.values()]:
            w.stop()
        self._workers.clear()
        self._spares.clear()
        shutil.rmtree(self.shared_dir, ignore_errors=True)
        if self._fallback is not None:
            self._fallback.close()
            self._fallback = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
