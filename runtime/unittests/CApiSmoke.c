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
  {
    fp8rt_module *module = NULL;
    fp8rt_function *function = NULL;
    fp8rt_tensor_info info;
    if (fp8rt_module_load(NULL, &module) != FP8RT_ERROR_INVALID_ARGUMENT ||
        module != NULL)
      return 7;
    if (fp8rt_module_function(NULL, "f", &function) !=
        FP8RT_ERROR_INVALID_ARGUMENT)
      return 8;
    if (fp8rt_function_call(NULL, &tensor, 1, NULL, 0, NULL, 0, NULL) !=
        FP8RT_ERROR_INVALID_ARGUMENT)
      return 9;
    if (fp8rt_function_argument(NULL, 0, &info) != FP8RT_ERROR_INVALID_ARGUMENT)
      return 10;
    fp8rt_module_destroy(NULL);
    if (fp8rt_module_num_functions(NULL) != 0)
      return 11;
  }
  /* The struct layout callers (and FFI bindings) rely on. */
  if (sizeof(fp8rt_tensor) != 88 || offsetof(fp8rt_tensor, shape) != 24 ||
      offsetof(fp8rt_tensor, strides) != 56)
    return 6;
  if (sizeof(fp8rt_tensor_info) != 64 ||
      offsetof(fp8rt_tensor_info, shape) != 16 ||
      offsetof(fp8rt_tensor_info, alignment) != 48 ||
      offsetof(fp8rt_tensor_info, written) != 56 ||
      offsetof(fp8rt_tensor_info, alias_of) != 60)
    return 12;
  return 0;
}
