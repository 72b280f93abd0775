/* The warp kernel of the `cuda` backend (solvers/cuda/tdma_cuda_warp.h) run on
 * the CPU: each warp is emulated by 32 host threads, __syncwarp by a barrier,
 * cp.async by a copy queued per lane that lands at the lane's wait, shared
 * memory by a host buffer. No GPU needed;
 * runs everywhere. It checks, bitwise against `reference`, the kernel's
 * index arithmetic and control flow: the coalesced chunk enumeration, tiles
 * and their strides, chunk slots and the spill of c'/d' to global memory and
 * back, columns of depth 0, 1, 2 and nz mixed in one warp, column counts that
 * are not multiples of 32, 1..8 right-hand sides, both precisions, plain and
 * fused (whose coefficients come from mm_col_coeffs), for the plans the host
 * picks on an A100 / H100 and for forced small chunks and few slots. And the
 * fused solve that builds kappa from its two right-hand sides (mixing, the
 * GPU step's): against kappa written out here from the formula of
 * mm_tdma_mixing, the surface term added, then reference's fused solve,
 * with convection on and off, a surface term zero and not. Levels
 * at and below a column's depth hold NaN and must come back bitwise
 * unchanged. A copy (cp.async) lands only at its lane's wait, so a missing
 * wait fails the test. What it cannot check: the device's own rounding and
 * races that only show with real warp scheduling. */
#include <atomic>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

/* One emulated warp's barrier (sense-reversing, yielding while it waits:
 * 32 threads on a few cores). */
struct Barrier {
  std::atomic<int> count{0};
  std::atomic<unsigned> gen{0};
  void wait() {
    const unsigned g = gen.load(std::memory_order_acquire);
    if (count.fetch_add(1, std::memory_order_acq_rel) == 31) {
      count.store(0, std::memory_order_relaxed);
      gen.fetch_add(1, std::memory_order_release);
    } else {
      while (gen.load(std::memory_order_acquire) == g)
        std::this_thread::yield();
    }
  }
};
static thread_local Barrier *tl_bar;

/* cp.async as the device may run it: a copy is queued when issued and lands
 * at this lane's wait for its group (reading its source then), so that a
 * tile read before its wait, or a source changed between issue and wait,
 * shows in the result; or, with g_eager, it lands at once, so that a copy
 * into memory still in use (the next chunk's, with prefetch) shows. */
static std::atomic<bool> g_eager{false};
struct Pending {
  void *dst;
  const void *src;
  size_t n;
};
static thread_local std::vector<Pending> tl_pending;             /* not yet committed */
static thread_local std::vector<std::vector<Pending>> tl_groups; /* committed, oldest first */
static void copy_commit() {
  tl_groups.push_back(std::move(tl_pending));
  tl_pending.clear();
}
/* The copies of every committed group but the newest n land. */
static void copy_wait_prior(size_t n) {
  while (tl_groups.size() > n) {
    for (const Pending &p : tl_groups.front())
      std::memcpy(p.dst, p.src, p.n);
    tl_groups.erase(tl_groups.begin());
  }
}

#define MM_WDEV        static inline
#define MM_WARP_SYNC() tl_bar->wait()
#define MM_COPY_ASYNC(dst, src)                                                                    \
  (g_eager ? (void)std::memcpy((dst), (src), sizeof(*(dst)))                                       \
           : tl_pending.push_back(Pending{(void *)(dst), (const void *)(src), sizeof(*(dst))}))
#define MM_COPY_COMMIT()      copy_commit()
#define MM_COPY_WAIT_PRIOR(n) copy_wait_prior(n)
#define MM_COPY_WAIT()        (copy_commit(), copy_wait_prior(0))
#include "cuda/tdma_cuda_warp.h"

using mmcuda::Args;
using mmcuda::Plan;

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                    \
      std::fprintf(stderr, __VA_ARGS__);                                                           \
      std::fputc('\n', stderr);                                                                    \
    }                                                                                              \
  } while (0)

/* splitmix64 */
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (double)(next() >> 11) * 0x1.0p-53;
  }
  int below(int n) { return (int)(next() % (uint64_t)n); }
};

/* A random batch of one precision; dry levels (and values Thomas never uses)
 * are NaN. */
