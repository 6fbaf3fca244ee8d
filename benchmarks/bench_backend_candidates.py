"""How the accelerator backend was chosen: numpy against PyTorch and JAX on this CPU, one thread.

Run (in a separate venv with both libraries; neither is a dependency of
aimrepro's default install):

    python -m venv /tmp/candidates && /tmp/candidates/bin/pip install -e . torch jax jaxlib
    /tmp/candidates/bin/python benchmarks/bench_backend_candidates.py [sgd100 sgd400 gd amp]

The four hot kernels (GD step, SGD step at two d, AMP iteration), each written three times with the same
formulas (PyTorch eager, JAX under ``jax.jit`` with ``jax_enable_x64``):
a tied softmax SGD step at d = 100 (B = 256) and d = 400 (B = 512), the
batch drawn by numpy in every variant; a GD block step of 8 students at
d = 200, n = 12 000, T = 2 (stacked GEMM); the core of an AMP iteration at
d = 100, n = 27 000 (the two GEMMs and the eigendecomposition, with tanh
standing in for g_out).  CPU time (``time.process_time``), best of
repeats, the three libraries back to back; prints one JSON line per kernel
with the milliseconds and each variant's relative difference to numpy.
The numbers of the run that chose PyTorch: docs/benchmarks.md, "Backends",
and ``benchmarks/results/backend_candidates.json``.  The backend the
package ships is measured by ``bench_backends.py``.
"""
import os, sys, json, time, math
for v in ("OMP_NUM_THREADS","OPENBLAS_NUM_THREADS","MKL_NUM_THREADS"): os.environ[v]="1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import numpy as np
import torch
torch.set_num_threads(1); torch.set_num_interop_threads(1)
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)

def best(f, n, rep=5):
    f()
    b = 1e9
    for _ in range(rep):
        t = time.process_time()
        for _ in range(n): f()
        b = min(b, (time.process_time() - t) / n)
    return b

# ---------------- SGD tied step (compute only; X given) ---------------
def sgd_np(X, W, Wt, ct):
    B, T, d = X.shape
    Xf = X.reshape(B*T, d)
    P = (Xf @ W).reshape(B, T, -1); Pt = (Xf @ Wt).reshape(B, T, -1)
    diag = np.arange(T)
    h = np.matmul(P, np.swapaxes(P, 1, 2)); h[:, diag, diag] -= np.sum(W*W); h /= math.sqrt(d)
    ht = np.matmul(Pt, np.swapaxes(Pt, 1, 2)); ht[:, diag, diag] -= np.sum(Wt*Wt); ht *= ct/math.sqrt(d)
    def sm(a):
        a = a - a.max(-1, keepdims=True); e = np.exp(a); return e / e.sum(-1, keepdims=True)
    y, yt = sm(h), sm(ht); r = y - yt
    loss = 0.5*np.sum(r*r, axis=(1, 2))
    g = y*(r - np.sum(r*y, -1, keepdims=True))
    sym = g + np.swapaxes(g, 1, 2)
    grad = Xf.T @ np.matmul(sym, P).reshape(B*T, -1)
    grad -= 2*np.trace(g, axis1=1, axis2=2).sum()*W
    return loss, grad/(B*math.sqrt(d))

def sgd_torch(X, W, Wt, ct):
    B, T, d = X.shape
    Xf = X.reshape(B*T, d)
    P = (Xf @ W).reshape(B, T, -1); Pt = (Xf @ Wt).reshape(B, T, -1)
    eye = torch.eye(T, dtype=X.dtype)
    h = (P @ P.transpose(1, 2) - eye*torch.sum(W*W))/math.sqrt(d)
    ht = (Pt @ Pt.transpose(1, 2) - eye*torch.sum(Wt*Wt))*(ct/math.sqrt(d))
    y, yt = torch.softmax(h, -1), torch.softmax(ht, -1); r = y - yt
    loss = 0.5*torch.sum(r*r, dim=(1, 2))
    g = y*(r - torch.sum(r*y, -1, keepdim=True))
    sym = g + g.transpose(1, 2)
    grad = Xf.T @ (sym @ P).reshape(B*T, -1)
    grad = grad - 2*torch.diagonal(g, dim1=1, dim2=2).sum()*W
    return loss, grad/(B*math.sqrt(d))

