"""Exceptions of the fp8mlir package."""


class Diagnostic:
    """One compiler diagnostic: severity ("error", "warning", ...), location
    ("file:line:col"), message, and the text as mlir-opt prints it."""

    def __init__(self, severity, location, message, text):
        self.severity = severity
        self.location = location
        self.message = message
        self.text = text

    def __repr__(self):
        return f"Diagnostic({self.severity!r}, {self.location!r}, {self.message!r})"

    def __str__(self):
        return self.text.rstrip("\n")


class CompileError(Exception):
    """The compilation failed; ``diagnostics`` holds every diagnostic."""

    def __init__(self, message, diagnostics=()):
        self.diagnostics = list(diagnostics)
        details = "\n".join(str(d) for d in self.diagnostics)
        super().__init__(f"{message}\n{details}" if details else message)


class CompilerUnavailableError(RuntimeError):
    """libFP8CAPI.so is not there (only precompiled kernels can run)."""
