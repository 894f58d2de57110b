"""Issue 39 item 12(c): the message scrubber keeps an exception's class name.

An embedder that could not connect said ``connection failed ([redacted]: [Errno 111] Connection
refused)``: ``searchkit.credentials.scrub`` took ``ConnectionRefusedError`` (a long run mixing cases)
for a token. A name shaped like an exception class (CamelCase words ending in Error, Exception or
Warning, optionally after a dotted module path) is kept; keys, token shapes and the secrets given
are still removed, the name included when it is one of them."""
import socket

import pytest

from searchkit.credentials import scrub
from searchkit.errors import ResourceError
from searchkit.index.embedders import OpenAIEmbedder


@pytest.mark.parametrize("name", [
    "ConnectionRefusedError", "ConnectionResetError", "ConnectionAbortedError", "NewConnectionError",
    "requests.exceptions.ConnectionError", "urllib3.exceptions.NewConnectionError", "IncompleteReadException",
    "InsecureRequestWarning", "http.client.RemoteDisconnected", "socket.gaierror",
])
def test_an_exception_name_is_kept(name):
    text = f"connection failed ({name}: [Errno 111] Connection refused)"
    assert scrub(text, ()) == text


@pytest.mark.parametrize("secret", [
    "sk-proj-AbCdEf1234567890XyZaBcDeF", "AbCdEfGhIjKlMnOpQrStUvWx", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "CorrectHorseBatteryStapleLongPass", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnopqrstuv",
    "ab12Cd34Ef56Gh78Error", "XyzError9876543210abcdefError",
])
def test_secrets_are_still_removed(secret):
    out = scrub(f"ConnectionRefusedError: denied for {secret} at host", ())
    assert secret not in out and out.startswith("ConnectionRefusedError: denied for ")


def test_a_given_secret_is_removed_even_when_shaped_like_a_name():
    assert "SecretValueError" not in scrub("failed: SecretValueError", ["SecretValueError"])


def test_an_embedder_that_cannot_connect_names_the_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    emb = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", dim=8, max_retries=0, timeout=5)
    with pytest.raises(ResourceError) as e:
        emb.embed_queries(["x"])
    assert "ConnectionRefusedError" in str(e.value) and "[redacted]" not in str(e.value), str(e.value)