template <typename T> struct Batch {
  size_t ncol;
  int nz, nrhs;
  std::vector<int> depth;
  std::vector<T> a, b, c, kappa, g, inv_h;
  std::vector<std::vector<T>> rhs;

  Batch(Rng &r, size_t ncol_, int nz_, int nrhs_) : ncol(ncol_), nz(nz_), nrhs(nrhs_) {
    const size_t n = ncol * (size_t)nz;
    depth.resize(ncol);
    const int special[4] = {0, 1, 2 < nz ? 2 : nz, nz};
    for (size_t i = 0; i < ncol; i++)
      depth[i] = i < 4 ? special[i] : r.below(3) == 0 ? r.below(nz + 1) : nz;
    for (size_t i = ncol; i > 1; i--)
      std::swap(depth[i - 1], depth[r.next() % i]);
    a.assign(n, NAN), b.assign(n, NAN), c.assign(n, NAN), kappa.assign(n, NAN);
    rhs.assign((size_t)nrhs, std::vector<T>(n, NAN));
    g.resize((size_t)nz), inv_h.resize((size_t)nz);
    std::vector<double> h((size_t)nz);
    for (int k = 0; k < nz; k++)
      h[k] = r.uniform(1.0, 60.0);
    for (int k = 0; k < nz; k++) {
      inv_h[k] = (T)(1.0 / h[k]);
      g[k] = k < nz - 1 ? (T)(86400.0 / (0.5 * (h[k] + h[k + 1]))) : (T)NAN;
    }
    for (size_t col = 0; col < ncol; col++)
      for (int k = 0; k < depth[col]; k++) {
        const size_t i = col * (size_t)nz + (size_t)k;
        const double av = r.uniform(-1, 1), cv = r.uniform(-1, 1);
        a[i] = k == 0 ? (T)NAN : (T)av;
        c[i] = k == depth[col] - 1 ? (T)NAN : (T)cv;
        b[i] =
            (T)((r.below(2) ? 1.0 : -1.0) * (std::fabs(av) + std::fabs(cv) + r.uniform(0.5, 2.0)));
        kappa[i] =
            k == depth[col] - 1 ? (T)NAN : (T)std::exp(r.uniform(std::log(1e-5), std::log(1e-1)));
        for (int q = 0; q < nrhs; q++)
          rhs[q][i] = (T)r.uniform(-2.0, 30.0);
      }
  }
};

/* 32 lane threads, started once; each job runs on all of them. */
struct Lanes {
  Barrier bar;
  std::mutex m;
  std::condition_variable cv;
  std::function<void(int)> job;
  unsigned job_id = 0;
  int done = 0;
  bool quit = false;
  std::vector<std::thread> th;
  Lanes() {
    for (int lane = 0; lane < 32; lane++)
      th.emplace_back([this, lane] {
        tl_bar = &bar;
        unsigned seen = 0;
        for (;;) {
          std::function<void(int)> f;
          {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [&] { return quit || job_id != seen; });
            if (quit) return;
            seen = job_id;
            f = job;
          }
          f(lane);
          std::lock_guard<std::mutex> l(m);
          if (++done == 32) cv.notify_all();
        }
      });
  }
  void run(std::function<void(int)> f) {
    std::unique_lock<std::mutex> l(m);
    job = std::move(f);
    done = 0;
    job_id++;
    cv.notify_all();
    cv.wait(l, [&] { return done == 32; });
  }
  ~Lanes() {
    {
      std::lock_guard<std::mutex> l(m);
      quit = true;
    }
    cv.notify_all();
    for (auto &t : th)
      t.join();
  }
};
static Lanes *lanes;

/* Runs the warp kernel over the batch, warp after warp, on the 32 lanes. */
template <typename T, int NRHS, bool FUSED>
static void emulate(const Args<T> &p, size_t warp_bytes) {
  std::vector<unsigned char> smem_v(warp_bytes + 16);
  unsigned char *smem = (unsigned char *)(((uintptr_t)smem_v.data() + 15) / 16 * 16);
  std::memset(smem, 0xff, warp_bytes); /* NaN garbage, like uninitialised shared memory */
  const size_t tasks = (p.ncol + 31) / 32;
  lanes->run([&](int lane) {
    for (size_t t = 0; t < tasks; t++)
      mmcuda::warp_solve<T, NRHS, FUSED>(p, t, lane, smem);
  });
}

