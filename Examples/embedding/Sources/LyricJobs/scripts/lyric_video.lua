-- A user's job script: cuts a clip and puts lyrics over it. The app runs it with
-- arg[1] = video, arg[2] = lyrics CSV, arg[3] = output, and gives it `job` (a table)
-- and `notify(message)` (an app function).
local video, lyricsFile, output = arg[1], arg[2], arg[3]
notify("starting job " .. job.id .. " for " .. job.customer)

local asset = av.asset(video)
local comp = av.composition()
comp:insertTimeRange(av.rangeFromTo(1, 7), asset, 0)        -- seconds 1–7 of the source

local vc = av.videoComposition(comp)
local size = vc.renderSize
local full = { 0, 0, size.width, size.height }
local parent, picture = av.layer{ frame = full }, av.layer{ frame = full }
parent:addSublayer(picture)
parent:addSublayer(require("effects.lyrics"){
  cues = av.readCues(lyricsFile, { duration = comp.duration }),
  renderSize = { size.width, size.height },
})
vc.animationTool = av.animationTool{ videoLayer = picture, parentLayer = parent }

local session = av.exportSession(comp, "MediumQuality")
session.outputURL = output
session.videoComposition = vc
assert(session:export())
print(("wrote %s (%.1f s)"):format(output, comp.duration))
notify("job " .. job.id .. " done")