@jax.jit
def sgd_jax(X, W, Wt, ct):
    B, T, d = X.shape
    Xf = X.reshape(B*T, d)
    P = (Xf @ W).reshape(B, T, -1); Pt = (Xf @ Wt).reshape(B, T, -1)
    eye = jnp.eye(T)
    h = (P @ jnp.swapaxes(P, 1, 2) - eye*jnp.sum(W*W))/math.sqrt(d)
    ht = (Pt @ jnp.swapaxes(Pt, 1, 2) - eye*jnp.sum(Wt*Wt))*(ct/math.sqrt(d))
    y, yt = jax.nn.softmax(h, -1), jax.nn.softmax(ht, -1); r = y - yt
    loss = 0.5*jnp.sum(r*r, axis=(1, 2))
    g = y*(r - jnp.sum(r*y, -1, keepdims=True))
    sym = g + jnp.swapaxes(g, 1, 2)
    grad = Xf.T @ (sym @ P).reshape(B*T, -1)
    grad = grad - 2*jnp.trace(g, axis1=1, axis2=2).sum()*W
    return loss, grad/(B*math.sqrt(d))

def bench_sgd(d, B, T=2):
    rng = np.random.default_rng(0)
    r = d//2
    W = rng.standard_normal((d, r))/(r*d)**0.25; Wt = rng.standard_normal((d, r)); ct = 1/math.sqrt(r*d)
    X = rng.standard_normal((B, T, d))
    ref = sgd_np(X, W, Wt, ct)
    out = {}
    n = 50 if d <= 100 else 10
    # each includes: drawing the batch in numpy (the data stream) and moving it in/out
    def s_np():
        Xb = rng.standard_normal((B, T, d)); l, g = sgd_np(Xb, W, Wt, ct); float(l.mean()); g.sum()
    tW, tWt = torch.from_numpy(W), torch.from_numpy(Wt)
    def s_t():
        Xb = rng.standard_normal((B, T, d)); l, g = sgd_torch(torch.from_numpy(Xb), tW, tWt, ct); float(l.mean()); g.numpy().sum()
    jW, jWt = jnp.asarray(W), jnp.asarray(Wt)
    def s_j():
        Xb = rng.standard_normal((B, T, d)); l, g = sgd_jax(jnp.asarray(Xb), jW, jWt, ct); float(l.mean()); np.asarray(g).sum()
    def rng_only():
        rng.standard_normal((B, T, d))
    lt, gt = sgd_torch(torch.from_numpy(X), tW, tWt, ct); lj, gj = sgd_jax(jnp.asarray(X), jW, jWt, ct)
    diff = {"torch": float(np.max(np.abs(gt.numpy()-ref[1]))/np.max(np.abs(ref[1]))), "jax": float(np.max(np.abs(np.asarray(gj)-ref[1]))/np.max(np.abs(ref[1])))}
    for name, f in (("numpy", s_np), ("torch", s_t), ("jax", s_j), ("rng_only", rng_only), ("numpy", s_np)):
        out[name] = 1e3*best(f, n) if name not in out else min(out[name], 1e3*best(f, n))
    return {"kernel": f"sgd_tied_d{d}_B{B}", "ms": out, "rel_diff": diff}

# ---------------- GD block step (K_b students, stacked GEMM) ----------
def gd_np(Wb, Xf, y, n, T, r, beta=1.0):
    d = Xf.shape[1]; kb = Wb.shape[1]//r
    s = 1/(math.sqrt(r*d)*math.sqrt(d))
    P = (Xf @ Wb).reshape(n, T, kb, r)
    Wsq = np.sum(np.square(Wb.reshape(d, kb, r)), axis=(0, 2))
    h = np.einsum("nakr,nbkr->nkab", P, P)
    h[:, :, range(T), range(T)] -= Wsq[None, :, None]
    h *= s*beta
    h -= h.max(-1, keepdims=True); e = np.exp(h); yh = e/e.sum(-1, keepdims=True)
    res = yh - y[:, None]
    loss = np.sum(res*res, axis=(0, 2, 3))/d
    G = 2/d*res
    g = beta*yh*(G - np.sum(yh*G, -1, keepdims=True))
    sym = g + np.swapaxes(g, -1, -2)
    Q = np.einsum("nkab,nbkr->nakr", sym, P).reshape(n*T, kb*r)
    tr = np.einsum("nkaa->k", g)
    grad = Xf.T @ Q
    grad = grad.reshape(d, kb, r) - 2*tr[None, :, None]*Wb.reshape(d, kb, r)
    return loss, grad*s

