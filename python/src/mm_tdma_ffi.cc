// The XLA FFI handlers of minimodel.jax.tdma: one batched tridiagonal solve
// through the solvers' C API (mm_py.h), written against the FFI headers
// jaxlib ships (jax.ffi.include_dir()).
//
// Operands: lower, diag, upper, rhs of one shape (..., nz) and one dtype
// (f32 or f64), levels last: every leading index is a column, so batch
// dimensions that vmap adds are just more columns. One result of that shape,
// which minimodel/jax.py aliases to rhs (input_output_aliases {3: 0}): when
// XLA gives the result rhs's buffer (a donated right-hand side) the solve is
// in place, otherwise rhs is copied into the result first. Every column is
// solved over all nz levels. Attribute `threads`: OpenMP threads of the CPU
// solve (0: the library's default, OMP_NUM_THREADS).
//
// The CUDA handler (built with CUDA) queues the copy and the solvers' `cuda`
// solve on XLA's stream and returns: the host never waits for the device
// (but where the solver's workspace may move, see tdma_cuda below).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "mm_py.h"
#include "mm_tdma.h"
#include "xla/ffi/api/ffi.h"

#ifdef MINIMODEL_FFI_CUDA
#include <cuda_runtime_api.h>

#include <mutex>
#endif

namespace ffi = xla::ffi;

