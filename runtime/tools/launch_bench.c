/*
 * fp8rt-launch-bench: host time per launch of one kernel through libfp8rt,
 * with the real CUDA driver.
 *
 *   fp8rt-launch-bench NAME.json OPERAND... [--rounds R] [--launches L]
 *
 * OPERAND is NAME=DTYPE:SHAPE, one per operand of the kernel in metadata
 * order, SHAPE the extents joined by 'x' ("a=e4m3:128x4096",
 * "a_scale_inv=f32:" for a scalar, "bias=none" for an absent optional
 * operand). Every operand gets its own 256-byte aligned device buffer (the
 * contents are left as they are: only the launch is timed, not the result).
 *
 * For each way of launching, R rounds of L launches on one stream (L well
 * below the driver's queue depth, so no launch waits for the GPU); each
 * round is timed with CLOCK_MONOTONIC from the first call to the return of
 * the last, then the stream is synchronized. Printed: the median and the
 * minimum over the rounds of (round time / L), in microseconds:
 *   cuLaunchKernel     an empty kernel through the driver alone (the floor)
 *   fp8rt_launch       by operand name, full validation every launch
 *   ordered            fp8rt_launch_ordered, same addresses every launch
 *   ordered-moving     fp8rt_launch_ordered, the output alternating between
 *                      two buffers (a fresh output per call)
 * One JSON line with the same numbers ends the output.
 */
#define _POSIX_C_SOURCE 200809L

#include "fp8rt/fp8rt.h"

#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OPERANDS 16

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_current_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*sync_fn)(void);
typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned,
                              unsigned, unsigned, unsigned, unsigned, CUstream,
                              void **, void **);

static struct {
  init_fn init;
  device_get_fn deviceGet;
  retain_fn primaryCtxRetain;
  set_current_fn ctxSetCurrent;
  alloc_fn memAlloc;
  sync_fn ctxSynchronize;
  load_fn moduleLoadData;
  get_function_fn moduleGetFunction;
  launch_fn launchKernel;
} cu;

static const char kEmptyPtx[] = ".version 8.0\n.target sm_90\n"
                                ".address_size 64\n"
                                ".visible .entry empty() { ret; }\n";

static void fail(const char *what) {
  fprintf(stderr, "fp8rt-launch-bench: %s\n", what);
  exit(1);
}

static void check(CUresult result, const char *call) {
  if (result != CUDA_SUCCESS) {
    fprintf(stderr, "fp8rt-launch-bench: %s failed: CUDA error %d\n", call,
            (int)result);
    exit(1);
  }
}

static void loadDriver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    fail("cannot load libcuda.so.1");
#define RESOLVE(field, symbol)                                                 \
  if (!(*(void **)&cu.field = dlsym(lib, symbol)))                             \
    fail("libcuda.so.1 lacks " symbol);
  RESOLVE(init, "cuInit")
  RESOLVE(deviceGet, "cuDeviceGet")
  RESOLVE(primaryCtxRetain, "cuDevicePrimaryCtxRetain")
  RESOLVE(ctxSetCurrent, "cuCtxSetCurrent")
  RESOLVE(memAlloc, "cuMemAlloc_v2")
  RESOLVE(ctxSynchronize, "cuCtxSynchronize")
  RESOLVE(moduleLoadData, "cuModuleLoadData")
  RESOLVE(moduleGetFunction, "cuModuleGetFunction")
  RESOLVE(launchKernel, "cuLaunchKernel")
#undef RESOLVE
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parseDtype(const char *text, size_t length, fp8rt_dtype *out) {
  static const char *const names[] = {"e4m3", "e5m2", "ue8m0",
                                      "bf16", "f16",  "f32"};
  static const int sizes[] = {1, 1, 1, 2, 2, 4};
  for (int i = 0; i < 6; ++i)
    if (strlen(names[i]) == length && strncmp(text, names[i], length) == 0) {
      *out = (fp8rt_dtype)i;
      return sizes[i];
    }
  return 0;
}