def gd_torch(Wb, Xf, y, n, T, r, beta=1.0):
    d = Xf.shape[1]; kb = Wb.shape[1]//r
    s = 1/(math.sqrt(r*d)*math.sqrt(d))
    P = (Xf @ Wb).reshape(n, T, kb, r)
    Wsq = torch.sum(torch.square(Wb.reshape(d, kb, r)), dim=(0, 2))
    h = torch.einsum("nakr,nbkr->nkab", P, P)
    eye = torch.eye(T, dtype=Xf.dtype)
    h = (h - eye*Wsq[None, :, None, None])*(s*beta)
    yh = torch.softmax(h, -1)
    res = yh - y[:, None]
    loss = torch.sum(res*res, dim=(0, 2, 3))/d
    G = 2/d*res
    g = beta*yh*(G - torch.sum(yh*G, -1, keepdim=True))
    sym = g + g.transpose(-1, -2)
    Q = torch.einsum("nkab,nbkr->nakr", sym, P).reshape(n*T, kb*r)
    tr = torch.einsum("nkaa->k", g)
    grad = Xf.T @ Q
    grad = grad.reshape(d, kb, r) - 2*tr[None, :, None]*Wb.reshape(d, kb, r)
    return loss, grad*s

@jax.jit
def gd_jax(Wb, Xf, y):
    n, T = y.shape[0], y.shape[1]
    d = Xf.shape[1]; r = 100; kb = Wb.shape[1]//r; beta = 1.0
    s = 1/(math.sqrt(r*d)*math.sqrt(d))
    P = (Xf @ Wb).reshape(n, T, kb, r)
    Wsq = jnp.sum(jnp.square(Wb.reshape(d, kb, r)), axis=(0, 2))
    h = jnp.einsum("nakr,nbkr->nkab", P, P)
    h = (h - jnp.eye(T)*Wsq[None, :, None, None])*(s*beta)
    yh = jax.nn.softmax(h, -1)
    res = yh - y[:, None]
    loss = jnp.sum(res*res, axis=(0, 2, 3))/d
    G = 2/d*res
    g = beta*yh*(G - jnp.sum(yh*G, -1, keepdims=True))
    sym = g + jnp.swapaxes(g, -1, -2)
    Q = jnp.einsum("nkab,nbkr->nakr", sym, P).reshape(n*T, kb*r)
    tr = jnp.einsum("nkaa->k", g)
    grad = Xf.T @ Q
    grad = grad.reshape(d, kb, r) - 2*tr[None, :, None]*Wb.reshape(d, kb, r)
    return loss, grad*s

def bench_gd(kb=8):
    n, T, d, r = 12000, 2, 200, 100
    rng = np.random.default_rng(1)
    Xf = rng.standard_normal((n*T, d)); y = rng.dirichlet(np.ones(T), size=(n, T))
    Wb = rng.standard_normal((d, kb*r))
    ref = gd_np(Wb, Xf, y, n, T, r)
    tX, ty = torch.from_numpy(Xf), torch.from_numpy(y); jX, jy = jnp.asarray(Xf), jnp.asarray(y)
    lt, gt = gd_torch(torch.from_numpy(Wb), tX, ty, n, T, r); lj, gj = gd_jax(jnp.asarray(Wb), jX, jy)
    diff = {"torch": float(np.max(np.abs(gt.numpy()-ref[1]))/np.max(np.abs(ref[1]))), "jax": float(np.max(np.abs(np.asarray(gj)-ref[1]))/np.max(np.abs(ref[1])))}
    out = {}
    f_np = lambda: gd_np(Wb, Xf, y, n, T, r)
    f_t = lambda: gd_torch(torch.from_numpy(Wb), tX, ty, n, T, r)[1].numpy()
    f_j = lambda: np.asarray(gd_jax(jnp.asarray(Wb), jX, jy)[1])
    for name, f in (("numpy", f_np), ("torch", f_t), ("jax", f_j)):
        out[name] = 1e3*best(f, 1, rep=3)
    return {"kernel": f"gd_block_d200_n12000_T2_K{kb}", "ms": out, "rel_diff": diff}

