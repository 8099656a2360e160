/*
 * fp8rt: host runtime for kernels compiled by fp8-compile.
 *
 * For each kernel the compiler writes NAME.ptx and NAME.json (the metadata:
 * entry name, block/cluster dims, grid rule, dynamic shared memory, operands,
 * TMA tensor maps and the kernel's parameter list; see runtime/README.md).
 * This library reads both, validates the caller's operands against the
 * metadata, encodes the tensor maps and launches the kernel on the caller's
 * CUDA stream.
 *
 * The library has a plain C ABI: no C++ types and no exceptions cross it.
 * Every function that can fail returns an fp8rt_status; fp8rt_last_error()
 * then returns a message naming the offending argument and what was expected.
 *
 * The CUDA driver (libcuda.so.1) is loaded with dlopen the first time a
 * kernel is launched; the library never links against it, so loading and
 * validating metadata works on machines without a GPU.
 *
 * Thread safety: different kernels may be used from different threads
 * concurrently; one kernel may be launched from several threads (launches of
 * one kernel are serialised internally). fp8rt_kernel_destroy must not race
 * with a launch of the same kernel.
 */
#ifndef FP8RT_FP8RT_H
#define FP8RT_FP8RT_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define FP8RT_API
#else
#define FP8RT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle: parsed metadata + image + per-CUDA-context module state. */
typedef struct fp8rt_kernel fp8rt_kernel;

typedef enum fp8rt_status {
  FP8RT_SUCCESS = 0,
  /* A caller argument is wrong: operand names, dtypes, shapes, strides,
   * alignment, null pointers, values that do not fit the kernel's params. */
  FP8RT_ERROR_INVALID_ARGUMENT,
  /* NAME.json is malformed or inconsistent (or disagrees with the PTX). */
  FP8RT_ERROR_INVALID_METADATA,
  /* libcuda.so.1 could not be loaded or lacks a needed entry point. */
  FP8RT_ERROR_DRIVER_NOT_FOUND,
  /* A CUDA driver call failed; the message names the call and the error. */
  FP8RT_ERROR_CUDA,
  /* A file could not be read. */
  FP8RT_ERROR_IO,
  /* Out of host memory, or a bug in fp8rt. */
  FP8RT_ERROR_INTERNAL,
  /* A collective step failed in the caller's collective backend, or a
   * function with collective steps was called without one. */
  FP8RT_ERROR_COLLECTIVE
} fp8rt_status;

/* Element types. The FP8 formats (e4m3, e5m2) and the ue8m0 scale format are
 * one byte each; bf16/f16 two; f32 four; i32 (the group indices of a grouped
 * GEMM) four. */
typedef enum fp8rt_dtype {
  FP8RT_E4M3,
  FP8RT_E5M2,
  FP8RT_UE8M0,
  FP8RT_BF16,
  FP8RT_F16,
  FP8RT_F32,
  FP8RT_I32
} fp8rt_dtype;

#define FP8RT_MAX_RANK 4

/* One operand of a launch, matched to the metadata's operand by name.
 *
 * data:    device pointer (any address the kernel's context can access);
 *          NULL is allowed only for operands marked "optional" (the kernel
 *          then receives 0). An optional operand may also be left out.
 * shape:   shape[0..rank-1], outermost first; every extent must be >= 1.
 * strides: in elements, outermost first. All zero means dense row-major.
 *          Otherwise they must describe the dense row-major layout the
 *          kernel assumes (strides of extent-1 dims are ignored); in
 *          particular the innermost stride must be 1. */
typedef struct fp8rt_tensor {
  const char *name;
  void *data;
  fp8rt_dtype dtype;
  int rank;
  int64_t shape[FP8RT_MAX_RANK];
  int64_t strides[FP8RT_MAX_RANK];
} fp8rt_tensor;

/* Loads NAME.json and the image it names: "cubin" if present, otherwise
 * "ptx"; relative paths are resolved against the JSON file's directory.
 * A GEMM whose M is a run-time value may list launch variants ("variants":
 * the metadata files of the same GEMM with smaller tiles); they are loaded
 * too, and each launch runs the one with the fewest estimated waves for its
 * M on the device's SMs (runtime/README.md, "Launch variants").
 * Validates the metadata (and, for PTX, that the entry's parameter list
 * matches the metadata's "params"). Does not touch the CUDA driver.
 * On success *out owns the kernel; free it with fp8rt_kernel_destroy. */
