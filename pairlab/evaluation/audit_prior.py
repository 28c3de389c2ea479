"""The prior of each audit stratum's match rate (what the calibrated scores say before the
audit): a mixture of Betas over the strata's rates, updated by audit counts in closed form.

- ``"recalibrated"`` (default): stratum h's rate is centred on ``sigmoid(c + alpha + beta *
  (logit q_h - c))``, ``q_h`` its mean calibrated probability, with a level shift ``alpha ~
  N(0, 2^2)`` and a tail slope ``log beta ~ N(0, 0.5^2)`` pivoting at ``c``, the logit where
  the expected positives sit: hits anywhere correct the strata too poor for the audit to see.
  The sds are wide because replays found the learner's calibration 1.4-3x too steep and tail
  rates up to 2,000x the calibrated ones (``benchmarks/audit_replay.py``, issue 59).
- ``"bounded"``: the same with ``log beta ~ N(-1.5, 1)``, dropping the grid points that expect
  more than ``max_positives`` unlabelled positives (about one match a record).
- ``"calibrated"``: one Beta per stratum centred on ``q_h`` with ``strength`` pseudo-counts of
  the rarer class; ``"oasis"``: ``strength`` pseudo-pairs whatever the rate (Marchant and
  Rubinstein 2017); ``"jeffreys"``: Beta(1/2, 1/2), the scores ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["PRIORS", "RatePrior", "rate_prior", "allocate", "expected_variance"]

PRIORS = ("recalibrated", "bounded", "calibrated", "oasis", "jeffreys")
LEVEL_SD, SLOPE_SD = 2.0, 0.5  # prior sd of alpha and of log(beta) ("recalibrated")
# Knobs for replays (benchmarks/audit_replay.py sets them): the prior mean of log(beta), and a
# bound on the unlabelled positives the prior may expect (None: none)
SLOPE_CENTRE, MAX_POSITIVES = 0.0, None
BOUNDED_SLOPE = (-1.5, 1.0)  # "bounded": a tail ~4.5x flatter, as QQP and W-A replays found
_GRID = (25, 11)  # grid points for alpha (+-3 sd) and log(beta) (+-2.5 sd)


@dataclass(frozen=True, eq=False)
class RatePrior:
    """Mixture of Betas over the strata's rates: ``a``, ``b`` (G, H), ``log_weight`` (G,); for
    the design, linearised at ``centre`` (H,): ``logit p_h = logit centre_h + shared[h] @ theta
    + e_h``, ``theta ~ N(0, diag(shared_var))`` (P,), ``e_h ~ N(0, deviation_var[h])``."""

    a: np.ndarray
    b: np.ndarray
    log_weight: np.ndarray
    centre: np.ndarray
    deviation_var: np.ndarray
    shared: np.ndarray
    shared_var: np.ndarray

    @property
    def weight(self) -> np.ndarray:
        w = np.exp(self.log_weight - self.log_weight.max())
        return w / w.sum()

    def posterior(self, positives, audited) -> RatePrior:
        """The mixture after ``positives`` (H,) hits among ``audited`` (H,) pairs per stratum."""
        from scipy.special import betaln

        k = np.asarray(positives, dtype=np.float64)
        n = np.asarray(audited, dtype=np.float64)
        a, b = self.a + k, self.b + n - k
        loglik = (betaln(a, b) - betaln(self.a, self.b)).sum(axis=1)  # (G,) beta-binomial
        return replace(self, a=a, b=b, log_weight=self.log_weight + loglik)

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


def rate_prior(
    rates,
    *,
    prior: str = "recalibrated",
    strength: float = 1.0,
    sizes=None,
    max_positives: float | None = None,
) -> RatePrior:
    """The prior of strata whose mean calibrated probabilities are ``rates`` (H,); ``sizes``
    (H,) places the recalibration's pivot; ``max_positives`` (``"bounded"`` needs it): the most
    unlabelled positives the strata can hold (about one match a record)."""
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    if prior == "bounded" and (max_positives is None or not max_positives > 0):
        raise ValueError(f"the bounded prior needs max_positives > 0, got {max_positives!r}")
    if isinstance(strength, bool) or not np.isfinite(strength) or not strength > 0:
        raise ValueError(f"strength must be a positive number, got {strength!r}")
    q = np.clip(np.asarray(rates, dtype=np.float64), 1e-12, 1.0 - 1e-12)
    if q.ndim != 1:
        raise ValueError(f"rates must be a 1-d array, got shape {q.shape}")
    none = (np.zeros((len(q), 0)), np.zeros(0))
    if prior == "jeffreys":
        half = np.full((1, len(q)), 0.5)
        return RatePrior(half, half, np.zeros(1), half[0], np.full(len(q), 2.0), *none)
    if prior == "oasis":
        a, b = strength * q[None, :], strength * (1 - q)[None, :]
        return RatePrior(a, b, np.zeros(1), q, 1.0 / ((strength + 1) * q * (1 - q)), *none)
    deviation = 1.0 / ((strength / np.minimum(q, 1 - q) + 1) * q * (1 - q))  # ~1/strength
    if prior == "calibrated":
        return _centred(q[None, :], q, strength, np.zeros(1), deviation, *none)
    logit = np.log(q) - np.log1p(-q)
    size = np.ones(len(q)) if sizes is None else np.asarray(sizes, dtype=np.float64)
    expected = size * q
    pivot = float(expected @ logit / expected.sum()) if expected.sum() > 0 else 0.0
    slope_centre, slope_sd = BOUNDED_SLOPE if prior == "bounded" else (SLOPE_CENTRE, SLOPE_SD)
    bound = max_positives if prior == "bounded" else MAX_POSITIVES
    alpha = np.linspace(-3, 3, _GRID[0]) * LEVEL_SD
    log_beta = slope_centre + np.linspace(-2.5, 2.5, _GRID[1]) * slope_sd
    al, lb = (x.ravel() for x in np.meshgrid(alpha, log_beta, indexing="ij"))
    z = pivot + al[:, None] + np.exp(lb)[:, None] * (logit[None, :] - pivot)  # (G, H)
    centre = np.clip(1.0 / (1.0 + np.exp(-z)), 1e-12, 1.0 - 1e-12)
    log_weight = -0.5 * (al / LEVEL_SD) ** 2 - 0.5 * ((lb - slope_centre) / slope_sd) ** 2
    if bound is not None:  # the structural bound: at least the least-filled grid point
        total = centre @ size
        keep = total <= max(float(bound), total.min())
        centre, log_weight = centre[keep], log_weight[keep]
    shared = np.stack([np.ones(len(q)), logit - pivot], axis=1)  # d logit / d(alpha, log beta)
    shared_var = np.array([LEVEL_SD, slope_sd]) ** 2
    return _centred(centre, q, strength, log_weight, deviation, shared, shared_var)


def _centred(centre, q, strength, log_weight, deviation, shared, shared_var) -> RatePrior:
    """Betas with mean ``centre`` holding ``strength`` pseudo-counts of the rarer class."""
    s = strength / np.minimum(centre, 1.0 - centre)
    return RatePrior(s * centre, s * (1.0 - centre), log_weight, q, deviation, shared, shared_var)


def allocate(
    unlabelled, centre, n: int, *, deviation_var=None, shared=None, shared_var=None, floor: int = 1
) -> np.ndarray:
    """Audit pairs per stratum (int64 (H,)) minimising :func:`expected_variance`, greedily in
    steps of ~1/50 of the audit; at least ``floor`` in each non-empty stratum, at most its
    ``unlabelled`` pairs. The belief is a :class:`RatePrior`'s linearisation (``centre``,
    ``deviation_var`` (H,), ``shared`` (H, P), ``shared_var`` (P,)): without shared terms,
    Neyman allocation less what the prior knows; with them, rich strata also inform poor ones."""
    m, q, v, x, sv = _design(unlabelled, centre, deviation_var, shared, shared_var)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= m.sum():
        raise ValueError(
            f"audit size must be an integer in [0, {m.sum()}] (the unlabelled pairs), got {n!r}"
        )
    if isinstance(floor, bool) or not isinstance(floor, (int, np.integer)) or floor < 0:
        raise ValueError(f"floor must be a non-negative integer, got {floor!r}")
    out = np.minimum(m, floor)
    if out.sum() > n:
        raise ValueError(
            f"an audit of {n} pairs cannot give the floor of {floor} to each of the "
            f"{int((m > 0).sum())} non-empty strata: audit more, or lower the floor"
        )
    left = n - int(out.sum())
    step = max(1, left // 50)
    while left > 0:
        open_ = np.flatnonzero(out < m)
        add = np.minimum(min(step, left), m[open_] - out[open_])
        trial = np.repeat(out[None, :], len(open_), axis=0)  # (candidates, H)
        trial[np.arange(len(open_)), open_] += add
        best = int(np.argmin(_variance(trial, m, q, v, x, sv)))
        out[open_[best]] += add[best]
        left -= int(add[best])
    return out


def expected_variance(
    alloc, unlabelled, centre, *, deviation_var=None, shared=None, shared_var=None
) -> float:
    """Expected posterior variance of the unlabelled positives after auditing ``alloc`` (H,)
    pairs per stratum: linear-Gaussian on the logit scale (each audited pair gives Fisher
    information ``q(1 - q)``), plus the Bernoulli noise of the pairs left unaudited."""
    m, q, v, x, sv = _design(unlabelled, centre, deviation_var, shared, shared_var)
    return float(_variance(np.asarray(alloc, dtype=np.int64)[None, :], m, q, v, x, sv)[0])


def _variance(alloc, m, q, v, x, sv) -> np.ndarray:
    """(C,) expected posterior variance for (C, H) allocations. Given the shared terms, each
    stratum's deviation has posterior variance ``u = 1 / (1/v + tau)``; the shared terms'
    information sums ``x x^T tau / (1 + v tau)`` over strata."""
    w = q * (1 - q)
    g = (m - alloc) * w  # d(unaudited positives) / d(logit p_h)
    tau = alloc * w  # Fisher information on logit p_h from the audit
    u = 1.0 / (1.0 / v + tau)
    out = (g * g * u).sum(axis=1) + ((m - alloc) * w).sum(axis=1)
    if x.shape[1]:
        info = np.einsum("ch,hp,hr->cpr", tau / (1 + v * tau), x, x) + np.diag(1.0 / sv)
        a = np.einsum("ch,hp->cp", g * u / v, x)  # what the shared terms still move
        out += np.einsum("cp,cp->c", a, np.linalg.solve(info, a[..., None])[..., 0])
    return out


def _design(unlabelled, centre, deviation_var, shared, shared_var):
    m = np.asarray(unlabelled, dtype=np.int64)
    q = np.clip(np.asarray(centre, dtype=np.float64), 1e-12, 1.0 - 1e-12)
    v = np.full(q.shape, 1e6) if deviation_var is None else np.asarray(deviation_var, np.float64)
    x = np.zeros((len(m), 0)) if shared is None else np.asarray(shared, dtype=np.float64)
    sv = np.zeros(x.shape[1]) if shared_var is None else np.asarray(shared_var, np.float64)
    shapes = (m.shape, q.shape, v.shape, x.shape, sv.shape)
    if m.ndim != 1 or shapes[1:] != (m.shape, m.shape, (len(m), len(sv)), (x.shape[1],)):
        raise ValueError(
            "unlabelled, centre and deviation_var must be (H,) arrays, shared (H, P) and "
            f"shared_var (P,); got shapes {', '.join(map(str, shapes))}"
        )
    if (m < 0).any() or not ((v > 0).all() and (sv > 0).all()):
        raise ValueError("unlabelled must be >= 0, deviation_var and shared_var positive")
    return m, q, v, x, sv
