"""Learning algorithms and the off-policy targets they share (Retrace, DPER; n-step returns are
Retrace's on-policy reference in tests)."""

from distrl.algos.returns import RetraceOutput, dper_priority, n_step_returns, retrace_targets

__all__ = ["RetraceOutput", "dper_priority", "n_step_returns", "retrace_targets"]
