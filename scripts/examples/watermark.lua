-- Stamp a logo and a copyright line on a recording.
--
-- usage: moonreel run watermark.lua VIDEO LOGO.png OUT.mp4 ["© 2026 Someone"]
local videoPath, logoPath, output, notice = arg[1], arg[2], arg[3], arg[4]
if not (videoPath and logoPath and output) then
  error('usage: moonreel run watermark.lua VIDEO LOGO.png OUT.mp4 ["© 2026 Someone"]', 0)
end

local asset = av.asset(videoPath)
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)
local vc = av.videoComposition(comp)
local size = vc.renderSize
local parent = av.layer{ frame = { 0, 0, size.width, size.height } }
local video = av.layer{ frame = { 0, 0, size.width, size.height } }
parent:addSublayer(video)

local watermark = require "effects.watermark"
parent:addSublayer(watermark{
  renderSize = { size.width, size.height },
  logo = av.image(logoPath),
  text = notice or "© Moonreel",
})
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s"):format(output))
