"""Attackers (numpy only) for leakage and DPA: ``fit(X, y) -> self``, ``predict(X) -> labels``."""

from __future__ import annotations

import numpy as np

from .._errors import BiasampError


def _check_xy(X, y=None):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise BiasampError(
            f"attacker input X must be 2-D (n_examples, n_features); got shape {X.shape}"
        )
    if y is not None:
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise BiasampError(f"attacker target y must have shape ({X.shape[0]},); got {y.shape}")
    return X, y


class BayesOptimalAttacker:
    """Exact Bayes-optimal attacker for categorical inputs: a lookup of argmax P(y | x).

    Ties go to the smallest label; a row never seen in training gets the most frequent target.

    Examples
    --------
    >>> X = [[0], [0], [0], [1], [1]]
    >>> BayesOptimalAttacker().fit(X, [1, 1, 0, 0, 0]).predict([[0], [1], [2]]).tolist()
    [1, 0, 0]
    """

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        self.classes_, y_code = np.unique(y, return_inverse=True)
        self._rows, x_code = np.unique(X, axis=0, return_inverse=True)
        counts = np.zeros((self._rows.shape[0], self.classes_.size), dtype=np.int64)
        np.add.at(counts, (x_code.ravel(), y_code.ravel()), 1)
        self._best = counts.argmax(axis=1)  # first maximum = smallest label
        self._default = int(np.bincount(y_code.ravel(), minlength=self.classes_.size).argmax())
        return self

    def predict(self, X):
        X, _ = _check_xy(X)
        if not hasattr(self, "_rows"):
            raise BiasampError("BayesOptimalAttacker.predict called before fit")
        allrows, inv = np.unique(np.concatenate([self._rows, X]), axis=0, return_inverse=True)
        inv = inv.ravel()
        lookup = np.full(allrows.shape[0], self._default, dtype=np.int64)
        lookup[inv[: self._rows.shape[0]]] = self._best
        return self.classes_[lookup[inv[self._rows.shape[0] :]]]


class MLPAttacker:
    """Small seeded MLP classifier in numpy: standardised inputs, one tanh hidden layer, softmax,
    trained full-batch with Adam on the mean cross-entropy.

    Parameters
    ----------
    hidden : int
        Hidden units (0: multinomial logistic regression).
    epochs, lr, seed : int, float, int

    Examples
    --------
    >>> X = [[0.0], [0.0], [1.0], [1.0]] * 10
    >>> MLPAttacker(seed=0).fit(X, [0, 0, 1, 1] * 10).predict([[0.0], [1.0]]).tolist()
    [0, 1]
    """

    def __init__(self, hidden: int = 16, epochs: int = 300, lr: float = 0.05, seed: int = 0):
        self.hidden, self.epochs, self.lr, self.seed = int(hidden), int(epochs), float(lr), seed

    def _forward(self, X):
        h = np.tanh(X @ self._W1 + self._b1) if self.hidden else X
        z = h @ self._W2 + self._b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return h, p

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        self.classes_, y_code = np.unique(y, return_inverse=True)
        y_code = y_code.ravel()
        n, d = X.shape
        k = self.classes_.size
        self._mu = X.mean(axis=0)
        sd = X.std(axis=0)
        self._sd = np.where(sd > 0, sd, 1.0)
        Xs = (X - self._mu) / self._sd
        rng = np.random.default_rng(self.seed)
        width = self.hidden if self.hidden else d
        self._W1 = (
            rng.normal(0.0, 1.0 / np.sqrt(max(d, 1)), size=(d, self.hidden))
            if self.hidden
            else None
        )
        self._b1 = np.zeros(self.hidden) if self.hidden else None
        self._W2 = rng.normal(0.0, 1.0 / np.sqrt(width), size=(width, k))
        self._b2 = np.zeros(k)
        Y = np.zeros((n, k))
        Y[np.arange(n), y_code] = 1.0
        params = [self._W2, self._b2] + ([self._W1, self._b1] if self.hidden else [])
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        b1, b2, eps = 0.9, 0.999, 1e-8
        for step in range(1, self.epochs + 1):
            h, p = self._forward(Xs)
            g = (p - Y) / n  # d loss / d logits
            grads = [h.T @ g, g.sum(axis=0)]
            if self.hidden:
                gh = (g @ self._W2.T) * (1.0 - h * h)
                grads += [Xs.T @ gh, gh.sum(axis=0)]
            for i, (prm, gr) in enumerate(zip(params, grads)):
                m[i] = b1 * m[i] + (1 - b1) * gr
                v[i] = b2 * v[i] + (1 - b2) * gr * gr
                prm -= self.lr * (m[i] / (1 - b1**step)) / (np.sqrt(v[i] / (1 - b2**step)) + eps)
        return self

    def predict(self, X):
        X, _ = _check_xy(X)
        if not hasattr(self, "_W2"):
            raise BiasampError("MLPAttacker.predict called before fit")
        _, p = self._forward((X - self._mu) / self._sd)
        return self.classes_[p.argmax(axis=1)]
