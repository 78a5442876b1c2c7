"""xlapy.datasets: the IDX reader on good and broken files, the MNIST loader
on tiny fake MNIST directories, the offline digits, and the minibatches."""

import gzip as gzip_module
import struct

import numpy as np
import pytest

from xlapy.datasets import (
    Dataset,
    DatasetError,
    MissingFileError,
    batches,
    load,
    load_digits_28,
    load_mnist,
    one_hot,
    read_idx,
)
from xlapy.errors import XlapyError

TYPE_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
              np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}


def idx_bytes(array):
    array = np.asarray(array)
    header = struct.pack(">BBBB", 0, 0, TYPE_CODES[array.dtype], array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path, array, gzip=False):
    data = idx_bytes(array)
    path.write_bytes(gzip_module.compress(data) if gzip else data)
    return path


def fake_mnist(directory, n_train=20, n_test=10, gz=("train-images", "t10k-labels")):
    """Four MNIST files of random 28x28 digits; the stems in `gz` are gzipped."""
    rng = np.random.default_rng(1)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    for name, array in arrays.items():
        zipped = name.rsplit("-", 2)[0] in gz
        write_idx(directory / (name + (".gz" if zipped else "")), array, gzip=zipped)
    return arrays


# --- read_idx on good files ------------------------------------------------------------


@pytest.mark.parametrize("dtype", list(TYPE_CODES))
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 4, 6), (1, 2, 3, 2), (0, 28, 28)])
@pytest.mark.parametrize("gzip", [False, True])
def test_round_trip(tmp_path, dtype, shape, gzip):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal(shape) * 100).astype(dtype)
    got = read_idx(write_idx(tmp_path / "a.idx", array, gzip=gzip))
    assert got.dtype == dtype and got.dtype.isnative
    assert got.shape == shape
    np.testing.assert_array_equal(got, array)


def test_gzip_is_detected_by_content_not_name(tmp_path):
    array = np.arange(12, dtype=np.int32).reshape(3, 4)
    # A gzipped file without .gz, and a plain one named .gz.
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "x", array, gzip=True)), array)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "y.gz", array)), array)


def test_big_endian_values(tmp_path):
    (tmp_path / "a").write_bytes(bytes([0, 0, 0x0B, 1, 0, 0, 0, 2, 0x01, 0x02, 0xFF, 0xFE]))
    np.testing.assert_array_equal(read_idx(tmp_path / "a"), [0x0102, -2])


# --- read_idx on broken files ----------------------------------------------------------


def broken(tmp_path, data):
    path = tmp_path / "bad-idx3-ubyte"
    path.write_bytes(data)
    with pytest.raises(DatasetError) as info:
        read_idx(path)
    assert str(path) in str(info.value)
    return str(info.value)


def test_errors_are_value_errors_and_xlapy_errors():
    assert issubclass(DatasetError, ValueError) and issubclass(DatasetError, XlapyError)
    assert issubclass(MissingFileError, FileNotFoundError)
    assert issubclass(MissingFileError, DatasetError)


def test_wrong_magic_number(tmp_path):
    data = b"PK\x03\x04" + bytes(20)
    message = broken(tmp_path, data)
    assert "wrong magic number 0x504B0304" in message
    assert "0x00000803" in message


def test_unknown_type_code(tmp_path):
    message = broken(tmp_path, bytes([0, 0, 0x07, 1, 0, 0, 0, 1, 5]))
    assert "unknown IDX type code 0x07" in message and "0x08 ubyte" in message


@pytest.mark.parametrize("length", [0, 3, 4, 11])
def test_truncated_header(tmp_path, length):
    data = idx_bytes(np.zeros((2, 3), np.uint8))[:length]
    if length == 4:  # rank 2 says 8 more header bytes follow
        data = bytes([0, 0, 0x08, 2])
    assert "truncated header" in broken(tmp_path, data)


def test_truncated_data(tmp_path):
    data = idx_bytes(np.zeros((3, 28, 28), np.uint8))[:-10]
    message = broken(tmp_path, data)
    assert "expected 2352 bytes of data for shape (3, 28, 28), found 2342" in message


def test_truncated_data_counts_item_size(tmp_path):
    data = idx_bytes(np.zeros(4, np.float64))[:-1]
    assert "expected 32 bytes of data for shape (4,), found 31" in broken(tmp_path, data)


