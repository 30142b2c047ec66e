/* A stand-in for the CUDA driver (libcuda.so.1) for tests on machines without a GPU: device
   memory is host memory (allocations, copies and memsets work), modules and launches are only
   written to the file named by $FAKE_CUDA_LOG, one line each ("load <bytes of PTX>",
   "launch <kernel> grid gx gy gz block bx by bz"); kernels do not run. Built by
   tests/backends/gpu/test_pipeline.py and tests/backends/gpu/test_artifact.py with the system's C compiler; not
   part of mlax.
   With $FAKE_CUDA_VERBOSE set, memory calls are logged too ("alloc <pointer> <bytes>",
   "free <pointer>", "htod <dst> <bytes>", "dtoh <src> <bytes>", "dtod <dst> <src> <bytes>") and
   each launch is followed by "params <value>..." (each parameter read with the size its PTX
   .entry declares). With $FAKE_CUDA_STRICT set, a module whose .entry names are not PTX
   identifiers ([A-Za-z0-9_$], as ptxas requires) fails to load with CUDA_ERROR_INVALID_PTX, and
   a function not in its module's PTX is CUDA_ERROR_NOT_FOUND. $FAKE_CUDA_FAIL_ALLOC makes
   cuMemAlloc_v2 and cuMemAllocAsync fail with CUDA_ERROR_OUT_OF_MEMORY.
   The stream-ordered calls (cuMemAllocAsync, cuMemFreeAsync, cuMemcpy*Async_v2) act at once and
   log as their synchronous forms; with $FAKE_CUDA_VERBOSE=2 each such line and each launch line
   ends with " on <stream>", and stream creations ("stream <stream>"), stream synchronizations
   ("sync <stream>") and waits for an event ("wait event") are logged too. Streams are numbered
   from 2 on. cuEventQuery says CUDA_ERROR_NOT_READY while $FAKE_CUDA_PENDING is set. The device
   is of compute capability 9.0. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
enum { OUT_OF_MEMORY = 2, INVALID_PTX = 218, NOT_FOUND = 500, NOT_READY = 600, MAX_PARAMS = 64 };

/* A function handle: the kernel's name and the byte size of each parameter its PTX declares. */
typedef struct {
  char *name;
  int count;
  int sizes[MAX_PARAMS];
} Function;

static void record(const char *format, const char *text, const unsigned *dims) {
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *log = path ? fopen(path, "a") : NULL;
  if (!log) return;
  if (dims)
    fprintf(log, format, text, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]);
  else
    fprintf(log, format, text);
  fclose(log);
}

static int verbosity(void) {
  const char *level = getenv("FAKE_CUDA_VERBOSE");
  return level ? (atoi(level) > 1 ? 2 : 1) : 0;
}

/* One line of the verbose log; at verbosity 2 an operation queued on a stream says which. */
static void trace_on(const char *format, uint64_t a, uint64_t b, uint64_t c, int level, const void *stream) {
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *log = path && verbosity() >= level ? fopen(path, "a") : NULL;
  if (!log) return;
  fprintf(log, format, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
  if (stream && verbosity() > 1) fprintf(log, " on %llu", (unsigned long long)(uintptr_t)stream);
  fprintf(log, "\n");
  fclose(log);
}

/* The parameter list "(...)" of ".entry <name>(" in ptx, or NULL. */
static const char *entry_parameters(const char *ptx, const char *name) {
  size_t length = strlen(name);
  for (const char *at = strstr(ptx, ".entry "); at; at = strstr(at + 1, ".entry ")) {
    if (strncmp(at + 7, name, length) == 0 && at[7 + length] == '(') return at + 8 + length;
  }
  return NULL;
}

static int valid_entry_names(const char *ptx) {
  for (const char *at = strstr(ptx, ".entry "); at; at = strstr(at + 1, ".entry ")) {
    for (const char *c = at + 7; *c != '('; ++c)
      if (!isalnum((unsigned char)*c) && *c != '_' && *c != '$') return 0;
  }
  return 1;
}

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  *value = attribute == 75 ? 9 : 0; /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (minor: 76) */
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) { *context = (void *)1; return 0; }
CUresult cuCtxPushCurrent_v2(void *context) { return 0; }
CUresult cuCtxPopCurrent_v2(void **context) { if (context) *context = (void *)1; return 0; }
CUresult cuCtxSetCurrent(void *context) { return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int device) { return 0; }
CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
    case 0: *name = "CUDA_SUCCESS"; return 0;
    case OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; return 0;
    case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; return 0;
    case NOT_READY: *name = "CUDA_ERROR_NOT_READY"; return 0;
    default: return 1;
  }
}

