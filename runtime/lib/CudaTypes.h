// CUDA driver types for fp8rt: the real cuda.h when the build found it
// (FP8RT_HAVE_CUDA_H), otherwise fp8rt's own declarations. Types only: fp8rt
// never links libcuda; it calls the driver through CudaDriver.h's table.
#ifndef FP8RT_LIB_CUDATYPES_H
#define FP8RT_LIB_CUDATYPES_H

#include <stddef.h>
#include <stdint.h>

#if FP8RT_HAVE_CUDA_H
#include <cuda.h>
#else
#include "CudaFallbackTypes.inc"
#endif

#endif // FP8RT_LIB_CUDATYPES_H
