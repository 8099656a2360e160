# Precompiled LLVM/MLIR headers for the compiler's sources.
#
# Every translation unit of the dialect, passes and lowerings includes the
# same dialects (GPU, NVVM, LLVM, arith, linalg, ...): about 380k lines of
# headers and generated op classes, which take 90% of each compile (30 s of
# 32 s for a typical pass with GCC 12). One precompiled header, built once
# and reused by every target compiled with the same flags, cuts a fresh
# build to a fraction of that: the 2-core CI machine builds the project
# twice (GCC, then clang with sanitizers).
#
# Only targets whose compile flags match the project's common ones reuse it
# (GCC and clang reject a precompiled header built with other options): the
# object libraries of add_mlir_library and the two tools. A library that
# must not see the MLIR IR headers (one linked without libMLIR) opts out
# with the target property FP8_NO_PRECOMPILED_HEADERS. The FP8 headers are
# not precompiled, so editing them does not rebuild it.

option(FP8_ENABLE_PRECOMPILED_HEADERS
  "Precompile the LLVM/MLIR headers shared by the compiler's sources" ON)

set(FP8_PRECOMPILED_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Shard/IR/ShardOps.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/ImplicitLocOpBuilder.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  )

# Collects the build-system targets defined in `dir` and below.
function(fp8_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    fp8_collect_targets(${subdir} sub)
    list(APPEND targets ${sub})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Builds the precompiled header once (FP8PrecompiledHeaders, flagged like an
# add_mlir_library object library) and makes every object library under
# lib/ and the given executables reuse it.
function(fp8_precompile_mlir_headers)
  if(NOT FP8_ENABLE_PRECOMPILED_HEADERS)
    return()
  endif()
  set(source ${CMAKE_CURRENT_BINARY_DIR}/FP8PrecompiledHeaders.cpp)
  file(CONFIGURE OUTPUT ${source} CONTENT "// Compiles the precompiled header.\n")
  add_library(FP8PrecompiledHeaders OBJECT ${source})
  llvm_update_compile_flags(FP8PrecompiledHeaders)
  set_target_properties(FP8PrecompiledHeaders PROPERTIES
    POSITION_INDEPENDENT_CODE ON)
  target_precompile_headers(FP8PrecompiledHeaders PRIVATE
    ${FP8_PRECOMPILED_HEADERS})

  fp8_collect_targets(${FP8_SOURCE_DIR}/lib lib_targets)
  set(users ${ARGN})
  foreach(target IN LISTS lib_targets)
    get_property(opt_out TARGET ${target} PROPERTY FP8_NO_PRECOMPILED_HEADERS)
    if(target MATCHES "^obj\\." AND NOT opt_out)
      list(APPEND users ${target})
    endif()
  endforeach()
  foreach(target IN LISTS users)
    target_precompile_headers(${target} REUSE_FROM FP8PrecompiledHeaders)
  endforeach()
endfunction()