FP8RT_API fp8rt_status fp8rt_kernel_load(const char *json_path,
                                         fp8rt_kernel **out);

/* Same as fp8rt_kernel_load with the metadata text and the image in memory
 * (both are copied). image is PTX text, a cubin (ELF) or a fatbin; for PTX,
 * image_size may be 0 to mean "NUL-terminated string". The metadata's
 * "ptx"/"cubin" file names and "variants" are not used (the
 * kernel itself runs every launch). */
FP8RT_API fp8rt_status fp8rt_kernel_load_from_memory(const char *json,
                                                     const void *image,
                                                     size_t image_size,
                                                     fp8rt_kernel **out);

/* Unloads the kernel's modules and frees its device buffers (making each
 * context it was launched in current for the duration). The caller must make
 * sure no launch of this kernel is still running on the GPU. NULL is a
 * no-op. */
FP8RT_API void fp8rt_kernel_destroy(fp8rt_kernel *kernel);

/* Validates operands[0..num_operands-1] against the metadata (before any
 * driver call), then launches the kernel on cu_stream (a CUstream; NULL is
 * the legacy default stream) in the current CUDA context.
 *
 * Context: if the calling thread has a current context it is used;
 * otherwise the primary context of device 0 is retained (once per process,
 * never released) and made current on the calling thread.
 * The module is loaded lazily, once per context, at the first launch in it.
 * The launch is asynchronous: the call returns once it is enqueued. */
FP8RT_API fp8rt_status fp8rt_launch(fp8rt_kernel *kernel,
                                    const fp8rt_tensor *operands,
                                    int num_operands, void *cu_stream);

/* The launch path for callers that launch a kernel many times, such as a
 * framework integration: like fp8rt_launch, with operands[i] describing the
 * kernel's i-th operand in metadata order (fp8rt_kernel_operand_name(kernel,
 * i)), so num_operands must be fp8rt_kernel_num_operands(kernel). `name` is
 * not read (it may be NULL); an absent optional operand has data NULL.
 *
 * The validation is fp8rt_launch's, memoized: a launch with the same context
 * and, per operand, the same presence, dtype, rank, shape and strides as one
 * of the kernel's last 16 configurations skips everything but the checks
 * that depend on the addresses (alignment), and reuses the chosen launch
 * variant, grid and tensor-map encodings (patching the address of a map
 * whose operand moved). Nothing is allocated per launch. Errors and the
 * error message are those of fp8rt_launch. */
FP8RT_API fp8rt_status fp8rt_launch_ordered(fp8rt_kernel *kernel,
                                            const fp8rt_tensor *operands,
                                            int num_operands, void *cu_stream);

/* The kernel to launch for a caller's hint: `expected_m`, the rows each
 * group is expected to hold, for a kernel whose launch variants are chosen
 * by that hint ("variant_choice": "expected_m": the masked grouped GEMMs,
 * whose launch must not depend on the row counts on the device; a launch of
 * such a kernel itself always runs it). *out is the kernel or the launch
 * variant with the fewest estimated waves for G groups of expected_m rows
 * on num_sms SMs (runtime/README.md, "Launch variants"), owned by `kernel`
 * (valid until it is destroyed; never pass it to fp8rt_kernel_destroy);
 * launch it like any kernel. A kernel without variants gives itself; one
 * whose variants are chosen by M at each launch is an error. expected_m and
 * num_sms must be at least 1. Does not touch the CUDA driver. */
FP8RT_API fp8rt_status fp8rt_kernel_for_expected_m(fp8rt_kernel *kernel,
                                                   int64_t expected_m,
                                                   int num_sms,
                                                   fp8rt_kernel **out);

