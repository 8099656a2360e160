# Fails unless LIBRARY's dynamic symbol table defines exactly the C API.
# Usage: cmake -DNM=nm -DLIBRARY=libfp8rt.so -P CheckExports.cmake
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
  OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
set(found "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE ".* " "" name "${line}")
  if(NOT name MATCHES "^fp8rt_")
    message(FATAL_ERROR "${LIBRARY} exports ${name}, which is not fp8rt C API")
  endif()
  list(APPEND found ${name})
endforeach()
foreach(expected fp8rt_kernel_load fp8rt_kernel_load_from_memory
        fp8rt_kernel_destroy fp8rt_launch fp8rt_kernel_name fp8rt_last_error
        fp8rt_status_string fp8rt_module_load fp8rt_module_destroy
        fp8rt_module_function fp8rt_function_argument fp8rt_function_result
        fp8rt_function_workspace_bytes fp8rt_function_workspace_bytes_for
        fp8rt_function_call)
  if(NOT expected IN_LIST found)
    message(FATAL_ERROR "${LIBRARY} does not export ${expected}")
  endif()
endforeach()
message(STATUS "exports: ${found}")
