-- The studio's preview proxies of a clip, made ahead of time: a template for a batch of
-- clips on this machine or on Slurm (docs/studio.md). Each row's output is a note of what
-- was made, one line per moving picture.
--
-- usage: moonreel batch proxy.lua clips.csv --out 'proxies/{id}.txt'   (a column "clip")
--        moonreel run --set clip=CLIP --set output=NOTE.txt proxy.lua
local p = av.parameters{
  { name = "clip", type = "string", required = true, doc = "the media file" },
  { name = "output", type = "string", required = true, doc = "where the note of what was made goes" },
}

local lines = {}
for _, proxy in ipairs(av.makeProxy(p.clip)) do
  local what = proxy.path and ((proxy.made and "made " or "kept ") .. proxy.path) or "none needed"
  lines[#lines + 1] = string.format("%s stream %d: %s (%s)", p.clip, proxy.stream, what, proxy.reason)
end
if #lines == 0 then lines[1] = p.clip .. ": no moving picture" end
if not av.dryRun then
  local note = assert(io.open(p.output, "w"))
  note:write(table.concat(lines, "\n"), "\n")
  note:close()
end
print(table.concat(lines, "\n"))