/* The kernel a launch of `kernel` for a problem of m rows runs on the
 * current CUDA context's device (device 0's primary context when none is
 * current, as for fp8rt_launch): for a kernel whose launch variants are
 * chosen by M ("variant_choice": "m", the dense GEMMs with a run-time M),
 * the one fp8rt_launch chooses, by the device's SMs and resident clusters;
 * otherwise the kernel itself. *out is owned by `kernel` (valid until it is
 * destroyed; never pass it to fp8rt_kernel_destroy); launching it launches
 * that kernel. m must be at least 1. Loads the kernel's module into the
 * context (once per context, as the first launch does). */
FP8RT_API fp8rt_status fp8rt_kernel_for_m(fp8rt_kernel *kernel, int64_t m,
                                          fp8rt_kernel **out);

/* The number of operands in the metadata (0 for NULL), and the name of the
 * index-th (NULL when out of range); valid until the kernel is destroyed. */
FP8RT_API int fp8rt_kernel_num_operands(const fp8rt_kernel *kernel);
FP8RT_API const char *fp8rt_kernel_operand_name(const fp8rt_kernel *kernel,
                                                int index);

/* The metadata's "name" (valid until the kernel is destroyed); "" for NULL. */
FP8RT_API const char *fp8rt_kernel_name(const fp8rt_kernel *kernel);

/* ------------------------------------------------------------------------
 * Modules: the host program of compiled functions.
 *
 * fp8-compile writes, beside the kernels, DIR/module.json: for each public
 * function of its input, the arguments and results (names, dtypes, shapes
 * with run-time symbols), the intermediate buffers (at offsets of one
 * workspace the caller provides) and the ordered steps (kernel launches and
 * fills). A call runs the steps on the caller's stream; the caller owns
 * every allocation: arguments, results and workspace (see
 * docs/host-program.md).
 *
 * Thread safety: a module's functions may be called from several threads;
 * the module must not be destroyed while a call is running.
 * ------------------------------------------------------------------------ */

typedef struct fp8rt_module fp8rt_module;
/* A function of a module; owned by the module. */
typedef struct fp8rt_function fp8rt_function;

/* Loads DIR/module.json and every kernel its functions launch (DIR/NAME.json
 * and the image it names, with its launch variants), and checks the program
 * against them (FP8RT_ERROR_INVALID_METADATA, naming the file, the field and
 * the problem). A kernel with a runtime-owned workspace (an opt-in stream-K
 * GEMM) is rejected: a function runs in the caller's workspace only (the
 * stream-K launch variants of a step's kernel, taken at a small M, use the
 * workspaces the runtime owns, as fp8rt_launch does). Does not touch the
 * CUDA driver. On success *out owns the module; free it with
 * fp8rt_module_destroy. */
FP8RT_API fp8rt_status fp8rt_module_load(const char *directory,
                                         fp8rt_module **out);

/* Frees the module, its functions and its kernels (see
 * fp8rt_kernel_destroy). NULL is a no-op. */
FP8RT_API void fp8rt_module_destroy(fp8rt_module *module);

/* The chip the module was compiled for ("sm_90a"); "" for NULL. */
FP8RT_API const char *fp8rt_module_chip(const fp8rt_module *module);

/* The number of functions (0 for NULL) and the name of the index-th (NULL
 * when out of range), valid while the module lives. */
FP8RT_API int fp8rt_module_num_functions(const fp8rt_module *module);
FP8RT_API const char *fp8rt_module_function_name(const fp8rt_module *module,
                                                 int index);

/* The function called `name`; an unknown name is an error listing the
 * module's functions. */
FP8RT_API fp8rt_status fp8rt_module_function(fp8rt_module *module,
                                             const char *name,
                                             fp8rt_function **out);

/* An argument or a result of a function. Strings are valid while the module
 * lives. */
typedef struct fp8rt_tensor_info {
  const char *name;
  fp8rt_dtype dtype;
  int rank;
  /* Each extent as text, outermost first: an integer ("4096"), a symbol
   * ("x_0") or an expression of the symbols (a result's, or an argument's
   * in the padded layout of the kernels that read it)
   * ("ceildiv(x_0, 128)"): integers, symbols, +, *, ceildiv(a, b),
   * roundup(a, b). */
  const char *shape[FP8RT_MAX_RANK];
  /* Bytes the device pointer must be aligned to (a power of two). */
  int64_t alignment;
  /* Arguments: 1 when the function writes it in place (state such as an
   * amax history), else 0. */
  int written;
  /* Results: the index of the argument this result is (updated in place;
   * the caller passes nothing for it), or -1. */
  int alias_of;
} fp8rt_tensor_info;

