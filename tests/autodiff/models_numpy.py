"""Hand-derived backpropagation in NumPy for the models of test_models.py.

Each `*_grads(params, ...)` returns (loss, gradients shaped like params),
written out layer by layer without any autodiff, so that the tests check
xlapy.grad against an independent derivation. Conventions (shared with the
xlapy/JAX definitions in test_models.py): row-major batches, x @ W + b dense
layers, NHWC/HWIO convolutions with SAME padding, mean softmax
cross-entropy over the batch with one-hot labels.
"""

from __future__ import annotations

import numpy as np

# -- pieces ---------------------------------------------------------------------------------

def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax(z: np.ndarray) -> np.ndarray:
    return np.exp(log_softmax(z))


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean over the batch of -Σ labels·log_softmax(logits), and d loss/d logits."""
    batch = logits.shape[0]
    loss = -np.sum(labels * log_softmax(logits)) / batch
    return loss, (softmax(logits) - labels) / batch


def dense_back(x: np.ndarray, w: np.ndarray, dout: np.ndarray):
    """(dx, dW, db) for out = x @ W + b with x of any leading shape."""
    flat_x = x.reshape(-1, x.shape[-1])
    flat_d = dout.reshape(-1, dout.shape[-1])
    return dout @ w.T, flat_x.T @ flat_d, flat_d.sum(axis=0)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


# -- 1. softmax regression (the seeds' MNIST example) -----------------------------------------

def softmax_regression_grads(params, x, labels):
    w, b = params
    loss, dlogits = cross_entropy(x @ w + b, labels)
    _, dw, db = dense_back(x, w, dlogits)
    return loss, (dw, db)


# -- 2. MLP: dense, relu, dense ---------------------------------------------------------------

def mlp_grads(params, x, labels):
    w1, b1, w2, b2 = params
    pre = x @ w1 + b1
    hidden = np.maximum(pre, 0)
    loss, dlogits = cross_entropy(hidden @ w2 + b2, labels)
    dhidden, dw2, db2 = dense_back(hidden, w2, dlogits)
    dpre = dhidden * (pre > 0)
    _, dw1, db1 = dense_back(x, w1, dpre)
    return loss, (dw1, db1, dw2, db2)


# -- 3. CNN: conv (SAME), relu, 2x2 max pool, dense -------------------------------------------

def _patches(x: np.ndarray, kh: int, kw: int) -> np.ndarray:
    """im2col for a stride-1 SAME convolution: (N, H, W, kh, kw, C)."""
    n, h, w, c = x.shape
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = np.pad(x, ((0, 0), (top, kh - 1 - top), (left, kw - 1 - left), (0, 0)))
    out = np.empty((n, h, w, kh, kw, c), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, :, i, j, :] = padded[:, i:i + h, j:j + w, :]
    return out


def _unpatch(dpatches: np.ndarray, kh: int, kw: int) -> np.ndarray:
    """The transpose of `_patches`: add each patch gradient back to its pixel."""
    n, h, w, _, _, c = dpatches.shape
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = np.zeros((n, h + kh - 1, w + kw - 1, c), dpatches.dtype)
    for i in range(kh):
        for j in range(kw):
            padded[:, i:i + h, j:j + w, :] += dpatches[:, :, :, i, j, :]
    return padded[:, top:top + h, left:left + w, :]


def conv_same(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """NHWC x HWIO -> NHWC, stride 1, SAME padding (cross-correlation, as XLA)."""
    kh, kw = kernel.shape[:2]
    return np.einsum("nhwijc,ijco->nhwo", _patches(x, kh, kw), kernel)


def conv_same_back(x: np.ndarray, kernel: np.ndarray, dout: np.ndarray):
    """(dx, dkernel) for `conv_same`."""
    kh, kw = kernel.shape[:2]
    dkernel = np.einsum("nhwijc,nhwo->ijco", _patches(x, kh, kw), dout)
    dx = _unpatch(np.einsum("nhwo,ijco->nhwijc", dout, kernel), kh, kw)
    return dx, dkernel


def max_pool_2x2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 stride-2 max pool of NHWC `x` and the one-hot mask of each window's
    first maximum (the element the cotangent goes to, as select-and-scatter)."""
    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
    windows = windows.reshape(n, h // 2, w // 2, c, 4)
    first = windows.argmax(axis=-1)
    mask = np.eye(4, dtype=bool)[first]
    return windows.max(axis=-1), mask


def max_pool_2x2_back(mask: np.ndarray, dout: np.ndarray) -> np.ndarray:
    n, hp, wp, c, _ = mask.shape
    dwin = mask * dout[..., None]
    dwin = dwin.reshape(n, hp, wp, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
    return dwin.reshape(n, 2 * hp, 2 * wp, c)


def cnn_grads(params, x, labels):
    kernel, conv_b, w, b = params
    pre = conv_same(x, kernel) + conv_b
    act = np.maximum(pre, 0)
    pooled, mask = max_pool_2x2(act)
    flat = pooled.reshape(pooled.shape[0], -1)
    loss, dlogits = cross_entropy(flat @ w + b, labels)
    dflat, dw, db = dense_back(flat, w, dlogits)
    dact = max_pool_2x2_back(mask, dflat.reshape(pooled.shape))
    dpre = dact * (pre > 0)
    _, dkernel = conv_same_back(x, kernel, dpre)
    return loss, (dkernel, dpre.sum(axis=(0, 1, 2)), dw, db)


# -- 4. attention block -----------------------------------------------------------------------

def _split_heads(t: np.ndarray, heads: int) -> np.ndarray:
    b, s, d = t.shape
    return t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)


def _merge_heads(t: np.ndarray) -> np.ndarray:
    b, h, s, dh = t.shape
    return t.transpose(0, 2, 1, 3).reshape(b, s, h * dh)


def softmax_back(p: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """d/dz of softmax(z) = p, given the cotangent dp of p (last axis)."""
    return p * (dp - np.sum(dp * p, axis=-1, keepdims=True))


def attention_grads(params, x, target, heads: int):
    """y = x + MHA(x) @ Wo + bo; loss = mean over (batch, sequence) of
    ½‖y - target‖²."""
    wq, wk, wv, wo, bo = params
    q, k, v = (_split_heads(x @ wm, heads) for wm in (wq, wk, wv))
    scale = 1 / np.sqrt(q.shape[-1])
    probs = softmax(np.einsum("bhqd,bhkd->bhqk", q, k) * scale)
    mixed = _merge_heads(np.einsum("bhqk,bhkd->bhqd", probs, v))
    y = x + mixed @ wo + bo
    count = x.shape[0] * x.shape[1]
    loss = 0.5 * np.sum((y - target) ** 2) / count
    dy = (y - target) / count
    dmixed, dwo, dbo = dense_back(mixed, wo, dy)
    dheads = _split_heads(dmixed, heads)
    dprobs = np.einsum("bhqd,bhkd->bhqk", dheads, v)
    dv = np.einsum("bhqk,bhqd->bhkd", probs, dheads)
    dscores = softmax_back(probs, dprobs) * scale
    dq = np.einsum("bhqk,bhkd->bhqd", dscores, k)
    dk = np.einsum("bhqk,bhqd->bhkd", dscores, q)
    flat_x = x.reshape(-1, x.shape[-1])
    dws = [flat_x.T @ _merge_heads(d).reshape(flat_x.shape[0], -1) for d in (dq, dk, dv)]
    return loss, (*dws, dwo, dbo)


# -- 5. LSTM over a sequence, cross-entropy on the final hidden state -------------------------

def lstm_cell(params, h, c, x):
    """One step; returns (h, c) and what the backward step needs."""
    wx, wh, b = params[:3]
    z = x @ wx + h @ wh + b
    zi, zf, zg, zo = np.split(z, 4, axis=-1)
    i, f, g, o = sigmoid(zi), sigmoid(zf), np.tanh(zg), sigmoid(zo)
    c_new = f * c + i * g
    h_new = o * np.tanh(c_new)
    return h_new, c_new, (h, c, x, i, f, g, o, c_new)


def lstm_cell_back(params, saved, dh, dc):
    """(dh_prev, dc_prev, dz) for one step, dz the gradient of the gate
    pre-activations [i, f, g, o]."""
    wh = params[1]
    h, c, x, i, f, g, o, c_new = saved
    tanh_c = np.tanh(c_new)
    do = dh * tanh_c
    dc = dc + dh * o * (1 - tanh_c ** 2)
    di, df, dg = dc * g, dc * c, dc * i
    dz = np.concatenate([di * i * (1 - i), df * f * (1 - f), dg * (1 - g ** 2),
                         do * o * (1 - o)], axis=-1)
    return dz @ wh.T, dc * f, dz


def lstm_grads(params, xs, labels, output_penalty: float = 0.0):
    """xs: (steps, batch, features); h0 = c0 = 0; logits = h_T @ Wy + by.
    With `output_penalty` p the loss also has p·½Σ h_t² / (steps·batch), a
    loss on every step's output."""
    wx, wh, b, wy, by = params
    hidden = wh.shape[0]
    h = np.zeros((xs.shape[1], hidden), xs.dtype)
    c = np.zeros_like(h)
    tape, outputs = [], []
    for x in xs:
        h, c, saved = lstm_cell(params, h, c, x)
        tape.append(saved)
        outputs.append(h)
    loss, dlogits = cross_entropy(h @ wy + by, labels)
    count = xs.shape[0] * xs.shape[1]
    loss += output_penalty * 0.5 * np.sum(np.square(outputs)) / count
    dh, dwy, dby = dense_back(h, wy, dlogits)
    dc = np.zeros_like(c)
    dwx, dwh, db = np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    for saved, out in zip(reversed(tape), reversed(outputs)):
        dh = dh + output_penalty * out / count
        dh, dc, dz = lstm_cell_back(params, saved, dh, dc)
        h_prev, x = saved[0], saved[2]
        dwx += x.T @ dz
        dwh += h_prev.T @ dz
        db += dz.sum(axis=0)
    return loss, (dwx, dwh, db, dwy, dby)
