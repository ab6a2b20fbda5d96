"""Mean SSIM of grayscale thumbnails with a box window, in numpy.

Reproduces `skimage.metrics.structural_similarity(x, y, data_range=255)` with its defaults
(7×7 uniform window, sample covariance, K1 = 0.01, K2 = 0.03, mean over the map with the
window half-width trimmed at the borders); tests/training/methods/grsd checks the agreement (< 1e-6).
Box sums are running sums along both axes. Each image's window means and variances are
computed once, in float64 (`SsimStats`); a pair then only needs the window sums of x·y,
done in float32 on thumbnails centred at 128, which keeps the running sums small enough for
float32 (the error is far below the stabilizing constant C2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_K1, _K2 = 0.01, 0.03
_CENTRE = 128.0


def box_mean(images: np.ndarray, window: int) -> np.ndarray:
    """Mean over every fully-inside window×window patch of each image in (..., H, W).

    Equals the interior of a same-size uniform filter, i.e. the part SSIM averages over.
    """
    return _window_sums(np.asarray(images, dtype=np.float64), window) / (window * window)


def _window_sums(x: np.ndarray, window: int) -> np.ndarray:
    """Sums over every window×window patch, via running sums along both image axes."""
    rows = np.cumsum(x, axis=-2)
    out = rows[..., window - 1 :, :]
    out[..., 1:, :] -= rows[..., :-window, :]
    cols = np.cumsum(out, axis=-1)
    out = cols[..., window - 1 :]
    out[..., 1:] -= cols[..., :-window]
    return out


@dataclass(frozen=True, slots=True)
class SsimStats:
    """Per-image terms of SSIM for one thumbnail (maps are the (H', W') window positions)."""

    centred: np.ndarray  # thumbnail − 128, float32
    mean: np.ndarray  # window means μ
    centred_mean: np.ndarray  # μ − 128
    mean_sq_c1: np.ndarray  # μ² + C1/2: half of the luminance denominator term
    var_c2: np.ndarray  # σ² + C2/2: half of the contrast denominator term
    window: int


def _constants(window: int, data_range: float) -> tuple[float, float, float]:
    n_pixels = window * window
    cov_norm = n_pixels / (n_pixels - 1)  # sample covariance, as scikit-image's default
    return (_K1 * data_range) ** 2, (_K2 * data_range) ** 2, cov_norm


def ssim_stats(thumb: np.ndarray, window: int, data_range: float = 255.0) -> SsimStats:
    """Window means and sample variances of one thumbnail (computed once per screenshot)."""
    c1, c2, cov_norm = _constants(window, data_range)
    thumb = np.asarray(thumb, dtype=np.float64)
    mean = box_mean(thumb, window)
    var = cov_norm * (box_mean(thumb * thumb, window) - mean * mean)
    f32 = np.float32
    return SsimStats(
        centred=(thumb - _CENTRE).astype(f32),
        mean=mean.astype(f32),
        centred_mean=(mean - _CENTRE).astype(f32),
        mean_sq_c1=(mean * mean + c1 / 2).astype(f32),
        var_c2=(var + c2 / 2).astype(f32),
        window=window,
    )


def ssim(a: SsimStats, b: SsimStats, data_range: float = 255.0) -> float:
    """Mean SSIM of two thumbnails (Wang et al. 2004), from their precomputed window terms."""
    if a.window != b.window or a.centred.shape != b.centred.shape:
        raise ValueError("SSIM needs thumbnails of one size and one window")
    c1, c2, cov_norm = _constants(a.window, data_range)
    n_pixels = a.window * a.window
    # 2σ_ab + C2, with σ_ab = cov_norm · (Σxy / N − μx μy) on centred values.
    contrast = _window_sums(a.centred * b.centred, a.window)
    contrast *= 2 * cov_norm / n_pixels
    contrast -= (2 * cov_norm) * (a.centred_mean * b.centred_mean)
    contrast += c2
    luminance = a.mean * b.mean  # → 2 μx μy + C1
    luminance *= 2
    luminance += c1
    contrast *= luminance
    denominator = a.mean_sq_c1 + b.mean_sq_c1  # μx² + μy² + C1
    denominator *= a.var_c2 + b.var_c2  # σx² + σy² + C2
    contrast /= denominator
    return float(contrast.mean(dtype=np.float64))