namespace {

struct Shape {
  size_t ncol = 0;
  int nz = 0;
  int single = 0;
};

// One dtype (f32 or f64) and one shape (rank >= 1) for every operand and the
// result; nz within int.
ffi::Error check(const ffi::AnyBuffer &lower, const ffi::AnyBuffer &diag,
                 const ffi::AnyBuffer &upper, const ffi::AnyBuffer &rhs, const ffi::AnyBuffer &out,
                 Shape *sh) {
  const ffi::DataType dt = rhs.element_type();
  if (dt != ffi::DataType::F32 && dt != ffi::DataType::F64)
    return ffi::Error::InvalidArgument("minimodel tdma: operands must be float32 or float64");
  const ffi::AnyBuffer *all[] = {&lower, &diag, &upper, &out};
  const auto dims = rhs.dimensions();
  for (const ffi::AnyBuffer *b : all) {
    if (b->element_type() != dt)
      return ffi::Error::InvalidArgument("minimodel tdma: operands of different dtypes");
    const auto d = b->dimensions();
    if (d.size() != dims.size())
      return ffi::Error::InvalidArgument("minimodel tdma: operands of different shapes");
    for (size_t i = 0; i < d.size(); i++)
      if (d[i] != dims[i])
        return ffi::Error::InvalidArgument("minimodel tdma: operands of different shapes");
  }
  if (dims.size() < 1)
    return ffi::Error::InvalidArgument("minimodel tdma: operands need at least one dimension");
  const int64_t nz = dims[dims.size() - 1];
  if (nz < 1 || nz > INT32_MAX)
    return ffi::Error::InvalidArgument("minimodel tdma: levels (last dimension) out of 1..2^31-1");
  size_t ncol = 1;
  for (size_t i = 0; i + 1 < dims.size(); i++)
    ncol *= (size_t)dims[i];
  sh->ncol = ncol;
  sh->nz = (int)nz;
  sh->single = dt == ffi::DataType::F32;
  return ffi::Error::Success();
}

ffi::Error solver_error(int rc) {
  return ffi::Error(rc == MM_TDMA_EINVAL ? ffi::ErrorCode::kInvalidArgument
                                         : ffi::ErrorCode::kInternal,
                    std::string("minimodel tdma: ") + mm_py_strerror(rc));
}

// Depths of full columns: kept by each calling thread between calls for up
// to kDepthKept columns (a small call makes none), made for the call alone
// above that, so that a call of many columns does not leave 4 bytes a column
// in memory for the life of the process, on every XLA thread that ran one.
constexpr size_t kDepthKept = size_t(1) << 16; // 256 KiB a thread

class FullDepth {
public:
  // nullptr when the memory cannot be had
  const int *get(size_t ncol, int nz) {
    if (ncol > kDepthKept) {
      own_.reset(new (std::nothrow) int[ncol]);
      if (!own_) return nullptr;
      std::fill_n(own_.get(), ncol, nz);
      return own_.get();
    }
    thread_local std::vector<int> kept; // at most kDepthKept
    thread_local int kept_nz = -1;
    if (kept.size() < ncol || kept_nz != nz) {
      try {
        kept.assign(kept.size() > ncol ? kept.size() : ncol, nz);
      } catch (const std::bad_alloc &) {
        kept = std::vector<int>();
        kept_nz = -1;
        return nullptr;
      }
      kept_nz = nz;
    }
    return kept.data();
  }

private:
  std::unique_ptr<int[]> own_; // the depths of a call of more than kDepthKept columns
};

ffi::Error tdma_cpu(ffi::AnyBuffer lower, ffi::AnyBuffer diag, ffi::AnyBuffer upper,
                    ffi::AnyBuffer rhs, ffi::Result<ffi::AnyBuffer> out, int32_t threads) {
  Shape sh;
  ffi::Error err = check(lower, diag, upper, rhs, *out, &sh);
  if (err.failure()) return err;
  if (sh.ncol == 0) return ffi::Error::Success();
  FullDepth full;
  const int *depth = full.get(sh.ncol, sh.nz);
  if (!depth) return solver_error(MM_TDMA_ENOMEM);
  void *x = out->untyped_data();
  if (x != rhs.untyped_data()) std::memcpy(x, rhs.untyped_data(), rhs.size_bytes());
  const int rc =
      mm_py_solve("auto", sh.single, sh.ncol, sh.nz, depth, lower.untyped_data(),
                  diag.untyped_data(), upper.untyped_data(), x, threads > 0 ? threads : 0, 0);
  return rc ? solver_error(rc) : ffi::Error::Success();
}

#ifdef MINIMODEL_FFI_CUDA
// Per device, kept for the life of the process: the depths of full columns,
// grown as needed, and the solver of the last nz (made once, so that a call
// does not allocate and free its device workspace). A solve is queued on
// XLA's stream and may still run when the next call comes: `done` is
// recorded after it, and the host waits for it before anything the solve
// uses changes (the depths or the solver replaced, the solver's workspace
// grown: more bytes of columns than any solve of this solver in the same
// precision had) and before
// a solve on another stream, which would share the solver's workspace and
// status word. Each device's lock is held while a call queues.
//
// The handler must never be declared command-buffer compatible: it may wait
// for an event and allocate, which a CUDA graph capture does not allow.
struct DeviceDepth {
  std::mutex lock;
  int *p = nullptr;
  size_t n = 0;
  int nz = -1;
  mm_tdma *solver = nullptr;
  int solver_nz = -1;
  cudaEvent_t done = nullptr; // recorded after the last solve queued
  cudaStream_t stream = nullptr;
  // the most bytes of columns (ncol nz element) solved by this solver, in
  // double [0] and in single [1]: the workspace a solve needs (ncol nz
  // element, where its plan spills) grows only past this. Its plan depends
  // on nz and the precision alone, so within one precision either every
  // solve spills or none does; one maximum over both precisions would miss
  // a spilling double solve after a larger single one that did not spill.
  size_t bytes_max[2] = {0, 0};
};
DeviceDepth device_depths[64];

ffi::Error cuda_error(const char *what, cudaError_t e) {
  (void)cudaGetLastError();
  return ffi::Error::Internal(std::string("minimodel tdma: ") + what + ": " +
                              cudaGetErrorString(e));
}

ffi::Error tdma_cuda(cudaStream_t stream, int32_t device, ffi::AnyBuffer lower, ffi::AnyBuffer diag,
                     ffi::AnyBuffer upper, ffi::AnyBuffer rhs, ffi::Result<ffi::AnyBuffer> out,
                     int32_t threads) {
  (void)threads;
  Shape sh;
  ffi::Error err = check(lower, diag, upper, rhs, *out, &sh);
  if (err.failure()) return err;
  if (sh.ncol == 0) return ffi::Error::Success();
  void *x = out->untyped_data();
  cudaError_t e;
  if (x != rhs.untyped_data() &&
      (e = cudaMemcpyAsync(x, rhs.untyped_data(), rhs.size_bytes(), cudaMemcpyDeviceToDevice,
                           stream)) != cudaSuccess)
    return cuda_error("copy of the right-hand side", e);
  // XLA's device for this call; the solver allocates on the current CUDA
  // device, which XLA makes that one before it calls a handler
  int dev = 0;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess) return cuda_error("device", e);
  if (dev != device)
    return ffi::Error::Internal("minimodel tdma: XLA runs this call on device " +
                                std::to_string(device) + " but the current CUDA device is " +
                                std::to_string(dev));
  if (dev < 0 || dev >= 64) return ffi::Error::Internal("minimodel tdma: device index over 63");
  DeviceDepth &dd = device_depths[dev];
  std::lock_guard<std::mutex> hold(dd.lock);
  if (!dd.done && (e = cudaEventCreateWithFlags(&dd.done, cudaEventDisableTiming)) != cudaSuccess)
    return cuda_error("event", e);
  const bool grows = dd.n < sh.ncol || dd.nz != sh.nz;
  const bool renew = !dd.solver || dd.solver_nz != sh.nz;
  const size_t bytes = sh.ncol * (size_t)sh.nz * (sh.single ? sizeof(float) : sizeof(double));
  // the last solve is done before what it uses changes, or another stream
  // takes the solver (the first call has nothing queued: the event is new)
  if ((grows || renew || bytes > dd.bytes_max[sh.single] || stream != dd.stream) &&
      (e = cudaEventSynchronize(dd.done)) != cudaSuccess)
    return cuda_error("the previous solve", e);
  if (grows) {
    const size_t n = dd.n > sh.ncol ? dd.n : sh.ncol;
    if (dd.p) cudaFree(dd.p);
    dd.p = nullptr, dd.n = 0, dd.nz = -1;
    int *p = nullptr;
    if ((e = cudaMalloc((void **)&p, n * sizeof(int))) != cudaSuccess)
      return cuda_error("depths", e);
    // on XLA's stream, so that the solve queued there after it sees them (a
    // copy from pageable memory is staged before the call returns)
    const std::vector<int> host(n, sh.nz);
    if ((e = cudaMemcpyAsync(p, host.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream)) !=
        cudaSuccess) {
      cudaFree(p);
      return cuda_error("depths", e);
    }
    dd.p = p, dd.n = n, dd.nz = sh.nz;
  }
  if (renew) {
    if (dd.solver) mm_tdma_destroy(dd.solver);
    dd.solver = nullptr, dd.bytes_max[0] = dd.bytes_max[1] = 0;
    const int rc = mm_tdma_create("cuda", sh.nz, 1, &dd.solver);
    if (rc) return solver_error(rc);
    dd.solver_nz = sh.nz;
  }
  // the depths are the handler's own (every column full): no check needed
  const int rc = mm_py_solve_async(dd.solver, sh.single, sh.ncol, sh.nz, dd.p, lower.untyped_data(),
                                   diag.untyped_data(), upper.untyped_data(), x, (void *)stream);
  // recorded whatever the solve returned: part of it may be queued
  if ((e = cudaEventRecord(dd.done, stream)) != cudaSuccess) return cuda_error("event", e);
  dd.stream = stream;
  if (rc) { // a CUDA error behind it is left for its caller (mm_tdma.h): read, and cleared
    const cudaError_t le = cudaGetLastError();
    return rc == MM_TDMA_EDEVICE && le != cudaSuccess ? cuda_error("solve", le) : solver_error(rc);
  }
  if (bytes > dd.bytes_max[sh.single]) dd.bytes_max[sh.single] = bytes;
  return ffi::Error::Success();
}
#endif

} // namespace

// extern "C" symbols, for jax.ffi.pycapsule through ctypes (minimodel/jax.py),
// declared first so as to be exported (the library hides everything else:
// python/CMakeLists.txt).
extern "C" MM_PY_EXPORT XLA_FFI_Error *mm_tdma_ffi_cpu(XLA_FFI_CallFrame *call_frame);
#ifdef MINIMODEL_FFI_CUDA
extern "C" MM_PY_EXPORT XLA_FFI_Error *mm_tdma_ffi_cuda(XLA_FFI_CallFrame *call_frame);
#endif

XLA_FFI_DEFINE_HANDLER_SYMBOL(mm_tdma_ffi_cpu, tdma_cpu,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int32_t>("threads"));

#ifdef MINIMODEL_FFI_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(mm_tdma_ffi_cuda, tdma_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int32_t>("threads"));
#endif