template <typename T, bool FUSED>
static void emulate_n(const Args<T> &p, size_t warp_bytes, int nrhs) {
  switch (nrhs) {
  case 1: emulate<T, 1, FUSED>(p, warp_bytes); break;
  case 2: emulate<T, 2, FUSED>(p, warp_bytes); break;
  case 3: emulate<T, 3, FUSED>(p, warp_bytes); break;
  case 8: emulate<T, 8, FUSED>(p, warp_bytes); break;
  default: std::abort();
  }
}

static int ref_call(mm_tdma *s, const mm_tdma_batch *bt, bool fused, const Batch<double> &t,
                    double *const *x, int nrhs) {
  const mm_tdma_geometry geo = {t.inv_h.data(), t.g.data()};
  return fused ? mm_tdma_fused(s, bt, &geo, t.kappa.data(), x, nrhs)
               : mm_tdma_solve(s, bt, t.a.data(), t.b.data(), t.c.data(), x, nrhs);
}
static int ref_call(mm_tdma *s, const mm_tdma_batch *bt, bool fused, const Batch<float> &t,
                    float *const *x, int nrhs) {
  const mm_tdma_geometry_f geo = {t.inv_h.data(), t.g.data()};
  return fused ? mm_tdma_fused_f(s, bt, &geo, t.kappa.data(), x, nrhs)
               : mm_tdma_solve_f(s, bt, t.a.data(), t.b.data(), t.c.data(), x, nrhs);
}

static const char *tname(double) {
  return "double";
}
static const char *tname(float) {
  return "single";
}

/* One case: the emulated kernel with plan `pl` against reference, bitwise. */
template <typename T>
static void check_case_once(const Batch<T> &t, bool fused, const Plan &pl, const char *what) {
  const int nrhs = t.nrhs;
  std::vector<std::vector<T>> ref = t.rhs, emu = t.rhs;
  std::vector<T *> rp, ep;
  for (int q = 0; q < nrhs; q++)
    rp.push_back(ref[q].data()), ep.push_back(emu[q].data());
  const mm_tdma_batch bt = {t.ncol, t.nz, t.depth.data()};
  mm_tdma *s = nullptr;
  int rc = mm_tdma_create("reference", t.nz, 0, &s);
  if (!rc) rc = ref_call(s, &bt, fused, t, rp.data(), nrhs);
  mm_tdma_destroy(s);
  CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));

  std::vector<T> cpws(pl.slots < pl.chunks ? t.ncol * (size_t)t.nz : 0, (T)NAN);
  const int abort_flag = 0;
  Args<T> p = {};
  p.ncol = t.ncol;
  p.nz = t.nz;
  p.depth = t.depth.data();
  p.a = t.a.data(), p.b = t.b.data(), p.c = t.c.data();
  p.kappa = t.kappa.data(), p.g = t.g.data(), p.inv_h = t.inv_h.data();
  for (int q = 0; q < nrhs; q++)
    p.rhs[q] = ep[q];
  p.cpws = cpws.empty() ? nullptr : cpws.data();
  p.abort = &abort_flag;
  p.kt = pl.kt, p.stride = pl.stride, p.slots = pl.slots, p.prefetch = pl.prefetch;
  if (fused)
    emulate_n<T, true>(p, pl.warp_bytes, nrhs);
  else
    emulate_n<T, false>(p, pl.warp_bytes, nrhs);

  const size_t n = t.ncol * (size_t)t.nz;
  for (int q = 0; q < nrhs; q++) {
    size_t i = 0;
    while (i < n && !std::memcmp(&ref[q][i], &emu[q][i], sizeof(T)))
      i++;
    CHECK(i == n,
          "%s %s %s ncol=%zu nz=%d nrhs=%d kt=%d slots=%d/%d: rhs %d differs at column %zu "
          "(depth %d) level %zu: %.17g vs reference %.17g",
          what, tname(T()), fused ? "fused" : "plain", t.ncol, t.nz, nrhs, pl.kt, pl.slots,
          pl.chunks, q, i / (size_t)t.nz, t.depth[i / (size_t)t.nz], i % (size_t)t.nz,
          (double)emu[q][i], (double)ref[q][i]);
    if (i != n) return;
  }
}

/* With prefetch, the kernel runs twice: copies landing at their wait, and
 * at once (g_eager). */
