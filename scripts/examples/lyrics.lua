-- Song lyrics over a video, at the times listed in a CSV (id,lyric,start_at,end_at), LRC,
-- SRT or WebVTT file. Optionally a picture over the video, as in the classic lyric app.
--
-- usage: moonreel run lyrics.lua VIDEO LYRICS OUT.mp4 [PICTURE.png]
local videoPath, lyricsPath, output, picture = arg[1], arg[2], arg[3], arg[4]
if not (videoPath and lyricsPath and output) then
  error("usage: moonreel run lyrics.lua VIDEO LYRICS OUT.mp4 [PICTURE.png]", 0)
end

local asset = av.asset(videoPath)
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)

-- Size, rate and upright phone video from the source.
local vc = av.videoComposition(comp)
local size = vc.renderSize
local full = { 0, 0, size.width, size.height }
local parent = av.layer{ frame = full }
local video = av.layer{ frame = full }
parent:addSublayer(video)
if picture then
  parent:addSublayer(av.layer{ contents = av.image(picture), frame = full, opacity = 0.35,
                               contentsGravity = "resizeAspectFill" })
end

local lyrics = require "effects.lyrics"
parent:addSublayer(lyrics{
  cues = av.readCues(lyricsPath, { duration = comp.duration }),
  renderSize = { size.width, size.height },
  fadeIn = 0.15, fadeOut = 0.15, karaokeColor = "#FFD400",
})
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s with lyrics from %s"):format(output, comp.duration, lyricsPath))
