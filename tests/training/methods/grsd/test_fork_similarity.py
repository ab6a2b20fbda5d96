"""φ(o), the mean hash and the numpy SSIM against scikit-image."""

from __future__ import annotations

import numpy as np
import pytest
from skimage.metrics import structural_similarity

from training.methods.grsd.forks import ForkConfig, ForkInputError, Step, Trajectory, prepare_trajectory
from training.methods.grsd.forks.images import hash_similarity, mean_hash, thumbnail, to_image
from training.methods.grsd.forks.ssim import box_mean, ssim, ssim_stats
from training.methods.grsd.forks.synthetic import png_bytes, render_screen
from tests.training.methods.grsd.screens import HEIGHT, SCREENS, WIDTH


def _ssim_grid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    stats_a, stats_b = [ssim_stats(x, 7) for x in a], [ssim_stats(y, 7) for y in b]
    return np.array([[ssim(x, y) for y in stats_b] for x in stats_a])


def _skimage_grid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([[structural_similarity(x, y, data_range=255) for y in b] for x in a])


@pytest.mark.parametrize("shape", [(40, 30), (61, 47), (292, 135)])
def test_numpy_ssim_matches_skimage_on_random_images(shape):
    rng = np.random.default_rng(shape[0])
    a = rng.integers(0, 256, (3, *shape)).astype(np.float64)
    b = np.clip(a + rng.normal(0, 25, a.shape) * (rng.random(a.shape) < 0.5), 0, 255)
    b[1] = rng.integers(0, 256, shape)  # an unrelated image
    np.testing.assert_allclose(_ssim_grid(a, b), _skimage_grid(a, b), atol=1e-6)


def test_numpy_ssim_matches_skimage_on_screen_thumbnails():
    config = ForkConfig()
    names = ["A", "B", "B_wifi", "N_hello"]
    thumbs = np.stack([thumbnail(to_image(render_screen(SCREENS[n], WIDTH, HEIGHT)), config) for n in names])
    np.testing.assert_allclose(_ssim_grid(thumbs, thumbs), _skimage_grid(thumbs, thumbs), atol=1e-6)


def test_box_mean_is_the_mean_of_each_full_window():
    x = np.arange(30, dtype=np.float64).reshape(5, 6)
    out = box_mean(x, 3)
    assert out.shape == (3, 4)
    assert out[1, 2] == pytest.approx(x[1:4, 2:5].mean())


def test_thumbnail_crops_the_status_bar_and_has_the_configured_size():
    config = ForkConfig(thumb_width=60, thumb_height=100)
    screen = render_screen(SCREENS["A"], WIDTH, HEIGHT)
    other_clock = screen.copy()
    other_clock[:10] = 255 - other_clock[:10]  # inside the top 25/878 of the 600-pixel screen
    a, b = thumbnail(to_image(screen), config), thumbnail(to_image(other_clock), config)
    assert a.shape == (100, 60)
    np.testing.assert_array_equal(a, b)


def test_png_bytes_and_arrays_give_the_same_thumbnail():
    array = render_screen(SCREENS["C"], WIDTH, HEIGHT)
    config = ForkConfig()
    np.testing.assert_array_equal(thumbnail(to_image(array), config), thumbnail(to_image(png_bytes(array)), config))


def test_mean_hash_similarity():
    rng = np.random.default_rng(1)
    thumbs = rng.integers(0, 256, (2, 64, 48)).astype(np.float64)
    inverted = 255.0 - thumbs
    hashes = mean_hash(np.concatenate([thumbs, inverted]), 16)
    assert hashes.shape == (4, 256)
    assert hash_similarity(hashes[0], hashes[0]) == 1.0
    assert hash_similarity(hashes[0], hashes[2]) <= 0.02  # inverting flips (nearly) every bit
    assert 0.3 < hash_similarity(hashes[0], hashes[1]) < 0.7  # unrelated noise agrees on about half


def test_screen_fixtures_are_distinct_or_look_alike_as_documented():
    names = list(SCREENS)
    config = ForkConfig()
    thumbs = np.stack([thumbnail(to_image(render_screen(SCREENS[n], WIDTH, HEIGHT)), config) for n in names])
    sim = _ssim_grid(thumbs, thumbs)
    look_alikes = [{"B", "B_wifi", "B_bt"}, {"N_empty", "N_hello", "N_helo"}, {"I3", "I4"}]
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            group = any({names[a], names[b]} <= g for g in look_alikes)
            assert (sim[a, b] > 0.95) if group else (sim[a, b] < 0.85), (names[a], names[b], sim[a, b])


def test_unreadable_screenshot_names_the_step():
    trajectory = Trajectory("t1", True, [Step(render_screen(SCREENS["A"], WIDTH, HEIGHT)), Step(b"not a png")])
    with pytest.raises(ForkInputError, match=r"'t1' step 1: screenshot bytes are not a readable image"):
        prepare_trajectory(trajectory).load_all()


def test_bad_array_and_too_small_screens_are_rejected():
    with pytest.raises(ForkInputError, match="uint8"):
        prepare_trajectory(Trajectory("t", True, [Step(np.zeros((600, 270, 3), dtype=np.float32))])).load_all()
    with pytest.raises(ForkInputError, match="smaller than"):
        prepare_trajectory(Trajectory("t", True, [Step(np.zeros((100, 50, 3), dtype=np.uint8))])).load_all()


def test_config_is_validated():
    with pytest.raises(ForkInputError, match="ssim_threshold"):
        ForkConfig(ssim_threshold=1.5)
    with pytest.raises(ForkInputError, match="ssim_window"):
        ForkConfig(ssim_window=8)


def test_malformed_action_and_tree_name_the_step():
    screen = render_screen(SCREENS["A"], WIDTH, HEIGHT)
    bad_action = Trajectory("t2", False, [Step(screen, {"type": "click"}), Step(screen, {"kind": "click"})])
    with pytest.raises(ForkInputError, match=r"'t2' step 1: action must be"):
        prepare_trajectory(bad_action)
    bad_tree = Trajectory("t3", False, [Step(screen, None, [{"class": "X", "bounds": "nowhere"}])])
    with pytest.raises(ForkInputError, match=r"'t3' step 0: tree\[0\]: bounds"):
        prepare_trajectory(bad_tree)
