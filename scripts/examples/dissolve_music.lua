-- Three clips joined by one-second dissolves over music that ducks under their sound and
-- fades out at the end; the whole mix is brought to -14 LUFS (EBU R128).
-- usage: moonreel run dissolve_music.lua OUT.mp4 MUSIC CLIP1 CLIP2 CLIP3
local output, musicPath = arg[1], arg[2]
if not arg[5] then error("usage: moonreel run dissolve_music.lua OUT.mp4 MUSIC CLIP1 CLIP2 CLIP3", 0) end
local comp, vc, mix = av.join({ av.asset(arg[3]), av.asset(arg[4]), av.asset(arg[5]) },
                              { transition = "dissolve", duration = 1 })
local voices = comp:tracksWithMediaType("audio")        -- the clips' own sound
local song = av.asset(musicPath)
local music = comp:addMutableTrack("audio")
music:insertTimeRange(av.range(0, math.min(song.duration, comp.duration)), song:tracksWithMediaType("audio")[1], 0)
local under = av.audioMixInputParameters(music)
under:setDucking{ under = voices, amount = -15, attack = 0.1, release = 0.5 }
under:setVolumeRamp(1, 0, av.range(comp.duration - 2, 2))
mix.inputParameters = { under, table.unpack(mix.inputParameters) }
local session = av.exportSession(comp, "HighestQuality")
session.outputURL, session.videoComposition, session.audioMix = output, vc, mix
session.loudness = -14
assert(session:export())
