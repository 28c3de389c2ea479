"""Inference backends: where a loaded encoder or cross-encoder runs its forward passes.

``"torch"`` runs the model as loaded; ``"onnx"`` its transformer on ONNX Runtime, exported once
per weights digest into ``$PAIRLAB_CACHE_DIR/models/onnx/``; ``"onnx-int8"`` its dynamic int8
quantisation (another model: outputs cached apart). Not sentence-transformers' ``backend="onnx"``:
optimum-onnx requires transformers < 4.58. A failure is an error naming the fix, never torch.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import os
import time
import warnings
import weakref
from contextlib import contextmanager
from pathlib import Path

from ..io import locked, write_atomic
from ..paths import cache_dir

__all__ = [
    "BACKENDS",
    "ENV",
    "INSTALL",
    "InferenceBackendError",
    "backend",
    "cache_tag",
    "chosen",
    "for_inference",
    "recording_exports",
    "use",
]

BACKENDS = ("torch", "onnx", "onnx-int8")
ENV = "PAIRLAB_INFERENCE_BACKEND"
INSTALL = "pip install -c constraints.txt -e '.[onnx]'"
FILES = {"onnx": "model.onnx", "onnx-int8": "model_qint8.onnx"}
_RECORDERS: list[list[dict]] = []  # the lists of the open recording_exports() blocks
_DIGESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (versions, digest)


class InferenceBackendError(RuntimeError):
    """The chosen backend cannot run here (its packages are missing, or the export failed)."""


def _check(name, what: str = "inference backend") -> str:
    if name not in BACKENDS:
        raise ValueError(f"{what} must be one of {BACKENDS}, got {name!r}")
    return name


_chosen = ("torch", None)  # use()'s choice: (every model's backend, cross-encoders' own or None)


def chosen() -> tuple[str, str | None]:
    """What :func:`use` chose, ``(encoder, cross_encoder)``: torch and None until it is called."""
    return _chosen


def backend(kind: str = "encoder") -> str:
    """The backend ``kind``'s (``"encoder"`` or ``"cross-encoder"``) forward passes run on now:
    ``$PAIRLAB_INFERENCE_BACKEND``, else what :func:`use` chose for that kind, else torch."""
    if kind not in ("encoder", "cross-encoder"):
        raise ValueError(f"kind must be one of ('encoder', 'cross-encoder'), got {kind!r}")
    if value := os.environ.get(ENV):
        return _check(value, f"${ENV}")
    encoder, cross_encoder = _chosen
    return cross_encoder or encoder if kind == "cross-encoder" else encoder


def use(name: str | tuple, *, cross_encoder: str | None = None) -> str:
    """Choose ``name`` for this process, and ``cross_encoder`` for cross-encoders alone (None:
    ``name``; ConcatBERT's strata, which no run folder reads, may run on int8); a pair from
    :func:`chosen` sets both. Returns the backend in force ($PAIRLAB_INFERENCE_BACKEND wins)."""
    global _chosen
    if isinstance(name, tuple):
        name, cross_encoder = name
    _chosen = (_check(name), None if cross_encoder is None else _check(cross_encoder))
    return backend()


@contextmanager
def recording_exports():
    """The exports made while the block runs, as a list that fills as they happen: one
    ``{"kind", "backend", "digest", "seconds"}`` each (none where the cache had them)."""
    made: list[dict] = []
    _RECORDERS.append(made)
    try:
        yield made
    finally:
        _RECORDERS.remove(made)


def cache_tag(name: str | None = None) -> list[str]:
    """What cache keys of model outputs add for the backend (``name``, default: the encoders' in
    force): nothing for torch and float32 ONNX (equal within rounding), else its name."""
    return ["onnx-int8"] if (name or backend()) == "onnx-int8" else []


def for_inference(model, *, name: str | None = None):
    """``model`` as backend ``name`` (default: :func:`backend`) runs it: itself under torch,
    else a shallow copy whose transformer runs on ONNX Runtime, exported from its weights."""
    name = _check(name or backend())
    if name == "torch":
        return model
    try:
        import onnx  # noqa: F401  (torch's exporter writes through it)
        import onnxruntime  # noqa: F401
    except ImportError as missing:
        raise InferenceBackendError(
            f"inference backend {name!r} needs ONNX Runtime ({missing.name} is not installed): "
            f"{INSTALL}, or set {ENV}=torch to run on torch"
        ) from None
    import torch

    first = model[0]
    transformer = getattr(first, "model", None)
    output = getattr(first, "modality_config", {}).get("text", {}).get("method_output_name")
    if transformer is None or not isinstance(output, str):
        raise InferenceBackendError(
            f"{type(model).__name__} has no text transformer at [0] to run "
            f"on ONNX Runtime; set {ENV}=torch"
        )
    session = _session(str(_exported(first, output, name)), torch.get_num_threads())
    forward = _onnx_forward()(session, transformer.config, output)
    runner, swapped = copy.copy(model), copy.copy(first)
    swapped._modules = dict(first._modules, model=forward)
    runner._modules = dict(model._modules, **{next(iter(model._modules)): swapped})
    return runner


@functools.cache
def _onnx_forward():
    import torch

    class OnnxForward(torch.nn.Module):
        """A transformer's forward pass on an ONNX Runtime session: the tokenizer's tensors in,
        ``{output: tensor}`` out, as sentence-transformers reads the torch model's output."""

        def __init__(self, session, config, output: str):
            super().__init__()
            self.session, self.config, self.output = session, config, output
            self.inputs = [i.name for i in session.get_inputs()]

        @property
        def device(self):
            return torch.device("cpu")  # outputs come back as CPU tensors

        def forward(self, **features) -> dict:  # the export's inputs are the tokenizer's
            feeds = {n: features[n].detach().cpu().numpy() for n in self.inputs}
            return {self.output: torch.from_numpy(self.session.run(None, feeds)[0])}

    return OnnxForward


def weights_digest(module) -> str:
    """A 32-hex digest of ``module``'s class, config and every weight; recomputed only after a
    weight changed in place (training)."""
    import torch

    tensors = list(module.state_dict().items())
    versions = tuple(t._version for _, t in tensors)
    known = _DIGESTS.get(module)
    if known is not None and known[0] == versions:
        return known[1]
    config = getattr(module, "config", None)
    digest = hashlib.sha256(
        f"{type(module).__name__}\n{config.to_json_string() if config else ''}".encode()
    )
    with torch.no_grad():
        for key, tensor in tensors:
            flat = tensor.detach().to("cpu").contiguous().reshape(-1)
            digest.update(f"{key}|{flat.dtype}|{tuple(tensor.shape)}".encode())
            digest.update(flat.view(torch.uint8).numpy().data if flat.numel() else b"")
    _DIGESTS[module] = (versions, digest.hexdigest()[:32])
    return _DIGESTS[module][1]


def _exported(first, output: str, name: str) -> Path:
    """The ONNX file of ``first``'s transformer for backend ``name``, exported (and for int8
    quantised) unless an earlier export of the same weights left it in the cache."""
    digest = weights_digest(first.model)
    folder = cache_dir() / "models" / "onnx" / digest
    with locked(folder.with_name(f"{digest}.lock")):  # a second process waits, then loads it
        for step in dict.fromkeys(("onnx", name)):
            if (folder / FILES[step]).is_file():
                continue
            start = time.perf_counter()
            try:
                write_atomic(
                    folder / FILES[step],
                    lambda tmp: _write(step, first, output, folder, tmp),
                    setting="$PAIRLAB_CACHE_DIR",
                )
            except Exception as error:  # an architecture the exporter cannot trace, a full disk
                first_line = (str(error).strip().splitlines() or [""])[0][:300]
                raise InferenceBackendError(
                    f"exporting {type(first.model).__name__} for {step!r} failed "
                    f"({type(error).__name__}: {first_line}); set {ENV}=torch to run on torch"
                ) from error
            seconds = time.perf_counter() - start
            kind = type(first.model).__name__
            for made in _RECORDERS:
                made.append({"kind": kind, "backend": step, "digest": digest, "seconds": seconds})
    return folder / FILES[name]


def _write(step: str, first, output: str, folder: Path, tmp: Path) -> None:
    if step == "onnx":
        _export_float32(first, output, tmp)
        return
    from onnxruntime.quantization import QuantType, quantize_dynamic

    cpuinfo = Path("/proc/cpuinfo")  # reduce_range where the CPU lacks VNNI (saturation)
    vnni = cpuinfo.is_file() and any(f in cpuinfo.read_text() for f in ("avx512_vnni", "avx_vnni"))
    quantize_dynamic(
        folder / FILES["onnx"],
        tmp,
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=not vnni,
    )


def _export_float32(first, output: str, path: Path) -> None:
    """``torch.onnx.export`` of the transformer (batch and sequence axes dynamic), its inputs the
    tokenizer's tensors in the order its ``forward`` names them."""
    import torch

    model = first.model
    sample = first.preprocess(["an example sentence", "a second, longer example sentence"])
    names = [n for n in inspect.signature(model.forward).parameters if n in sample]

    class Positional(torch.nn.Module):  # the exporter passes inputs positionally
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            return self.model(**dict(zip(names, tensors)), return_dict=True)[output]

    was_training, inputs = model.training, tuple(sample[n].cpu() for n in names)
    model.eval()
    try:  # the tracer's warnings concern branches on shapes that the parity tests cover
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shape = Positional()(*inputs).shape  # (batch, sequence, dim) or (batch, labels)
            axes = {n: {0: "batch", 1: "sequence"} for n in names}
            axes[output] = {0: "batch", 1: "sequence"} if len(shape) == 3 else {0: "batch"}
            torch.onnx.export(  # dynamo=False: the dynamo exporter needs onnxscript, and is slower
                Positional(),
                inputs,
                str(path),
                input_names=names,
                output_names=[output],
                opset_version=17,
                dynamic_axes=axes,
                dynamo=False,
            )
    finally:
        model.train(was_training)


@functools.lru_cache(maxsize=4)
def _session(file: str, threads: int):
    """An ONNX Runtime session on ``file``, its thread pool as wide as torch's."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        file, options, providers=onnxruntime.get_available_providers()
    )