static CUresult load(void **module, const void *image) {
  const char *ptx = image;
  char size[32];
  snprintf(size, sizeof size, "%zu", strlen(ptx));
  record("load %s\n", size, NULL);
  if (getenv("FAKE_CUDA_STRICT") && !valid_entry_names(ptx)) return INVALID_PTX;
  *module = strdup(ptx);
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) { return load(module, image); }
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, void *options, void **values) {
  return load(module, image);
}
CUresult cuModuleUnload(void *module) { free(module); return 0; }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  const char *parameters = entry_parameters(module, name);
  if (!parameters && getenv("FAKE_CUDA_STRICT")) return NOT_FOUND;
  Function *found = calloc(1, sizeof(Function));
  found->name = strdup(name);
  for (const char *at = parameters; at && *at != ')' && found->count < MAX_PARAMS; ++at)
    if (strncmp(at, ".param .", 8) == 0) found->sizes[found->count++] = atoi(at + 9) / 8;
  *function = found;
  return 0;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) { return 0; }
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  const Function *kernel = function;
  if (verbosity() > 1) {
    char format[80];
    snprintf(format, sizeof format, "launch %%s grid %%u %%u %%u block %%u %%u %%u on %llu\n",
             (unsigned long long)(uintptr_t)stream);
    record(format, kernel->name, dims);
  } else {
    record("launch %s grid %u %u %u block %u %u %u\n", kernel->name, dims);
  }
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *log = path && getenv("FAKE_CUDA_VERBOSE") ? fopen(path, "a") : NULL;
  if (!log) return 0;
  fprintf(log, "params");
  for (int i = 0; i < kernel->count; ++i) {
    uint64_t value = 0;
    memcpy(&value, params[i], kernel->sizes[i]);
    fprintf(log, " %llu", (unsigned long long)value);
  }
  fprintf(log, "\n");
  fclose(log);
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, void *function, void **params, void **extra) { return 0; }

static uintptr_t streams = 1;
CUresult cuStreamCreate(void **stream, unsigned flags) {
  *stream = (void *)__atomic_add_fetch(&streams, 1, __ATOMIC_SEQ_CST);
  trace_on("stream %llu", (uintptr_t)*stream, 0, 0, 2, NULL);
  return 0;
}
CUresult cuStreamDestroy_v2(void *stream) { return 0; }
CUresult cuStreamSynchronize(void *stream) {
  trace_on("sync %llu", (uintptr_t)stream, 0, 0, 2, NULL);
  return 0;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) { return 0; }
CUresult cuEventCreate(void **event, unsigned flags) { *event = malloc(1); return 0; }
CUresult cuEventDestroy_v2(void *event) { free(event); return 0; }
CUresult cuEventRecord(void *event, void *stream) { return 0; }
CUresult cuEventQuery(void *event) { return getenv("FAKE_CUDA_PENDING") ? NOT_READY : 0; }
CUresult cuEventSynchronize(void *event) {
  trace_on("wait event", 0, 0, 0, 2, NULL);
  return 0;
}

CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t size, void *stream) {
  if (getenv("FAKE_CUDA_FAIL_ALLOC")) return OUT_OF_MEMORY;
  *pointer = (CUdeviceptr)calloc(1, size ? size : 1);
  trace_on("alloc %llu %llu", *pointer, size, 0, 1, stream);
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) { return cuMemAllocAsync(pointer, size, NULL); }
CUresult cuDeviceGetDefaultMemPool(void **pool, int device) { *pool = (void *)4; return 0; }
CUresult cuMemPoolSetAttribute(void *pool, int attribute, void *value) { return 0; }
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t size, unsigned flags) { return cuMemAlloc_v2(pointer, size); }
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  trace_on("free %llu", pointer, 0, 0, 1, stream);
  free((void *)pointer);
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) { return cuMemFreeAsync(pointer, NULL); }
CUresult cuMemHostRegister_v2(void *pointer, size_t size, unsigned flags) { return 0; }
CUresult cuMemHostUnregister(void *pointer) { return 0; }
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  memcpy((void *)dst, (void *)src, size);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t size, void *stream) {
  trace_on("htod %llu %llu", dst, size, 0, 1, stream);
  memcpy((void *)dst, src, size);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t size, void *stream) {
  trace_on("dtoh %llu %llu", src, size, 0, 1, stream);
  memcpy(dst, (void *)src, size);
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t size, void *stream) {
  trace_on("dtod %llu %llu %llu", dst, src, size, 1, stream);
  memcpy((void *)dst, (void *)src, size);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t size) {
  return cuMemcpyHtoDAsync_v2(dst, src, size, NULL);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t size) { return cuMemcpyDtoHAsync_v2(dst, src, size, NULL); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  return cuMemcpyDtoDAsync_v2(dst, src, size, NULL);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, void *stream) { return cuMemcpy(dst, src, size); }
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, void *stream) {
  for (size_t i = 0; i < count; ++i) ((unsigned *)dst)[i] = value;
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, void *stream) {
  for (size_t i = 0; i < count; ++i) ((unsigned short *)dst)[i] = value;
  return 0;
}
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *element_strides,
                                int interleave, int swizzle, int promotion, int fill) {
  return 0;
}