FP8RT_API const char *fp8rt_function_name(const fp8rt_function *function);
FP8RT_API int fp8rt_function_num_arguments(const fp8rt_function *function);
FP8RT_API int fp8rt_function_num_results(const fp8rt_function *function);
/* index below the count, else FP8RT_ERROR_INVALID_ARGUMENT. */
FP8RT_API fp8rt_status fp8rt_function_argument(const fp8rt_function *function,
                                               int index,
                                               fp8rt_tensor_info *out);
FP8RT_API fp8rt_status fp8rt_function_result(const fp8rt_function *function,
                                             int index, fp8rt_tensor_info *out);

/* The run-time symbols: each dynamic extent of an argument, by the name the
 * shapes use (NULL when out of range). */
FP8RT_API int fp8rt_function_num_symbols(const fp8rt_function *function);
FP8RT_API const char *fp8rt_function_symbol_name(const fp8rt_function *function,
                                                 int index);

/* The workspace bytes a call needs when symbol names[i] has values[i]
 * (every symbol once, in any order; each value >= 1). */
FP8RT_API fp8rt_status fp8rt_function_workspace_bytes(fp8rt_function *function,
                                                      const char *const *names,
                                                      const int64_t *values,
                                                      int num_symbols,
                                                      size_t *out);

/* The workspace bytes a call with these arguments needs (the symbols bound
 * from their shapes; the arguments are checked like fp8rt_function_call
 * checks them, except their addresses). */
FP8RT_API fp8rt_status fp8rt_function_workspace_bytes_for(
    fp8rt_function *function, const fp8rt_tensor *arguments, int num_arguments,
    size_t *out);

/* Runs the function on cu_stream (a CUstream; NULL is the legacy default
 * stream) in the current CUDA context (see fp8rt_launch).
 *
 * arguments / results: every tensor by position (every `name` NULL, one per
 * argument / result in the function's order) or by name (every `name` set,
 * any order). A result that is an argument (alias_of) may be left out (or
 * have data NULL, or be that argument's tensor: its data, dtype and shape).
 * Tensors are dense row-major (strides all zero, or the dense strides), of
 * the function's dtypes and shapes: the symbols are bound from the
 * arguments, and a result's shape follows from them. Nothing the call
 * writes may overlap another tensor or the workspace, except where a kernel
 * updates an input in place (a launch binding both to one argument, which
 * the kernel's metadata allows: `in_place_of`).
 *
 * workspace: at least fp8rt_function_workspace_bytes bytes of device memory,
 * 256-byte aligned (NULL when the function needs none); its contents on
 * entry do not matter and are garbage on return. The call only enqueues
 * work: the caller must keep every tensor and the workspace alive until the
 * stream has run it.
 *
 * Every check runs before anything is enqueued. A call with the symbol
 * values of one of the function's last 8 calls skips the checks of the
 * program against the values and launches through fp8rt_launch_ordered's
 * memoized path. */
FP8RT_API fp8rt_status fp8rt_function_call(
    fp8rt_function *function, const fp8rt_tensor *arguments, int num_arguments,
    const fp8rt_tensor *results, int num_results, void *workspace,
    size_t workspace_bytes, void *cu_stream);

/* ---- Collectives ----------------------------------------------------------
 *
 * A function compiled from sharded IR (fp8-shard-quantize) has collective
 * steps in its program: all_reduce (sum or max), all_gather and
 * reduce_scatter across a group of devices, and all_slice (this device's
 * piece of a tensor every device holds, a device-to-device copy). A call
 * runs them in order with the kernels, on the call's stream, through the
 * caller's collective backend: a table of functions that enqueue the
 * collective on `cu_stream` (NCCL's ncclAllReduce, ncclAllGather,
 * ncclReduceScatter take exactly these arguments). A device group is the
 * axes `axes` of the device grid `grid` (a shard.grid of the compiled
 * input), `size` devices; the backend maps it to a communicator and checks
 * its size. Each function returns 0 on success; anything else fails the call
 * with FP8RT_ERROR_COLLECTIVE and the backend's `last_error` text (when
 * given). Pointers are device addresses; counts are elements. */

