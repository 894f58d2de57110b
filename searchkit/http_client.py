"""searchkit's one HTTP client for remote endpoints (SPEC H16; issue 42 item 5): the embedders
(``searchkit.index.http_embedder``), the rerankers (``searchkit.rank.http_rerank``) and the eval's
endpoint checks (``searchkit.evaluate.endpoint_check``) ask through it.

- **A deadline per attempt** (:class:`Deadline`, :func:`fetch`): ``timeout`` is the attempt's whole
  budget (connect, TLS, status line, headers, body), not only a wait per socket read: when it runs
  out the socket is shut down, so an endpoint that trickles is cut off. A redirect is never followed
  (the ``Authorization`` header would go to whatever host ``Location`` names); the answer is read in
  chunks up to a cap (a :class:`~searchkit.errors.ResourceError` beyond it, refused at once).
- **Retries with exponential back-off** (:func:`retrying`, tenacity): an attempt that raises
  a ``ResourceError`` with ``retry`` true is tried again ``max_retries`` times, ``backoff * 2**i`` seconds after the
  ``i``-th failure; :func:`post_json` retries connection errors, timeouts and HTTP
  408/409/425/429/5xx (:data:`RETRY_STATUS`) and nothing else.
- **Rests for fallbacks** (:class:`Rests`): providers tried in order, one that failed resting
  ``cooldown`` seconds, doubled with each further failure in a row up to ``max_cooldown`` (tried
  after the others while it rests, not skipped).
- **Redaction** (:func:`redacted`, :func:`message_secrets`, :func:`excerpt`, :func:`one_line`): no
  message holds the API key (or a piece of it), a URL's credentials or anything token-shaped;
  endpoints are shown as :func:`searchkit.credentials.shown_url` shows them.

The transport is the standard library's ``urllib`` (httpx is only in some extras): its connection
classes are wrapped so the deadline can shut the very socket an answer is read from. Library code:
it raises, logs nothing and never prints.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import tenacity

from searchkit.credentials import _excerpt, _url_secret_parts, scrub
from searchkit.errors import ResourceError

__all__ = ["ERROR_EXCERPT_BYTES", "RETRY_STATUS", "Answer", "Deadline", "NoRedirect", "Rests", "attempts_text", "bearer_headers", "excerpt", "fetch", "late_text",
           "message_secrets", "one_line", "post_json", "read_capped", "read_quietly", "redacted", "retrying"]

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""The HTTP statuses an attempt is retried after (besides connection errors and timeouts)."""

ERROR_EXCERPT_BYTES = 4096
"""The most bytes of an error answer read (for its message, or only drained)."""


# --------------------------------------------------------------------------- redaction


def message_secrets(api_key_env: str | None, url: str | None = None) -> list[str]:
    """What no message may hold: the API key in the environment variable ``api_key_env`` (read
    now, as a request reads it) and, given ``url``, its secret parts (user, password, query values)."""
    key = os.environ.get(api_key_env) if api_key_env else None
    return [s for s in [key, *(_url_secret_parts(url) if url else [])] if s]


def redacted(text: str, secrets: Sequence[str]) -> str:
    """``text`` fit for an error message: each of ``secrets`` and any piece of one removed, a URL's
    ``user:password@``, the word after ``Bearer``/``Basic`` and anything token-shaped replaced
    (:func:`searchkit.credentials.scrub`)."""
    return scrub(text, secrets)


def excerpt(raw: bytes) -> str:
    """A short excerpt of an answer's body for a message, already scrubbed of token shapes (scrub
    it again with the key: :func:`redacted`)."""
    return _excerpt(raw)


