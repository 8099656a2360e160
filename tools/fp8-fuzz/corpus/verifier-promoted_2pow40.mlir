func.func private @promoted_2pow40() attributes {a = #fp8.accumulation<promoted(1099511627776)>}