typedef enum fp8rt_reduction { FP8RT_REDUCE_SUM, FP8RT_REDUCE_MAX } fp8rt_reduction;

typedef struct fp8rt_device_group {
  const char *grid;     /* the shard.grid's name, e.g. "tp" */
  const int64_t *axes;  /* the grid axes the group spans */
  int num_axes;
  int64_t size;         /* devices in the group */
} fp8rt_device_group;

typedef struct fp8rt_collectives {
  void *user_data; /* passed back to every function */
  /* This device's index in the group, 0 <= *rank < group->size. */
  int (*rank)(void *user_data, const fp8rt_device_group *group, int64_t *rank);
  /* recv = the reduction over the group of send, `count` elements each. */
  int (*all_reduce)(void *user_data, const fp8rt_device_group *group,
                    const void *send, void *recv, size_t count,
                    fp8rt_dtype dtype, fp8rt_reduction op, void *cu_stream);
  /* recv = every device's `send_count` elements, in rank order. */
  int (*all_gather)(void *user_data, const fp8rt_device_group *group,
                    const void *send, void *recv, size_t send_count,
                    fp8rt_dtype dtype, void *cu_stream);
  /* recv = this device's `recv_count` elements (the rank-th piece) of the
   * reduction over the group of send (size * recv_count elements each). */
  int (*reduce_scatter)(void *user_data, const fp8rt_device_group *group,
                        const void *send, void *recv, size_t recv_count,
                        fp8rt_dtype dtype, fp8rt_reduction op, void *cu_stream);
  /* Optional (NULL): the message of the backend's last failure. */
  const char *(*last_error)(void *user_data);
  /* Optional (both or neither; NULL: each collective runs alone): brackets
   * consecutive all-gathers of one group whose buffers are distinct (the
   * FP8 data of a quantization and its scales), which the backend may then
   * issue as one operation (NCCL: ncclGroupStart / ncclGroupEnd, one
   * launch). group_end is called even when a collective in between
   * failed. */
  int (*group_start)(void *user_data);
  int (*group_end)(void *user_data);
} fp8rt_collectives;

/* Sets the collective backend of every function of the module (the table is
 * copied; NULL removes it). Not while a call of the module is running. A
 * call of a function with collective steps and no backend, or a backend
 * without a function it needs, fails before anything is enqueued
 * (FP8RT_ERROR_COLLECTIVE). */
FP8RT_API fp8rt_status fp8rt_module_set_collectives(
    fp8rt_module *module, const fp8rt_collectives *collectives);

/* The number of collective steps of the function (0: it runs on one device). */
FP8RT_API int fp8rt_function_num_collectives(const fp8rt_function *function);

/* A backend on an NCCL communicator (ncclComm_t `nccl_comm`, one group: the
 * communicator's ranks): libnccl.so.2 is loaded with dlopen at the first
 * call (never linked), like the CUDA driver. Consecutive all-gathers run
 * in one ncclGroupStart / ncclGroupEnd. FP8 and UE8M0 data move as
 * bytes; sums and maxima of f32, bf16 and f16 use NCCL's reductions (a NaN
 * amax is not propagated by NCCL's max). The group's size must be the
 * communicator's. The communicator must outlive the module's calls. */
FP8RT_API fp8rt_status fp8rt_nccl_collectives(void *nccl_comm,
                                              fp8rt_collectives *out);

/* Message of the last failed fp8rt call on the calling thread ("" if none
 * failed yet). Successful calls leave it unchanged. Valid until the next
 * failing fp8rt call on this thread. */
FP8RT_API const char *fp8rt_last_error(void);

/* Static name of a status code, e.g. "FP8RT_ERROR_INVALID_ARGUMENT". */
FP8RT_API const char *fp8rt_status_string(fp8rt_status status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FP8RT_FP8RT_H */
