"""Where independent units of work run: ``local`` (in this process, or ``jobs`` local processes) or ``ray``.

Compare runs, backtest refits and ensemble members are units of work: a top-level function
``function(shared, key)`` applied to many keys with the same large ``shared`` object (the loaded panels, the
series). An :class:`Engine` sends ``shared`` to each worker once (a local process gets it when it starts; Ray
puts it in its object store once and every task reads it from there) and yields ``(key, Outcome)`` as units
finish, in the order they finish. No scheduler of ours: local processes are a ``ProcessPoolExecutor``, and on
Ray every unit is a Ray task (lost workers are retried by Ray, ``max_retries``).

A unit that fails for its own reasons (bad settings, a non-finite loss) gives an Outcome with its error
message and the others go on; only an interrupt stops everything.

    engine = get_engine("ray", address="auto")      # join a running cluster
    for key, outcome in engine.map(run_one, shared, keys):
        ...
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from .errors import ConfigError, TsattnError, user_stacklevel

ENGINES = ("local", "ray")
RAY_HINT = "pip install 'tsattn[ray]' (or pip install 'ray[default]')"
RAY_MAX_RETRIES = 3  # a task lost with its worker or node is run again this many times
MAX_JOBS = 256  # local processes at most: each starts its own Python and TensorFlow


@dataclass
class Outcome:
    """The result of one unit of work, or why it failed (``error``: one line, ``None`` when it succeeded)."""

    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _describe(error: BaseException) -> str:
    message = " ".join(str(error).split()) or type(error).__name__
    return message if isinstance(error, TsattnError) else f"{type(error).__name__}: {message}"


def _guarded(function: Callable, shared, key) -> Outcome:
    """Run one unit; its own failure becomes an Outcome (interrupts and worker deaths are not caught here)."""
    try:
        return Outcome(function(shared, key))
    except Exception as error:  # noqa: BLE001  (any failure of one unit must not stop the others)
        return Outcome(error=_describe(error))


_PINNED: dict = {}


def pin_threads(threads: int) -> None:
    """Give TensorFlow in this process ``threads`` threads (once per process: TensorFlow fixes them when its
    runtime starts, and every unit a worker runs asked for the same CPUs)."""
    if _PINNED.get("threads") is not None:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from ._backend import tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError:  # the runtime had started in this process already: keep its threads
        pass
    _PINNED["threads"] = threads


# ----------------------------------------------------------------------------------------------------
# local: in this process, or a pool of local processes
# ----------------------------------------------------------------------------------------------------
_WORKER: dict = {}


def _local_worker_init(shared, threads: int) -> None:
    _WORKER["shared"] = shared
    pin_threads(threads)


def _local_worker_call(function: Callable, key) -> Outcome:
    return _guarded(function, _WORKER["shared"], key)


class LocalEngine:
    """Units in this process one after another (``jobs=1``) or in ``jobs`` spawned processes, each with
    cores / jobs TensorFlow threads."""

    def check(self) -> None:
        """Nothing to reach: this machine."""

    def __init__(self, jobs: int = 1):
        if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
            raise ConfigError(f"jobs must be an integer from 1 to {MAX_JOBS} (local processes, each holding "
                              f"TensorFlow); got {jobs!r}; this machine has {os.cpu_count() or 1} cores")
        self.jobs = jobs

    @property
    def in_process(self) -> bool:
        """Whether units run here, one after another (callers may then pass them what cannot be pickled)."""
        return self.jobs == 1

    def slots(self) -> int:
        """How many units run at once."""
        return self.jobs

    def map(self, function: Callable, shared, keys: Iterable) -> Iterator[tuple[Any, Outcome]]:
        keys = list(keys)
        if self.jobs == 1 or len(keys) <= 1:
            for key in keys:
                yield key, _guarded(function, shared, key)
            return
        import multiprocessing

        cores = os.cpu_count() or 1
        processes = min(self.jobs, len(keys))
        if processes > cores:
            warnings.warn(f"{processes} local processes on {cores} cores: they share the cores with one TensorFlow "
                          f"thread each and each holds its own TensorFlow (memory); jobs={cores} uses every core",
                          UserWarning, stacklevel=user_stacklevel())
        threads = max(1, cores // self.jobs)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(processes, mp_context=context, initializer=_local_worker_init,
                                 initargs=(shared, threads)) as pool:
            futures = {pool.submit(_local_worker_call, function, key): key for key in keys}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def describe(self) -> str:
        return "local" if self.jobs == 1 else f"local, {self.jobs} processes"


# ----------------------------------------------------------------------------------------------------
# ray: every unit is a Ray task
# ----------------------------------------------------------------------------------------------------
def _ray_call(function: Callable, shared, key, threads: int) -> Outcome:
    pin_threads(threads)
    return _guarded(function, shared, key)


def import_ray():
    try:
        import ray
    except ImportError:
        raise ConfigError(f"the ray engine needs Ray, which is not installed: {RAY_HINT}") from None
    return ray


RAY_FIX = ("start one with `ray start --head` (if it uses token authentication, set RAY_AUTH_TOKEN to its "
           "`ray get-auth-token`), or leave out --address to start a local one")
RAY_CONNECT_TIMEOUT = 60.0  # seconds to reach a cluster's address before giving up


def _token_auth_if_available() -> None:
    """Send the cluster token when one is at hand. Ray 2.59+ turns token authentication on for clusters started
    with `ray start --head`, but a driver joining by address only sends its token with RAY_AUTH_MODE=token
    (ray.init() without an address does this itself); a token sent to a cluster without authentication is
    ignored (tried on Ray 2.60). RAY_AUTH_MODE set by the user is left alone, and so is a process that imported
    Ray already: Ray reads the mode once, and a changed variable would reach only the processes it starts."""
    import sys

    if "RAY_AUTH_MODE" in os.environ or "ray" in sys.modules:
        return
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(path):
        os.environ["RAY_AUTH_MODE"] = "token"


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # + an empty SETTINGS frame


def _grpc_handshake(connection, address: str, timeout: float) -> None:
    """Refuse in one line a HOST:PORT where something other than Ray's GCS listens (a Redis, a web server): Ray's
    GCS is a gRPC server, which answers HTTP/2's connection preface with a SETTINGS frame; anything else (an
    error line, silence) would leave ray.init retrying for minutes past --ray-timeout."""
    import socket

    connection.settimeout(min(timeout, 10.0))
    try:
        connection.sendall(HTTP2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = connection.recv(64)
            if not chunk:
                break
            head += chunk
    except (socket.timeout, OSError):
        head = b""
    if len(head) < 9 or head[3] != 0x04:  # frame type 4: SETTINGS
        seen = head[:40].decode("latin-1").strip() or "no answer"
        raise ConfigError(f"something listens at {address} but it is not a Ray cluster (no gRPC handshake; it said: "
                          f"{seen!r}); check the port: a Ray head's is 6379 unless `ray start --port` set another")


class RayEngine:
    """Units as Ray tasks on a local Ray instance started for the run (``address=None``) or on a running
    cluster (``address="auto"`` or ``"HOST:PORT"``), ``cpus`` CPUs (and TensorFlow threads) per task."""

    in_process = False

    def __init__(self, address: str | None = None, cpus: int = 1, timeout: float | None = None):
        if timeout is None:
            timeout = os.environ.get("TSATTN_RAY_TIMEOUT", RAY_CONNECT_TIMEOUT)
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            timeout = -1.0
        if not 0 < timeout <= 86_400:
            raise ConfigError(f"the Ray connection time-out must be a number of seconds in (0, 86400]; got {timeout!r} "
                              "(--ray-timeout or TSATTN_RAY_TIMEOUT)")
        self.timeout = timeout
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ConfigError(f"address must be 'auto' or HOST:PORT of a Ray cluster; got {address!r}")
        if isinstance(cpus, bool) or not isinstance(cpus, int) or cpus < 1:
            raise ConfigError(f"cpus per task must be an integer >= 1; got {cpus!r}")
        if address is not None:
            _token_auth_if_available()  # before Ray is imported: it reads the mode once
        self.ray = import_ray()
        self.address, self.cpus = address, cpus
        self._owned = False  # whether slots() started Ray for this engine (map then shuts it down)

    def check(self) -> None:
        """Refuse at once a HOST:PORT address nothing listens on (Ray itself retries for minutes): callers run
        this before writing anything."""
        if self.address is None or "://" in self.address or self.address == "auto":
            return
        import socket

        host, _, port = self.address.rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=self.timeout) as connection:
                if os.environ.get("RAY_USE_TLS", "0").lower() not in ("1", "true"):
                    _grpc_handshake(connection, self.address, self.timeout)
        except ConfigError:
            raise
        except socket.timeout:
            raise ConfigError(f"no answer from a Ray cluster at {self.address} within {self.timeout:g} s (--ray-timeout "
                              f"or TSATTN_RAY_TIMEOUT sets the limit); {RAY_FIX}") from None
        except (OSError, ValueError) as error:
            raise ConfigError(f"could not reach a Ray cluster at {self.address} "
                              f"({getattr(error, 'strerror', None) or error}); {RAY_FIX}") from None

    def _connect(self) -> bool:
        """Connect (or start a local instance); True when this run started Ray and must shut it down."""
        ray = self.ray
        if ray.is_initialized():
            return False
        options = {"logging_level": "ERROR", "log_to_driver": False, "configure_logging": True}
        where = f"at {self.address}" if self.address else "on this machine"
        self.check()  # an address nothing answers on is refused within the time-out (Ray would retry for minutes)
        try:  # in the main thread: Ray's driver does not start reliably from another one
            if self.address is None:  # "local": always a new instance, never a cluster a stale
                # /tmp/ray/ray_current_cluster names (one killed by SIGKILL left it; ray.init() then waited on it for ever)
                ray.init(address="local", include_dashboard=False, **options)
            else:
                ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise ConfigError(f"could not start or reach a Ray cluster {where} ({' '.join(str(error).split())[:200]}); "
                              f"{RAY_FIX}") from None
        return True

    def slots(self) -> int:
        """How many units run at once: the cluster's CPUs / the CPUs per task (connects to the cluster)."""
        self._owned = self._connect() or self._owned
        return max(1, int(self.ray.cluster_resources().get("CPU", 0) // self.cpus))

    def map(self, function: Callable, shared, keys: Iterable) -> Iterator[tuple[Any, Outcome]]:
        keys = list(keys)
        if not keys:
            return
        ray = self.ray
        started = self._connect() or self._owned
        self._owned = False
        try:
            available = ray.cluster_resources().get("CPU", 0)
            if available < self.cpus:
                raise ConfigError(f"each task asks for {self.cpus} CPUs but the Ray cluster has {available:g}; "
                                  "lower the CPUs per task or add nodes")
            remote = ray.remote(_ray_call).options(num_cpus=self.cpus, max_retries=RAY_MAX_RETRIES,
                                                   retry_exceptions=False)
            shared_ref = ray.put(shared)  # once: every task reads it from the object store
            pending = {remote.remote(function, shared_ref, key, self.cpus): key for key in keys}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                key = pending.pop(ready[0])
                try:
                    outcome = ray.get(ready[0])
                except ray.exceptions.RayError as error:
                    lost = tuple(getattr(ray.exceptions, name) for name in
                                 ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError")
                                 if hasattr(ray.exceptions, name))
                    outcome = Outcome(error=f"lost with its worker more often than Ray retries a task "
                                            f"({RAY_MAX_RETRIES}): {type(error).__name__}" if isinstance(error, lost)
                                      else _describe(error))
                yield key, outcome
        finally:
            if started:
                ray.shutdown()

    def describe(self) -> str:
        return f"ray ({self.address or 'local instance'}, {self.cpus} CPU per task)"


def get_engine(engine: str = "local", jobs: int = 1, address: str | None = None, cpus: int = 1,
               timeout: float | None = None):
    """The engine by name; ``jobs`` is for ``local``, ``address``, ``cpus`` (per task) and ``timeout`` (seconds to
    reach the cluster's address; default $TSATTN_RAY_TIMEOUT or 60) for ``ray``."""
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if engine == "local":
        if address is not None:
            raise ConfigError("--address is for the ray engine; add --engine ray")
        if cpus != 1:  # it used to be accepted and ignored (a local run's threads follow --jobs)
            raise ConfigError(f"cpus per run ({cpus!r}) is for the ray engine; add --engine ray, or use --jobs "
                              "for local processes")
        return LocalEngine(jobs)
    if jobs != 1:
        raise ConfigError("--jobs is for the local engine; with --engine ray every run is a Ray task")
    return RayEngine(address, cpus, timeout)
