"""Warp's pluggable logger (wp.Logger, wp.get_logger, wp.set_logger, wp.ScopedLogger, wp.ScopedLogLevel).

The active logger receives the messages Warp sends through it and mlwarp emits too: `wp.config.print_launches`
lines (info) and the messages of wp.ScopedMemoryTracker users pass no report_func to go to stdout as Warp's do.
Messages below `wp.config.log_level` are dropped, as in Warp; errors are always emitted.
"""

from __future__ import annotations

import sys
import warnings
from typing import Protocol, runtime_checkable

from mlwarp.core.config import LOG_DEBUG, LOG_INFO, LOG_WARNING, config

__all__ = ["Logger", "get_logger", "set_logger", "ScopedLogger", "ScopedLogLevel"]


@runtime_checkable
class Logger(Protocol):
    """What a Warp logger is: any object with these four methods (Warp's protocol)."""

    def debug(self, message: str) -> None: ...

    def info(self, message: str) -> None: ...

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None: ...

    def error(self, message: str) -> None: ...


def _validate_logger(logger) -> None:
    if not isinstance(logger, Logger) or not all(
            callable(getattr(logger, m, None)) for m in ("debug", "info", "warning", "error")):
        raise TypeError(
            "logger must implement the Logger protocol "
            "(debug(message), info(message), warning(message, category, stacklevel), error(message)), "
            f"got {type(logger)!r}")


class LoggerBasic:
    """The default logger (Warp's): debug and info to stdout, warnings through `warnings.warn`, errors to stderr
    prefixed "Warp Error: "."""

    def debug(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def info(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None:
        warnings.warn(message, category, stacklevel=stacklevel + 1)

    def error(self, message: str) -> None:
        sys.stderr.write("Warp Error: " + message + "\n")


_active: Logger = LoggerBasic()


def set_logger(logger: Logger | None) -> None:
    """Makes `logger` the active one; None restores the default. TypeError when it lacks a method."""
    global _active
    if logger is None:
        _active = LoggerBasic()
        return
    _validate_logger(logger)
    _active = logger


def get_logger() -> Logger:
    return _active


def log_debug(message: str) -> None:
    if config.log_level <= LOG_DEBUG:
        _active.debug(message)


def log_info(message: str) -> None:
    if config.log_level <= LOG_INFO:
        _active.info(message)


def log_warning(message: str, category=None, stacklevel: int = 1) -> None:
    if config.log_level <= LOG_WARNING:
        _active.warning(message, category=category, stacklevel=stacklevel + 2)


def log_error(message: str) -> None:
    _active.error(message)


class ScopedLogger:
    """Installs `logger` (None: the default one) for the scope, and restores the previous one on exit."""

    def __init__(self, logger: Logger | None):
        if logger is not None:
            _validate_logger(logger)
        self.logger = logger

    def __enter__(self):
        self.saved = get_logger()
        set_logger(self.logger if self.logger is not None else LoggerBasic())
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        global _active
        _active = self.saved  # (not set_logger: no validation that could mask an exception in flight)


class ScopedLogLevel:
    """Sets `wp.config.log_level` for the scope."""

    def __init__(self, log_level: int):
        self.log_level = log_level

    def __enter__(self):
        self.saved = config.log_level
        config.log_level = self.log_level
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        config.log_level = self.saved
