"""The tool's error types (a leaf module: the option parser and the MLIR driver both raise them)."""


class ToolError(Exception):
    """A failure reported as `mlwarp-opt: error: <message>` and exit status 1."""


class DiagnosticsError(ToolError):
    """An input that failed: the message is its first error; `errors` all of them, [(file:line:col or None,
    message)], which -verify-diagnostics matches against the input's expected-error comments."""

    def __init__(self, message: str, errors: list):
        super().__init__(message)
        self.errors = errors
