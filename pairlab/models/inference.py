"""Inference backends: where a loaded encoder or cross-encoder runs its forward passes.

``"torch"`` runs the model as loaded. ``"onnx"`` runs its transformer on ONNX Runtime, float32;
``"onnx-int8"`` on ONNX Runtime's dynamic int8 quantisation of it (opt-in: a different model,
see :data:`INT8_NOTE`). Training stays in torch: :func:`for_inference` gives the model a forward
pass should run on. sentence-transformers still tokenises, batches, pools and normalises; only
the transformer's forward pass moves, exported from the model's current weights (a just-trained
model included) with ``torch.onnx.export`` once per digest of those weights, into
``$PAIRLAB_CACHE_DIR/models/onnx/<digest>/``, so a re-run or a shared seed-round model never
exports twice. Each export's seconds go to whoever records them (:func:`recording_exports`).

Why not sentence-transformers' own ``backend="onnx"``: it loads through optimum-onnx, whose only
releases (up to 0.1.0) require transformers < 4.58, and pairlab pins transformers 5.23; the
OpenVINO route (optimum-intel 2.2) requires transformers < 5.6. This module does what that path
does underneath (export with torch's exporter, run on an ONNX Runtime session, quantise with
``onnxruntime.quantization.quantize_dynamic``) and should give way to it once optimum supports
transformers 5.

The backend is ``$PAIRLAB_INFERENCE_BACKEND`` when set (``PAIRLAB_INFERENCE_BACKEND=torch``
turns ONNX off whatever a profile says), else what :func:`use` chose for this process (a
notebook's ``inference_backend`` parameter; for cross-encoders its ``concat_backend`` where it
has one: a :class:`Backends`, which :func:`chosen` returns and Ray workers are handed as an
argument), else torch. Choosing writes no environment variable: one notebook's choice never
reaches another process. A missing package or a failed export is an error
naming the fix, never a quiet return to torch. Float32 ONNX output equals torch's within float
rounding (tested: cosine within 1e-5), as a GPU's or another thread count's does, so cached
embeddings and logits are shared between the two (and, like those, it may break a near-tie in
a selection differently); int8 output is cached apart (:func:`cache_tag`). The pretrained
encoder named by a path, whose embeddings the evaluation strata are drawn from, always runs on
torch (:func:`pairlab.models.embed.encode`), so strata never depend on the backend.
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
from dataclasses import dataclass
from pathlib import Path

from ..io import write_atomic
from ..paths import cache_dir
from ..tempfiles import locked

__all__ = [
    "BACKENDS",
    "ENV",
    "Backends",
    "INSTALL",
    "INT8_NOTE",
    "InferenceBackendError",
    "backend",
    "cache_tag",
    "check_backend",
    "chosen",
    "for_inference",
    "recording_exports",
    "use",
    "weights_digest",
]

BACKENDS = ("torch", "onnx", "onnx-int8")
ENV = "PAIRLAB_INFERENCE_BACKEND"  # the user's: wins over every parameter
KINDS = ("encoder", "cross-encoder")
INSTALL = "pip install -c constraints.txt -e '.[onnx]'"
INT8_NOTE = (
    "dynamic int8 quantisation changes scores beyond float rounding: it is another "
    "model, cached apart; tests/test_onnx.py checks its all-pairs AP (the pretrained "
    "encoder's and a trained ConcatBERT's) against the float32 model's 95% interval on "
    "the smoke pools"
)
FILES = {"onnx": "model.onnx", "onnx-int8": "model_qint8.onnx"}
_RECORDERS: list[list[dict]] = []  # the lists of the open recording_exports() blocks

_DIGESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (versions, digest)


class InferenceBackendError(RuntimeError):
    """The chosen backend cannot run here (its packages are missing, or the export failed)."""


def check_backend(name) -> str:
    """``name`` if it is one of :data:`BACKENDS`, else a ``ValueError`` naming it."""
    if name not in BACKENDS:
        raise ValueError(f"inference backend must be one of {BACKENDS}, got {name!r}")
    return name


@dataclass(frozen=True)
class Backends:
    """The backends chosen for a process: ``encoder`` for every model, ``cross_encoder`` for
    cross-encoders alone (None: ``encoder``'s)."""

    encoder: str = "torch"
    cross_encoder: str | None = None

    def __post_init__(self):
        check_backend(self.encoder)
        if self.cross_encoder is not None:
            check_backend(self.cross_encoder)

    def of(self, kind: str) -> str:
        """The backend chosen for ``kind`` (``"encoder"`` or ``"cross-encoder"``)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if kind == "cross-encoder" and self.cross_encoder is not None:
            return self.cross_encoder
        return self.encoder


_chosen = Backends()  # this process's choice (use()); never written to the environment


def chosen() -> Backends:
    """What :func:`use` chose for this process (torch for both until it is called)."""
    return _chosen


def backend(kind: str = "encoder") -> str:
    """The backend ``kind``'s forward passes (an encoder's or a cross-encoder's) run on now:
    ``$PAIRLAB_INFERENCE_BACKEND``, else what :func:`use` chose for that kind, else torch."""
    choice = _chosen.of(kind)
    value = os.environ.get(ENV)
    if value:
        if value not in BACKENDS:
            raise ValueError(f"${ENV} must be one of {BACKENDS}, got {value!r}")
        return value
    return choice


def use(name: str | Backends, *, cross_encoder: str | None = None) -> str:
    """Choose ``name`` for this process, and ``cross_encoder`` for cross-encoders alone (None:
    ``name``); a :class:`Backends` sets both. ``$PAIRLAB_INFERENCE_BACKEND``, the user's, still
    wins. Returns the backend in force. A later call replaces the whole choice.

    The two differ where a cross-encoder's scoring is the cost and its outputs are read by no
    run folder (ConcatBERT's evaluation strata: notebooks 02 and 04 may score them on int8 while
    CosineBERT's runs, whose folders int8 would change, stay on torch)."""
    global _chosen
    _chosen = name if isinstance(name, Backends) else Backends(name, cross_encoder)
    return backend()


def _record(export: dict) -> None:
    for made in _RECORDERS:
        made.append(export)


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


def cache_tag(name: str | None = None, *, kind: str = "encoder") -> list[str]:
    """What cache keys of model outputs add for the backend (``name``, default: ``kind``'s in
    force): nothing for torch and float32 ONNX (equal within rounding), the backend's name where
    it computes another model's outputs."""
    return ["onnx-int8"] if (name or backend(kind)) == "onnx-int8" else []


def for_inference(model, *, name: str | None = None):
    """``model`` (a torch ``SentenceTransformer`` or ``CrossEncoder``) as backend ``name``
    (default: :func:`backend`) runs it: ``model`` itself under torch, else a shallow copy whose
    transformer runs on ONNX Runtime from an export of its current weights (settings such as
    the sequence length are the model's own, read now)."""
    name = check_backend(name or backend())
    if name == "torch":
        return model
    _require_onnx(name)
    first = model[0]
    transformer = getattr(first, "model", None)
    output = getattr(first, "modality_config", {}).get("text", {}).get("method_output_name")
    if transformer is None or not isinstance(output, str):
        raise InferenceBackendError(
            f"{type(model).__name__} has no text transformer at [0] to run "
            f"on ONNX Runtime; set {ENV}=torch"
        )
    file = _exported(first, output, name)
    session = _session(str(file), _threads())
    runner, swapped = copy.copy(model), copy.copy(first)
    swapped._modules = dict(
        first._modules, model=_forward_class()(session, transformer.config, output)
    )
    runner._modules = dict(model._modules, **{next(iter(model._modules)): swapped})
    return runner


@functools.cache
def _forward_class():
    """:class:`OnnxForward`'s class, made on first use (torch is imported lazily)."""
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

        def forward(self, **features) -> dict:
            missing = [n for n in self.inputs if n not in features]
            if missing:
                raise ValueError(
                    f"the exported model needs inputs {missing}, which the tokenizer did not give"
                )
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
        for step in ("onnx", name) if name != "onnx" else ("onnx",):
            if (folder / FILES[step]).is_file():
                continue
            start = time.perf_counter()
            try:
                write_atomic(
                    folder / FILES[step],
                    lambda tmp: _write(step, first, output, folder, tmp),
                    setting="$PAIRLAB_CACHE_DIR",
                )
            except (
                Exception
            ) as error:  # an architecture the exporter cannot trace, a full disk, ...
                first_line = (str(error).strip().splitlines() or [""])[0][:300]
                raise InferenceBackendError(
                    f"exporting {type(first.model).__name__} for {step!r} "
                    f"failed ({type(error).__name__}: {first_line}); set "
                    f"{ENV}=torch to run on torch"
                ) from error
            export = {
                "kind": type(first.model).__name__,
                "backend": step,
                "digest": digest,
                "seconds": time.perf_counter() - start,
            }
            _record(export)
    return folder / FILES[name]


def _write(step: str, first, output: str, folder: Path, tmp: Path) -> None:
    if step == "onnx":
        _export_float32(first, output, tmp)
    else:  # weights int8 per output channel; reduce_range where the CPU lacks VNNI (saturation)
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            folder / FILES["onnx"],
            tmp,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=not _has_vnni(),
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
            torch.onnx.export(
                Positional(),
                inputs,
                str(path),
                input_names=names,
                output_names=[output],
                opset_version=17,
                dynamic_axes=axes,
                dynamo=False,
            )  # torch's dynamo exporter needs onnxscript, and is slower
    finally:
        model.train(was_training)


def _require_onnx(name: str) -> None:
    try:
        import onnx  # noqa: F401  (torch's exporter writes through it)
        import onnxruntime  # noqa: F401
    except ImportError as missing:
        raise InferenceBackendError(
            f"inference backend {name!r} needs ONNX Runtime ({missing.name} is not installed): "
            f"{INSTALL}, or set {ENV}=torch to run on torch"
        ) from None


@functools.lru_cache(maxsize=4)
def _session(file: str, threads: int):
    """An ONNX Runtime session on ``file``, its thread pool as wide as torch's (notebooks run side
    by side with one thread each stay one thread each)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        file, options, providers=onnxruntime.get_available_providers()
    )


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def _has_vnni() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.is_file() and any(
        flag in cpuinfo.read_text() for flag in ("avx512_vnni", "avx_vnni")
    )
