func.func private @act_tile_2pow32() attributes {r = #fp8.blockwise<act = 1x4294967296, weight = 128x4294967296, accumulate = promoted(128)>}
