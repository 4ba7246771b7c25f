"""Reading torch files that a user points at (``--resume``, ``eval --checkpoint``): data only.

A checkpoint is tensors, numbers and strings, so it is loaded with ``weights_only=True``:
unpickling arbitrary objects from a file would run arbitrary code. torch reports a damaged, foreign
or code-carrying file with exceptions of many types whose messages run to paragraphs of advice
(including "re-run with weights_only=False", exactly what must not be done with a file one does
not trust). :func:`read_torch_file` turns each into one line that names the file, the problem and
the fix.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch

from distrl.errors import InputError, describe_os_error, first_sentence


def read_torch_file(
    path: Path, what: str, fix: str, error_type: type[InputError] = InputError
) -> Any:
    """The data saved at ``path`` by ``torch.save``, or ``error_type`` with one line
    ``"<what> <path>: cannot be read (<problem>); <fix>"``."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        problem = "no such file"
    except IsADirectoryError:
        problem = "it is a folder, not a file"
    except OSError as error:
        problem = describe_os_error(error)
    except pickle.UnpicklingError as error:
        problem = _unpickling_problem(str(error))
    except EOFError:
        problem = "it is empty or cut short"
    except RuntimeError as error:
        # torch's zip reader: "PytorchStreamReader failed reading zip archive: ..." and kin.
        problem = f"damaged or cut short: {first_sentence(str(error))}"
    except Exception as error:  # noqa: BLE001 (torch raises many types for a foreign file)
        problem = f"{type(error).__name__}: {first_sentence(str(error))}"
    raise error_type(f"{what} {path}: cannot be read ({problem}); {fix}") from None


def _unpickling_problem(message: str) -> str:
    """What a ``weights_only`` refusal means, in words; torch's own text is advice on how to
    load the file unsafely, which is not passed on."""
    if "Unsupported global" in message or "GLOBAL" in message:
        return (
            "it holds Python objects, not only tensors and plain data, and loading them could "
            "run code"
        )
    return "not a torch checkpoint: damaged, or another kind of file"
