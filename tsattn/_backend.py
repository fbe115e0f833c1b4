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


@contextlib.contextmanager
def gradient_functions_released():
    """Drop, at the end of the block, the gradient functions TensorFlow registered in it for ``tf.custom_gradient``.

    TensorFlow keeps each such function in a global registry (keys ``CustomGradient-N``) until the process ends, and
    its closure holds the whole traced graph (tensorflow/tensorflow#97697). Keras' optimizer traces one per compiled
    training function (the all-reduce of the gradients, even on one device), so every fit kept its graphs: 11 MB
    (simple-rnn) to 94 MB (tft) of resident memory per fit, 0 to 4 with this (benchmarks/results/fit_memory.md).
    Dropping them after training is safe: a traced function holds its gradient graph already, and a retrace
    registers anew. Only keys added inside the block go (a gradient registered elsewhere meanwhile, in another
    thread, could go too: tsattn trains in one thread per process). Where TensorFlow's registry is not where this
    looks, nothing is done."""
    registry = _gradient_registry()
    if registry is None:
        yield
        return
    before = custom_gradient_keys()
    try:
        yield
    finally:
        for key in custom_gradient_keys() - before:
            registry.pop(key, None)


def _gradient_registry() -> dict | None:
    """TensorFlow's global gradient registry (name -> entry), or None where it is not where this looks."""
    try:
        from tensorflow.python.framework import ops

        registry = ops._gradient_registry._registry
    except (ImportError, AttributeError):
        return None
    return registry if isinstance(registry, dict) else None


def custom_gradient_keys() -> set:
    """The keys of the gradient functions ``tf.custom_gradient`` has registered and nobody dropped (empty where the
    registry is not found)."""
    registry = _gradient_registry()
    return {key for key in registry if str(key).startswith("CustomGradient-")} if registry is not None else set()


__all__ = ["tf", "keras", "gradient_functions_released", "custom_gradient_keys"]
