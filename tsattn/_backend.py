"""Import TensorFlow/Keras once, without TensorFlow's native start-up log on stderr.

TensorFlow 2.21 writes its oneDNN / CUDA-stub / cuInit notices straight to file descriptor 2 before its
logging is configured (TF_CPP_MIN_LOG_LEVEL does not silence them), so the import and the first device
query run with descriptor 2 pointed at /dev/null. Set TSATTN_TF_LOGS=1 to see them.
"""

from __future__ import annotations

import contextlib
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


@contextlib.contextmanager
def _native_stderr_silenced():
    if os.environ.get("TSATTN_TF_LOGS") == "1":
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real descriptor 2 (some embedded interpreters)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


with _native_stderr_silenced():
    import tensorflow as tf

    tf.config.list_physical_devices()  # triggers the device probe (cuInit message) while silenced
    tf.get_logger().setLevel("ERROR")
    import keras  # noqa: F401

__all__ = ["tf", "keras"]
