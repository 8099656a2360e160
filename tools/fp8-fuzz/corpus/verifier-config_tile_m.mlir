func.func private @config_tile_m() attributes {c = #fp8.gemm_config<tile = 1099511627776x128x128>}
