func.func private @weight_tile_2pow40() attributes {r = #fp8.blockwise<weight = 1099511627776x128>}
