-- A music video cut to the beat: the clips in turn, a cut every two beats of the song, the
-- song's lyrics over them (CSV, LRC, SRT or WebVTT), and its spectrum along the bottom.
-- The song is analysed once; a second run reads the analysis from the cache.
--
-- usage: moonreel run beat_montage.lua SONG LYRICS OUT.mp4 CLIP [CLIP ...]
local songPath, lyricsPath, output = arg[1], arg[2], arg[3]
local clips = {}
for i = 4, #arg do clips[#clips + 1] = av.asset(arg[i]) end
if not (songPath and lyricsPath and output) or #clips == 0 then
  error("usage: moonreel run beat_montage.lua SONG LYRICS OUT.mp4 CLIP [CLIP ...]", 0)
end

local song = av.asset(songPath)
local beat = av.analyze(song, { video = false })
if not beat.tempo then error(songPath .. ": no steady beat found to cut on", 0) end
print(("%s: %.1f BPM, %d beats"):format(songPath, beat.tempo, #beat.beats))

local comp, vc, mix = av.cutToBeats(clips, beat.beats, { every = 2, music = song, renderSize = { 1280, 720 }, fit = "fill" })
local size = vc.renderSize
local full = { 0, 0, size.width, size.height }
local parent, video = av.layer{ frame = full }, av.layer{ frame = full }
parent:addSublayer(video)
-- The bottom fifth: the song's spectrum, low notes left, blue to pink.
parent:addSublayer(av.audioSpectrumLayer{ track = comp, bars = 48, colors = { "#38BDF8", "#F472B6" },
                                          frame = { 0, 0, size.width, size.height / 5 }, opacity = 0.85 })
-- Above it, the lyrics, sung words in yellow.
local cues = av.readCues(lyricsPath, { duration = comp.duration })
parent:addSublayer(require("effects.lyrics"){ cues = cues, renderSize = { size.width, size.height }, karaokeColor = "#FFD400" })
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL, session.videoComposition, session.audioMix = output, vc, mix
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s, a cut every 2 beats"):format(output, comp.duration))