/* NAME=DTYPE:SHAPE or NAME=none; allocates the operand's buffer(s). */
static void parseOperand(const char *arg, fp8rt_tensor *t, CUdeviceptr *spare) {
  const char *eq = strchr(arg, '=');
  if (!eq)
    fail("an operand is NAME=DTYPE:SHAPE or NAME=none");
  memset(t, 0, sizeof(*t));
  t->name = strndup(arg, (size_t)(eq - arg));
  if (strcmp(eq + 1, "none") == 0)
    return;
  const char *colon = strchr(eq + 1, ':');
  int elementSize = colon ? parseDtype(eq + 1, (size_t)(colon - eq - 1),
                                       &t->dtype)
                          : 0;
  if (!elementSize)
    fail("unknown dtype in an operand (e4m3 e5m2 ue8m0 bf16 f16 f32)");
  size_t bytes = (size_t)elementSize;
  const char *p = colon + 1;
  while (*p) {
    if (t->rank == FP8RT_MAX_RANK)
      fail("an operand has more than 4 extents");
    char *end;
    long long extent = strtoll(p, &end, 10);
    if (end == p || extent < 1)
      fail("bad extent in an operand shape");
    t->shape[t->rank++] = extent;
    bytes *= (size_t)extent;
    p = *end == 'x' ? end + 1 : end;
  }
  CUdeviceptr buffers[2];
  for (int i = 0; i < 2; ++i)
    check(cu.memAlloc(&buffers[i], (bytes + 255) / 256 * 256), "cuMemAlloc");
  t->data = (void *)(uintptr_t)buffers[0];
  *spare = buffers[1];
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum Way { kDriver, kNamed, kOrdered, kOrderedMoving, kWays };
static const char *const kWayNames[] = {"cuLaunchKernel", "fp8rt_launch",
                                        "ordered", "ordered-moving"};

int main(int argc, char **argv) {
  int rounds = 50, launches = 200, numOperands = 0;
  const char *json = NULL;
  fp8rt_tensor operands[MAX_OPERANDS];
  CUdeviceptr spare[MAX_OPERANDS];
  loadDriver();
  check(cu.init(0), "cuInit");
  CUdevice device;
  CUcontext context;
  check(cu.deviceGet(&device, 0), "cuDeviceGet");
  check(cu.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cu.ctxSetCurrent(context), "cuCtxSetCurrent");
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
      launches = atoi(argv[++i]);
    else if (!json)
      json = argv[i];
    else if (numOperands == MAX_OPERANDS)
      fail("too many operands");
    else {
      parseOperand(argv[i], &operands[numOperands], &spare[numOperands]);
      ++numOperands;
    }
  }
  if (!json || rounds < 1 || launches < 1)
    fail("usage: fp8rt-launch-bench NAME.json NAME=DTYPE:SHAPE... "
         "[--rounds R] [--launches L]");

  fp8rt_kernel *kernel;
  if (fp8rt_kernel_load(json, &kernel) != FP8RT_SUCCESS)
    fail(fp8rt_last_error());
  if (fp8rt_kernel_num_operands(kernel) != numOperands)
    fail("give one operand per kernel operand, in metadata order");
  for (int i = 0; i < numOperands; ++i)
    if (strcmp(operands[i].name, fp8rt_kernel_operand_name(kernel, i)) != 0)
      fail("the operands are not in metadata order");
  /* fp8rt_launch takes the present operands only. */
  fp8rt_tensor named[MAX_OPERANDS];
  int numNamed = 0;
  for (int i = 0; i < numOperands; ++i)
    if (operands[i].data)
      named[numNamed++] = operands[i];
  int output = numOperands - 1; /* the GEMM's d; any operand will do */

  CUmodule module;
  CUfunction empty;
  check(cu.moduleLoadData(&module, kEmptyPtx), "cuModuleLoadData");
  check(cu.moduleGetFunction(&empty, module, "empty"), "cuModuleGetFunction");

  double *perLaunch = malloc(sizeof(double) * (size_t)rounds);
  double median[kWays], best[kWays];
  for (int way = 0; way < kWays; ++way) {
    for (int r = -2; r < rounds; ++r) { /* two warm-up rounds */
      void *outputs[2] = {operands[output].data,
                          (void *)(uintptr_t)spare[output]};
      double start = now();
      for (int l = 0; l < launches; ++l) {
        fp8rt_status status = FP8RT_SUCCESS;
        switch (way) {
        case kDriver:
          check(cu.launchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
                "cuLaunchKernel");
          break;
        case kNamed:
          status = fp8rt_launch(kernel, named, numNamed, NULL);
          break;
        case kOrdered:
          status = fp8rt_launch_ordered(kernel, operands, numOperands, NULL);
          break;
        case kOrderedMoving:
          operands[output].data = outputs[l & 1];
          status = fp8rt_launch_ordered(kernel, operands, numOperands, NULL);
          break;
        }
        if (status != FP8RT_SUCCESS)
          fail(fp8rt_last_error());
      }
      double elapsed = now() - start;
      operands[output].data = outputs[0];
      check(cu.ctxSynchronize(), "cuCtxSynchronize");
      if (r >= 0)
        perLaunch[r] = elapsed / launches * 1e6;
    }
    qsort(perLaunch, (size_t)rounds, sizeof(double), compareDoubles);
    median[way] = perLaunch[rounds / 2];
    best[way] = perLaunch[0];
    printf("%-16s median %7.3f us  min %7.3f us per launch\n",
           kWayNames[way], median[way], best[way]);
  }
  printf("{\"kernel\": \"%s\", \"rounds\": %d, \"launches\": %d",
         fp8rt_kernel_name(kernel), rounds, launches);
  for (int way = 0; way < kWays; ++way)
    printf(", \"%s\": {\"median_us\": %.4f, \"min_us\": %.4f}",
           kWayNames[way], median[way], best[way]);
  printf("}\n");
  fp8rt_kernel_destroy(kernel);
  free(perLaunch);
  return 0;
}