def one_line(exc: BaseException, scrubbed: tuple[type[BaseException], ...] = ()) -> str:
    """An exception as one line of a message: as it is when it is one of ``scrubbed`` (an error a
    provider already redacted with its key), else its type and its text scrubbed, 300 characters at most."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if scrubbed and isinstance(exc, scrubbed):
        return text
    return f"{type(exc).__name__}: {scrub(text, ())[:300]}"


def late_text(timeout: float) -> str:
    """Why an attempt cut at its deadline failed."""
    return f"no complete answer within the {timeout:g}s deadline"


def attempts_text(tries: int) -> str:
    """``(after N attempts)``, said of the last failure once every attempt failed."""
    return f"(after {tries} attempt{'s' if tries > 1 else ''})"


def bearer_headers(api_key_env: str | None, fail: Callable[[str], Exception]) -> dict[str, str]:
    """JSON request headers, with ``Authorization: Bearer`` the key in ``api_key_env`` (read now,
    never stored) when one is named; ``fail(what)`` raised when that variable is not set."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise fail(f"environment variable {api_key_env} (the API key) is not set")
        headers["Authorization"] = "Bearer " + key
    return headers


# --------------------------------------------------------------------------- one attempt


@dataclass(frozen=True)
class Answer:
    """What an endpoint answered: its status and body. ``error`` is true for a 3xx/4xx/5xx (urllib
    raised for it; a redirect is never followed): its body is then at most
    :data:`ERROR_EXCERPT_BYTES`, read within the deadline, for a message only."""

    status: int
    reason: str
    body: bytes
    error: bool = False


