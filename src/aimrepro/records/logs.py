"""The log of a run: logging, warnings and stderr of a step, into its log file.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

from aimrepro.records.files import PathLike


@contextlib.contextmanager
def capture_log(log_path: PathLike, *, level: int = logging.INFO) -> Iterator[logging.Logger]:
    """Send ``logging`` records and ``stderr`` of this process to a log file.

    Used by the workflow scripts so that progress messages of the science
    code (``logging.getLogger("aimrepro...")``), warnings and tracebacks end
    up in the step's log.  An exception raised in the body is logged with
    its traceback and re-raised.

    Parameters
    ----------
    log_path : path
        The log file (truncated).
    level : int
        Threshold for the ``aimrepro`` loggers.  Other libraries log at
        WARNING and above only (fontTools alone writes hundreds of INFO lines
        per saved PDF).

    Yields
    ------
    logging.Logger
        The ``aimrepro`` logger, for the script's own messages.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    run_logger = logging.getLogger("aimrepro")
    old_levels = (root.level, run_logger.level)
    with open(log_path, "w", encoding="utf-8", buffering=1) as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
        run_logger.setLevel(level)
        logging.captureWarnings(True)
        old_stderr = sys.stderr
        sys.stderr = stream
        try:
            yield run_logger
        except BaseException:
            run_logger.exception("step failed")
            raise
        finally:
            sys.stderr = old_stderr
            logging.captureWarnings(False)
            root.removeHandler(handler)
            root.setLevel(old_levels[0])
            run_logger.setLevel(old_levels[1])