def test_trailing_bytes(tmp_path):
    data = idx_bytes(np.zeros(5, np.uint8)) + b"junk"
    assert "4 trailing bytes after the 5 bytes of data for shape (5,)" in broken(tmp_path, data)


@pytest.mark.parametrize("damage", ["cut", "flip"])
def test_corrupt_gzip(tmp_path, damage):
    data = bytearray(gzip_module.compress(idx_bytes(np.arange(100, dtype=np.uint8))))
    if damage == "cut":
        data = data[: len(data) // 2]
    else:
        data[-6] ^= 0xFF  # the CRC no longer matches
    assert "corrupt gzip stream" in broken(tmp_path, bytes(data))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        read_idx(tmp_path / "nothing-here")


# --- load_mnist ------------------------------------------------------------------------


def test_load_mnist_on_a_tiny_fake_directory(tmp_path):
    arrays = fake_mnist(tmp_path)
    data = load_mnist(tmp_path)
    assert isinstance(data, Dataset)
    assert data.train_images.shape == (20, 784) and data.train_images.dtype == np.float32
    assert data.test_images.shape == (10, 784) and data.test_images.dtype == np.float32
    assert data.train_labels.dtype == np.int32 and data.test_labels.dtype == np.int32
    np.testing.assert_allclose(
        data.train_images, arrays["train-images-idx3-ubyte"].reshape(20, 784) / 255, rtol=1e-6)
    np.testing.assert_array_equal(data.test_labels, arrays["t10k-labels-idx1-ubyte"])
    assert 0 <= data.train_images.min() and data.train_images.max() <= 1
    assert "MNIST" in data.description and "20 train" in data.description
    assert "(20, 784)" in repr(data)
    with pytest.raises(AttributeError):
        data.description = "changed"


def test_load_mnist_accepts_all_gzipped_and_dotted_names(tmp_path):
    fake_mnist(tmp_path, gz=("train-images", "train-labels", "t10k-images", "t10k-labels"))
    (tmp_path / "train-images-idx3-ubyte.gz").rename(tmp_path / "train-images.idx3-ubyte.gz")
    assert load_mnist(tmp_path).train_images.shape == (20, 784)
    assert load(tmp_path).test_images.shape == (10, 784)


def test_load_mnist_missing_file_names_the_expected_files(tmp_path):
    fake_mnist(tmp_path)
    (tmp_path / "t10k-images-idx3-ubyte").unlink()
    with pytest.raises(MissingFileError) as info:
        load_mnist(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "t10k-images-idx3-ubyte") in message
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert name in message
    assert isinstance(info.value, FileNotFoundError)


def test_load_mnist_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path / "no-such-dir")


def test_load_mnist_mismatched_counts(tmp_path):
    fake_mnist(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(19, np.uint8))
    with pytest.raises(DatasetError, match="20 images but .* 19 labels"):
        load_mnist(tmp_path)


def test_load_mnist_labels_out_of_range(tmp_path):
    fake_mnist(tmp_path)
    labels = np.zeros(10, np.uint8)
    labels[3] = 10
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels, gzip=True)
    with pytest.raises(DatasetError, match=r"0\.\.9, found 10"):
        load_mnist(tmp_path)


@pytest.mark.parametrize("name, array, wanted", [
    ("train-images-idx3-ubyte.gz", np.zeros((20, 784), np.uint8), "shape \\(n, rows, cols\\)"),
    ("train-images-idx3-ubyte.gz", np.zeros((20, 28, 28), np.float32), "expected uint8"),
    ("train-labels-idx1-ubyte", np.zeros((20, 1), np.uint8), "shape \\(n,\\)"),
])
def test_load_mnist_wrong_kinds_of_file(tmp_path, name, array, wanted):
    fake_mnist(tmp_path)
    write_idx(tmp_path / name, array, gzip=name.endswith(".gz"))
    with pytest.raises(DatasetError, match=wanted):
        load_mnist(tmp_path)


def test_load_mnist_passes_reader_errors_through(tmp_path):
    fake_mnist(tmp_path)
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(b"<html>404</html>")
    with pytest.raises(DatasetError, match="wrong magic number"):
        load_mnist(tmp_path)


# --- the offline digits ----------------------------------------------------------------


