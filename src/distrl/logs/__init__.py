"""What distrl reports while it runs: progress lines (:mod:`logging`) and scalar trackers.

* :mod:`distrl.logs.stderr`: the command line's log handler. Module loggers under ``distrl``
  write progress lines (``logging.INFO``) to stderr when it is not a terminal (a log file, a CI
  job), where no progress bar is drawn; on a terminal the bar says the same and only warnings are
  written.
* :mod:`distrl.logs.scalars`: the scalars of a run, to TensorBoard always and to Weights & Biases
  when ``log.wandb`` is on.
"""
