-- moonreel run scripts/examples/batch_trim.lua clips/ out/
-- The first 10 s of every .mov in a folder, at 720p, into another folder. A file that
-- cannot be opened (truncated, not media) is skipped with its reason, not the whole batch.
local input, output = assert(arg[1], "usage: batch_trim.lua INPUT_FOLDER OUTPUT_FOLDER"), assert(arg[2], "give an output folder")
os.execute("mkdir -p '" .. output .. "'")
for _, path in ipairs(av.files(input, "*.[mM][oO][vV]")) do
  local asset, why = av.asset(path, { try = true })
  if not asset then
    print("skipped " .. why)
  else
    local comp = av.composition()
    comp:insertTimeRange(av.range(0, math.min(10, asset.duration)), asset, 0)
    local session = av.exportSession(comp, "1280x720")
    session.outputURL = output .. "/" .. path:match("([^/]+)%.%w+$") .. ".mp4"
    local ok, message = session:export()
    print(ok and ("wrote " .. session.outputURL) or ("skipped " .. path .. ": " .. message))
  end
end