def test_load_digits_28():
    pytest.importorskip("sklearn")
    data = load_digits_28()
    assert data.train_images.shape == (1497, 784) and data.test_images.shape == (300, 784)
    assert data.train_images.dtype == np.float32 and data.train_labels.dtype == np.int32
    assert data.train_images.min() >= 0 and data.train_images.max() <= 1
    assert data.train_images.max() == 1  # ink at full strength somewhere
    assert set(np.unique(data.train_labels)) == set(range(10))
    assert set(np.unique(data.test_labels)) == set(range(10))
    assert "1797 handwritten digits" in data.description and "28x28" in data.description
    again = load(None)
    np.testing.assert_array_equal(again.train_images, data.train_images)
    np.testing.assert_array_equal(again.test_labels, data.test_labels)
    other = load_digits_28(seed=1)
    assert not np.array_equal(other.test_labels, data.test_labels)


def test_load_digits_28_upsamples_like_scipy_zoom():
    pytest.importorskip("sklearn")
    ndimage = pytest.importorskip("scipy.ndimage")
    from sklearn.datasets import load_digits

    digits = load_digits()
    data = load_digits_28(test_size=300, seed=0)
    order = np.random.default_rng(0).permutation(len(digits.target))
    first_test = digits.images[order[0]] / 16
    expected = np.clip(ndimage.zoom(first_test, 3.5, order=1), 0, 1)
    np.testing.assert_allclose(data.test_images[0].reshape(28, 28), expected, atol=1e-6)
    assert data.test_labels[0] == digits.target[order[0]]


def test_load_digits_28_without_sklearn(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(DatasetError, match=r"pip install 'xlapy\[demo\]'"):
        load_digits_28()


# --- one_hot and batches ---------------------------------------------------------------


def test_one_hot():
    got = one_hot(np.array([0, 3, 9], np.int32))
    assert got.dtype == np.float32 and got.shape == (3, 10)
    np.testing.assert_array_equal(got.argmax(1), [0, 3, 9])
    assert got.sum() == 3
    assert one_hot(np.array([1]), classes=3).tolist() == [[0, 1, 0]]
    with pytest.raises(DatasetError):
        one_hot(np.array([-1]))
    with pytest.raises(DatasetError):
        one_hot(np.array([10]))


def small_dataset(n=25):
    rng = np.random.default_rng(2)
    images = rng.random((n, 784), dtype=np.float32)
    labels = np.arange(n, dtype=np.int32) % 10
    return Dataset(images, labels, images[:5], labels[:5], "test data")


def test_batches_shapes_and_contents():
    data = small_dataset()
    got = list(batches(data, batch_size=8, steps=7))
    assert len(got) == 7
    for x, y in got:
        assert x.shape == (8, 784) and x.dtype == np.float32
        assert y.shape == (8, 10) and y.dtype == np.float32
        # Each image comes with its own label.
        rows = [np.flatnonzero((data.train_images == image).all(1))[0] for image in x]
        np.testing.assert_array_equal(y.argmax(1), data.train_labels[rows])


def test_batches_cover_each_epoch_once():
    data = small_dataset(n=24)
    seen = np.concatenate([y.argmax(1) for _, y in batches(data, batch_size=6, steps=4)])
    np.testing.assert_array_equal(np.bincount(seen, minlength=10), np.bincount(data.train_labels))


def test_batches_are_deterministic():
    data = small_dataset()
    first = [x for x, _ in batches(data, 4, 5, seed=3)]
    again = [x for x, _ in batches(data, 4, 5, seed=3)]
    other = [x for x, _ in batches(data, 4, 5, seed=4)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_batches_larger_than_the_train_split():
    x, y = next(iter(batches(small_dataset(n=3), batch_size=8, steps=1)))
    assert x.shape == (8, 784) and y.shape == (8, 10)


def test_batches_bad_arguments_fail_at_once():
    data = small_dataset()
    with pytest.raises(ValueError, match="batch_size"):
        batches(data, 0, 1)
    with pytest.raises(ValueError, match="steps"):
        batches(data, 1, -1)
    empty = Dataset(data.train_images[:0], data.train_labels[:0], data.test_images,
                    data.test_labels, "empty")
    with pytest.raises(DatasetError, match="empty"):
        batches(empty, 1, 1)
