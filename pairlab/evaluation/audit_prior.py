"""The prior of each audit stratum's match rate: what the calibrated scores say before the audit.

A prior is a mixture of Beta priors over the strata's rates (component g: weight ``w_g`` and
``Beta(a[g, h], b[g, h])`` for stratum h); audit counts update it in closed form (each Beta by
its counts, each weight by the beta-binomial likelihood of all strata's counts). The kinds:

- ``"recalibrated"`` (default): the calibration may be off. The rate of stratum h is centred
  on ``sigmoid(c + alpha + beta * (logit q_h - c))``, with ``q_h`` the stratum's mean calibrated
  probability, a level shift ``alpha ~ N(0, 1.2^2)`` (a factor of ~10 either way at 2 sd) and a
  tail slope ``log beta ~ N(0, 0.3^2)``, pivoting at ``c``, the logit where the expected
  positives sit. Audit hits anywhere move alpha and beta for every stratum: strata too poor for
  the audit to see borrow the correction from those it can.
- ``"calibrated"``: one Beta per stratum centred on ``q_h`` holding ``strength`` pseudo-counts
  of the rarer class (``s_h = strength / min(q, 1 - q)`` pseudo-pairs), calibration trusted.
- ``"oasis"``: centred on ``q_h`` with ``strength`` pseudo-pairs whatever the rate (the
  Beta-Bernoulli prior of OASIS, Marchant and Rubinstein 2017).
- ``"jeffreys"``: Beta(1/2, 1/2) everywhere, the scores ignored.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PRIORS", "RatePrior", "rate_prior"]

PRIORS = ("recalibrated", "calibrated", "oasis", "jeffreys")
LEVEL_SD, SLOPE_SD = 1.2, 0.3  # prior sd of alpha and of log(beta) ("recalibrated")
_GRID = (25, 11)  # grid points for alpha (+-3 sd) and log(beta) (+-2.5 sd)


@dataclass(frozen=True, eq=False)
class RatePrior:
    """Mixture of Betas over the strata's rates: ``a``, ``b`` (G, H), ``log_weight`` (G,)."""

    a: np.ndarray
    b: np.ndarray
    log_weight: np.ndarray

    @property
    def weight(self) -> np.ndarray:
        w = np.exp(self.log_weight - self.log_weight.max())
        return w / w.sum()

    def posterior(self, positives, audited) -> "RatePrior":
        """The mixture after ``positives`` (H,) hits among ``audited`` (H,) pairs per stratum."""
        from scipy.special import betaln

        k = np.asarray(positives, dtype=np.float64)
        n = np.asarray(audited, dtype=np.float64)
        a, b = self.a + k, self.b + n - k
        loglik = (betaln(a, b) - betaln(self.a, self.b)).sum(axis=1)  # (G,) beta-binomial
        return RatePrior(a, b, self.log_weight + loglik)

    def mean(self) -> np.ndarray:
        """(H,) expected rate of each stratum."""
        return self.weight @ (self.a / (self.a + self.b))

    def pseudo_pairs(self) -> np.ndarray:
        """(H,) the prior's weight in audit pairs: ``q(1 - q) / Var(p) - 1`` by moments."""
        s = self.a + self.b
        m = self.a / s
        second = self.weight @ (m * (1 - m) / (s + 1) + m * m)
        q = self.mean()
        var = np.maximum(second - q * q, 1e-300)
        return np.maximum(q * (1 - q) / var - 1.0, 0.0)

    def draw(self, n_draws: int, rng) -> np.ndarray:
        """(n_draws, H) rates: a component per draw, then each stratum's Beta."""
        g = rng.choice(len(self.log_weight), size=n_draws, p=self.weight)
        return rng.beta(self.a[g], self.b[g])


def rate_prior(rates, *, prior: str = "recalibrated", strength: float = 1.0,
               sizes=None) -> RatePrior:
    """The prior of strata whose mean calibrated probabilities are ``rates`` (H,); ``sizes``
    (H,), the pairs each rate applies to, places the recalibration's pivot."""
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    if isinstance(strength, bool) or not np.isfinite(strength) or not strength > 0:
        raise ValueError(f"strength must be a positive number, got {strength!r}")
    q = np.clip(np.asarray(rates, dtype=np.float64), 1e-12, 1.0 - 1e-12)
    if q.ndim != 1:
        raise ValueError(f"rates must be a 1-d array, got shape {q.shape}")
    if prior == "jeffreys":
        half = np.full((1, len(q)), 0.5)
        return RatePrior(half, half, np.zeros(1))
    if prior == "oasis":
        return RatePrior(strength * q[None, :], strength * (1 - q)[None, :], np.zeros(1))
    if prior == "calibrated":
        return _centred(q[None, :], strength, np.zeros(1))
    logit = np.log(q) - np.log1p(-q)
    size = np.ones(len(q)) if sizes is None else np.asarray(sizes, dtype=np.float64)
    expected = size * q
    pivot = float(expected @ logit / expected.sum()) if expected.sum() > 0 else 0.0
    alpha = np.linspace(-3, 3, _GRID[0]) * LEVEL_SD
    log_beta = np.linspace(-2.5, 2.5, _GRID[1]) * SLOPE_SD
    al, lb = (x.ravel() for x in np.meshgrid(alpha, log_beta, indexing="ij"))
    z = pivot + al[:, None] + np.exp(lb)[:, None] * (logit[None, :] - pivot)  # (G, H)
    centre = np.clip(1.0 / (1.0 + np.exp(-z)), 1e-12, 1.0 - 1e-12)
    log_weight = -0.5 * (al / LEVEL_SD) ** 2 - 0.5 * (lb / SLOPE_SD) ** 2
    return _centred(centre, strength, log_weight)


def _centred(centre, strength, log_weight) -> RatePrior:
    """Betas with mean ``centre`` holding ``strength`` pseudo-counts of the rarer class."""
    s = strength / np.minimum(centre, 1.0 - centre)
    return RatePrior(s * centre, s * (1.0 - centre), log_weight)
