# `cmake --install`: headers (sources and generated .inc), the libraries,
# fp8-opt, fp8-compile, the mlir-opt plugin and the CMake package
# lib/cmake/FP8MLIR (FP8MLIRConfig.cmake, FP8MLIRTargets.cmake).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FP8MLIR_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/FP8MLIR)
# add_mlir_library installs each MLIR-style library into the export set
# MLIRTargets; the plain libraries join it here.
set(FP8MLIR_EXPORT_SET MLIRTargets)
set(FP8MLIR_EXPORTED_LIBRARIES
  FP8Target
  MLIRFP8Dialect
  MLIRFP8Transforms
  MLIRFP8KernelSkeleton
  MLIRFP8ToHopper
  MLIRFP8ToBlackwell
  MLIRFP8BlackwellGemm
  MLIRFP8ToGPU
  MLIRFP8TargetPTX
  MLIRFP8Compiler
  )
foreach(library ${FP8MLIR_EXPORTED_LIBRARIES} FP8Numerics FP8CAPI)
  target_include_directories(${library} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS FP8Numerics FP8CAPI FP8Schema fp8rt
  EXPORT ${FP8MLIR_EXPORT_SET}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS FP8Plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Installed tools find libMLIR.so where they were linked against it.
set_target_properties(fp8-opt fp8-compile PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS fp8-opt fp8-compile RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY include/FP8 include/FP8-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${FP8_BINARY_DIR}/include/FP8
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc")
install(FILES runtime/include/fp8rt/fp8rt.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fp8rt)
# The metadata structs (schema/): the expression type and the generated
# headers.
install(DIRECTORY schema/include/fp8schema ${FP8_SCHEMA_INCLUDE_DIR}/fp8schema
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT ${FP8MLIR_EXPORT_SET}
  NAMESPACE FP8MLIR::
  FILE FP8MLIRTargets.cmake
  DESTINATION ${FP8MLIR_PACKAGE_DIR})
configure_package_config_file(cmake/FP8MLIRConfig.cmake.in
  ${FP8_BINARY_DIR}/cmake/FP8MLIRConfig.cmake
  INSTALL_DESTINATION ${FP8MLIR_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${FP8_BINARY_DIR}/cmake/FP8MLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${FP8_BINARY_DIR}/cmake/FP8MLIRConfig.cmake
  ${FP8_BINARY_DIR}/cmake/FP8MLIRConfigVersion.cmake
  DESTINATION ${FP8MLIR_PACKAGE_DIR})

# The Python package: PYTHONPATH=<prefix>/python; it finds libFP8CAPI.so and
# libfp8rt.so in <prefix>/lib.
install(DIRECTORY python/fp8mlir
  DESTINATION python
  PATTERN "__pycache__" EXCLUDE)
