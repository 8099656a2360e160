/* Compiled as C (C99, -pedantic): proves fp8rt.h is a C header and that its
 * functions are callable from C. Returns 0 when every check passes. */
#include "fp8rt/fp8rt.h"

#include <string.h>

int fp8rt_c_smoke(void);

int fp8rt_c_smoke(void) {
  fp8rt_kernel *kernel = NULL;
  fp8rt_tensor tensor;
  memset(&tensor, 0, sizeof(tensor));
  tensor.name = "a";
  tensor.dtype = FP8RT_E4M3;
  tensor.rank = 2;
  tensor.shape[0] = 128;
  tensor.shape[1] = 2048;
  if (fp8rt_kernel_load_from_memory(NULL, "x", 1, &kernel) !=
      FP8RT_ERROR_INVALID_ARGUMENT)
    return 1;
  if (strstr(fp8rt_last_error(), "json is NULL") == NULL)
    return 2;
  if (fp8rt_launch(NULL, &tensor, 1, NULL) != FP8RT_ERROR_INVALID_ARGUMENT)
    return 3;
  if (strcmp(fp8rt_kernel_name(NULL), "") != 0)
    return 4;
  fp8rt_kernel_destroy(NULL);
  if (strcmp(fp8rt_status_string(FP8RT_ERROR_IO), "FP8RT_ERROR_IO") != 0)
    return 5;
  /* The struct layout callers (and FFI bindings) rely on. */
  if (sizeof(fp8rt_tensor) != 88 || offsetof(fp8rt_tensor, shape) != 24 ||
      offsetof(fp8rt_tensor, strides) != 56)
    return 6;
  return 0;
}