template <typename T>
static void check_case(const Batch<T> &t, bool fused, const Plan &pl, const char *what) {
  for (int eager = 0; eager <= pl.prefetch; eager++) {
    g_eager = eager != 0;
    check_case_once(t, fused, pl, what);
  }
  g_eager = false;
}

/* The negative control: the comparison must see one flipped bit. */
static void negative_control() {
  Rng r{7};
  Batch<double> t(r, 37, 5, 1);
  Plan pl;
  mmcuda::mm_cuda_plan(t.nz, 1, sizeof(double), false, 233472, 232448, 2, 0, 0, &pl);
  Batch<double> broken = t;
  for (size_t col = 0; col < t.ncol; col++)
    if (t.depth[col] == t.nz) {
      uint64_t bits;
      std::memcpy(&bits, &broken.b[col * t.nz + 2], 8);
      bits ^= 1ull << 40;
      std::memcpy(&broken.b[col * t.nz + 2], &bits, 8);
      break;
    }
  const int before = failures;
  /* reference on t, emulation on broken: compare by hand */
  std::vector<double> x1 = t.rhs[0], x2 = t.rhs[0];
  double *p1 = x1.data(), *p2 = x2.data();
  const mm_tdma_batch bt = {t.ncol, t.nz, t.depth.data()};
  mm_tdma *s;
  mm_tdma_create("reference", t.nz, 0, &s);
  mm_tdma_solve(s, &bt, t.a.data(), t.b.data(), t.c.data(), &p1, 1);
  mm_tdma_destroy(s);
  const int abort_flag = 0;
  Args<double> p = {};
  p.ncol = t.ncol, p.nz = t.nz, p.depth = t.depth.data();
  p.a = broken.a.data(), p.b = broken.b.data(), p.c = broken.c.data();
  p.rhs[0] = p2;
  p.abort = &abort_flag;
  p.kt = pl.kt, p.stride = pl.stride, p.slots = pl.slots, p.prefetch = pl.prefetch;
  emulate<double, 1, false>(p, pl.warp_bytes);
  CHECK(std::memcmp(x1.data(), x2.data(), x1.size() * sizeof(double)) != 0,
        "negative control: a flipped bit of b went unnoticed");
  CHECK(failures == before, "negative control");
}

/* Plans of real devices: (shared memory per SM, per block opt-in). */
struct Dev {
  const char *name;
  size_t sm, block;
};
static const Dev devs[] = {{"A100", 167936, 166912}, {"H100", 233472, 232448}};

/* Forced slot counts, with and without prefetch: one slot (every chunk but
 * the last spilled, nothing to prefetch), two (spills and a prefetch) and
 * three. */
struct Forced {
  int slots;
  bool prefetch;
};
static const Forced forced[] = {{1, false}, {2, false}, {2, true}, {3, true}};

template <typename T> static void run_all(Rng &r) {
  const size_t ncols[] = {1, 31, 33, 37, 100};
  const int nzs[] = {1, 2, 3, 5, 17, 32, 33, 100};
  const int nrhss[] = {1, 2, 3, 8};
  for (size_t ic = 0; ic < sizeof ncols / sizeof *ncols; ic++)
    for (size_t iz = 0; iz < sizeof nzs / sizeof *nzs; iz++)
      for (size_t ir = 0; ir < sizeof nrhss / sizeof *nrhss; ir++) {
        const int nz = nzs[iz], nrhs = nrhss[ir];
        Batch<T> t(r, ncols[ic], nz, nrhs);
        for (int fused = 0; fused <= 1; fused++) {
          /* plans the host would pick */
          for (const Dev &d : devs)
            for (int wps : {1, 2, 4, 8}) {
              Plan pl;
              /* prefetch: the H100's plan of 2 warps per SM (the whole column
               * on chip, every chunk prefetched) */
              const bool pf = wps == 2 && &d == &devs[1];
              const int rc = mmcuda::mm_cuda_plan(nz, nrhs, sizeof(T), fused, d.sm, d.block, wps, 0,
                                                  0, &pl, pf);
              CHECK(rc == 0, "no plan for %s nz=%d nrhs=%d", d.name, nz, nrhs);
              if (rc) continue;
              CHECK(pl.warp_bytes * (size_t)pl.warps <= d.block && pl.stride % 2 == 1 &&
                        pl.kt >= 1 && pl.kt <= nz && pl.slots >= 1,
                    "bad plan for %s", d.name);
              if (wps == 2 || wps == 8) check_case(t, fused, pl, pf ? "H100, prefetch" : d.name);
            }
          /* forced chunk sizes and slot counts: spills */
          const int kts[] = {1, 3, 8};
          for (int kt : kts)
            for (const Forced &f : forced) {
              if (kt == 1 && (nz > 5 || f.slots > 1)) continue; /* slow to emulate */
              Plan pl;
              if (mmcuda::mm_cuda_plan(nz, nrhs, sizeof(T), fused, 233472, 232448, 2, kt, f.slots,
                                       &pl, f.prefetch))
                continue;
              check_case(t, fused, pl, f.prefetch ? "forced, prefetch" : "forced");
            }
        }
      }
}

