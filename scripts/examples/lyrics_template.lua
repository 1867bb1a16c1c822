-- The lyrics example as a template: a part of a song's video with its lyrics, for
-- `moonreel batch` (one row per clip) or `moonreel run --set`.
--
--   moonreel run --set video=song.mov --set lyrics=song.csv --set output=out.mp4 lyrics_template.lua
--   moonreel batch lyrics_template.lua songs.csv --out 'out/{id}.mp4'
local p = av.parameters{
  { name = "video", type = "string", required = true, doc = "the song's video" },
  { name = "lyrics", type = "string", required = true, doc = "CSV (id,lyric,start_at,end_at), LRC, SRT or WebVTT" },
  { name = "start", type = "number", default = 0, min = 0, doc = "where the part starts in the video (seconds)" },
  { name = "duration", type = "number", min = 0.1, doc = "how long the part lasts (default: to the end)" },
  { name = "karaokeColor", type = "color", default = "#FFD400", doc = "colour of sung words" },
  { name = "spectrum", type = "boolean", default = false, doc = "the song's spectrum along the bottom, under the lyrics" },
  { name = "smartRendering", type = "boolean", default = false,
    doc = "copy the video's GOPs that carry no lyric (an instrumental intro or outro) instead of encoding them" },
  { name = "output", type = "string", required = true },
}

local asset = av.asset(p.video)
local length = p.duration or (asset.duration - p.start)
local comp = av.composition()
comp:insertTimeRange(av.range(p.start, length), asset, 0)

local vc = av.videoComposition(comp)
local size = vc.renderSize
local full = { 0, 0, size.width, size.height }
local parent, video = av.layer{ frame = full }, av.layer{ frame = full }
parent:addSublayer(video)
if p.spectrum then
  parent:addSublayer(av.audioSpectrumLayer{ track = comp, bars = 48, colors = { "#38BDF8", "#F472B6" },
                                            frame = { 0, 0, size.width, size.height / 5 }, opacity = 0.85 })
end
-- Cues on the song's timeline, moved to the part's.
local cues = {}
for _, cue in ipairs(av.readCues(p.lyrics)) do
  if cue.finish > p.start and cue.start < p.start + length then
    cue.start, cue.finish = math.max(0, cue.start - p.start), math.min(length, cue.finish - p.start)
    for _, word in ipairs(cue.words) do word.start, word.finish = word.start - p.start, word.finish - p.start end
    cues[#cues + 1] = cue
  end
end
parent:addSublayer(require("effects.lyrics"){
  cues = cues, renderSize = { size.width, size.height }, fadeIn = 0.15, fadeOut = 0.15, karaokeColor = p.karaokeColor,
})
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = p.output
session.videoComposition = vc
session.smartRendering = p.smartRendering
local ok, err = session:export()
if not ok then error(err, 0) end
