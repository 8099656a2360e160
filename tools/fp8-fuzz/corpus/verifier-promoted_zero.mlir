func.func private @promoted_zero() attributes {a = #fp8.accumulation<promoted(0)>}
