"""imagelib's tests, with device-memory budgets (clpool's pytest plugin):

    pytest -p clpool.pytest_plugin --clpool-device nvidia:4GiB examples/ci/python/tests

with ../buggy or ../fixed on PYTHONPATH (examples/ci/python/example_test.sh runs both).
"""
import numpy as np
import pytest

import imagelib

MiB = 1 << 20


def image(h, w, seed=0):
    return np.random.default_rng(seed).random((h, w), dtype=np.float32)


@pytest.mark.limit_device_leaks("1 MiB")
def test_thumbnails(queue):
    images = [image(1024, 1024, seed) for seed in range(8)]   # 4 MiB each
    for im in images:
        small = imagelib.thumbnail(queue, im)
        expected = im.reshape(256, 4, 256, 4).mean(axis=(1, 3))
        np.testing.assert_allclose(small, expected, rtol=1e-5)


@pytest.mark.limit_device_memory("16 MiB")
def test_smooth_all(queue):
    images = [image(1024, 1024, seed) for seed in range(8)]   # 4 MiB each
    out = imagelib.smooth_all(queue, images)
    im = images[3]
    np.testing.assert_allclose(out[3][:, 1:-1], (im[:, :-2] + im[:, 1:-1] + im[:, 2:]) / 3, rtol=1e-5)


@pytest.mark.device_capacity("2 GiB", profile="nvidia")
def test_enlarge_a_large_image(queue):
    im = image(4096, 4096)   # 64 MiB, enlarged 4x: 1 GiB
    rows = imagelib.enlarge(queue, im, 4, out_rows=2)
    assert rows.shape == (2, 16384)
    np.testing.assert_allclose(rows[0, 5], (im[0, 1] + im[0, 1] + im[0, 1]) / 3, rtol=1e-5)
    np.testing.assert_allclose(rows[0, 4], (im[0, 0] + im[0, 1] + im[0, 1]) / 3, rtol=1e-5)


def test_enlarge_small(queue):
    im = image(4, 4)
    out = imagelib.enlarge(queue, im, 2).get()
    up = np.repeat(np.repeat(im, 2, axis=0), 2, axis=1)
    np.testing.assert_allclose(out[:, 1:-1], (up[:, :-2] + up[:, 1:-1] + up[:, 2:]) / 3, rtol=1e-5)