/* The mixing solve (warp_solve<double, 2, true, true>) with plan `pl`
 * against kappa written out here, the surface term, and reference's fused
 * solve, bitwise. Tracers warm over cold with noise: about a third of the
 * interfaces unstable. Returns 1 when the result is that of the expected
 * solve. */
static int check_mixing(Rng &r, size_t ncol, int nz, int convect, double top, const Plan &pl,
                        const char *what, bool expect_pass = true) {
  Batch<double> t(r, ncol, nz, 2);
  for (size_t col = 0; col < ncol; col++)
    for (int k = 0; k < t.depth[col]; k++) {
      const size_t i = col * (size_t)nz + (size_t)k;
      t.rhs[0][i] = 20.0 - 0.1 * k + r.uniform(-0.15, 0.15);
      t.rhs[1][i] = 35.0 + r.uniform(-0.01, 0.01);
    }
  mm_tdma_mixing mix = {};
  mix.alpha = 2e-4, mix.beta = 7.6e-4, mix.kappa_v = 1e-5, mix.kappa_mix = 0.1;
  mix.convect = convect, mix.top = top;
  /* expected: kappa from the formula, the surface term, reference */
  std::vector<double> kappa(t.kappa.size(), NAN), e0 = t.rhs[0], e1 = t.rhs[1];
  for (size_t col = 0; col < ncol; col++) {
    for (int k = 0; k + 1 < t.depth[col]; k++) {
      const size_t i = col * (size_t)nz + (size_t)k;
      const double rho = -mix.alpha * (e0[i] - e0[i + 1]) + mix.beta * (e1[i] - e1[i + 1]);
      kappa[i] = mix.convect && rho > 0.0 ? mix.kappa_mix : mix.kappa_v;
    }
    if (t.depth[col] > 0 && top != 0.0) e0[col * (size_t)nz] += top;
  }
  if (!expect_pass) mix.top = top * 0.5; /* negative control: another surface term */
  double *erhs[2] = {e0.data(), e1.data()};
  const mm_tdma_batch bt = {t.ncol, t.nz, t.depth.data()};
  const mm_tdma_geometry geo = {t.inv_h.data(), t.g.data()};
  mm_tdma *s = nullptr;
  int rc = mm_tdma_create("reference", nz, 0, &s);
  if (!rc) rc = mm_tdma_fused(s, &bt, &geo, kappa.data(), erhs, 2);
  mm_tdma_destroy(s);
  CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));

  std::vector<double> x0 = t.rhs[0], x1 = t.rhs[1];
  std::vector<double> cpws(pl.slots < pl.chunks ? ncol * (size_t)nz : 0, NAN);
  const int abort_flag = 0;
  Args<double> p = {};
  p.ncol = ncol, p.nz = nz, p.depth = t.depth.data();
  p.kappa = nullptr, p.g = t.g.data(), p.inv_h = t.inv_h.data();
  p.rhs[0] = x0.data(), p.rhs[1] = x1.data();
  p.cpws = cpws.empty() ? nullptr : cpws.data();
  p.abort = &abort_flag;
  p.kt = pl.kt, p.stride = pl.stride, p.slots = pl.slots, p.prefetch = pl.prefetch;
  p.mix = mix;
  std::vector<unsigned char> smem_v(pl.warp_bytes + 16);
  unsigned char *smem = (unsigned char *)(((uintptr_t)smem_v.data() + 15) / 16 * 16);
  std::memset(smem, 0xff, pl.warp_bytes);
  const size_t tasks = (ncol + 31) / 32;
  lanes->run([&](int lane) {
    for (size_t w = 0; w < tasks; w++)
      mmcuda::warp_solve<double, 2, true, true>(p, w, lane, smem);
  });
  const size_t n = ncol * (size_t)nz;
  const bool same = !std::memcmp(x0.data(), e0.data(), n * sizeof(double)) &&
                    !std::memcmp(x1.data(), e1.data(), n * sizeof(double));
  if (expect_pass) {
    size_t i = 0;
    while (i < n && !std::memcmp(&x0[i], &e0[i], 8) && !std::memcmp(&x1[i], &e1[i], 8))
      i++;
    CHECK(same,
          "%s mixing ncol=%zu nz=%d convect=%d top=%g kt=%d slots=%d/%d: differs at column %zu "
          "(depth %d) level %zu: T %.17g S %.17g vs expected %.17g %.17g",
          what, ncol, nz, convect, top, pl.kt, pl.slots, pl.chunks, i / (size_t)nz,
          t.depth[i / (size_t)nz], i % (size_t)nz, x0[i], x1[i], e0[i], e1[i]);
  }
  return same;
}

