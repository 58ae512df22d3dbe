"""A tensor read from a checkpoint, held to what the trainer writes there: one dense CPU
tensor of a known dtype, finite. torch.load (weights_only) also rebuilds sparse, meta,
quantized and nested tensors and any dtype; such a tensor ended in torch's own error naming
no file, or an int, bool or complex one was used as if it were the trained weights."""

from __future__ import annotations

import pickle
import re
import warnings

import torch

# The notes torch.load prints when it rebuilds a quantized tensor (the deprecations of
# TypedStorage and of quantized tensors): torch's own, not the user's, and such a tensor is
# refused by name after the load. Other warnings of a load are left to show.
_QUANTIZED_LOAD_NOTES = ("TypedStorage is deprecated",
                         r"torch\.quantize_per_tensor, torch\.quantize_per_channel and other quantized tensor")


def load_weights(source, mmap: bool = False):
    """A checkpoint (a path or a file object) as torch.load reads it, weights only, onto the
    CPU, without the notes a quantized tensor brings; with `mmap` (a path only) its tensors
    stay in the file, mapped, and are read from disk only where used."""
    with warnings.catch_warnings():
        for note in _QUANTIZED_LOAD_NOTES:
            warnings.filterwarnings("ignore", message=note, category=UserWarning)
        try:
            return torch.load(source, map_location="cpu", weights_only=True, mmap=mmap)
        except pickle.UnpicklingError as exc:  # torch's text advises loading it with code run: not ours to pass on
            found = re.search(r"GLOBAL ([\w.]+)", str(exc))
            raise pickle.UnpicklingError(
                "holds Python objects beyond tensors" + (f" ({found[1]})" if found else "")
                + ", which a checkpoint of weights does not; not loaded") from None


def _kind_problem(value) -> str | None:
    """What makes `value` other than a dense CPU tensor, or None."""
    if not torch.is_tensor(value):
        return f"is {type(value).__name__}, not a tensor"
    if value.is_quantized:
        return "is a quantized tensor, expected a dense one"
    if value.is_nested or value.layout is not torch.strided:
        return f"is a tensor of layout {str(value.layout).removeprefix('torch.')}, expected a dense one"
    if value.device.type != "cpu":  # loaded with map_location="cpu": only meta stays elsewhere (it holds no data)
        return f"is a tensor on the {value.device.type} device, expected one on the CPU"
    return None


def tensor_problem(value, where: str, dtype: torch.dtype, shape: tuple | None = None,
                   finite: bool = True) -> str | None:
    """Why `value` (the field `where`) is not a dense, finite (where `finite`) CPU tensor of
    `dtype` (and of `shape`, where None in it takes any length), or None."""
    if problem := _kind_problem(value):
        return f"{where} {problem}"
    if value.dtype != dtype:
        return f"{where} is {str(value.dtype).removeprefix('torch.')}, expected {str(dtype).removeprefix('torch.')}"
    if shape is not None and (value.dim() != len(shape)
                              or any(want is not None and n != want for n, want in zip(value.shape, shape))):
        return f"{where} has shape {tuple(value.shape)}, expected {len(shape)} dimension(s)" + (
            "" if None in shape else f" {shape}")
    if finite and value.is_floating_point() and not bool(torch.isfinite(value).all()):
        return f"{where} holds NaN or inf"
    return None


def tree_problem(tree, where: str, dtype_of) -> str | None:
    """The first tensor problem in a nested dict/list `tree`, each tensor held to the dtype
    `dtype_of(its field)` gives; values that are not tensors are left to their readers."""
    if isinstance(tree, dict):
        return next((p for key, value in tree.items() if (p := tree_problem(value, f"{where}.{key}", dtype_of))),
                    None)
    if isinstance(tree, (list, tuple)):
        return next((p for i, value in enumerate(tree) if (p := tree_problem(value, f"{where}[{i}]", dtype_of))),
                    None)
    if torch.is_tensor(tree):
        return tensor_problem(tree, where, dtype_of(where))
    return None
