"""Errors shared by the tools."""
from __future__ import annotations


class ParameterError(ValueError):
    """A bad tool parameter: ``param`` names it, the message says what is wrong; nothing was searched."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