class Deadline:
    """One attempt's whole-request budget: when it runs out, the connection's socket is shut down,
    so a blocked read (status line, headers or body) returns at once, however slowly the peer
    trickles. Timer thread, started on creation; :meth:`cancel` when the attempt is over."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            expired = self.expired
        if expired and sock is not None:
            _shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def opener(self) -> urllib.request.OpenerDirector:
        """A urllib opener (environment proxies as ``urlopen`` uses them) whose connections this
        deadline watches, and that never follows a redirect."""
        return urllib.request.build_opener(_WatchedHTTPHandler(self), _WatchedHTTPSHandler(self), NoRedirect())

    def watch(self, connection_class: Callable[..., http.client.HTTPConnection]) -> Callable[..., Any]:
        def make(*args: object, **kwargs: object) -> Any:
            conn: Any = connection_class(*args, **kwargs)  # its connect and _create_connection replaced below
            connect, create = conn.connect, conn._create_connection

            def create_and_watch(*a: object, **kw: object) -> socket.socket:
                sock = create(*a, **kw)
                self.attach(sock)  # the TCP socket: covers a proxy tunnel and the TLS handshake
                return sock

            def connect_and_watch() -> None:
                connect()
                self.attach(conn.sock)  # the socket the answer is read from (TLS wraps a new one)

            conn._create_connection = create_and_watch
            conn.connect = connect_and_watch
            return conn

        return make


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: urllib's handler would send the request again, Authorization header
    and all, to whatever host ``Location`` names (issue 27 item 4). The 3xx is an ``HTTPError``
    (``HTTP 302 Found``), a failure like any other; ``Location`` is never shown."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:  # noqa: ARG002 (urllib calls it with six)
        return None


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Callable[..., http.client.HTTPConnection], req: urllib.request.Request,
                **kwargs: object) -> Any:
        return super().do_open(self._deadline.watch(http_class), req, **kwargs)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Callable[..., http.client.HTTPConnection], req: urllib.request.Request,
                **kwargs: object) -> Any:
        return super().do_open(self._deadline.watch(http_class), req, **kwargs)


def read_capped(resp: http.client.HTTPResponse, guard: Deadline, cap: int) -> bytes:
    """The body, read a chunk at a time until the end, the deadline or ``cap`` bytes (then
    :class:`ResourceError`, not ``retry``; a declared ``Content-Length`` over the cap is refused before reading)."""
    declared = resp.headers.get("Content-Length") if resp.headers is not None else None
    if declared is not None and declared.strip().isdigit() and int(declared) > cap:
        raise ResourceError(f"answer of {int(declared)} bytes is over the {cap}-byte cap")
    chunks: list[bytes] = []
    total = 0
    while not guard.expired:
        chunk = resp.read1(1 << 16)
        if not chunk:
            break
        total += len(chunk)
        if total > cap:
            raise ResourceError(f"answer is over the {cap}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)


def read_quietly(e: urllib.error.HTTPError, guard: Deadline, limit: int = ERROR_EXCERPT_BYTES) -> bytes:
    """At most ``limit`` bytes of an error answer, for its message, within the deadline; the
    answer is closed after."""
    fp = getattr(e, "fp", None)
    out = b""
    try:
        while fp is not None and len(out) < limit and not guard.expired:
            chunk = fp.read1(limit - len(out)) if hasattr(fp, "read1") else fp.read(limit - len(out))
            if not chunk:
                break
            out += chunk
    except Exception:  # noqa: BLE001 - best effort for an error message
        pass
    finally:
        try:
            e.close()
        except Exception:  # noqa: BLE001
            pass
    return out


def fetch(method: str, url: str, *, headers: Mapping[str, str], timeout: float, cap: int,
          data: bytes | None = None) -> Answer:
    """One attempt: ``method`` ``url`` within ``timeout`` seconds as a whole.

    Returns:
        the :class:`Answer`, whatever its status (a 3xx/4xx/5xx with ``error`` true).

    Raises:
        ResourceError: with ``retry`` true, the connection failed or the deadline cut the attempt
            (``late``; ``cause`` is what urllib or the socket raised; the message says which, never
            the body); with ``retry`` false, the answer is over ``cap`` bytes.
        ValueError: a URL urllib cannot use.
    """
    req = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
    guard = Deadline(timeout)
    end = time.monotonic() + timeout
    try:
        try:
            with guard.opener().open(req, timeout=timeout) as resp:
                status, reason, raw = resp.status, str(resp.reason), read_capped(resp, guard, cap)
        except urllib.error.HTTPError as e:
            body = read_quietly(e, guard)
            if guard.expired:
                raise ResourceError(late_text(timeout), retry=True, late=True, cause=e) from None
            return Answer(e.code, str(e.reason), body, error=True)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:  # refused, timeout, reset
            # a socket's own timeout (``timeout`` seconds of one read) may fire before the busy timer
            # thread does: the deadline has passed all the same
            if guard.expired or (_timed_out(e) and time.monotonic() >= end):
                raise ResourceError(late_text(timeout), retry=True, late=True, cause=e) from None
            why = getattr(e, "reason", e)
            raise ResourceError(f"connection failed ({type(why).__name__}: {why})", retry=True, cause=e) from None
    finally:
        guard.cancel()
    if guard.expired:  # the body was cut short at the deadline
        raise ResourceError(late_text(timeout), retry=True, late=True)
    return Answer(status, reason, raw)


def _timed_out(e: BaseException) -> bool:
    return isinstance(getattr(e, "reason", e), TimeoutError) or isinstance(e, TimeoutError)


# --------------------------------------------------------------------------- retries


def _may_retry(e: BaseException) -> bool:
    return isinstance(e, ResourceError) and e.retry


def _nap(seconds: float) -> None:
    time.sleep(seconds)  # looked up at each call: a test may stub time.sleep


def retrying(max_retries: int, backoff: float, *, sleep: Callable[[float], None] | None = None) -> tenacity.Retrying:
    """A tenacity retrier: the call, then up to ``max_retries`` more after it raises
    a :class:`ResourceError` with ``retry`` true, the ``i``-th retry ``backoff * 2**(i-1)`` seconds after
    the failure before it; any other exception, and the last retried one, raised as they are."""
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=tenacity.wait_exponential(multiplier=backoff, exp_base=2, min=0),
        retry=tenacity.retry_if_exception(_may_retry),
        reraise=True,
        sleep=sleep or _nap,
    )


def post_json(url: str, body: Mapping[str, Any], headers: Mapping[str, str], *, timeout: float, max_retries: int,
              backoff: float, cap: int, fail: Callable[[str], Exception], quote_errors: bool = False,
              sleep: Callable[[float], None] | None = None) -> bytes:
    """``POST`` ``body`` as JSON to ``url`` and return the answer's bytes (HTTP 200): each attempt
    within ``timeout`` seconds as a whole, connection errors, timeouts and :data:`RETRY_STATUS`
    retried ``max_retries`` times (:func:`retrying`), an answer over ``cap`` bytes refused at once;
    every other failure is ``fail(what)`` (which redacts it), raised; after the last retry,
    ``fail("<last failure> (after N attempts)")``. ``what`` quotes an excerpt of an error answer
    only when ``quote_errors`` (else only its status and size: a body may echo the key or the texts)."""
    data = json.dumps(dict(body), ensure_ascii=False).encode("utf-8")

    def attempt() -> bytes:
        try:
            answer = fetch("POST", url, headers=headers, timeout=timeout, cap=cap, data=data)
        except ResourceError as e:
            if e.retry:
                raise ResourceError(str(e), retry=True) from None
            raise fail(str(e)) from None
        if answer.error:
            shown = excerpt(answer.body) if quote_errors else ""
            what = f"HTTP {answer.status} {answer.reason}" + (f": {shown}" if shown else "")
            if answer.status in RETRY_STATUS:
                raise ResourceError(what, retry=True)
            raise fail(what)
        if answer.status != 200:
            raise fail(f"HTTP {answer.status}: {excerpt(answer.body)}" if quote_errors
                       else f"HTTP {answer.status} ({len(answer.body)} bytes)")
        return answer.body

    try:
        return retrying(max_retries, backoff, sleep=sleep)(attempt)
    except ResourceError as e:
        if not e.retry:
            raise
        raise fail(f"{e} {attempts_text(max_retries + 1)}") from None


# --------------------------------------------------------------------------- fallbacks


class Rests:
    """When each of ``n`` providers (the primary first) is tried: :meth:`order` puts the ones not
    resting first, in their order, then the resting ones, soonest awake first; :meth:`failed`
    rests a provider ``cooldown`` seconds, doubled with each further failure in a row up to
    ``max_cooldown``; :meth:`answered` ends its rest. Thread-safe. ``resting_until`` (monotonic
    seconds, 0 when not resting) and ``failures_in_a_row`` are lists a caller may read."""

    def __init__(self, n: int, cooldown: float = 60.0, max_cooldown: float = 900.0) -> None:
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self.resting_until = [0.0] * n
        self.failures_in_a_row = [0] * n
        self.lock = threading.Lock()

    def order(self) -> list[int]:
        now = time.monotonic()
        with self.lock:
            ready = [i for i, t in enumerate(self.resting_until) if t <= now]
            resting = sorted((i for i, t in enumerate(self.resting_until) if t > now),
                             key=lambda i: self.resting_until[i])
        return ready + resting

    def failed(self, i: int) -> float:
        """Provider ``i`` failed: it rests; returns for how many seconds."""
        with self.lock:
            self.failures_in_a_row[i] += 1
            rest = min(self.max_cooldown, self.cooldown * 2 ** min(self.failures_in_a_row[i] - 1, 30))
            self.resting_until[i] = time.monotonic() + rest
        return rest

    def answered(self, i: int) -> bool:
        """Provider ``i`` answered: no rest, no failures in a row; returns whether it was resting
        (had failed before)."""
        with self.lock:
            was_resting = self.resting_until[i] > 0
            self.resting_until[i] = 0.0
            self.failures_in_a_row[i] = 0
        return was_resting

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (an embedder's rests travel to Ray workers, ``searchkit.scale``): the lock is
        left out and made anew."""
        with self.lock:
            state = dict(vars(self))
        del state["lock"]
        state["resting_until"] = list(state["resting_until"])
        state["failures_in_a_row"] = list(state["failures_in_a_row"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self.lock = threading.Lock()
