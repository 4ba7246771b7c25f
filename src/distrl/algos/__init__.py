"""Learning algorithms and the off-policy targets they share (Retrace, n-step returns, DPER)."""

from distrl.algos.returns import RetraceOutput, dper_priority, n_step_returns, retrace_targets

__all__ = ["RetraceOutput", "dper_priority", "n_step_returns", "retrace_targets"]
