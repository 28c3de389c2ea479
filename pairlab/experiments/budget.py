"""Budget views of active-learning curves: labels needed to reach a target, the budget at which
two curves separate, and what labels and compute cost (Althammer et al. 2023)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["labels_to_reach", "separation_budget", "Budget", "round_hours"]

GPU_STAGES = ("train", "embed")  # what runs on the accelerator when there is one


@dataclass(frozen=True)
class Budget:
    """Althammer et al. (2023) section 6: annotation cost A / A_h * A_C for A assessments, and
    compute cost H_GPU * G_h + H_CPU * C_h for the measured hours (their eqs. 5-6; defaults:
    75 assessments an hour at $50, AWS p3.2xlarge $3.06 and a1.4xlarge $0.408 an hour)."""

    assessments_per_hour: float = 75.0
    annotator_per_hour: float = 50.0
    gpu_per_hour: float = 3.06
    cpu_per_hour: float = 0.408

    def __post_init__(self):
        if not self.assessments_per_hour > 0:
            raise ValueError(
                f"assessments_per_hour must be positive, got {self.assessments_per_hour!r}"
            )
        for name, value in asdict(self).items():
            if not value >= 0:
                raise ValueError(f"{name} must be a non-negative price, got {value!r}")

    def annotation(self, assessments) -> np.ndarray:
        """Dollars for ``assessments`` judgements."""
        hours = np.asarray(assessments, dtype=np.float64) / self.assessments_per_hour
        return hours * self.annotator_per_hour

    def compute(self, gpu_hours, cpu_hours) -> np.ndarray:
        """Dollars for the measured GPU and CPU hours."""
        gpu, cpu = np.asarray(gpu_hours, np.float64), np.asarray(cpu_hours, np.float64)
        return gpu * self.gpu_per_hour + cpu * self.cpu_per_hour


def round_hours(seconds: dict, device: str, stages) -> tuple[float, float]:
    """(GPU hours, CPU hours) of one round's ``seconds`` per stage, counting only ``stages``:
    training and embedding ran on the GPU when ``device`` is ``"cuda"``, the rest on the CPU."""
    gpu = sum(seconds.get(s, 0.0) for s in stages if s in GPU_STAGES) if device == "cuda" else 0.0
    total = sum(seconds.get(s, 0.0) for s in stages)
    return gpu / 3600.0, (total - gpu) / 3600.0


def labels_to_reach(labels, values, target: float) -> float:
    """The labels at which a curve first reaches ``target``, linear between rounds (``nan`` if
    it never does). ``labels`` (n,) strictly increasing, ``values`` (n,)."""
    x, y = _curve(labels, values)
    reached = np.flatnonzero(y >= target)
    if len(reached) == 0:
        return float("nan")
    k = int(reached[0])
    return float(np.interp(target, y[k - 1 : k + 1], x[k - 1 : k + 1]) if k else x[0])


def separation_budget(labels, lower, upper) -> float:
    """The fewest labels from which ``lower`` (n,), one curve's lower interval bound, stays above
    ``upper`` (n,), the other's upper bound, at every larger budget measured; ``labels`` (n,)
    strictly increasing. ``nan`` if they are not apart at the largest budget."""
    x, low = _curve(labels, lower)
    _, high = _curve(labels, upper)
    apart = low > high
    if not apart[-1]:
        return float("nan")
    together = np.flatnonzero(~apart)
    return float(x[together[-1] + 1] if len(together) else x[0])


def _curve(labels, values) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(labels, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or len(x) == 0:
        raise ValueError(
            f"labels and values must be equal-length 1-d arrays, got {x.shape} and {y.shape}"
        )
    if np.isnan(y).any() or np.isnan(x).any():
        raise ValueError("a curve with NaN labels or values has no defined crossing")
    if (np.diff(x) <= 0).any():
        raise ValueError("labels must be strictly increasing")
    return x, y
