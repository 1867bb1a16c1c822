-- A pure-Lua allocation loop: the collector's own pace, for comparison (bench/RESULTS.md).
local t = os.clock()
local keep = {}
for i = 1, 3000000 do local x = { i, i + 1 }; if i % 10 == 0 then keep[#keep + 1] = x end; if #keep > 100000 then keep = {} end end
print("alloc", os.clock() - t)