# ---------------- AMP iteration core: indices GEMM, back-projection GEMM, eigh ----
def amp_np(Xf, S, n, T):
    d = S.shape[0]
    Z = (Xf @ S).reshape(n, T, d)
    X3 = Xf.reshape(n, T, d)
    h = np.matmul(Z, np.swapaxes(X3, 1, 2))
    G = np.tanh(h); G = G + np.swapaxes(G, 1, 2)   # stand-in for g_out (numpy in every variant)
    GX = np.matmul(G, X3).reshape(n*T, d)
    R = Xf.T @ GX
    w, v = np.linalg.eigh((R + R.T)/2)
    return (v*np.maximum(w, 0)) @ v.T

def amp_torch(Xf, S, n, T):
    d = S.shape[0]
    Z = (Xf @ S).reshape(n, T, d); X3 = Xf.reshape(n, T, d)
    h = Z @ X3.transpose(1, 2)
    G = torch.tanh(h); G = G + G.transpose(1, 2)
    R = Xf.T @ (G @ X3).reshape(n*T, d)
    w, v = torch.linalg.eigh((R + R.T)/2)
    return (v*torch.clamp(w, min=0)) @ v.T

@jax.jit
def amp_jax(Xf, S):
    d = S.shape[0]; T = 2; n = Xf.shape[0]//T
    Z = (Xf @ S).reshape(n, T, d); X3 = Xf.reshape(n, T, d)
    h = Z @ jnp.swapaxes(X3, 1, 2)
    G = jnp.tanh(h); G = G + jnp.swapaxes(G, 1, 2)
    R = Xf.T @ (G @ X3).reshape(n*T, d)
    w, v = jnp.linalg.eigh((R + R.T)/2)
    return (v*jnp.maximum(w, 0)) @ v.T

def bench_amp():
    d, T, n = 100, 2, 27000
    rng = np.random.default_rng(2)
    Xf = rng.standard_normal((n*T, d)); A = rng.standard_normal((d, d)); S = A@A.T/d
    ref = amp_np(Xf, S, n, T)
    tX = torch.from_numpy(Xf); jX = jnp.asarray(Xf)
    diff = {"torch": float(np.max(np.abs(amp_torch(tX, torch.from_numpy(S), n, T).numpy()-ref))/np.max(np.abs(ref))),
            "jax": float(np.max(np.abs(np.asarray(amp_jax(jX, jnp.asarray(S)))-ref))/np.max(np.abs(ref)))}
    out = {}
    for name, f in (("numpy", lambda: amp_np(Xf, S, n, T)), ("torch", lambda: amp_torch(tX, torch.from_numpy(S), n, T).numpy()),
                    ("jax", lambda: np.asarray(amp_jax(jX, jnp.asarray(S))))):
        out[name] = 1e3*best(f, 2, rep=3)
    return {"kernel": f"amp_iteration_core_d{d}_n{n}_T2", "ms": out, "rel_diff": diff}

if __name__ == "__main__":
    which = sys.argv[1:] or ["sgd100", "sgd400", "gd", "amp"]
    res = {"load_start": os.getloadavg(), "torch": torch.__version__, "jax": jax.__version__, "numpy": np.__version__, "results": []}
    for w in which:
        r = {"sgd100": lambda: bench_sgd(100, 256), "sgd400": lambda: bench_sgd(400, 512), "gd": bench_gd, "amp": bench_amp}[w]()
        print(json.dumps(r), flush=True); res["results"].append(r)
    res["load_end"] = os.getloadavg()
    print(json.dumps({k: v for k, v in res.items() if k != "results"}))
