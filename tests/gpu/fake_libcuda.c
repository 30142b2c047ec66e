/* A stand-in for the CUDA driver (libcuda.so.1) for tests on machines without a GPU: device
   memory is host memory (allocations, copies and memsets work), modules and launches are only
   written to the file named by $FAKE_CUDA_LOG, one line each ("load <bytes of PTX>",
   "launch <kernel> grid gx gy gz block bx by bz"); kernels do not run. Built by
   tests/gpu/test_pipeline.py with the system's C compiler; not part of mlax. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

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

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) { *value = 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **context, int device) { *context = (void *)1; return 0; }
CUresult cuCtxPushCurrent_v2(void *context) { return 0; }
CUresult cuCtxPopCurrent_v2(void **context) { if (context) *context = (void *)1; return 0; }
CUresult cuGetErrorName(CUresult error, const char **name) { *name = "CUDA_SUCCESS"; return 0; }

static CUresult load(void **module, const void *image) {
  const char *ptx = image;
  char size[32];
  snprintf(size, sizeof size, "%zu", strlen(ptx));
  record("load %s\n", size, NULL);
  *module = strdup(ptx);
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) { return load(module, image); }
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, void *options, void **values) {
  return load(module, image);
}
CUresult cuModuleUnload(void *module) { free(module); return 0; }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  *function = strdup(name);
  return 0;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) { return 0; }
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  record("launch %s grid %u %u %u block %u %u %u\n", function, dims);
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, void *function, void **params, void **extra) { return 0; }

CUresult cuStreamCreate(void **stream, unsigned flags) { *stream = (void *)2; return 0; }
CUresult cuStreamDestroy_v2(void *stream) { return 0; }
CUresult cuStreamSynchronize(void *stream) { return 0; }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) { return 0; }
CUresult cuEventCreate(void **event, unsigned flags) { *event = (void *)3; return 0; }
CUresult cuEventDestroy_v2(void *event) { return 0; }
CUresult cuEventRecord(void *event, void *stream) { return 0; }
CUresult cuEventSynchronize(void *event) { return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) {
  *pointer = (CUdeviceptr)calloc(1, size ? size : 1);
  return 0;
}
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t size, unsigned flags) { return cuMemAlloc_v2(pointer, size); }
CUresult cuMemFree_v2(CUdeviceptr pointer) { free((void *)pointer); return 0; }
CUresult cuMemHostRegister_v2(void *pointer, size_t size, unsigned flags) { return 0; }
CUresult cuMemHostUnregister(void *pointer) { return 0; }
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  memcpy((void *)dst, (void *)src, size);
  return 0;
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
