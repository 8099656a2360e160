func.func private @config_raster_group() attributes {c = #fp8.gemm_config<tile = 128x128x128, raster_group = 4294967296>}