static void run_mixing(Rng &r) {
  /* 5: the depths 0, 1, 2 and nz of Batch and one more in one warp */
  const size_t ncols[] = {5, 33, 100};
  const int nzs[] = {1, 2, 3, 17, 32, 33, 100};
  for (size_t ncol : ncols)
    for (int nz : nzs)
      for (int convect = 0; convect <= 1; convect++)
        for (double top : {0.0, 0.25}) {
          for (const Dev &d : devs)
            for (int wps : {2, 4, 8}) { /* 4: the default */
              Plan pl;
              const int rc = mmcuda::mm_cuda_plan(nz, 2, sizeof(double), true, d.sm, d.block, wps,
                                                  0, 0, &pl, wps == 2 && &d == &devs[1]);
              CHECK(rc == 0, "no mixing plan for %s nz=%d", d.name, nz);
              for (int eager = 0; !rc && eager <= pl.prefetch; eager++) {
                g_eager = eager != 0;
                check_mixing(r, ncol, nz, convect, top, pl, d.name);
              }
              g_eager = false;
            }
          for (int kt : {1, 3, 8})
            for (const Forced &f : forced) {
              if (kt == 1 && (nz > 5 || f.slots > 1)) continue; /* slow to emulate */
              Plan pl;
              if (mmcuda::mm_cuda_plan(nz, 2, sizeof(double), true, 233472, 232448, 2, kt, f.slots,
                                       &pl, f.prefetch))
                continue;
              for (int eager = 0; eager <= pl.prefetch; eager++) {
                g_eager = eager != 0;
                check_mixing(r, ncol, nz, convect, top, pl,
                             f.prefetch ? "forced, prefetch" : "forced");
              }
              g_eager = false;
            }
        }
  /* negative control: another surface term must show */
  Plan pl;
  mmcuda::mm_cuda_plan(17, 2, sizeof(double), true, 233472, 232448, 2, 3, 1, &pl);
  CHECK(!check_mixing(r, 40, 17, 1, 0.25, pl, "control", false),
        "mixing negative control: another surface term went unnoticed");
}

