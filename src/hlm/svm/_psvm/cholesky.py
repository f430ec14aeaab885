"""Kernels on the upper Cholesky factor U'U = Q_WW of the free set W of P-SVM's active-set phase
(spec 6.9 "Solver"; ``hlm.svm._psvm.solver``): the two triangular solves and the deletion of a
row/column by Givens rotations. (Adding a column is done in place by the phase itself.)
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _upper_forward(U, r, b):  # pragma: no cover - compiled
    """z with U[:r, :r]' z = b, U upper triangular (by rows of U: contiguous axpys)."""
    w = b.copy()
    z = np.empty(r)
    for i in range(r):
        zi = w[i] / U[i, i]
        z[i] = zi
        row = U[i]
        for k in range(i + 1, r):
            w[k] -= zi * row[k]
    return z


@njit(cache=True)
def _upper_back(U, r, z):  # pragma: no cover - compiled
    """x with U[:r, :r] x = z, U upper triangular (by rows of U: contiguous dot products)."""
    x = np.zeros(r)
    for i in range(r - 1, -1, -1):
        x[i] = (z[i] - np.dot(U[i, i + 1 : r], x[i + 1 : r])) / U[i, i]
    return x


@njit(cache=True)
def _upper_delete(U, r, q, z):  # pragma: no cover - compiled
    """In place: U[:r-1, :r-1] becomes the upper factor of U'U without row/column q, and z[:r-1]
    becomes the solution of U_new' z_new = b without entry q, given U'z = b (z gets the same
    rotations: with U = Q1'K_W, z = Q1'u for a u with K_W'u = b, the QR column deletion).

    Column q is removed (later columns shift left, which leaves U upper Hessenberg from row
    q), and Givens rotations of the row pairs (k, k+1), k >= q, restore the triangle; row k+1
    is shifted during its rotation (one pass). Rows of U are contiguous: O(r^2) in passes
    over whole rows, no strided access."""
    for i in range(q + 1):
        row = U[i]
        for k in range(q, r - 1):
            row[k] = row[k + 1]
        row[r - 1] = 0.0
    for k in range(q, r - 1):
        top, bottom = U[k], U[k + 1]  # top: shifted; bottom: not yet (its entries from column k + 1)
        a, b = top[k], bottom[k + 1]
        rho = np.hypot(a, b)
        cs, sn = a / rho, b / rho
        top[k] = rho
        bottom[k] = 0.0
        zk, zk1 = z[k], z[k + 1]
        z[k] = cs * zk + sn * zk1
        z[k + 1] = -sn * zk + cs * zk1
        for j in range(k + 1, r - 1):
            x, y = top[j], bottom[j + 1]
            top[j] = cs * x + sn * y
            bottom[j] = -sn * x + cs * y
        bottom[r - 1] = 0.0
    for j in range(r):
        U[r - 1, j] = 0.0
