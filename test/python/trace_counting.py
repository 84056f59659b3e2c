"""Counting whole-kernel traces in a test: the tracing frontend's retrace behaviour
(loop-unroll hints, in-place loop retries) is checked by how many times
``trace_build.traced_function`` ran a kernel's Python."""
from nki_mlir.frontend import trace_build


def count_traces(monkeypatch) -> list:
    """Patch the tracer so that every run of a traced function appends its name to the
    returned list (restored by ``monkeypatch`` at the end of the test)."""
    runs = []
    real = trace_build.traced_function

    def counting(fn):
        traced = real(fn)

        def run(*a, **k):
            runs.append(fn.__name__)
            return traced(*a, **k)
        return run
    monkeypatch.setattr(trace_build, "traced_function", counting)
    return runs