int main() {
  Lanes pool;
  lanes = &pool;
  Rng r{2026};
  negative_control();
  run_all<double>(r);
  run_all<float>(r);
  run_mixing(r);
  /* The plan of the benchmark shape keeps a 100-level column on chip for
   * one right-hand side, double, at 2 warps per SM on an H100. */
  Plan pl;
  mmcuda::mm_cuda_plan(100, 1, sizeof(double), false, 233472, 232448, 2, 0, 0, &pl);
  std::printf("plan nz=100 nrhs=1 double plain, H100: kt=%d stride=%d slots=%d/%d warps=%d "
              "warp_bytes=%zu\n",
              pl.kt, pl.stride, pl.slots, pl.chunks, pl.warps, pl.warp_bytes);
  CHECK(pl.slots == pl.chunks, "expected no spill");
  /* nz split evenly into chunks of at most 32 levels: 4 x 25 at nz = 100
   * (64128 bytes a warp for all of them), so at 4 warps per SM 3 of the 4
   * chunks stay on chip; forced 32-level chunks (32 + 32 + 32 + 4, 84608
   * bytes) keep 2 */
  CHECK(pl.kt == 25 && pl.chunks == 4 && pl.warp_bytes == 64128,
        "nz = 100: kt=%d chunks=%d warp_bytes=%zu, not 4 chunks of 25 in 64128 bytes", pl.kt,
        pl.chunks, pl.warp_bytes);
  Plan even4, forced4;
  mmcuda::mm_cuda_plan(100, 1, sizeof(double), false, 233472, 232448, 4, 0, 0, &even4);
  mmcuda::mm_cuda_plan(100, 1, sizeof(double), false, 233472, 232448, 4, 32, 0, &forced4);
  CHECK(even4.kt == 25 && even4.slots == 3 && forced4.kt == 32 && forced4.chunks == 4 &&
            forced4.slots == 2,
        "nz = 100 at 4 warps per SM: kt=%d with %d slots, forced kt=%d with %d slots of %d",
        even4.kt, even4.slots, forced4.kt, forced4.slots, forced4.chunks);
  CHECK(mmcuda::even_chunk(20, 32) == 20 && mmcuda::even_chunk(33, 32) == 17 &&
            mmcuda::even_chunk(64, 32) == 32 && mmcuda::even_chunk(65, 32) == 22 &&
            mmcuda::even_chunk(100, 16) == 15,
        "even_chunk");
  /* The warps per SM that prepare() (tdma_cuda.cu) plans for: 4 for every
   * solve (for the model step's, mixing, 8 until 2026-11-30), the
   * environment's when set; at nz = 100 on an H100/H200 a plan for 8 holds
   * fewer slots than one for 4. */
  CHECK(mmcuda::warps_per_sm_for(0, true) == 4, "the mixing solve's default is not 4 warps per SM");
  CHECK(mmcuda::warps_per_sm_for(0, false) == 4, "the other solves' default is not 4 warps per SM");
  CHECK(mmcuda::warps_per_sm_for(3, true) == 3 && mmcuda::warps_per_sm_for(6, false) == 6,
        "MM_TDMA_CUDA_WARPS_PER_SM does not override the defaults");
  Plan mixdef, mix8, mix4;
  mmcuda::mm_cuda_plan(100, 2, sizeof(double), true, 233472, 232448,
                       mmcuda::warps_per_sm_for(0, true), 0, 0, &mixdef);
  mmcuda::mm_cuda_plan(100, 2, sizeof(double), true, 233472, 232448, 8, 0, 0, &mix8);
  mmcuda::mm_cuda_plan(100, 2, sizeof(double), true, 233472, 232448, 4, 0, 0, &mix4);
  std::printf("plan nz=100 mixing, H100/H200: %d of %d chunks on chip at 8 warps per SM, %d at 4 "
              "(the default)\n",
              mix8.slots, mix8.chunks, mix4.slots);
  CHECK(mixdef.kt == mix4.kt && mixdef.slots == mix4.slots && mixdef.chunks == mix4.chunks,
        "the mixing solve's default plan is not the 4-warp one");
  CHECK(mix8.slots == 1 && mix4.slots == 2,
        "nz = 100 mixing: %d slots at 8 warps per SM, %d at 4; expected 1 and 2", mix8.slots,
        mix4.slots);
  /* even chunks up to 4 warps per SM, 32-level chunks above (the faster
   * of the two at each, measured on an H200) */
  CHECK(mix8.kt == 32 && mix8.chunks == 4 && mix4.kt == 25 && mix4.chunks == 4,
        "nz = 100 mixing: kt=%d (%d chunks) at 8 warps per SM, kt=%d (%d) at 4; expected 32 and 25",
        mix8.kt, mix8.chunks, mix4.kt, mix4.chunks);
  Plan plain8;
  mmcuda::mm_cuda_plan(100, 1, sizeof(double), false, 233472, 232448, 8, 0, 0, &plain8);
  CHECK(plain8.kt == 32 && even4.kt == 25, "nz = 100 plain: kt=%d at 8 warps per SM, %d at 4",
        plain8.kt, even4.kt);
  if (failures) {
    std::printf("%d failures\n", failures);
    return 1;
  }
  std::printf("emulated cuda warp kernel bitwise equal to reference\n");
  return 0;
}
