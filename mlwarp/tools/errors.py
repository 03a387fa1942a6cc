"""The tool's one error type (a leaf module: the option parser and the MLIR driver both raise it)."""


class ToolError(Exception):
    """A failure reported as `mlwarp-opt: error: <message>` and exit status 1."""
